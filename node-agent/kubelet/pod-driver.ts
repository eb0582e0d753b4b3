/**
 * The runtime-independent part of the pod runtime: the desired set (`sync`), the pure
 * lifecycle reducer per pod, timers, status computation and emission. A
 * {@link RuntimeExecutor} (process or sim) performs the effects and reports back events.
 *
 * Events are processed through one queue: an executor may report synchronously from
 * inside an effect without re-entering the reducer; statuses are computed once per batch.
 */
import type { Logger } from 'pino';
import { Subject, concat, defer, from, type Observable } from 'rxjs';
import { KubeletClosedError } from './errors.ts';
import { assertNever } from '../../schemas/index.ts';
import {
  type ContainerRole,
  type ContainerDecl,
  type CrashLoopPolicy,
  type PodEffect,
  type PodEvent,
  type PodRun,
  type PodTimer,
  type ProbeKind,
  type RestartPolicy,
  RESTART_POLICIES,
  type StopSignal,
  abandonUnstarted,
  admitPod,
  reducePod,
  resumePod,
} from './lifecycle.ts';
import type { Container, Pod, PodStatus } from '../../schemas/index.ts';
import { jsonEqual, k8sTime, podStatus, withTransitionTimes } from './status.ts';
import type { CancelTimer, TimerQueue } from './timer-queue.ts';
import { kubeletEvents, unhealthyEvent, type KubeletEvent } from './events.ts';
import { createPodHooks } from './pod-hooks.ts';
import type { ProbeTarget } from './probes.ts';

/** A status change to report: the pod's key, uid and full status. */
export interface PodStatusUpdate {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly status: PodStatus;
  /**
   * When the status changed (the runtime's clock, ms): a report may leave later, once the
   * pod's record is written (see `RuntimeExecutor.persist`).
   */
  readonly at: number;
}

/** One container instance an effect is about. */
export interface ContainerRef {
  readonly run: PodRun;
  readonly container: string;
  readonly restartCount: number;
}

/** Feeds an event about pod `uid` back into the driver. Safe to call from inside an effect. */
export type Dispatch = (uid: string, event: PodEvent) => void;

/** What a runtime (process, sim) does for the driver. */
export interface RuntimeExecutor {
  /** Whether the pod's probes run (false: containers are started and ready at once). */
  readonly runsProbes: boolean;
  /** Addresses of a new pod. May throw (e.g. the pod CIDR is exhausted); the pod is retried at the next sync. */
  admit(pod: Pod, uid: string): { readonly podIP: string; readonly hostIP: string };
  /** Pods found from a previous agent run (called once, at the first sync). */
  restore(): readonly PodRun[];
  /** Takes over a restored pod's live containers; reports `exited` for those that are gone. */
  resume(run: PodRun): void;
  start(pod: Pod, ref: ContainerRef): void;
  signal(ref: ContainerRef, signal: StopSignal): void;
  startProbes(pod: Pod, ref: ContainerRef, probes: readonly ProbeKind[]): void;
  stopProbes(uid: string, container: string): void;
  /**
   * Where the container instance `ref`'s lifecycle hooks run (as its probes do); undefined
   * when it runs none (the sim runtime, or an instance that is gone).
   */
  hookTarget?(pod: Pod, ref: ContainerRef): ProbeTarget | undefined;
  /**
   * The pod's status changed: record what must survive an agent restart. A promise means the
   * record is being written: the status is reported once it settles (so a reported status
   * always has its record), after the pod's earlier statuses.
   */
  persist(run: PodRun): Promise<void> | void;
  /** The pod is gone for good: free its address and files. */
  release(run: PodRun): void;
  /** Stops probes and watchers; running processes are left alone. */
  close(): void;
}

export interface PodDriverOptions {
  readonly node: string;
  readonly logger: Logger;
  readonly now: () => number;
  readonly crashLoop: CrashLoopPolicy;
  readonly timers: TimerQueue;
  readonly executor: (dispatch: Dispatch) => RuntimeExecutor;
  /** The runtime's images are on the machine (built in): each start records Pulled "already present". */
  readonly imagesPresent: boolean;
}

/** The driver as the runtime facades use it. */
export interface PodDriver {
  sync(pods: readonly Pod[]): void;
  readonly statuses$: Observable<PodStatusUpdate>;
  /** The Events kubelet records about the pods' containers (events.ts), as they happen; nothing is kept for later subscribers. */
  readonly events$: Observable<KubeletEvent>;
  /** A failed attempt of a probe of the container instance `ref`: kubelet's Unhealthy Event, if that instance still runs. */
  recordProbeFailure(ref: ContainerRef, probe: ProbeKind, detail: string): void;
  /** The pod named `namespace/name` the runtime currently has (the newest if several uids). */
  find(namespace: string, name: string): PodRun | undefined;
  /** Every pod the runtime currently has. */
  runs(): PodRun[];
  dispatch: Dispatch;
  close(opts?: { stopPods: boolean }): Promise<void>;
}

/** Default `terminationGracePeriodSeconds`. */
export const DEFAULT_GRACE_SECONDS = 30;

interface PodEntry {
  run: PodRun;
  /** The desired pod; undefined for a pod restored from a previous run that is no longer desired. */
  spec: Pod | undefined;
  desired: boolean;
  status: PodStatus | undefined;
  /** When `status` changed (the runtime's clock, ms). */
  statusAt: number;
  timers: Map<string, CancelTimer> | undefined;
  /** The last status report waiting for its record to be written (reports leave in order). */
  reporting: Promise<void> | undefined;
}

const isTerminalPhase = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Key of a pod without a uid (should not happen for pods from the apiserver). */
export function podUid(pod: Pod): string {
  return pod.metadata.uid ?? `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

function timerKey(timer: PodTimer): string {
  switch (timer.type) {
    case 'backoff':
      return `backoff/${timer.container}`;
    case 'retry':
      return `retry/${timer.container}`;
    case 'kill':
      return `kill/${timer.container}/${timer.restartCount}`;
    case 'grace':
      return 'grace';
    default:
      return assertNever(timer, 'pod timer');
  }
}

function timerEvent(timer: PodTimer, at: number): PodEvent {
  switch (timer.type) {
    case 'backoff':
      return { type: 'backoffElapsed', container: timer.container, at };
    case 'retry':
      return { type: 'retryElapsed', container: timer.container, at };
    case 'kill':
      return { type: 'killTimeout', container: timer.container, restartCount: timer.restartCount, at };
    case 'grace':
      return { type: 'graceElapsed', at };
    default:
      return assertNever(timer, 'pod timer');
  }
}

/** Creates the driver; see the module comment. */
export function createPodDriver(options: PodDriverOptions): PodDriver {
  const { node, logger, now, crashLoop, timers } = options;
  const pods = new Map<string, PodEntry>();
  const updates$ = new Subject<PodStatusUpdate>();
  const events$ = new Subject<KubeletEvent>();
  const queue: { uid: string; event: PodEvent }[] = [];
  const touched = new Set<PodEntry>();
  let depth = 0;
  let restored = false;
  let closed: Promise<void> | undefined;
  let allGone: (() => void) | undefined;
  /** Status reports waiting for their records (see `RuntimeExecutor.persist`). */
  const reporting = new Set<Promise<void>>();
  const executor = options.executor(dispatch);
  const hooks = createPodHooks({ executor, logger, now, dispatch, record: (event) => events$.next(event), alive: (uid) => pods.has(uid) });

  function restartPolicyOf(pod: Pod): RestartPolicy {
    const policy = pod.spec.restartPolicy ?? RESTART_POLICIES.always;
    if (policy === 'Always' || policy === 'OnFailure' || policy === 'Never') return policy;
    logger.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, restartPolicy: policy }, 'unknown restartPolicy, using Always');
    return RESTART_POLICIES.always;
  }

  const specGraceMs = (pod: Pod) => (pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  const deletionGraceMs = (pod: Pod) => (pod.metadata.deletionGracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;

  function perform(entry: PodEntry, effects: readonly PodEffect[]): void {
    const run = entry.run;
    for (const effect of effects) {
      switch (effect.type) {
        case 'start':
          // Only desired pods start containers: a restored, undesired pod is terminated before
          // anything can restart (see restoreOnce), so it never asks.
          if (entry.spec !== undefined) executor.start(entry.spec, { run, container: effect.container, restartCount: effect.restartCount });
          break;
        case 'signal': {
          const ref = { run, container: effect.container, restartCount: effect.restartCount };
          if (effect.signal === 'SIGTERM' && hooks.beforeStop(entry.spec, ref)) break;
          if (effect.signal === 'SIGKILL') hooks.killed(ref);
          executor.signal(ref, effect.signal);
          break;
        }
        case 'startProbes':
          if (entry.spec !== undefined && executor.runsProbes) executor.startProbes(entry.spec, { run, container: effect.container, restartCount: effect.restartCount }, effect.probes);
          break;
        case 'stopProbes':
          if (executor.runsProbes) executor.stopProbes(run.uid, effect.container);
          break;
        case 'setTimer': {
          const key = timerKey(effect.timer);
          entry.timers ??= new Map();
          entry.timers.get(key)?.();
          const timer = effect.timer;
          entry.timers.set(
            key,
            timers.schedule(effect.delayMs, () => {
              entry.timers?.delete(key);
              dispatch(run.uid, timerEvent(timer, now()));
            }),
          );
          break;
        }
        case 'clearTimer': {
          const key = timerKey(effect.timer);
          entry.timers?.get(key)?.();
          entry.timers?.delete(key);
          break;
        }
        case 'stopped':
          logger.info({ pod: `${run.namespace}/${run.name}`, uid: run.uid }, 'pod terminated');
          break;
        default:
          assertNever(effect, 'pod effect');
      }
    }
  }

  function logEvent(run: PodRun, event: PodEvent): void {
    const pod = `${run.namespace}/${run.name}`;
    switch (event.type) {
      case 'exited':
        logger.info({ pod, container: event.container, restartCount: event.restartCount, exitCode: event.exitCode, signal: event.signal, reason: event.reason }, 'container exited');
        break;
      case 'refused':
        logger.warn({ pod, container: event.container, reason: event.reason }, event.message);
        break;
      case 'startFailed':
        logger.warn({ pod, container: event.container, restartCount: event.restartCount }, event.message);
        break;
      case 'probe':
        if (event.probe !== 'readiness' && !event.ok) logger.info({ pod, container: event.container, probe: event.probe, detail: event.detail }, `${event.probe} probe failed, container will be restarted`);
        else logger.debug({ pod, container: event.container, probe: event.probe, ok: event.ok, detail: event.detail }, 'probe verdict');
        break;
      case 'postStartFailed':
        logger.info({ pod, container: event.container, restartCount: event.restartCount }, 'postStart hook failed, container will be killed');
        break;
      case 'started':
      case 'retryElapsed':
      case 'backoffElapsed':
      case 'killTimeout':
      case 'terminate':
      case 'graceElapsed':
        logger.debug({ pod, event }, 'pod event');
        break;
      default:
        assertNever(event, 'pod event');
    }
  }

  function forget(entry: PodEntry): void {
    for (const cancel of entry.timers?.values() ?? []) cancel();
    entry.timers = undefined;
    pods.delete(entry.run.uid);
    executor.release(entry.run);
    logger.debug({ pod: `${entry.run.namespace}/${entry.run.name}`, uid: entry.run.uid }, 'pod forgotten');
    if (pods.size === 0) allGone?.();
  }

  function flush(): void {
    const batch = [...touched];
    touched.clear();
    for (const entry of batch) {
      if (pods.get(entry.run.uid) !== entry) continue;
      const changedAt = now();
      const next = withTransitionTimes(podStatus(entry.run), entry.status, k8sTime(changedAt));
      if (!jsonEqual(next, entry.status)) {
        entry.status = next;
        entry.statusAt = changedAt;
        let written: Promise<void> | void = undefined;
        try {
          written = executor.persist(entry.run);
        } catch (err) {
          logger.error({ err, pod: `${entry.run.namespace}/${entry.run.name}` }, 'cannot record pod state; an agent restart may not adopt its processes');
        }
        report(entry, { namespace: entry.run.namespace, name: entry.run.name, uid: entry.run.uid, status: next, at: changedAt }, written);
      }
      if (entry.run.termination?.stopped === true && !entry.desired) forget(entry);
    }
  }

  /** Reports `update` at once, or once its record is written and the pod's earlier reports have left. */
  function report(entry: PodEntry, update: PodStatusUpdate, written: Promise<void> | void): void {
    if (written === undefined && entry.reporting === undefined) {
      updates$.next(update);
      return;
    }
    const reported: Promise<void> = Promise.all([entry.reporting, written]).then(
      () => updates$.next(update),
      (err: unknown) => {
        logger.error({ err, pod: `${update.namespace}/${update.name}` }, 'cannot record pod state; an agent restart may not adopt its processes');
        updates$.next(update);
      },
    );
    entry.reporting = reported;
    reporting.add(reported);
    void reported.then(() => {
      reporting.delete(reported);
      if (entry.reporting === reported) entry.reporting = undefined;
    });
  }

  function drain(): void {
    depth++;
    try {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        const entry = pods.get(item.uid);
        if (entry === undefined) continue;
        if (hooks.held(entry.spec, entry.run, item.event)) continue;
        logEvent(entry.run, item.event);
        const before = entry.run;
        const transition = reducePod(before, item.event, crashLoop);
        if (transition.run === before && transition.effects.length === 0) continue;
        entry.run = transition.run;
        if (events$.observed) for (const recorded of kubeletEvents(before, item.event, transition.run, { imagesPresent: options.imagesPresent })) events$.next(recorded);
        touched.add(entry);
        perform(entry, transition.effects);
      }
    } finally {
      depth--;
    }
    if (depth === 0) flush();
  }

  function dispatch(uid: string, event: PodEvent): void {
    if (closed !== undefined && pods.size === 0) return;
    queue.push({ uid, event });
    if (depth === 0) drain();
  }

  function admit(pod: Pod, uid: string): void {
    let addresses: { podIP: string; hostIP: string };
    try {
      addresses = executor.admit(pod, uid);
    } catch (err) {
      logger.error({ err, pod: `${pod.metadata.namespace}/${pod.metadata.name}` }, 'cannot admit pod; retrying at the next sync');
      return;
    }
    const declare = (c: Container, role: ContainerRole): ContainerDecl => ({
      name: c.name,
      image: c.image ?? '',
      role,
      // Regular init containers have no probes (validation refuses them); sidecars and app containers may.
      probes: {
        startup: executor.runsProbes && role !== 'init' && c.startupProbe != null,
        liveness: executor.runsProbes && role !== 'init' && c.livenessProbe != null,
        readiness: executor.runsProbes && role !== 'init' && c.readinessProbe != null,
      },
    });
    const containers: ContainerDecl[] = [
      ...(pod.spec.initContainers ?? []).map((c) => declare(c, c.restartPolicy === 'Always' ? 'sidecar' : 'init')),
      ...pod.spec.containers.map((c) => declare(c, 'app')),
    ];
    const { run, effects } = admitPod(
      {
        uid,
        namespace: pod.metadata.namespace ?? 'default',
        name: pod.metadata.name,
        restartPolicy: restartPolicyOf(pod),
        graceMs: specGraceMs(pod),
        podIP: addresses.podIP,
        hostIP: addresses.hostIP,
        startTime: now(),
      },
      containers,
    );
    const entry: PodEntry = { run, spec: pod, desired: true, status: undefined, statusAt: 0, timers: undefined, reporting: undefined };
    pods.set(uid, entry);
    touched.add(entry);
    logger.info({ pod: `${run.namespace}/${run.name}`, uid, podIP: run.podIP }, 'pod admitted');
    perform(entry, effects);
  }

  function restoreOnce(desired: ReadonlyMap<string, Pod>): void {
    if (restored) return;
    restored = true;
    for (const restoredRun of executor.restore()) {
      const spec = desired.get(restoredRun.uid);
      const run = spec === undefined ? abandonUnstarted(restoredRun, now()) : restoredRun;
      const entry: PodEntry = { run, spec, desired: spec !== undefined, status: undefined, statusAt: 0, timers: undefined, reporting: undefined };
      pods.set(run.uid, entry);
      touched.add(entry);
      logger.info({ pod: `${run.namespace}/${run.name}`, uid: run.uid, desired: entry.desired }, 'pod restored from a previous agent run');
      // Queued before `resume` reports exits, so an undesired pod's containers do not restart.
      if (spec === undefined) queue.push({ uid: run.uid, event: { type: 'terminate', graceMs: run.graceMs, at: now() } });
      executor.resume(run);
      if (spec !== undefined) perform(entry, resumePod(run));
    }
  }

  function sync(desiredPods: readonly Pod[]): void {
    if (closed !== undefined) throw new KubeletClosedError();
    const desired = new Map<string, Pod>();
    for (const pod of desiredPods) {
      if (pod.spec.nodeName != null && pod.spec.nodeName !== node) {
        logger.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, nodeName: pod.spec.nodeName }, 'ignoring a pod bound to another node');
        continue;
      }
      desired.set(podUid(pod), pod);
    }
    depth++;
    try {
      restoreOnce(desired);
      for (const [uid, pod] of desired) {
        const entry = pods.get(uid);
        if (entry === undefined) {
          if (pod.metadata.deletionTimestamp == null && !isTerminalPhase(pod)) admit(pod, uid);
          continue;
        }
        entry.desired = true;
        // The newest version: the one the projection and informer hold anyway (the first one
        // seen would be a copy kept only here).
        entry.spec = pod;
        if (pod.metadata.deletionTimestamp != null) queue.push({ uid, event: { type: 'terminate', graceMs: deletionGraceMs(pod), at: now() } });
      }
      for (const entry of [...pods.values()]) {
        if (desired.has(entry.run.uid)) continue;
        entry.desired = false;
        if (entry.run.termination?.stopped === true) forget(entry);
        else if (entry.run.termination === null) queue.push({ uid: entry.run.uid, event: { type: 'terminate', graceMs: entry.run.graceMs, at: now() } });
      }
    } finally {
      depth--;
    }
    drain();
  }

  const statuses$ = defer(() =>
    concat(
      from(
        [...pods.values()]
          .filter((entry) => entry.status !== undefined)
          .map((entry) => ({ namespace: entry.run.namespace, name: entry.run.name, uid: entry.run.uid, status: entry.status as PodStatus, at: entry.statusAt })),
      ),
      updates$,
    ),
  );

  function find(namespace: string, name: string): PodRun | undefined {
    let found: PodRun | undefined;
    for (const entry of pods.values()) {
      if (entry.run.namespace === namespace && entry.run.name === name && (found === undefined || entry.run.startTime >= found.startTime)) found = entry.run;
    }
    return found;
  }

  function close(opts: { stopPods: boolean } = { stopPods: false }): Promise<void> {
    closed ??= (async () => {
      if (opts.stopPods && pods.size > 0) {
        const gone = new Promise<void>((resolve) => (allGone = resolve));
        depth++;
        try {
          for (const entry of pods.values()) {
            entry.desired = false;
            if (entry.run.termination?.stopped === true) touched.add(entry);
            else queue.push({ uid: entry.run.uid, event: { type: 'terminate', graceMs: entry.run.graceMs, at: now() } });
          }
        } finally {
          depth--;
        }
        drain();
        // Timers and children are unref'd; keep the process alive until the pods are gone.
        const keepAlive = setInterval(() => {}, 60_000);
        await gone.finally(() => clearInterval(keepAlive));
      }
      for (const entry of pods.values()) for (const cancel of entry.timers?.values() ?? []) cancel();
      // The last reports go out before the statuses complete (their records are being written).
      while (reporting.size > 0) await Promise.all([...reporting]);
      pods.clear();
      executor.close();
      updates$.complete();
      events$.complete();
      logger.info({ stopPods: opts.stopPods }, 'pod runtime closed');
    })();
    return closed;
  }

  function recordProbeFailure(ref: ContainerRef, probe: ProbeKind, detail: string): void {
    const run = pods.get(ref.run.uid)?.run;
    if (run === undefined || !events$.observed) return;
    const recorded = unhealthyEvent(run, ref.container, ref.restartCount, probe, detail);
    if (recorded) events$.next(recorded);
  }

  return { sync, statuses$, events$: events$.asObservable(), recordProbeFailure, find, runs: () => [...pods.values()].map((entry) => entry.run), dispatch, close };
}
