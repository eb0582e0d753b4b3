/**
 * The `sim` runtime (KWOK-like): no processes. A container "starts" `startDelayMs` after
 * it is asked to and is then Running and ready; SIGTERM makes it exit 0 at once, SIGKILL
 * with 137. Failures are injected with `inject`. Probes do not run. A container of the
 * built-in `logplane/crasher` image exits as the real one does (EXIT_CODE, default 1,
 * after EXIT_AFTER_MS, default 0; or `--exit-code`, `--after-ms`), so Jobs finish; a regular
 * init container of any other image exits 0 once started, so the app containers follow.
 *
 * Built to run the pods of ~1,000 nodes in one process: per pod only the small immutable
 * lifecycle state and its last status are kept, and every runtime schedules on one shared
 * timer queue (one Node timer for all simulated nodes; no per-pod intervals).
 */
import type { Pod } from '../../schemas/index.ts';
import { KubeletError, KubeletNotFoundError } from './errors.ts';
import { resolveImage } from './images.ts';
import { assertNever } from '../../schemas/index.ts';
import type { ContainerRun } from './lifecycle.ts';
import { allocatePodIP } from './pod-cidr.ts';
import { type Dispatch, type PodDriver, type RuntimeExecutor, createPodDriver } from './pod-driver.ts';
import type { InjectedFailure, PodRuntime, ResolvedRuntimeOptions } from './runtime.ts';
import { type TimerQueue, sharedTimerQueue } from './timer-queue.ts';

/**
 * How a container of `pod` exits by itself in the sim runtime: only the built-in crasher
 * does, with its arguments (`--exit-code N`, `--after-ms M`, also `--flag=value`) over its
 * literal env values (EXIT_CODE, EXIT_AFTER_MS); undefined for every other image.
 */
export function simulatedExit(pod: Pod, containerName: string): { readonly exitCode: number; readonly afterMs: number } | undefined {
  const container = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c) => c.name === containerName);
  if (container === undefined) return undefined;
  const image = resolveImage(container.image ?? '');
  if (image.type !== 'builtin' || image.name !== 'logplane/crasher') {
    // A regular init container does its work and exits 0 (as KWOK completes them); a sidecar runs on.
    const regularInit = (pod.spec.initContainers ?? []).includes(container) && container.restartPolicy !== 'Always';
    return regularInit ? { exitCode: 0, afterMs: 0 } : undefined;
  }
  const args = container.args ?? [];
  const arg = (flag: string): string | undefined => {
    for (let i = 0; i < args.length; i++) {
      if (args[i] === flag) return args[i + 1];
      if (args[i]?.startsWith(`${flag}=`)) return args[i]?.slice(flag.length + 1);
    }
    return undefined;
  };
  const env = (name: string): string | undefined => container.env?.find((e) => e.name === name)?.value;
  const exitCode = Number(arg('--exit-code') ?? env('EXIT_CODE') ?? 1);
  const afterMs = Number(arg('--after-ms') ?? env('EXIT_AFTER_MS') ?? 0);
  // The real crasher exits 2 on bad arguments.
  if (!Number.isInteger(exitCode) || exitCode < 0 || exitCode > 255 || !Number.isFinite(afterMs) || afterMs < 0) return { exitCode: 2, afterMs: 0 };
  return { exitCode, afterMs };
}

/** Creates a sim runtime; `timers` defaults to the process-wide shared queue. */
export function createSimRuntime(options: ResolvedRuntimeOptions, timers: TimerQueue = sharedTimerQueue()): PodRuntime {
  const { podCidr, hostIP, node, logger, now, startDelayMs } = options;
  /** Addresses of this node's pods (a pod's own address is on its run: `run.podIP`). */
  const takenIPs = new Set<string>();

  const createExecutor = (dispatch: Dispatch): RuntimeExecutor => ({
    runsProbes: false,
    admit(_pod, uid) {
      const podIP = allocatePodIP(podCidr, uid, takenIPs);
      takenIPs.add(podIP);
      return { podIP, hostIP };
    },
    restore: () => [],
    resume() {},
    start(pod, { run, container, restartCount }) {
      const exit = simulatedExit(pod, container);
      timers.schedule(startDelayMs, () => {
        dispatch(run.uid, { type: 'started', container, restartCount, containerID: `sim://${run.uid}/${container}/${restartCount}`, at: now() });
        // A stale exit (the container was stopped or restarted meanwhile) is ignored by the lifecycle.
        if (exit) timers.schedule(exit.afterMs, () => dispatch(run.uid, { type: 'exited', container, restartCount, exitCode: exit.exitCode, signal: null, at: now() }));
      });
    },
    signal({ run, container, restartCount }, signal) {
      switch (signal) {
        case 'SIGTERM':
          dispatch(run.uid, { type: 'exited', container, restartCount, exitCode: 0, signal: null, at: now() });
          break;
        case 'SIGKILL':
          dispatch(run.uid, { type: 'exited', container, restartCount, exitCode: 137, signal: 9, at: now() });
          break;
        default:
          assertNever(signal, 'signal');
      }
    },
    startProbes() {},
    stopProbes() {},
    persist() {},
    release(run) {
      takenIPs.delete(run.podIP);
    },
    close() {},
  });

  const driver: PodDriver = createPodDriver({ node, logger, now, crashLoop: options.crashLoop, timers, executor: createExecutor, imagesPresent: true });

  function inject(namespace: string, name: string, failure: InjectedFailure): void {
    const run = driver.find(namespace, name);
    if (run === undefined) throw new KubeletNotFoundError(`pods "${name}" not found`, { namespace, name });
    const target: ContainerRun | undefined = failure.container === undefined ? run.containers[0] : run.containers.find((c) => c.name === failure.container);
    if (target === undefined) throw new KubeletNotFoundError(`container ${failure.container ?? ''} is not valid for pod ${name}`, { namespace, name });
    if (target.phase.type !== 'running') {
      throw new KubeletError(`container ${target.name} of pod ${namespace}/${name} is not running (${target.phase.type})`, true, { namespace, name, container: target.name });
    }
    logger.info({ pod: `${namespace}/${name}`, container: target.name, failure }, 'injecting failure');
    switch (failure.type) {
      case 'exit':
        driver.dispatch(run.uid, { type: 'exited', container: target.name, restartCount: target.restartCount, exitCode: failure.exitCode, signal: null, at: now() });
        break;
      case 'readiness':
        driver.dispatch(run.uid, { type: 'probe', container: target.name, restartCount: target.restartCount, probe: 'readiness', ok: failure.ready, at: now() });
        break;
      default:
        assertNever(failure, 'injected failure');
    }
  }

  return {
    kind: 'sim',
    sync: driver.sync,
    statuses$: driver.statuses$,
    events$: driver.events$,
    logs(namespace, name, container) {
      const run = driver.find(namespace, name);
      if (run === undefined) throw new KubeletNotFoundError(`pods "${name}" not found`, { namespace, name });
      if (!run.containers.some((c) => c.name === container)) throw new KubeletNotFoundError(`container ${container} is not valid for pod ${name}`, { namespace, name, container });
      return (async function* () {})();
    },
    // Simulated pods use nothing: zeros, so `kubectl top` lists them.
    usage: async () =>
      driver.runs().flatMap((run) => {
        const containers = run.containers
          .filter((c) => c.phase.type === 'running')
          .map((c) => ({ name: c.name, restartCount: c.restartCount, timeMs: now(), cpuUsageNanoSeconds: 0, memoryWorkingSetBytes: 0 }));
        return containers.length > 0 ? [{ namespace: run.namespace, name: run.name, uid: run.uid, containers }] : [];
      }),
    inject,
    close: driver.close,
  };
}
