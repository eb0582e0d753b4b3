/**
 * The Job decision, pure (kube-controller-manager 1.32's `syncJob`, one round at a time):
 * from a Job and its pods in a view to the pods to create or delete, the tracking
 * finalizers to remove and the status to write.
 *
 * Finished pods are counted as kube counts them, through `status.uncountedTerminatedPods`
 * and the `batch.kubernetes.io/job-tracking` finalizer: a round records a finished pod's
 * uid (or, Indexed, its completion index) in the status; a later round, seeing the record
 * stored, removes the pod's finalizer; a round after that moves the uid into the
 * `succeeded`/`failed` counters. Each step is judged on what the fold already applied, so
 * a crash between two appends loses or doubles no count. The interim FailureTarget or
 * SuccessCriteriaMet condition is written first; Failed or Complete once no pod is
 * uncounted, active or terminating.
 */
import type { View } from '../../projections/index.ts';
import { matchesLabels, type LabelRequirement } from '../../projections/selectors.ts';
import { labelSelectorToRequirements } from '../../projections/selectors.ts';
import type { EventBody, Job, JobCondition, JobStatus, Pod } from '../../schemas/index.ts';
import { canonicalJson, controllerRef, controllerReferenceTo, deleteCommand, isControlledBy, isoTime, parseTime, statusCommand, updateCommand } from '../replicaset/objects.ts';
import { isPodReady } from '../replicaset/pods.ts';
import type { Decision } from '../runtime.ts';
import {
  ensureCondition,
  isJobFinished,
  JOB_CONDITION,
  JOB_REASON,
  newCondition,
  trueCondition,
} from './conditions.ts';
import { formatIndexes, matchSuccessPolicy, parseIndexes } from './indexes.ts';
import {
  completionIndexOf,
  countsAsFailure,
  hasBackoffLimitPerIndex,
  hasTrackingFinalizer,
  indexFailureCount,
  isIndexed,
  isJobPodActive,
  isJobPodTerminating,
  isPodFailed,
  isPodSucceeded,
  JOB_TRACKING_FINALIZER,
  matchPodFailurePolicy,
  podRestarts,
  withoutTrackingFinalizer,
} from './pods.ts';
import { manage, MAX_POD_CREATE_DELETE_PER_ROUND, type JobDecideOptions } from './manage.ts';

/** Most uids (and new indexes) `status.uncountedTerminatedPods` holds, keeping it under ~20 KB (kube's `MaxUncountedPods`). */
export const MAX_UNCOUNTED_PODS = 500;


/** Why a Job is finishing: the interim condition and the terminal one that follows it. */
interface Finishing {
  readonly interim: typeof JOB_CONDITION.FailureTarget | typeof JOB_CONDITION.SuccessCriteriaMet;
  readonly terminal: typeof JOB_CONDITION.Failed | typeof JOB_CONDITION.Complete;
  readonly reason: string;
  readonly message: string;
}

const failing = (reason: string, message: string): Finishing => ({ interim: JOB_CONDITION.FailureTarget, terminal: JOB_CONDITION.Failed, reason, message });
const succeeding = (reason: string, message: string): Finishing => ({ interim: JOB_CONDITION.SuccessCriteriaMet, terminal: JOB_CONDITION.Complete, reason, message });

/** The requirements of the Job's selector; empty without one (the pods are then found by owner reference only). */
const selectorOf = (job: Job): readonly LabelRequirement[] => {
  if (job.spec?.selector === undefined) return [];
  const parsed = labelSelectorToRequirements(job.spec.selector);
  return parsed.type === 'ok' ? parsed.requirements : [];
};

/** Pods of the view that the Job controls (by uid), in any state. */
export const jobPods = (job: Job, view: View): Pod[] =>
  view
    .ownedBy(job.metadata.uid ?? '')
    .filter((o): o is Pod => o.kind === 'Pod' && o.metadata.namespace === job.metadata.namespace && isControlledBy(o, job.metadata.uid));

/** Orphan pods the Job adopts: matching its (non-empty) selector, not being deleted. */
const adoptablePods = (job: Job, view: View): Pod[] => {
  const selector = selectorOf(job);
  if (selector.length === 0) return [];
  return (view.list('Pod', job.metadata.namespace) as Pod[]).filter(
    (pod) => !controllerRef(pod) && !pod.metadata.deletionTimestamp && matchesLabels(selector, pod.metadata.labels),
  );
};

/** Restarts of the running and pending pods reach `backoffLimit` with restartPolicy OnFailure (kube's `pastBackoffLimitOnFailure`). */
const pastBackoffLimitOnFailure = (job: Job, pods: readonly Pod[]): boolean => {
  if (job.spec?.template.spec.restartPolicy !== 'OnFailure') return false;
  const restarts = pods.filter((pod) => pod.status?.phase === 'Running' || pod.status?.phase === 'Pending').reduce((sum, pod) => sum + podRestarts(pod), 0);
  const limit = job.spec.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
};

/**
 * Decides Job `key`: adopt orphans first (nothing else that round); otherwise track the
 * finished pods, judge whether the Job fails (pod failure policy FailJob, backoffLimit,
 * activeDeadlineSeconds) or succeeds, create or delete pods (suspend, parallelism,
 * completions, the failure backoff) and write the status when it changed.
 */
export const decideJob = (key: string, view: View, now: number, options: JobDecideOptions = {}): Decision => {
  const job = view.get(key);
  if (!job || job.kind !== 'Job' || !job.spec || isJobFinished(job)) return { commands: [] };
  const spec = job.spec;
  const status: JobStatus = job.status ?? {};
  const namespace = job.metadata.namespace ?? 'default';
  const indexed = isIndexed(job);
  const completions = spec.completions;
  const backoffLimit = spec.backoffLimit ?? 6;
  const suspended = spec.suspend === true;
  const deleting = Boolean(job.metadata.deletionTimestamp);

  if (!deleting) {
    const orphans = adoptablePods(job, view);
    if (orphans.length > 0) {
      const adoptions = orphans.map((pod) => {
        const finalizers = pod.metadata.finalizers ?? [];
        return updateCommand(pod, {
          ...pod,
          metadata: {
            ...pod.metadata,
            ownerReferences: [...(pod.metadata.ownerReferences ?? []), controllerReferenceTo(job)],
            finalizers: finalizers.includes(JOB_TRACKING_FINALIZER) ? finalizers : [...finalizers, JOB_TRACKING_FINALIZER],
          },
        });
      });
      return { commands: adoptions };
    }
  }

  const pods = jobPods(job, view);
  const byUid = new Map(pods.map((pod) => [pod.metadata.uid ?? '', pod]));
  const recorded = (uid: string): boolean => {
    const pod = byUid.get(uid);
    return pod !== undefined && hasTrackingFinalizer(pod);
  };
  // Uncounted uids whose pods lost their finalizer (or are gone) move into the counters now.
  const storedSucceeded = status.uncountedTerminatedPods?.succeeded ?? [];
  const storedFailed = status.uncountedTerminatedPods?.failed ?? [];
  const storedUids = new Set([...storedSucceeded, ...storedFailed]);
  const uncountedSucceeded = storedSucceeded.filter(recorded);
  const uncountedFailed = storedFailed.filter(recorded);
  let succeededCount = (status.succeeded ?? 0) + (indexed ? 0 : storedSucceeded.length - uncountedSucceeded.length);
  let failedCount = (status.failed ?? 0) + storedFailed.length - uncountedFailed.length;
  const previousIndexes = indexed ? parseIndexes(status.completedIndexes, completions ?? 0) : [];
  const succeededIndexes = new Set(previousIndexes);

  const active = pods.filter(isJobPodActive);
  const terminating = pods.filter(isJobPodTerminating).length;
  const startTime = status.startTime ?? (suspended ? undefined : isoTime(now));

  // Finished pods not recorded yet, and the finalizers whose record the fold has applied.
  const newlySucceeded: string[] = [];
  const newlyFailed: Pod[] = [];
  const finalizerRemovals: Pod[] = [];
  const recordableIndex = (pod: Pod): number | undefined => {
    const index = completionIndexOf(pod);
    return index !== undefined && index < (completions ?? 0) ? index : undefined;
  };
  const full = (): boolean =>
    uncountedSucceeded.length + uncountedFailed.length + newlySucceeded.length + newlyFailed.length + succeededIndexes.size - previousIndexes.length >= MAX_UNCOUNTED_PODS;
  for (const pod of pods) {
    if (!hasTrackingFinalizer(pod)) continue;
    const uid = pod.metadata.uid ?? '';
    if (!storedUids.has(uid) && full()) continue;
    if (storedUids.has(uid)) {
      finalizerRemovals.push(pod);
    } else if (isPodSucceeded(pod)) {
      if (!indexed) newlySucceeded.push(uid);
      else {
        const index = recordableIndex(pod);
        if (index === undefined || previousIndexes.includes(index)) finalizerRemovals.push(pod);
        else succeededIndexes.add(index);
      }
    } else if (isPodFailed(pod, job)) {
      if ((indexed && recordableIndex(pod) === undefined) || !countsAsFailure(job, pod)) finalizerRemovals.push(pod);
      else newlyFailed.push(pod);
    }
  }
  const succeededTotal = indexed ? succeededIndexes.size : succeededCount + uncountedSucceeded.length + newlySucceeded.length;
  // backoffLimitPerIndex: an index fails when a failed pod of it had used its failures up (or matched FailIndex).
  const perIndex = hasBackoffLimitPerIndex(job);
  const failedIndexes = new Set(perIndex ? parseIndexes(status.failedIndexes, completions ?? 0) : []);
  if (perIndex) {
    for (const pod of pods) {
      const index = recordableIndex(pod);
      if (index === undefined || pod.status?.phase !== 'Failed' || !hasTrackingFinalizer(pod)) continue;
      const action = spec.podFailurePolicy ? matchPodFailurePolicy(job, pod)?.rule.action : undefined;
      if (action === 'FailIndex' || (countsAsFailure(job, pod) && indexFailureCount(pod) >= (spec.backoffLimitPerIndex ?? 0))) failedIndexes.add(index);
    }
  }
  const failedTotal = failedCount + uncountedFailed.length + newlyFailed.length;

  // Is the Job finishing? A stored interim condition decides; else the failure rules.
  let requeueAfterMs: number | undefined;
  const requeue = (ms: number): void => {
    requeueAfterMs = requeueAfterMs === undefined ? ms : Math.min(requeueAfterMs, ms);
  };
  const storedSuccess = trueCondition(job, JOB_CONDITION.SuccessCriteriaMet);
  const storedFailure = trueCondition(job, JOB_CONDITION.FailureTarget);
  let finishing: Finishing | undefined;
  if (storedSuccess) finishing = succeeding(storedSuccess.reason ?? '', storedSuccess.message ?? '');
  else if (storedFailure) finishing = failing(storedFailure.reason ?? '', storedFailure.message ?? '');
  else {
    const failJob = spec.podFailurePolicy
      ? pods.filter((pod) => isPodFailed(pod, job)).map((pod) => matchPodFailurePolicy(job, pod)).find((match) => match?.rule.action === 'FailJob')
      : undefined;
    const deadlineMs = spec.activeDeadlineSeconds === undefined ? undefined : spec.activeDeadlineSeconds * 1000;
    const started = parseTime(startTime);
    if (failJob) finishing = failing(JOB_REASON.PodFailurePolicy.reason, failJob.message);
    else if (failedTotal > backoffLimit || pastBackoffLimitOnFailure(job, pods)) finishing = failing(JOB_REASON.BackoffLimitExceeded.reason, JOB_REASON.BackoffLimitExceeded.message);
    else if (deadlineMs !== undefined && started !== undefined && !suspended) {
      if (now - started >= deadlineMs) finishing = failing(JOB_REASON.DeadlineExceeded.reason, JOB_REASON.DeadlineExceeded.message);
      else requeue(started + deadlineMs - now);
    }
    if (!finishing && perIndex) {
      if (spec.maxFailedIndexes !== undefined && failedIndexes.size > spec.maxFailedIndexes) {
        finishing = failing(JOB_REASON.MaxFailedIndexesExceeded.reason, JOB_REASON.MaxFailedIndexesExceeded.message);
      } else if (failedIndexes.size > 0 && failedIndexes.size + succeededIndexes.size >= (completions ?? 0)) {
        finishing = failing(JOB_REASON.FailedIndexes.reason, JOB_REASON.FailedIndexes.message);
      }
    }
    if (!finishing && indexed && spec.successPolicy) {
      const matched = matchSuccessPolicy(spec.successPolicy.rules, completions ?? 0, succeededIndexes);
      if (matched !== undefined) finishing = succeeding(JOB_REASON.SuccessPolicy.reason, matched);
    }
  }

  const commands: EventBody[] = [];
  let conditions: JobCondition[] = [...(status.conditions ?? [])];
  let activeAfter = active.length;
  let deleted = 0;
  let readyDeleted = 0;
  const released = new Set<Pod>();
  let resumedAt: string | undefined;
  /** Deletes `victims`; `release`: their finalizers first (uncounted), each just before its delete (whose new version would refuse the release). */
  const remove = (victims: readonly Pod[], release: boolean): void => {
    for (const pod of victims.slice(0, MAX_POD_CREATE_DELETE_PER_ROUND)) {
      if (release && hasTrackingFinalizer(pod)) {
        commands.push(withoutTrackingFinalizer(pod));
        released.add(pod);
      }
      commands.push(deleteCommand(pod));
      deleted += 1;
      if (isPodReady(pod)) readyDeleted += 1;
    }
    activeAfter -= Math.min(victims.length, MAX_POD_CREATE_DELETE_PER_ROUND);
  };

  if (finishing || deleting) {
    // A finishing Job deletes its active pods (keeping their finalizers) and, when it fails,
    // counts the unfinished ones as failed; otherwise (success, or the Job being deleted) their
    // finalizers go uncounted, as kube's canRemoveFinalizer lets them.
    const failed = finishing?.terminal === JOB_CONDITION.Failed;
    if (finishing) remove(active, !failed);
    for (const pod of pods) {
      const uid = pod.metadata.uid ?? '';
      if (!hasTrackingFinalizer(pod) || storedUids.has(uid) || isPodSucceeded(pod) || newlyFailed.includes(pod) || finalizerRemovals.includes(pod) || released.has(pod)) continue;
      if (failed && !full()) newlyFailed.push(pod);
      else if (!failed) finalizerRemovals.push(pod);
    }
  } else {
    const result = manage(job, view, namespace, active, succeededTotal, succeededIndexes, failedIndexes, terminating, pods, now, options);
    commands.push(...result.commands);
    activeAfter = result.active;
    deleted = result.deleted;
    readyDeleted = result.readyDeleted;
    if (result.requeueAfterMs !== undefined) requeue(result.requeueAfterMs);
    const complete = completions === undefined ? succeededTotal > 0 && activeAfter === 0 : succeededTotal >= completions && activeAfter === 0;
    if (complete) finishing = succeeding(JOB_REASON.CompletionsReached.reason, JOB_REASON.CompletionsReached.message);
    else if (suspended) conditions = ensureCondition(conditions, JOB_CONDITION.Suspended, 'True', JOB_REASON.Suspended.reason, JOB_REASON.Suspended.message, now).conditions;
    else {
      const resumed = ensureCondition(conditions, JOB_CONDITION.Suspended, 'False', JOB_REASON.Resumed.reason, JOB_REASON.Resumed.message, now);
      conditions = resumed.conditions;
      // A resumed Job's activeDeadlineSeconds counts from the resume.
      if (resumed.changed) resumedAt = isoTime(now);
    }
  }

  const nextSucceeded = [...uncountedSucceeded, ...newlySucceeded];
  const nextFailed = [...uncountedFailed, ...newlyFailed.map((pod) => pod.metadata.uid ?? '')];
  for (const pod of finalizerRemovals) commands.push(withoutTrackingFinalizer(pod));

  let completionTime = status.completionTime;
  if (finishing) {
    if (!trueCondition(job, finishing.interim)) {
      conditions = [...conditions, newCondition(finishing.interim, 'True', finishing.reason, finishing.message, now)];
    } else if (nextSucceeded.length + nextFailed.length === 0 && terminating === 0 && active.length === 0 && deleted === 0) {
      conditions = ensureCondition(conditions, finishing.terminal, 'True', finishing.reason, finishing.message, now).conditions;
      if (finishing.terminal === JOB_CONDITION.Complete) completionTime = isoTime(now);
    }
  }
  if (indexed) succeededCount = succeededIndexes.size;

  // active, succeeded and failed are omitted when 0, as kube's omitempty int32s; ready and terminating are not.
  const next: JobStatus = {
    ...status,
    ready: Math.max(0, active.filter(isPodReady).length - readyDeleted),
    terminating: terminating + deleted,
    uncountedTerminatedPods: { ...(nextSucceeded.length > 0 ? { succeeded: nextSucceeded } : {}), ...(nextFailed.length > 0 ? { failed: nextFailed } : {}) },
    ...(conditions.length > 0 ? { conditions } : {}),
  };
  for (const [field, value] of [['active', activeAfter], ['succeeded', succeededCount], ['failed', failedCount]] as const) {
    if (value > 0) next[field] = value;
    else delete next[field];
  }
  const start = resumedAt ?? startTime;
  if (start !== undefined) next.startTime = start;
  if (completionTime !== undefined) next.completionTime = completionTime;
  if (indexed) next.completedIndexes = formatIndexes(succeededIndexes);
  if (perIndex) next.failedIndexes = formatIndexes(failedIndexes);
  if (canonicalJson(next) !== canonicalJson(status)) commands.push(statusCommand(job, next));
  return { commands, ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) };
};
