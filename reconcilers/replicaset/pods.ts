/**
 * What the workload controllers need to know about a Pod: is it active, ready, available,
 * and which pods to remove first when there are too many (kube's `ActivePods` ranking).
 */
import type { Pod, PodCondition } from '../../schemas/index.ts';
import { parseTime } from './objects.ts';

/** Pod phases, as the node agent reports them. */
export const POD_PHASE = {
  Pending: 'Pending',
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Unknown: 'Unknown',
} as const;

/** Whether the pod's containers have terminated for good (Succeeded or Failed). */
export const isPodFinished = (pod: Pod): boolean =>
  pod.status?.phase === POD_PHASE.Succeeded || pod.status?.phase === POD_PHASE.Failed;

/** Counts towards replicas: not terminating and not finished. */
export const isPodActive = (pod: Pod): boolean => !pod.metadata.deletionTimestamp && !isPodFinished(pod);

/** The pod's Ready condition, if reported. */
export const readyCondition = (pod: Pod): PodCondition | undefined => {
  const conditions = pod.status?.conditions;
  if (!conditions) return undefined;
  for (const condition of conditions) if (condition.type === 'Ready') return condition;
  return undefined;
};

/** Whether the pod reports Ready=True. */
export const isPodReady = (pod: Pod): boolean => readyCondition(pod)?.status === 'True';

/**
 * When the pod is (or will be) available: ready for `minReadySeconds`, counted from the
 * Ready condition's lastTransitionTime. Undefined when it is not ready, or when
 * `minReadySeconds` > 0 and the transition time is unknown (as kube's `IsPodAvailable`).
 */
export const availableSince = (pod: Pod, minReadySeconds: number): number | undefined => {
  const condition = readyCondition(pod);
  if (condition?.status !== 'True') return undefined;
  if (minReadySeconds <= 0) return Number.NEGATIVE_INFINITY;
  const since = parseTime(condition.lastTransitionTime);
  return since === undefined ? undefined : since + minReadySeconds * 1000;
};

/** Whether the pod has been ready for at least `minReadySeconds` at `now`. */
export const isPodAvailable = (pod: Pod, minReadySeconds: number, now: number): boolean => {
  const since = availableSince(pod, minReadySeconds);
  return since !== undefined && since <= now;
};

/**
 * How long until the first of `pods` that is ready but not yet available becomes
 * available (ms), for a requeue; undefined when none is waiting.
 */
export const nextAvailabilityInMs = (pods: readonly Pod[], minReadySeconds: number, now: number): number | undefined => {
  // Without minReadySeconds a ready pod is available at once: nobody waits.
  if (minReadySeconds <= 0) return undefined;
  let soonest: number | undefined;
  for (const pod of pods) {
    const since = availableSince(pod, minReadySeconds);
    if (since === undefined || since <= now) continue;
    soonest = soonest === undefined ? since : Math.min(soonest, since);
  }
  return soonest === undefined ? undefined : soonest - now;
};

const PHASE_RANK: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };

const restartCount = (pod: Pod): number =>
  Math.max(0, ...(pod.status?.containerStatuses ?? []).map((status) => status.restartCount));

/**
 * Orders pods the way a controller should delete them, first to go first (kube's
 * `ActivePods` less function, without deletion cost and co-location ranks): unscheduled
 * before scheduled; Pending before Unknown before Running; not ready before ready; ready
 * for less time before longer; more restarts before fewer; newer before older; then name.
 */
export const compareForDeletion = (a: Pod, b: Pod): number => {
  const assignedA = a.spec.nodeName ? 1 : 0;
  const assignedB = b.spec.nodeName ? 1 : 0;
  if (assignedA !== assignedB) return assignedA - assignedB;
  const phaseA = PHASE_RANK[a.status?.phase ?? 'Pending'] ?? 0;
  const phaseB = PHASE_RANK[b.status?.phase ?? 'Pending'] ?? 0;
  if (phaseA !== phaseB) return phaseA - phaseB;
  const readyA = isPodReady(a) ? 1 : 0;
  const readyB = isPodReady(b) ? 1 : 0;
  if (readyA !== readyB) return readyA - readyB;
  if (readyA === 1) {
    const sinceA = parseTime(readyCondition(a)?.lastTransitionTime) ?? 0;
    const sinceB = parseTime(readyCondition(b)?.lastTransitionTime) ?? 0;
    if (sinceA !== sinceB) return sinceB - sinceA;
  }
  const restartsA = restartCount(a);
  const restartsB = restartCount(b);
  if (restartsA !== restartsB) return restartsB - restartsA;
  const createdA = parseTime(a.metadata.creationTimestamp) ?? 0;
  const createdB = parseTime(b.metadata.creationTimestamp) ?? 0;
  if (createdA !== createdB) return createdB - createdA;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
};

/** The `count` pods to delete first among `pods` (see {@link compareForDeletion}). */
export const podsToDelete = (pods: readonly Pod[], count: number): Pod[] =>
  count <= 0 ? [] : [...pods].sort(compareForDeletion).slice(0, count);

/** What workload controllers count among the active pods of a controller. */
export interface ActivePodCounts {
  readonly active: Pod[];
  readonly ready: number;
  /** Available at `now` (see {@link isPodAvailable}). */
  readonly available: number;
  /** Carrying every label of `labels`. */
  readonly fullyLabeled: number;
}

/**
 * Counts `pods` in one pass (the ReplicaSet and Deployment controllers do this every round
 * over every pod they control): the active ones, and of those the ready, the available at
 * `now` and the ones carrying all of `labels`. Same answers as `isPodActive`,
 * `isPodReady` and `isPodAvailable` per pod.
 */
export const countActivePods = (
  pods: readonly Pod[],
  minReadySeconds: number,
  now: number,
  labels: readonly (readonly [string, string])[] = [],
): ActivePodCounts => {
  const active: Pod[] = [];
  let ready = 0;
  let available = 0;
  let fullyLabeled = 0;
  for (const pod of pods) {
    if (!isPodActive(pod)) continue;
    active.push(pod);
    let labeled = true;
    for (const [key, value] of labels) {
      if (pod.metadata.labels?.[key] !== value) {
        labeled = false;
        break;
      }
    }
    if (labeled) fullyLabeled += 1;
    const condition = readyCondition(pod);
    if (condition?.status !== 'True') continue;
    ready += 1;
    if (minReadySeconds <= 0) {
      available += 1;
      continue;
    }
    const since = parseTime(condition.lastTransitionTime);
    if (since !== undefined && since + minReadySeconds * 1000 <= now) available += 1;
  }
  return { active, ready, available, fullyLabeled };
};
