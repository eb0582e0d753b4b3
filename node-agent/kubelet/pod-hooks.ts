/**
 * When the pod driver runs a container's lifecycle hooks (hooks.ts runs one), as kubelet 1.32
 * does:
 *
 * - **preStop** (kubelet's killContainer). A container with a preStop hook gets SIGTERM only
 *   once the hook has run, failed or not, within what is left of the grace period. A failure
 *   is the FailedPreStopHook Event. The reducer's SIGKILL at the end of the grace period still
 *   comes, and stops a hook that is still running.
 * - **postStart** (kubelet's startContainer). The hook runs right after the runtime started the
 *   container, and the container is reported started only once the hook is done: until then
 *   it waits (ContainerCreating). So the instance's `started` event is held while the hook
 *   runs, with whatever comes about the instance meanwhile. An exit stops the hook, as in
 *   kubelet, and so does the grace period's end. A failed hook is the FailedPostStartHook
 *   Event, and the container is killed once reported started (`postStartFailed`).
 */
import type { Logger } from 'pino';
import type { Pod } from '../../schemas/index.ts';
import { formatPod, KUBELET_REASONS, type KubeletEvent } from './events.ts';
import { runHook, type HookOutcome } from './hooks.ts';
import type { PodEvent, PodRun } from './lifecycle.ts';
import type { ContainerRef, Dispatch, RuntimeExecutor } from './pod-driver.ts';

export interface PodHooksOptions {
  readonly executor: Pick<RuntimeExecutor, 'hookTarget' | 'signal'>;
  readonly logger: Logger;
  readonly now: () => number;
  readonly dispatch: Dispatch;
  /** Records a kubelet Event (the driver's `events$`). */
  readonly record: (event: KubeletEvent) => void;
  /** Whether the driver still has the pod `uid`. */
  readonly alive: (uid: string) => boolean;
}

export interface PodHooks {
  /** SIGTERM for `ref` is due: true when it waits for the container's preStop hook (sent after it). */
  beforeStop(pod: Pod | undefined, ref: ContainerRef): boolean;
  /** `ref` got SIGKILL: its preStop hook stops. */
  killed(ref: ContainerRef): void;
  /** True when `event` about `run` is held for a postStart hook (delivered once the hook is done). */
  held(pod: Pod | undefined, run: PodRun, event: PodEvent): boolean;
}

/** A container instance whose postStart hook runs. */
interface PendingPostStart {
  readonly started: Extract<PodEvent, { type: 'started' }>;
  /** Events about the instance that came meanwhile (its exit), delivered after `started`. */
  readonly held: PodEvent[];
  readonly abort: AbortController;
}

const containerKey = (uid: string, container: string): string => `${uid}/${container}`;

const specOf = (pod: Pod, container: string) => [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c) => c.name === container);

/** Longest a postStart hook runs (kubelet gives it no limit: an exit or the grace period's end stops it). */
const NO_LIMIT_MS = 2 ** 31 - 1;

export function createPodHooks(options: PodHooksOptions): PodHooks {
  const { executor, logger, now, dispatch, record, alive } = options;
  const preStops = new Map<string, AbortController>();
  const postStarts = new Map<string, PendingPostStart>();
  /** `started` events whose postStart hook has run: delivered, never held again. */
  const delivered = new WeakSet<PodEvent>();

  const failed = (run: PodRun, container: string, reason: string, outcome: Extract<HookOutcome, { type: 'failure' }>): void => {
    logger.warn({ pod: `${run.namespace}/${run.name}`, container }, outcome.message);
    record({ uid: run.uid, namespace: run.namespace, name: run.name, container, type: 'Warning', reason, message: outcome.message });
  };

  const beforeStop: PodHooks['beforeStop'] = (pod, ref) => {
    const handler = pod && specOf(pod, ref.container)?.lifecycle?.preStop;
    if (pod === undefined || handler == null || executor.hookTarget === undefined) return false;
    const target = executor.hookTarget(pod, ref);
    if (target === undefined) return false;
    const { run } = ref;
    const key = containerKey(run.uid, ref.container);
    const timeoutMs = run.termination !== null ? Math.max(0, run.termination.deadline - now()) : run.graceMs;
    const abort = new AbortController();
    preStops.set(key, abort);
    logger.info({ pod: `${run.namespace}/${run.name}`, container: ref.container, timeoutMs }, 'running preStop hook');
    void runHook(handler, { container: ref.container, pod: formatPod(run) }, target, timeoutMs, abort.signal).then((outcome) => {
      if (preStops.get(key) === abort) preStops.delete(key);
      if (outcome.type === 'failure') failed(run, ref.container, KUBELET_REASONS.failedPreStopHook, outcome);
      // Killed meanwhile (the grace period is over): SIGKILL has been sent already.
      if (!abort.signal.aborted) executor.signal(ref, 'SIGTERM');
    });
    return true;
  };

  const startPostStart = (pod: Pod, run: PodRun, event: Extract<PodEvent, { type: 'started' }>): boolean => {
    const handler = specOf(pod, event.container)?.lifecycle?.postStart;
    if (handler == null || executor.hookTarget === undefined) return false;
    const target = executor.hookTarget(pod, { run, container: event.container, restartCount: event.restartCount });
    if (target === undefined) return false;
    const key = containerKey(run.uid, event.container);
    const pending: PendingPostStart = { started: event, held: [], abort: new AbortController() };
    postStarts.set(key, pending);
    logger.info({ pod: `${run.namespace}/${run.name}`, container: event.container }, 'running postStart hook');
    void runHook(handler, { container: event.container, pod: formatPod(run) }, target, NO_LIMIT_MS, pending.abort.signal).then((outcome) => {
      if (postStarts.get(key) === pending) postStarts.delete(key);
      if (!alive(run.uid)) return;
      const hookFailed = outcome.type === 'failure' && !pending.abort.signal.aborted;
      if (outcome.type === 'failure' && hookFailed) failed(run, event.container, KUBELET_REASONS.failedPostStartHook, outcome);
      delivered.add(event);
      dispatch(run.uid, event);
      for (const held of pending.held) dispatch(run.uid, held);
      if (hookFailed) dispatch(run.uid, { type: 'postStartFailed', container: event.container, restartCount: event.restartCount, at: now() });
    });
    return true;
  };

  const held: PodHooks['held'] = (pod, run, event) => {
    if (event.type === 'graceElapsed') {
      for (const [key, pending] of postStarts) if (key.startsWith(`${run.uid}/`)) pending.abort.abort();
      return false;
    }
    if (!('container' in event)) return false;
    const pending = postStarts.get(containerKey(run.uid, event.container));
    if (pending !== undefined) {
      if (!('restartCount' in event) || event.restartCount !== pending.started.restartCount) return false;
      pending.held.push(event);
      if (event.type === 'exited' || event.type === 'startFailed') pending.abort.abort();
      return true;
    }
    if (event.type !== 'started' || delivered.has(event) || pod === undefined) return false;
    return startPostStart(pod, run, event);
  };

  return {
    beforeStop,
    killed: (ref) => preStops.get(containerKey(ref.run.uid, ref.container))?.abort(),
    held,
  };
}
