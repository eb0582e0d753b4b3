/**
 * The `sim` runtime (KWOK-like): no processes. A container "starts" `startDelayMs` after
 * it is asked to and is then Running and ready; SIGTERM makes it exit 0 at once, SIGKILL
 * with 137. Failures are injected with `inject`. Probes do not run.
 *
 * Built to run the pods of ~1,000 nodes in one process: per pod only the small immutable
 * lifecycle state and its last status are kept, and every runtime schedules on one shared
 * timer queue (one Node timer for all simulated nodes; no per-pod intervals).
 */
import { KubeletError, KubeletNotFoundError } from './errors.ts';
import { assertNever } from '../../schemas/index.ts';
import type { ContainerRun } from './lifecycle.ts';
import { allocatePodIP } from './pod-cidr.ts';
import { type Dispatch, type PodDriver, type RuntimeExecutor, createPodDriver } from './pod-driver.ts';
import type { InjectedFailure, PodRuntime, ResolvedRuntimeOptions } from './runtime.ts';
import { type TimerQueue, sharedTimerQueue } from './timer-queue.ts';

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
    start(_pod, { run, container, restartCount }) {
      timers.schedule(startDelayMs, () =>
        dispatch(run.uid, { type: 'started', container, restartCount, containerID: `sim://${run.uid}/${container}/${restartCount}`, at: now() }),
      );
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

  const driver: PodDriver = createPodDriver({ node, logger, now, crashLoop: options.crashLoop, timers, executor: createExecutor });

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
    logs(namespace, name, container) {
      const run = driver.find(namespace, name);
      if (run === undefined) throw new KubeletNotFoundError(`pods "${name}" not found`, { namespace, name });
      if (!run.containers.some((c) => c.name === container)) throw new KubeletNotFoundError(`container ${container} is not valid for pod ${name}`, { namespace, name, container });
      return (async function* () {})();
    },
    inject,
    close: driver.close,
  };
}
