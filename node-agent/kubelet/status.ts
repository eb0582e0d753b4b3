/**
 * The Kubernetes `PodStatus` of a {@link PodRun}: phase (as kubelet's `getPhase`),
 * conditions, addresses and container statuses. Pure.
 */
import { assertNever } from '../../schemas/index.ts';
import { resolveImage } from './images.ts';
import { type ContainerExit, type ContainerRun, type PodRun, appContainersOf, formatDuration, initContainersOf, initDone, isContainerReady, roleOf } from './lifecycle.ts';
import type { ContainerState, ContainerStateTerminated, ContainerStatus, PodCondition, PodStatus } from '../../schemas/index.ts';

/** Pod phases. */
export const POD_PHASES = { pending: 'Pending', running: 'Running', succeeded: 'Succeeded', failed: 'Failed' } as const;
export type PodPhase = (typeof POD_PHASES)[keyof typeof POD_PHASES];

/** Kubernetes timestamps are RFC 3339 with second precision. */
export function k8sTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  // Every status of a burst carries the same few seconds (start times, now): format each once.
  if (second === lastSecond) return lastText;
  lastSecond = second;
  lastText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
  return lastText;
}

let lastSecond = Number.NaN;
let lastText = '';

/** A container's state as kube's status reports it: running, terminated, or waiting (with or without a previous termination). */
const stateOf = (c: ContainerRun): 'running' | 'terminated' | 'waiting' | 'waitingAfterExit' => {
  const phase = c.phase;
  switch (phase.type) {
    case 'running':
      return 'running';
    case 'exited':
      return 'terminated';
    case 'creating':
    case 'refused':
    case 'backoff':
    case 'pending':
      return c.last === null ? 'waiting' : 'waitingAfterExit';
    default:
      return assertNever(phase);
  }
};

/**
 * kubelet's `getPhase` (1.32): a regular init container that failed fails a Never pod; one that
 * is running or has not run keeps the pod Pending, as a sidecar that has not started does
 * (unless every app container has stopped); a waiting app container that never ran keeps the
 * pod Pending; then running, and the restart policy over the stopped ones.
 */
export function podPhase(run: PodRun): PodPhase {
  let pendingRegularInit = 0;
  let pendingSidecars = 0;
  let failedInitialization = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  let apps = 0;
  for (const c of run.containers) {
    const state = stateOf(c);
    switch (roleOf(c)) {
      case 'init':
        if (state === 'running' || state === 'waiting') pendingRegularInit++;
        else if (state === 'terminated' && c.phase.type === 'exited' && c.phase.exit.exitCode !== 0) failedInitialization++;
        else if (state === 'waitingAfterExit' && c.last !== null && c.last.exitCode !== 0) failedInitialization++;
        break;
      case 'sidecar':
        if (state === 'running') {
          running++;
          if (c.phase.type === 'running' && !c.phase.started) pendingSidecars++;
        } else if (state === 'waiting') {
          pendingSidecars++;
          waiting++;
        }
        break;
      case 'app':
        apps++;
        if (state === 'running') running++;
        else if (state === 'waiting') waiting++;
        else {
          stopped++;
          const exit = c.phase.type === 'exited' ? c.phase.exit : c.last;
          if (exit?.exitCode === 0) succeeded++;
        }
        break;
      default:
        return assertNever(roleOf(c) as never);
    }
  }
  if (failedInitialization > 0 && run.restartPolicy === 'Never') return POD_PHASES.failed;
  if (pendingRegularInit > 0 || (pendingSidecars > 0 && stopped !== apps)) return POD_PHASES.pending;
  if (waiting > 0) return POD_PHASES.pending;
  if (running > 0) return POD_PHASES.running;
  if (stopped === 0) return POD_PHASES.pending;
  if (run.termination?.stopped === true) return stopped === succeeded ? POD_PHASES.succeeded : POD_PHASES.failed;
  if (run.restartPolicy === 'Always') return POD_PHASES.running;
  if (stopped === succeeded) return POD_PHASES.succeeded;
  if (run.restartPolicy === 'Never') return POD_PHASES.failed;
  return POD_PHASES.running;
}

function terminated(exit: ContainerExit): ContainerStateTerminated {
  const state: ContainerStateTerminated = { exitCode: exit.exitCode, reason: exit.reason };
  if (exit.signal !== null) state.signal = exit.signal;
  if (exit.message !== null) state.message = exit.message;
  if (exit.startedAt !== null) state.startedAt = k8sTime(exit.startedAt);
  state.finishedAt = k8sTime(exit.finishedAt);
  if (exit.containerID !== null) state.containerID = exit.containerID;
  return state;
}

function containerState(run: PodRun, c: ContainerRun): ContainerState {
  const phase = c.phase;
  switch (phase.type) {
    case 'creating':
      return { waiting: { reason: 'ContainerCreating' } };
    case 'refused':
      return { waiting: { reason: phase.reason, message: phase.message } };
    case 'backoff':
      return {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off ${formatDuration(phase.delayMs)} restarting failed container=${c.name} pod=${run.name}_${run.namespace}(${run.uid})`,
        },
      };
    case 'running':
      return { running: { startedAt: k8sTime(phase.startedAt) } };
    case 'exited':
      return { terminated: terminated(phase.exit) };
    case 'pending':
      // kubelet's default waiting state of a container not created yet: PodInitializing in a pod with init containers.
      return { waiting: { reason: initContainersOf(run).length > 0 ? 'PodInitializing' : 'ContainerCreating' } };
    default:
      return assertNever(phase);
  }
}

/** `logplane-builtin://<name>` for built-in images; empty for others (they are never pulled). */
function imageID(image: string): string {
  if (image === '') return '';
  const resolved = resolveImage(image);
  return resolved.type === 'builtin' ? resolved.imageID : '';
}

function containerStatus(run: PodRun, c: ContainerRun): ContainerStatus {
  const status: ContainerStatus = {
    name: c.name,
    state: containerState(run, c),
    lastState: c.last === null ? {} : { terminated: terminated(c.last) },
    ready: isContainerReady(c),
    restartCount: c.restartCount,
    image: c.image,
    imageID: imageID(c.image),
    started: c.phase.type === 'running' && c.phase.started,
  };
  if (c.containerID !== null) status.containerID = c.containerID;
  return status;
}

/**
 * The status to report, with `lastTransitionTime` of every condition left empty;
 * {@link withTransitionTimes} fills them in from the previous status.
 */
export function podStatus(run: PodRun): PodStatus {
  const phase = podPhase(run);
  const inits = initContainersOf(run);
  // kube's ContainersReady counts the app containers and the sidecars.
  const unready = run.containers.filter((c) => roleOf(c) !== 'init' && !isContainerReady(c)).map((c) => c.name);
  const completed = phase === POD_PHASES.succeeded || phase === POD_PHASES.failed;
  const readiness = (type: string): PodCondition => {
    if (unready.length === 0) return { type, status: 'True' };
    if (completed) return { type, status: 'False', reason: 'PodCompleted' };
    return { type, status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]` };
  };
  // kube's GeneratePodInitializedCondition: a Succeeded pod is PodCompleted; a pod one of whose
  // app containers has started was initialized (sidecars may be restarting); else every regular
  // init container exited 0 and every sidecar started.
  const incomplete = inits.filter((c) => !initDone(c)).map((c) => c.name);
  const anyAppStarted = appContainersOf(run).some((c) => c.phase.type === 'running' || c.phase.type === 'exited' || c.last !== null);
  const initialized: PodCondition =
    phase === POD_PHASES.succeeded
      ? { type: 'Initialized', status: 'True', reason: 'PodCompleted' }
      : anyAppStarted || incomplete.length === 0
        ? { type: 'Initialized', status: 'True' }
        : { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${incomplete.join(' ')}]` };
  // kubelet's GeneratePodReadyToStartContainersCondition (on by default since 1.29): True while
  // the pod's sandbox stands with its network, here from admission (which gives the pod its
  // address) until the pod is done or its containers have stopped for its termination, when
  // kubelet tears the sandbox down.
  const sandboxStands = run.podIP !== '' && !completed && run.termination?.stopped !== true;
  const readyToStart: PodCondition = { type: 'PodReadyToStartContainers', status: sandboxStands ? 'True' : 'False' };
  const status: PodStatus = {
    phase,
    // In kubelet's order (generateAPIPodStatus).
    conditions: [readyToStart, initialized, readiness('Ready'), readiness('ContainersReady'), { type: 'PodScheduled', status: 'True' }],
    hostIP: run.hostIP,
    podIP: run.podIP,
    podIPs: [{ ip: run.podIP }],
    startTime: k8sTime(run.startTime),
  };
  if (inits.length > 0) status.initContainerStatuses = inits.map((c) => containerStatus(run, c));
  status.containerStatuses = (inits.length > 0 ? appContainersOf(run) : run.containers).map((c) => containerStatus(run, c));
  return status;
}

/**
 * Sets each condition's `lastTransitionTime`: kept from `previous` while the condition's
 * status is unchanged, else `nowIso`.
 */
export function withTransitionTimes(next: PodStatus, previous: PodStatus | undefined, nowIso: string): PodStatus {
  const before = previous?.conditions ?? [];
  const conditions = next.conditions ?? [];
  const timed: PodCondition[] = new Array<PodCondition>(conditions.length);
  for (let index = 0; index < conditions.length; index += 1) {
    const c = conditions[index] as PodCondition;
    // A handful of conditions: a scan (the last of a type wins, as a map would) beats building a map per status.
    let old: PodCondition | undefined;
    for (const candidate of before) if (candidate.type === c.type) old = candidate;
    // Built property by property, not as `{ ...c, lastTransitionTime }`: V8 (Node 20) gives every
    // object made by a spread plus a new property its own hidden class (~250 bytes per condition).
    const timedCondition: PodCondition = { type: c.type, status: c.status };
    if (c.reason !== undefined) timedCondition.reason = c.reason;
    if (c.message !== undefined) timedCondition.message = c.message;
    if (c.lastProbeTime !== undefined) timedCondition.lastProbeTime = c.lastProbeTime;
    timedCondition.lastTransitionTime = old !== undefined && old.status === c.status ? (old.lastTransitionTime ?? nowIso) : nowIso;
    timed[index] = timedCondition;
  }
  return { ...next, conditions: timed };
}

/** The pod conditions kubelet owns (kube's `kubetypes.PodConditionsByKubelet`); any other type belongs to someone else. */
const KUBELET_CONDITIONS: ReadonlySet<string> = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers']);

/**
 * The status a report sends, as kubelet's status manager merges it (`mergePodStatus`): the
 * conditions kubelet does not own (a scheduler's DisruptionTarget, a readiness gate's
 * condition) are kept from the pod's current status, ahead of kubelet's own, and
 * `nominatedNodeName` (the scheduler's, which kube 1.32 does not clear at binding) is kept.
 */
export function mergePodStatus(current: PodStatus | undefined, reported: PodStatus): PodStatus {
  const kept = (current?.conditions ?? []).filter((condition) => !KUBELET_CONDITIONS.has(condition.type));
  const own = (reported.conditions ?? []).filter((condition) => KUBELET_CONDITIONS.has(condition.type));
  const merged: PodStatus = { ...reported, conditions: kept.length === 0 ? own : [...kept, ...own] };
  const nominated = current?.nominatedNodeName;
  if (nominated !== undefined && nominated !== null && nominated !== '') merged.nominatedNodeName = nominated;
  return merged;
}

/** Structural equality of JSON values (statuses), without serialising them. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a);
  const bKeys = Object.keys(b);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) => jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
