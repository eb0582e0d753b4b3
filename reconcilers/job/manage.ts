/**
 * kube's `manageJob`, pure: the pods a running Job deletes (its surplus, or all of them
 * when suspended) or creates (the missing ones, after the pod failure backoff), one or the
 * other per round, with the order kube deletes active pods in.
 */
import type { View } from '../../projections/index.ts';
import type { EventBody, Job, Pod } from '../../schemas/index.ts';
import { deleteCommand } from '../replicaset/objects.ts';
import { compareForDeletion, isPodReady, podsToDelete } from '../replicaset/pods.ts';
import { DEFAULT_POD_FAILURE_BACKOFF_MS, MAX_POD_FAILURE_BACKOFF_MS, remainingBackoffMs } from './conditions.ts';
import {
  completionIndexOf,
  countsAsFailure,
  finishedTime,
  hasBackoffLimitPerIndex,
  hasTrackingFinalizer,
  indexFailureCount,
  indexIgnoredFailureCount,
  isIndexed,
  isJobPodActive,
  isJobPodTerminating,
  isPodFailed,
  isPodSucceeded,
  JOB_INDEX_FAILURE_COUNT,
  JOB_INDEX_IGNORED_FAILURE_COUNT,
  onlyReplaceFailedPods,
  withoutTrackingFinalizer,
} from './pods.ts';
import { freeJobPodNames, jobPodFromTemplate } from './template.ts';

/** Most pods one round creates or deletes for one Job (kube's `MaxPodCreateDeletePerSync`). */
export const MAX_POD_CREATE_DELETE_PER_ROUND = 500;

export interface JobDecideOptions {
  /** Backoff after the first pod failure (default kube's 10 s); doubles per failure. */
  readonly podFailureBackoffMs?: number;
  /** Cap of the backoff (default kube's 10 min). */
  readonly maxPodFailureBackoffMs?: number;
}

/** Failures since the last success and when the last one was (what kube's backoff record holds), from the pods in the view. */
export const failuresSinceLastSuccess = (job: Job, pods: readonly Pod[], now: number): { count: number; last: number | undefined } => {
  let lastSuccess = Number.NEGATIVE_INFINITY;
  for (const pod of pods) if (isPodSucceeded(pod)) lastSuccess = Math.max(lastSuccess, finishedTime(pod, now));
  let count = 0;
  let last: number | undefined;
  for (const pod of pods) {
    if (!isPodFailed(pod, job) || !countsAsFailure(job, pod)) continue;
    const at = finishedTime(pod, now);
    if (at <= lastSuccess) continue;
    count += 1;
    last = last === undefined ? at : Math.max(last, at);
  }
  return { count, last };
};

/**
 * Active pods to delete first, at least `count` (kube's `activePodsForRemoval`): for an
 * Indexed Job the pods with an invalid, out-of-range, duplicated or finished (`done`:
 * succeeded or failed) index, then the others in the ReplicaSet order.
 */
export const activePodsForRemoval = (job: Job, active: readonly Pod[], count: number, done: ReadonlySet<number>): Pod[] => {
  if (!isIndexed(job)) return podsToDelete(active, count);
  const completions = job.spec?.completions ?? 0;
  const removed: Pod[] = [];
  const kept = new Map<number, Pod>();
  // The pod of an index kept is the one the ReplicaSet order deletes last.
  for (const pod of [...active].sort(compareForDeletion).reverse()) {
    const index = completionIndexOf(pod);
    if (index === undefined || index >= completions || done.has(index) || kept.has(index)) removed.push(pod);
    else kept.set(index, pod);
  }
  return [...removed, ...podsToDelete([...kept.values()], count - removed.length)];
};

/** What {@link manage} did: the commands, the active pods after it, and when to look again. */
export interface Managed {
  readonly commands: EventBody[];
  readonly active: number;
  readonly deleted: number;
  readonly readyDeleted: number;
  readonly requeueAfterMs?: number;
}

/** kube's `manageJob`: delete the surplus (all when suspended) or create the missing pods, one or the other per round. */
export const manage = (
  job: Job,
  view: View,
  namespace: string,
  active: readonly Pod[],
  succeeded: number,
  succeededIndexes: ReadonlySet<number>,
  failedIndexes: ReadonlySet<number>,
  terminatingCount: number,
  pods: readonly Pod[],
  now: number,
  options: JobDecideOptions,
): Managed => {
  const spec = job.spec;
  const idle = { commands: [], active: active.length, deleted: 0, readyDeleted: 0 };
  if (!spec) return idle;
  const parallelism = spec.parallelism ?? 1;
  const completions = spec.completions;
  let wantActive: number;
  if (spec.suspend === true) wantActive = 0;
  else if (completions === undefined) wantActive = succeeded > 0 ? active.length : parallelism;
  else wantActive = Math.max(0, Math.min(parallelism, completions - succeeded));

  const surplus = active.length - wantActive;
  const victims = surplus > 0 || isIndexed(job) ? activePodsForRemoval(job, active, Math.max(0, surplus), new Set([...succeededIndexes, ...failedIndexes])).slice(0, MAX_POD_CREATE_DELETE_PER_ROUND) : [];
  if (victims.length > 0) {
    // kube's deleteJobPods: the finalizer goes first, so a pod removed for the surplus or a
    // suspension is not counted as a failure; then the delete (same partition, in order).
    const commands = victims.flatMap((pod) => (hasTrackingFinalizer(pod) ? [withoutTrackingFinalizer(pod), deleteCommand(pod)] : [deleteCommand(pod)]));
    return { commands, active: active.length - victims.length, deleted: victims.length, readyDeleted: victims.filter(isPodReady).length };
  }

  const terminating = onlyReplaceFailedPods(job) ? terminatingCount : 0;
  let missing = Math.min(wantActive - terminating - active.length, MAX_POD_CREATE_DELETE_PER_ROUND);
  if (missing <= 0) return idle;
  const baseMs = options.podFailureBackoffMs ?? DEFAULT_POD_FAILURE_BACKOFF_MS;
  const maxMs = options.maxPodFailureBackoffMs ?? MAX_POD_FAILURE_BACKOFF_MS;
  const perIndex = hasBackoffLimitPerIndex(job);
  // With backoffLimitPerIndex each index waits for its own failures; otherwise the Job for all of them.
  if (!perIndex) {
    const failures = failuresSinceLastSuccess(job, pods, now);
    const waitMs = remainingBackoffMs(failures.count, failures.last, now, baseMs, maxMs);
    if (waitMs > 0) return { ...idle, requeueAfterMs: waitMs };
  }
  let requeueAfterMs: number | undefined;

  const prefix = `Pod/${namespace}/`;
  const isTaken = (name: string): boolean => view.get(prefix + name) !== undefined;
  const created: Pod[] = [];
  if (isIndexed(job)) {
    // The lowest indexes that neither succeeded nor have a pod running (or, replacing only failed pods, terminating).
    const busy = new Set<number>([...succeededIndexes, ...failedIndexes]);
    for (const pod of onlyReplaceFailedPods(job) ? pods.filter((p) => isJobPodActive(p) || isJobPodTerminating(p)) : active) {
      const index = completionIndexOf(pod);
      if (index !== undefined) busy.add(index);
    }
    const lastFailed = perIndex ? lastFailedPodPerIndex(job, pods, now) : new Map<number, Pod>();
    for (let index = 0; index < (completions ?? 0) && created.length < missing; index++) {
      if (busy.has(index)) continue;
      let annotations: Record<string, string> = {};
      if (perIndex) {
        const previous = lastFailed.get(index);
        const counted = previous !== undefined && countsAsFailure(job, previous);
        const failureCount = previous === undefined ? 0 : indexFailureCount(previous) + (counted ? 1 : 0);
        const ignoredCount = previous === undefined ? 0 : indexIgnoredFailureCount(previous) + (counted ? 0 : 1);
        const waitMs = previous === undefined ? 0 : remainingBackoffMs(failureCount, finishedTime(previous, now), now, baseMs, maxMs);
        if (waitMs > 0) {
          requeueAfterMs = requeueAfterMs === undefined ? waitMs : Math.min(requeueAfterMs, waitMs);
          continue;
        }
        annotations = { [JOB_INDEX_FAILURE_COUNT]: String(failureCount), ...(ignoredCount > 0 ? { [JOB_INDEX_IGNORED_FAILURE_COUNT]: String(ignoredCount) } : {}) };
      }
      const [name] = freeJobPodNames(job, index, 1, isTaken);
      if (name !== undefined) created.push(jobPodFromTemplate(job, name, index, annotations));
    }
    missing = created.length;
  } else {
    for (const name of freeJobPodNames(job, undefined, missing, isTaken)) created.push(jobPodFromTemplate(job, name, undefined));
  }
  return {
    commands: created.map((object): EventBody => ({ type: 'ObjectCreated', object })),
    active: active.length + created.length,
    deleted: 0,
    readyDeleted: 0,
    ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }),
  };
};

/** The failed pod of each index that finished last (the one a replacement follows). */
const lastFailedPodPerIndex = (job: Job, pods: readonly Pod[], now: number): Map<number, Pod> => {
  const last = new Map<number, Pod>();
  for (const pod of pods) {
    const index = completionIndexOf(pod);
    if (index === undefined || !isPodFailed(pod, job)) continue;
    const current = last.get(index);
    if (current === undefined || finishedTime(pod, now) > finishedTime(current, now) || indexFailureCount(pod) > indexFailureCount(current)) last.set(index, pod);
  }
  return last;
};
