/**
 * The lifecycle of one pod's containers as a pure state machine:
 * `reducePod(run, event, policy) → { run, effects }`.
 *
 * Runtimes (process, sim) perform the effects (start a container, signal it, arm a timer,
 * start probes) and feed back what happened as events (started, exited, probe verdict,
 * timer elapsed). Nothing here does I/O or reads a clock: every event carries its time.
 *
 * Kubernetes semantics reproduced here:
 * - restartPolicy Always / OnFailure / Never decides whether an exited container restarts;
 * - crash-loop backoff as kubelet: the first restart is immediate, later ones wait
 *   `initialMs`, doubling up to `maxMs` (state waiting `CrashLoopBackOff`); the backoff
 *   resets once an instance ran `resetAfterMs`;
 * - a startup probe gates liveness and readiness; a failed liveness (or startup) probe
 *   kills the container (SIGTERM, SIGKILL after the grace period), which then restarts per
 *   policy; readiness sets the container's `ready`;
 * - termination: SIGTERM to every running container, SIGKILL at the grace deadline
 *   (a later, shorter grace period wins), then the pod is `stopped`;
 * - init containers (kubelet's computeInitContainerActions): they run one at a time in spec
 *   order before the app containers, which wait (`PodInitializing`) until every regular init
 *   container has exited 0 and every sidecar (an init container with `restartPolicy: Always`)
 *   has started. A regular init container that fails restarts with backoff unless the pod's
 *   policy is Never (the pod then fails); one that succeeded never runs again. A sidecar
 *   restarts whenever it exits, until the app containers are done: then (restartPolicy Never
 *   or OnFailure) it is stopped, as it is on termination once the app containers have stopped.
 */
import { assertNever } from '../../schemas/index.ts';

/** `spec.restartPolicy` values. */
export const RESTART_POLICIES = { always: 'Always', onFailure: 'OnFailure', never: 'Never' } as const;
export type RestartPolicy = (typeof RESTART_POLICIES)[keyof typeof RESTART_POLICIES];

/** The three probe kinds of a container. */
export const PROBE_KINDS = ['startup', 'liveness', 'readiness'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

/** Which probes a container has (fixed when the pod is admitted). */
export type ProbeSet = Readonly<Record<ProbeKind, boolean>>;

/** Crash-loop backoff parameters, in milliseconds. */
export interface CrashLoopPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** An instance that ran at least this long resets the backoff (kubelet: 10 minutes). */
  readonly resetAfterMs: number;
}

/** Kubelet's defaults: 10 s doubling to 5 min, reset after 10 min of running. */
export const DEFAULT_CRASH_LOOP: CrashLoopPolicy = { initialMs: 10_000, maxMs: 300_000, resetAfterMs: 600_000 };

/** Signals a runtime sends to a container's process group. */
export type StopSignal = 'SIGTERM' | 'SIGKILL';

/** How one instance of a container ended (`state.terminated` / `lastState.terminated`). */
export interface ContainerExit {
  readonly exitCode: number;
  readonly signal: number | null;
  readonly reason: string;
  readonly message: string | null;
  readonly startedAt: number | null;
  readonly finishedAt: number;
  readonly containerID: string | null;
}

/** Why a running container is being stopped. */
export type KillCause = 'liveness' | 'startup' | 'postStart' | 'termination';

/** Where a container is declared: `initContainers` (a sidecar when its restartPolicy is Always) or `containers`. */
export type ContainerRole = 'init' | 'sidecar' | 'app';

/** Where a container is in its lifecycle. */
export type ContainerPhase =
  /** Not started yet: an init container before it (or, for an app container, one of them) is not done; waiting `PodInitializing`. */
  | { readonly type: 'pending' }
  /** A start was requested; waiting `ContainerCreating`. */
  | { readonly type: 'creating' }
  /** The runtime will never start it (e.g. unknown image without command); waiting with this reason. */
  | { readonly type: 'refused'; readonly reason: string; readonly message: string }
  /** Exited, restarts at `untilMs`; waiting `CrashLoopBackOff`. */
  | { readonly type: 'backoff'; readonly delayMs: number; readonly untilMs: number }
  | {
      readonly type: 'running';
      readonly startedAt: number;
      /** Startup probe passed (or there is none). */
      readonly started: boolean;
      /** Latest readiness verdict (true when there is no readiness probe). */
      readonly ready: boolean;
      /** Set once a stop signal was sent. */
      readonly killing: KillCause | null;
    }
  /** Exited and will not restart. */
  | { readonly type: 'exited'; readonly exit: ContainerExit };

/** One container of a pod, across its restarts. */
export interface ContainerRun {
  readonly name: string;
  /** Absent in records written before init containers ran: those are app containers. */
  readonly role?: ContainerRole;
  readonly image: string;
  readonly probes: ProbeSet;
  /** Index of the current (or next) instance; Kubernetes' restartCount. */
  readonly restartCount: number;
  /** ID of the current instance once it started, else of the last one. */
  readonly containerID: string | null;
  readonly phase: ContainerPhase;
  /** How the previous instance ended (`lastState.terminated`). */
  readonly last: ContainerExit | null;
  /** Delay the next crash will wait; null until the first restart. */
  readonly backoffMs: number | null;
}

/** The pod is being terminated. */
export interface Termination {
  /** Time at which remaining containers get SIGKILL. */
  readonly deadline: number;
  readonly killed: boolean;
  /** Every container has stopped. */
  readonly stopped: boolean;
}

/** One pod as the runtime runs it: identity, addresses, containers. */
export interface PodRun {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly restartPolicy: RestartPolicy;
  /** Grace period for container kills (liveness) and the default for termination. */
  readonly graceMs: number;
  readonly podIP: string;
  readonly hostIP: string;
  readonly startTime: number;
  /** Init containers first (spec order), then the app containers. */
  readonly containers: readonly ContainerRun[];
  readonly termination: Termination | null;
}

/** A container's role (records from before init containers ran have none: app). */
export const roleOf = (c: ContainerRun): ContainerRole => c.role ?? 'app';
/** The containers declared in `initContainers` (regular and sidecars), in order. */
export const initContainersOf = (run: PodRun): readonly ContainerRun[] => run.containers.filter((c) => roleOf(c) !== 'app');
/** The containers declared in `containers`. */
export const appContainersOf = (run: PodRun): readonly ContainerRun[] => run.containers.filter((c) => roleOf(c) === 'app');

/** A regular init container failed for good (restartPolicy Never): the pod has failed. */
export const initFailed = (run: PodRun): boolean =>
  run.containers.some((c) => roleOf(c) === 'init' && c.phase.type === 'exited' && c.phase.exit.exitCode !== 0);

/** Whether init container `c` lets the next one (and, for the last, the app containers) start. */
export const initDone = (c: ContainerRun): boolean =>
  roleOf(c) === 'sidecar' ? c.phase.type === 'running' && c.phase.started && c.phase.killing === null : c.phase.type === 'exited' && c.phase.exit.exitCode === 0;

/** What happened to a pod, as reported by the runtime or its timers. */
export type PodEvent =
  | { readonly type: 'started'; readonly container: string; readonly restartCount: number; readonly containerID: string; readonly at: number }
  /**
   * The container cannot be started: it waits with `reason`. With `retryAfterMs` the start is
   * tried again then (kubelet's pod worker retries a `CreateContainerConfigError`), else never.
   */
  | { readonly type: 'refused'; readonly container: string; readonly reason: string; readonly message: string; readonly retryAfterMs?: number; readonly at: number }
  /** A refused container's retry is due. */
  | { readonly type: 'retryElapsed'; readonly container: string; readonly at: number }
  /** The process could not be started (e.g. command not found): an exit with code 128, reason StartError. */
  | { readonly type: 'startFailed'; readonly container: string; readonly restartCount: number; readonly message: string; readonly at: number }
  | {
      readonly type: 'exited';
      readonly container: string;
      readonly restartCount: number;
      readonly exitCode: number;
      readonly signal: number | null;
      /** Overrides the reason derived from the exit code (Completed / Error). */
      readonly reason?: string;
      readonly message?: string;
      readonly at: number;
    }
  /** A probe's verdict changed; `detail` says why the last attempt failed (for logs). */
  | {
      readonly type: 'probe';
      readonly container: string;
      readonly restartCount: number;
      readonly probe: ProbeKind;
      readonly ok: boolean;
      readonly detail?: string;
      readonly at: number;
    }
  /** The instance's postStart hook failed: kubelet kills it (then it restarts by its policy). */
  | { readonly type: 'postStartFailed'; readonly container: string; readonly restartCount: number; readonly at: number }
  | { readonly type: 'backoffElapsed'; readonly container: string; readonly at: number }
  | { readonly type: 'killTimeout'; readonly container: string; readonly restartCount: number; readonly at: number }
  | { readonly type: 'terminate'; readonly graceMs: number; readonly at: number }
  | { readonly type: 'graceElapsed'; readonly at: number };

/** Timers a pod can have armed; each fires the event of the same name. */
export type PodTimer =
  | { readonly type: 'backoff'; readonly container: string }
  | { readonly type: 'retry'; readonly container: string }
  | { readonly type: 'kill'; readonly container: string; readonly restartCount: number }
  | { readonly type: 'grace' };

/** What the runtime must do after a transition. */
export type PodEffect =
  | { readonly type: 'start'; readonly container: string; readonly restartCount: number }
  | { readonly type: 'signal'; readonly container: string; readonly restartCount: number; readonly signal: StopSignal }
  | { readonly type: 'startProbes'; readonly container: string; readonly restartCount: number; readonly probes: readonly ProbeKind[] }
  | { readonly type: 'stopProbes'; readonly container: string }
  /** Arms a timer, replacing an armed timer of the same identity. */
  | { readonly type: 'setTimer'; readonly timer: PodTimer; readonly delayMs: number }
  | { readonly type: 'clearTimer'; readonly timer: PodTimer }
  /** Every container of a terminating pod has stopped. Emitted once. */
  | { readonly type: 'stopped' };

/** Result of a transition. */
export interface Transition {
  readonly run: PodRun;
  readonly effects: readonly PodEffect[];
}

/** What a new pod needs besides its containers. */
export type PodRunInit = Omit<PodRun, 'containers' | 'termination'>;

/** A container as declared by the spec. */
export interface ContainerDecl {
  readonly name: string;
  readonly image: string;
  readonly probes: ProbeSet;
  /** Default `app`. */
  readonly role?: ContainerRole;
}

/**
 * A new pod: its first init container `creating` and the others `pending`, or, without init
 * containers, every container `creating`; a start effect each that is creating. Init containers
 * come first in `containers`.
 */
export function admitPod(init: PodRunInit, containers: readonly ContainerDecl[]): Transition {
  // Literals with every field named, not spreads plus new fields: V8 (Node 20) gives each
  // object made by a spread plus a new property its own hidden class, which every later
  // `{ ...run }` of the pod keeps (~300 bytes per pod and per container).
  const run: PodRun = {
    uid: init.uid,
    namespace: init.namespace,
    name: init.name,
    restartPolicy: init.restartPolicy,
    graceMs: init.graceMs,
    podIP: init.podIP,
    hostIP: init.hostIP,
    startTime: init.startTime,
    termination: null,
    containers: containers.map((c) => ({ name: c.name, role: c.role ?? 'app', image: c.image, probes: c.probes, restartCount: 0, containerID: null, phase: { type: 'pending' }, last: null, backoffMs: null })),
  };
  return advance({ run, effects: [] });
}

/**
 * Starts what may start now (kubelet's computeInitContainerActions): the first init container
 * that is not done, if it is still pending; once every init container is done, the first
 * pending app container unless one before it is still being created (kubelet's SyncPod starts
 * them in order, each start with its postStart hook). Nothing starts in a terminating pod.
 */
function advance({ run, effects }: Transition): Transition {
  // Every transition passes here: nothing to look at (no allocation) unless a container waits.
  if (run.termination !== null || !run.containers.some((c) => c.phase.type === 'pending')) return { run, effects };
  const starting = new Set<ContainerRun>();
  let initialized = true;
  for (const c of run.containers) {
    if (roleOf(c) === 'app') continue;
    if (initDone(c)) continue;
    initialized = false;
    if (c.phase.type === 'pending') starting.add(c);
    break;
  }
  if (initialized) {
    // One after another, as kubelet's SyncPod starts them: a container's first start (its
    // postStart hook included; the driver holds `started` until the hook is done) ends before
    // the next begins. A restart of one that failed is a later sync's and holds nothing back.
    for (const c of run.containers) {
      if (roleOf(c) !== 'app') continue;
      if (c.phase.type === 'creating' && c.restartCount === 0) break;
      if (c.phase.type === 'pending') {
        starting.add(c);
        break;
      }
    }
  }
  if (starting.size === 0) return { run, effects };
  const started: PodEffect[] = [];
  const containers = run.containers.map((c): ContainerRun => {
    if (!starting.has(c)) return c;
    started.push({ type: 'start', container: c.name, restartCount: c.restartCount });
    return { ...c, phase: { type: 'creating' } };
  });
  return { run: { ...run, containers }, effects: [...effects, ...started] };
}

/**
 * A container of a pod restored from a previous agent run: the instance recorded with the
 * container's current restart count is assumed running as `recorded.containerID` (the
 * runtime's `resume` checks it), a container waiting for a restart restarts now, an exited
 * one stays exited.
 */
export function restoredContainer(
  c: ContainerRun,
  recorded: { readonly restartCount: number; readonly containerID: string } | undefined,
  startedAtFallback: number,
): ContainerRun {
  if (recorded !== undefined && recorded.restartCount === c.restartCount && c.phase.type !== 'exited') {
    const startedAt = c.phase.type === 'running' ? c.phase.startedAt : startedAtFallback;
    const phase: ContainerPhase = { type: 'running', startedAt, started: true, ready: !c.probes.readiness, killing: null };
    return { ...c, containerID: recorded.containerID, phase };
  }
  switch (c.phase.type) {
    case 'exited':
      return c;
    case 'backoff':
      return { ...c, restartCount: c.restartCount + 1, phase: { type: 'creating' } };
    case 'running':
    case 'creating':
    case 'refused':
      return { ...c, phase: { type: 'creating' } };
    case 'pending':
      return c;
    default:
      return assertNever(c.phase, 'container phase');
  }
}

/**
 * Effects that resume a pod restored after an agent restart: probes for the containers
 * still running (adopted; their startup counts as passed) and starts for those `creating`.
 */
export function resumePod(run: PodRun): readonly PodEffect[] {
  return run.containers.flatMap((c): PodEffect[] => {
    switch (c.phase.type) {
      case 'running':
        return c.phase.killing === null ? [{ type: 'startProbes', container: c.name, restartCount: c.restartCount, probes: mainProbes(c.probes) }] : [];
      case 'creating':
        return [{ type: 'start', container: c.name, restartCount: c.restartCount }];
      case 'refused':
      case 'backoff':
      case 'exited':
      case 'pending':
        return [];
      default:
        return assertNever(c.phase);
    }
  });
}

/**
 * A restored pod that is no longer desired will never have its pending starts performed:
 * containers still `creating` count as exited (status unknown), so termination can finish.
 */
export function abandonUnstarted(run: PodRun, at: number): PodRun {
  return {
    ...run,
    containers: run.containers.map((c) => (c.phase.type === 'creating' || c.phase.type === 'pending' ? { ...c, phase: { type: 'exited', exit: unknownExit(at, c.containerID) } } : c)),
  };
}

/** A running container is ready when started, its readiness passed and nothing is stopping it. */
export function isContainerReady(c: ContainerRun): boolean {
  return c.phase.type === 'running' && c.phase.started && c.phase.ready && c.phase.killing === null;
}

const mainProbes = (probes: ProbeSet): ProbeKind[] => (['liveness', 'readiness'] as const).filter((kind) => probes[kind]);

/** Go-style duration text used in kubelet messages: 200ms, 10s, 1m20s, 5m0s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalSeconds = ms / 1000;
  if (totalSeconds < 60) return `${Number(totalSeconds.toFixed(3))}s`;
  const minutes = Math.floor(totalSeconds / 60);
  return `${minutes}m${Number((totalSeconds - minutes * 60).toFixed(3))}s`;
}

/** Applies one event. Events about an older instance of a container are ignored. */
export function reducePod(run: PodRun, event: PodEvent, policy: CrashLoopPolicy): Transition {
  switch (event.type) {
    case 'started':
      return onStarted(run, event);
    case 'refused':
      return withContainer(run, event.container, (c) =>
        c.phase.type === 'creating'
          ? settle(
              run,
              c,
              { ...c, phase: { type: 'refused', reason: event.reason, message: event.message } },
              event.retryAfterMs === undefined ? [] : [{ type: 'setTimer', timer: { type: 'retry', container: c.name }, delayMs: event.retryAfterMs }],
            )
          : unchanged(run),
      );
    case 'retryElapsed':
      return withContainer(run, event.container, (c) =>
        c.phase.type === 'refused' && run.termination === null ? settle(run, c, { ...c, phase: { type: 'creating' } }, [{ type: 'start', container: c.name, restartCount: c.restartCount }]) : unchanged(run),
      );
    case 'startFailed':
      return onExited(run, { type: 'exited', container: event.container, restartCount: event.restartCount, exitCode: 128, signal: null, reason: 'StartError', message: event.message, at: event.at }, policy);
    case 'exited':
      return onExited(run, event, policy);
    case 'probe':
      return onProbe(run, event);
    case 'postStartFailed':
      return withContainer(run, event.container, (c) =>
        c.phase.type === 'running' && c.restartCount === event.restartCount && c.phase.killing === null ? kill(run, c, c.phase, 'postStart') : unchanged(run),
      );
    case 'backoffElapsed':
      return withContainer(run, event.container, (c) => {
        if (c.phase.type !== 'backoff' || run.termination !== null) return unchanged(run);
        const restartCount = c.restartCount + 1;
        const next: ContainerRun = { ...c, restartCount, phase: { type: 'creating' }, backoffMs: Math.min(c.phase.delayMs * 2, policy.maxMs) };
        return settle(run, c, next, [{ type: 'start', container: c.name, restartCount }]);
      });
    case 'killTimeout':
      return withContainer(run, event.container, (c) =>
        c.phase.type === 'running' && c.restartCount === event.restartCount && c.phase.killing !== null
          ? { run, effects: [{ type: 'signal', container: c.name, restartCount: c.restartCount, signal: 'SIGKILL' }] }
          : unchanged(run),
      );
    case 'terminate':
      return onTerminate(run, event);
    case 'graceElapsed':
      return run.termination === null || run.termination.killed ? unchanged(run) : killAll(run, run.termination);
    default:
      return assertNever(event, 'pod event');
  }
}

function unchanged(run: PodRun): Transition {
  return { run, effects: [] };
}

function withContainer(run: PodRun, name: string, fn: (c: ContainerRun) => Transition): Transition {
  const c = run.containers.find((candidate) => candidate.name === name);
  return c === undefined ? unchanged(run) : fn(c);
}

/**
 * Replaces container `before` by `after`, starts what may start now, stops the sidecars once
 * nothing needs them, then checks whether a terminating pod has fully stopped.
 */
function settle(run: PodRun, before: ContainerRun, after: ContainerRun, effects: readonly PodEffect[]): Transition {
  const next: PodRun = { ...run, containers: run.containers.map((c) => (c === before ? after : c)) };
  return finishIfStopped(stopSidecars(advance({ run: next, effects })));
}

/** A container that has stopped for good, or never started and never will (the pod is done with it). */
const isDone = (c: ContainerRun): boolean => c.phase.type === 'exited' || c.phase.type === 'pending';

/**
 * Sidecars outlive the app containers only as long as those may still run: in a terminating
 * pod once every other container has stopped, and in a pod whose app containers have all
 * exited for good (restartPolicy Never or OnFailure), they get SIGTERM (SIGKILL once the grace
 * period is over), as kubelet stops restartable init containers after the main ones.
 */
function stopSidecars({ run, effects }: Transition): Transition {
  if (!run.containers.some((c) => c.role === 'sidecar')) return { run, effects };
  const sidecars = run.containers.filter((c) => roleOf(c) === 'sidecar' && c.phase.type === 'running' && c.phase.killing === null);
  if (sidecars.length === 0) return { run, effects };
  const apps = appContainersOf(run);
  const needed =
    run.termination !== null
      ? run.containers.some((c) => roleOf(c) !== 'sidecar' && !isDone(c))
      : !initFailed(run) && (apps.length === 0 || !apps.every((c) => c.phase.type === 'exited'));
  if (needed) return { run, effects };
  const killed = run.termination?.killed === true;
  const signals: PodEffect[] = [];
  const containers = run.containers.map((c): ContainerRun => {
    if (!sidecars.includes(c) || c.phase.type !== 'running') return c;
    signals.push({ type: 'stopProbes', container: c.name }, { type: 'signal', container: c.name, restartCount: c.restartCount, signal: killed || run.graceMs === 0 ? 'SIGKILL' : 'SIGTERM' });
    if (run.termination === null && run.graceMs > 0) signals.push({ type: 'setTimer', timer: { type: 'kill', container: c.name, restartCount: c.restartCount }, delayMs: run.graceMs });
    return { ...c, phase: { ...c.phase, ready: false, killing: 'termination' } };
  });
  return { run: { ...run, containers }, effects: [...effects, ...signals] };
}

function finishIfStopped({ run, effects }: Transition): Transition {
  const t = run.termination;
  if (t === null || t.stopped || !run.containers.every(isDone)) return { run, effects };
  return { run: { ...run, termination: { ...t, stopped: true } }, effects: [...effects, { type: 'clearTimer', timer: { type: 'grace' } }, { type: 'stopped' }] };
}

function onStarted(run: PodRun, event: Extract<PodEvent, { type: 'started' }>): Transition {
  return withContainer(run, event.container, (c) => {
    if (c.phase.type !== 'creating' || c.restartCount !== event.restartCount) return unchanged(run);
    if (run.termination !== null) {
      const phase: ContainerPhase = { type: 'running', startedAt: event.at, started: false, ready: false, killing: 'termination' };
      const signal: StopSignal = run.termination.killed ? 'SIGKILL' : 'SIGTERM';
      return settle(run, c, { ...c, containerID: event.containerID, phase }, [{ type: 'signal', container: c.name, restartCount: c.restartCount, signal }]);
    }
    const started = !c.probes.startup;
    const phase: ContainerPhase = { type: 'running', startedAt: event.at, started, ready: !c.probes.readiness, killing: null };
    const probes = started ? mainProbes(c.probes) : (['startup'] as ProbeKind[]);
    const effects: PodEffect[] = probes.length === 0 ? [] : [{ type: 'startProbes', container: c.name, restartCount: c.restartCount, probes }];
    return settle(run, c, { ...c, containerID: event.containerID, phase }, effects);
  });
}

/** Whether container `c` restarts after exiting with `exitCode` (kubelet: a sidecar always, a regular init container only on failure and not under Never, a stopped sidecar never). */
function restarts(run: PodRun, c: ContainerRun, exitCode: number): boolean {
  const role = roleOf(c);
  switch (role) {
    case 'sidecar':
      return !(c.phase.type === 'running' && c.phase.killing === 'termination');
    case 'init':
      return exitCode !== 0 && run.restartPolicy !== 'Never';
    case 'app':
      return shouldRestart(run.restartPolicy, exitCode);
    default:
      return assertNever(role, 'container role');
  }
}

function shouldRestart(policy: RestartPolicy, exitCode: number): boolean {
  switch (policy) {
    case 'Always':
      return true;
    case 'OnFailure':
      return exitCode !== 0;
    case 'Never':
      return false;
    default:
      return assertNever(policy, 'restart policy');
  }
}

function onExited(run: PodRun, event: Extract<PodEvent, { type: 'exited' }>, policy: CrashLoopPolicy): Transition {
  return withContainer(run, event.container, (c) => {
    const live = c.phase.type === 'running' || c.phase.type === 'creating';
    if (!live || c.restartCount !== event.restartCount) return unchanged(run);
    const startedAt = c.phase.type === 'running' ? c.phase.startedAt : null;
    const exit: ContainerExit = {
      exitCode: event.exitCode,
      signal: event.signal,
      reason: event.reason ?? (event.exitCode === 0 ? 'Completed' : 'Error'),
      message: event.message ?? null,
      startedAt,
      finishedAt: event.at,
      containerID: c.phase.type === 'running' ? c.containerID : null,
    };
    const cleanup: PodEffect[] = [
      { type: 'stopProbes', container: c.name },
      { type: 'clearTimer', timer: { type: 'kill', container: c.name, restartCount: c.restartCount } },
    ];
    if (run.termination !== null || !restarts(run, c, exit.exitCode)) {
      return settle(run, c, { ...c, containerID: exit.containerID ?? c.containerID, phase: { type: 'exited', exit } }, cleanup);
    }
    const ranLongEnough = startedAt !== null && event.at - startedAt >= policy.resetAfterMs;
    const backoffMs = ranLongEnough ? null : c.backoffMs;
    if (backoffMs === null) {
      const restartCount = c.restartCount + 1;
      const next: ContainerRun = { ...c, restartCount, containerID: exit.containerID ?? c.containerID, phase: { type: 'creating' }, last: exit, backoffMs: policy.initialMs };
      return settle(run, c, next, [...cleanup, { type: 'start', container: c.name, restartCount }]);
    }
    const next: ContainerRun = {
      ...c,
      containerID: exit.containerID ?? c.containerID,
      phase: { type: 'backoff', delayMs: backoffMs, untilMs: event.at + backoffMs },
      last: exit,
    };
    return settle(run, c, next, [...cleanup, { type: 'setTimer', timer: { type: 'backoff', container: c.name }, delayMs: backoffMs }]);
  });
}

function onProbe(run: PodRun, event: Extract<PodEvent, { type: 'probe' }>): Transition {
  return withContainer(run, event.container, (c) => {
    const phase = c.phase;
    if (phase.type !== 'running' || c.restartCount !== event.restartCount || phase.killing !== null || run.termination !== null) return unchanged(run);
    const replace = (next: ContainerPhase, effects: PodEffect[]): Transition => settle(run, c, { ...c, phase: next }, effects);
    switch (event.probe) {
      case 'startup': {
        if (phase.started) return unchanged(run);
        if (!event.ok) return kill(run, c, phase, 'startup');
        const probes = mainProbes(c.probes);
        return replace({ ...phase, started: true }, probes.length === 0 ? [] : [{ type: 'startProbes', container: c.name, restartCount: c.restartCount, probes }]);
      }
      case 'liveness':
        return event.ok ? unchanged(run) : kill(run, c, phase, 'liveness');
      case 'readiness':
        return phase.ready === event.ok ? unchanged(run) : replace({ ...phase, ready: event.ok }, []);
      default:
        return assertNever(event.probe, 'probe kind');
    }
  });
}

/** Stops a container because a probe failed: SIGTERM now, SIGKILL after the pod's grace period. */
function kill(run: PodRun, c: ContainerRun, phase: Extract<ContainerPhase, { type: 'running' }>, cause: KillCause): Transition {
  const effects: PodEffect[] = [
    { type: 'stopProbes', container: c.name },
    { type: 'signal', container: c.name, restartCount: c.restartCount, signal: run.graceMs === 0 ? 'SIGKILL' : 'SIGTERM' },
  ];
  if (run.graceMs > 0) effects.push({ type: 'setTimer', timer: { type: 'kill', container: c.name, restartCount: c.restartCount }, delayMs: run.graceMs });
  return settle(run, c, { ...c, phase: { ...phase, killing: cause } }, effects);
}

/** The grace period is over: SIGKILL to every container still running. */
function killAll(run: PodRun, termination: Termination): Transition {
  const effects: PodEffect[] = run.containers
    .filter((c) => c.phase.type === 'running')
    .map((c) => ({ type: 'signal', container: c.name, restartCount: c.restartCount, signal: 'SIGKILL' }));
  return { run: { ...run, termination: { ...termination, killed: true } }, effects: [...effects, { type: 'clearTimer', timer: { type: 'grace' } }] };
}

/** Exit recorded for a container that never ran (or whose process is gone) when its pod terminates. */
const unknownExit = (at: number, containerID: string | null): ContainerExit => ({
  exitCode: 137,
  signal: null,
  reason: 'ContainerStatusUnknown',
  message: 'The container could not be located when the pod was terminated',
  startedAt: null,
  finishedAt: at,
  containerID,
});

function onTerminate(run: PodRun, event: Extract<PodEvent, { type: 'terminate' }>): Transition {
  const deadline = event.at + Math.max(0, event.graceMs);
  if (run.termination !== null) {
    if (run.termination.stopped || run.termination.killed || deadline >= run.termination.deadline) return unchanged(run);
    const termination = { ...run.termination, deadline };
    if (deadline <= event.at) return killAll(run, termination);
    return { run: { ...run, termination }, effects: [{ type: 'setTimer', timer: { type: 'grace' }, delayMs: deadline - event.at }] };
  }
  const immediate = deadline <= event.at;
  const effects: PodEffect[] = [];
  // Sidecars are stopped after the other containers (stopSidecars), unless the stop is immediate.
  const containers = run.containers.map((c): ContainerRun => {
    const phase = c.phase;
    switch (phase.type) {
      case 'running':
        if (roleOf(c) === 'sidecar' && phase.killing === null && !immediate) return { ...c, phase: { ...phase, ready: false } };
        effects.push({ type: 'stopProbes', container: c.name });
        if (phase.killing === null || immediate) {
          effects.push({ type: 'signal', container: c.name, restartCount: c.restartCount, signal: immediate ? 'SIGKILL' : 'SIGTERM' });
        }
        return { ...c, phase: { ...phase, ready: false, killing: phase.killing ?? 'termination' } };
      case 'creating':
        return c;
      case 'backoff':
        effects.push({ type: 'clearTimer', timer: { type: 'backoff', container: c.name } });
        return { ...c, phase: { type: 'exited', exit: c.last ?? unknownExit(event.at, c.containerID) } };
      case 'refused':
        return { ...c, phase: { type: 'exited', exit: unknownExit(event.at, null) } };
      case 'exited':
      case 'pending':
        return c;
      default:
        return assertNever(phase);
    }
  });
  const live = containers.some((c) => c.phase.type === 'running' || c.phase.type === 'creating');
  if (live && !immediate) effects.push({ type: 'setTimer', timer: { type: 'grace' }, delayMs: deadline - event.at });
  return finishIfStopped(stopSidecars({ run: { ...run, containers, termination: { deadline, killed: immediate, stopped: false } }, effects }));
}
