/**
 * Container probes (exec, httpGet, tcpSocket) and the worker that runs one probe
 * periodically and turns results into verdicts with Kubernetes thresholds.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import type { ProbeKind } from './lifecycle.ts';
import { agentUser } from './pod-user.ts';
import { launchAs } from './process-user.ts';
import type { Container, Probe } from '../../schemas/index.ts';

import { resolvePort, type ProbeOutcome, type ProbeTarget } from './probe-target.ts';
import { httpGet } from './http-get.ts';

export { resolvePort, type ProbeOutcome, type ProbeTarget };

/** Kubernetes probe defaults (seconds / counts). */
export const PROBE_DEFAULTS = { initialDelaySeconds: 0, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 } as const;

const failure = (detail: string): ProbeOutcome => ({ type: 'failure', detail });
const success: ProbeOutcome = { type: 'success' };

function execProbe(command: readonly string[], target: ProbeTarget, timeoutMs: number, abort?: AbortSignal): Promise<ProbeOutcome> {
  const [file, ...args] = command;
  if (file === undefined) return Promise.resolve(failure('exec probe has no command'));
  const launch = launchAs(target.user, agentUser(), file, args);
  if (typeof launch === 'string') return Promise.resolve(failure(`exec ${file}: ${launch}`));
  return new Promise((resolve) => {
    const ids = launch.ids ?? {};
    // A process group of its own, killed whole at the timeout or abort: a shell's children
    // (`sh -c 'sleep 60'`) go with it instead of living on.
    const child = spawn(launch.file, launch.args, { cwd: target.cwd, env: target.env, stdio: 'ignore', detached: true, ...ids });
    let why: string | undefined;
    const killGroup = (reason: string): void => {
      why ??= reason;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    };
    const timer = setTimeout(() => killGroup(`timeout ${timeoutMs} ms`), timeoutMs);
    const onAbort = (): void => killGroup('aborted');
    abort?.addEventListener('abort', onAbort, { once: true });
    const done = (outcome: ProbeOutcome): void => {
      clearTimeout(timer);
      abort?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    if (abort?.aborted) killGroup('aborted');
    child.once('error', (err) => done(failure(`exec ${file}: ${err.message}`)));
    child.once('exit', (code, signal) => {
      if (code === 0) done(success);
      else done(failure(signal !== null ? `exec ${file}: killed by ${signal} (${why ?? 'signalled'})` : `exec ${file}: exit code ${code}`));
    });
  });
}

/** kubelet's HTTP probe: a status from 200 to 399 is a success (redirects are not followed here). */
async function httpProbe(action: NonNullable<Probe['httpGet']>, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  if (resolvePort(action.port, target.ports) === undefined) return failure(`httpGet: no container port named "${action.port}"`);
  const result = await httpGet({ ...action, path: action.path ?? '/' }, target, { userAgentFragment: 'kube-probe', timeoutMs });
  if (result.type === 'error') return failure(result.message);
  return result.statusCode >= 200 && result.statusCode < 400 ? success : failure(`HTTP probe failed with statuscode: ${result.statusCode}`);
}

function tcpProbe(action: NonNullable<Probe['tcpSocket']>, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  const port = resolvePort(action.port, target.ports);
  if (port === undefined) return Promise.resolve(failure(`tcpSocket: no container port named "${action.port}"`));
  const host = action.host ?? target.podIP;
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(success);
    });
    socket.once('timeout', () => socket.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    socket.once('error', (err) => resolve(failure(`dial tcp ${host}:${port}: ${err.message}`)));
  });
}

/** Aborted: a failure saying so, at once. */
const aborted = (abort: AbortSignal): Promise<ProbeOutcome> =>
  new Promise((resolve) => {
    if (abort.aborted) resolve(failure('aborted'));
    else abort.addEventListener('abort', () => resolve(failure('aborted')), { once: true });
  });

/**
 * Runs one attempt of `probe` against `target`. Never rejects. With `abort`, an exec attempt
 * ends when it fires (the process is killed; an exec in a container is left to its timeout).
 */
export function runProbe(probe: Probe, target: ProbeTarget, timeoutMs: number, abort?: AbortSignal): Promise<ProbeOutcome> {
  if (probe.exec != null) {
    const command = probe.exec.command ?? [];
    if (target.runExec === undefined) return execProbe(command, target, timeoutMs, abort);
    const attempt = target.runExec(command, timeoutMs);
    return abort ? Promise.race([attempt, aborted(abort)]) : attempt;
  }
  if (probe.httpGet != null) return httpProbe(probe.httpGet, target, timeoutMs);
  if (probe.tcpSocket != null) return tcpProbe(probe.tcpSocket, target, timeoutMs);
  return Promise.resolve(failure('probe has no exec, httpGet or tcpSocket action'));
}

/** A probe running periodically until stopped. */
export interface ProbeWorker {
  stop(): void;
}

export interface ProbeWorkerOptions {
  readonly kind: ProbeKind;
  readonly probe: Probe;
  readonly target: ProbeTarget;
  /** Length of one of the probe's "seconds" in ms: 1000, or less in tests. */
  readonly secondMs: number;
  /** Called when the verdict flips (after success/failure thresholds), with the last attempt's detail. */
  readonly onVerdict: (ok: boolean, outcome: ProbeOutcome) => void;
  /** Called on every failed attempt, with its detail (kubelet's prober records an Unhealthy Event for each). */
  readonly onFailedAttempt?: (detail: string) => void;
}

/**
 * Runs the probe after `initialDelaySeconds`, then every `periodSeconds` (one unref'd
 * timer, re-armed after each attempt). The verdict starts as "passing" for liveness,
 * "failing" for readiness and unknown for startup, as kubelet; `onVerdict` fires only when
 * `successThreshold` consecutive successes or `failureThreshold` consecutive failures
 * change it. A startup probe stops after its first verdict either way, a liveness probe
 * after its first failure verdict (the container is then killed).
 */
export function createProbeWorker(options: ProbeWorkerOptions): ProbeWorker {
  const { kind, probe, target, secondMs, onVerdict, onFailedAttempt } = options;
  const periodMs = Math.max(1, probe.periodSeconds ?? PROBE_DEFAULTS.periodSeconds) * secondMs;
  const timeoutMs = Math.max(1, probe.timeoutSeconds ?? PROBE_DEFAULTS.timeoutSeconds) * secondMs;
  const successThreshold = Math.max(1, probe.successThreshold ?? PROBE_DEFAULTS.successThreshold);
  const failureThreshold = Math.max(1, probe.failureThreshold ?? PROBE_DEFAULTS.failureThreshold);
  let verdict: boolean | null = kind === 'liveness' ? true : kind === 'readiness' ? false : null;
  let successes = 0;
  let failures = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const arm = (delayMs: number) => {
    timer = setTimeout(() => {
      attempt().catch((err: unknown) =>
        queueMicrotask(() => {
          throw err;
        }),
      );
    }, delayMs);
    timer.unref();
  };

  async function attempt(): Promise<void> {
    timer = undefined;
    const outcome = await runProbe(probe, target, timeoutMs);
    if (stopped) return;
    if (outcome.type === 'success') {
      successes++;
      failures = 0;
    } else {
      failures++;
      successes = 0;
      onFailedAttempt?.(outcome.detail);
    }
    const flipsTo = verdict !== true && successes >= successThreshold ? true : verdict !== false && failures >= failureThreshold ? false : undefined;
    if (flipsTo !== undefined) {
      verdict = flipsTo;
      const done = kind === 'startup' || (kind === 'liveness' && !verdict);
      if (done) stopped = true;
      onVerdict(verdict, outcome);
      if (done) return;
    }
    if (!stopped) arm(periodMs);
  }

  arm(Math.max(0, probe.initialDelaySeconds ?? PROBE_DEFAULTS.initialDelaySeconds) * secondMs);
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * One worker per probe of `kinds` that the container declares, each reporting its verdicts
 * through `report` (what the process and CRI runtimes start when a container starts).
 */
export function createContainerProbeWorkers(options: {
  readonly container: Container;
  readonly kinds: readonly ProbeKind[];
  readonly target: ProbeTarget;
  readonly secondMs: number;
  readonly report: (kind: ProbeKind, ok: boolean, outcome: ProbeOutcome) => void;
  /** Every failed attempt of a probe, with its detail. */
  readonly failedAttempt?: (kind: ProbeKind, detail: string) => void;
}): ProbeWorker[] {
  const { container, kinds, target, secondMs, report, failedAttempt } = options;
  const workers: ProbeWorker[] = [];
  for (const kind of kinds) {
    const probe = kind === 'startup' ? container.startupProbe : kind === 'liveness' ? container.livenessProbe : container.readinessProbe;
    if (probe == null) continue;
    workers.push(
      createProbeWorker({
        kind,
        probe,
        target,
        secondMs,
        onVerdict: (ok, outcome) => report(kind, ok, outcome),
        ...(failedAttempt ? { onFailedAttempt: (detail: string) => failedAttempt(kind, detail) } : {}),
      }),
    );
  }
  return workers;
}
