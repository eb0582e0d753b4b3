/**
 * What the job controller reads of a pod (pkg/controller/job/job_controller.go, 1.32):
 * its completion index, whether it carries the tracking finalizer, whether it counts as
 * failed, when it finished, and the pod failure policy rule it matches.
 */
import type { EventBody, Job, Pod, PodFailurePolicyRule } from '../../schemas/index.ts';
import { parseTime, updateCommand } from '../replicaset/objects.ts';
import { POD_PHASE } from '../replicaset/pods.ts';

/** The finalizer that keeps a finished pod until the job controller has counted it. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** Annotation (and label) of an Indexed Job's pod: its completion index. */
export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** Labels of a Job's pods naming it (and their legacy forms, still set in 1.32). */
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
/** Annotations of the pods of a Job with backoffLimitPerIndex: failures (and ignored failures) of its index before it. */
export const JOB_INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
export const JOB_INDEX_IGNORED_FAILURE_COUNT = 'batch.kubernetes.io/job-index-ignored-failure-count';
/** The env variable an Indexed Job's containers read their index from. */
export const JOB_COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

export const hasTrackingFinalizer = (pod: Pod): boolean => (pod.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);

/** `pod` without the tracking finalizer (an update judged against the version read). */
export const withoutTrackingFinalizer = (pod: Pod): EventBody => {
  const finalizers = (pod.metadata.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER);
  const metadata = { ...pod.metadata, finalizers };
  if (finalizers.length === 0) delete (metadata as { finalizers?: string[] }).finalizers;
  return updateCommand(pod, { ...pod, metadata });
};

export const isIndexed = (job: Job): boolean => job.spec?.completionMode === 'Indexed';

/** Whether failures are limited per index (an Indexed Job with `backoffLimitPerIndex`). */
export const hasBackoffLimitPerIndex = (job: Job): boolean => isIndexed(job) && job.spec?.backoffLimitPerIndex !== undefined;

const countAnnotation = (pod: Pod, name: string): number => {
  const text = pod.metadata.annotations?.[name];
  const count = text !== undefined && /^\d+$/.test(text) ? Number(text) : 0;
  return Number.isSafeInteger(count) ? count : 0;
};

/** Failures of the pod's index before it (kube's `getIndexFailureCount`). */
export const indexFailureCount = (pod: Pod): number => countAnnotation(pod, JOB_INDEX_FAILURE_COUNT);
/** Ignored failures of the pod's index before it. */
export const indexIgnoredFailureCount = (pod: Pod): number => countAnnotation(pod, JOB_INDEX_IGNORED_FAILURE_COUNT);

/** The pod's completion index (annotation, else label); undefined when absent or not a valid index. */
export const completionIndexOf = (pod: Pod): number | undefined => {
  const text = pod.metadata.annotations?.[JOB_COMPLETION_INDEX] ?? pod.metadata.labels?.[JOB_COMPLETION_INDEX];
  if (text === undefined || !/^(0|[1-9]\d*)$/.test(text)) return undefined;
  const index = Number(text);
  return Number.isSafeInteger(index) ? index : undefined;
};

export const isPodSucceeded = (pod: Pod): boolean => pod.status?.phase === POD_PHASE.Succeeded;
export const isPodTerminal = (pod: Pod): boolean => pod.status?.phase === POD_PHASE.Succeeded || pod.status?.phase === POD_PHASE.Failed;

/** Pods the job replaces only once they are Failed (not while terminating). */
export const onlyReplaceFailedPods = (job: Job): boolean => job.spec?.podReplacementPolicy === 'Failed';

/**
 * Whether the pod counts as a failure (kube's `isPodFailed`): phase Failed; or, unless the
 * Job has a pod failure policy or replaces only failed pods, deleted before it succeeded
 * (an orphan pod never reaches a terminal phase).
 */
export const isPodFailed = (pod: Pod, job: Job): boolean => {
  if (pod.status?.phase === POD_PHASE.Failed) return true;
  if (job.spec?.podFailurePolicy !== undefined || onlyReplaceFailedPods(job)) return false;
  return Boolean(pod.metadata.deletionTimestamp) && pod.status?.phase !== POD_PHASE.Succeeded;
};

/** Active: neither terminal nor being deleted. */
export const isJobPodActive = (pod: Pod): boolean => !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;

/** Terminating: being deleted and not terminal yet. */
export const isJobPodTerminating = (pod: Pod): boolean => Boolean(pod.metadata.deletionTimestamp) && !isPodTerminal(pod);

/**
 * When the pod finished (kube's `getFinishedTime`): the Ready=False transition, else the
 * latest container termination, else the deletion timestamp, else `now`.
 */
export const finishedTime = (pod: Pod, now: number): number => {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const readyFalse = ready?.status === 'False' ? parseTime(ready.lastTransitionTime) : undefined;
  if (readyFalse !== undefined) return readyFalse;
  const statuses = pod.status?.containerStatuses ?? [];
  let latest: number | undefined;
  for (const status of statuses) {
    const finished = parseTime(status.state?.terminated?.finishedAt);
    if (finished === undefined) {
      latest = undefined;
      break;
    }
    latest = latest === undefined ? finished : Math.max(latest, finished);
  }
  if (latest !== undefined) return latest;
  return parseTime(pod.metadata.deletionTimestamp) ?? now;
};

/** Container restarts of the pod (init and app containers), for `backoffLimit` with restartPolicy OnFailure. */
export const podRestarts = (pod: Pod): number =>
  [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].reduce((sum, status) => sum + status.restartCount, 0);

/** The pod failure policy rule a failed pod matches: its index, the rule and the message kube gives for FailJob. */
export interface MatchedRule {
  readonly index: number;
  readonly rule: PodFailurePolicyRule;
  readonly message: string;
}

/** The first rule of the Job's pod failure policy that the failed `pod` matches (kube's `matchPodFailurePolicy`). */
export const matchPodFailurePolicy = (job: Job, pod: Pod): MatchedRule | undefined => {
  const rules = job.spec?.podFailurePolicy?.rules ?? [];
  const name = `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
  for (const [index, rule] of rules.entries()) {
    const onExitCodes = rule.onExitCodes;
    if (onExitCodes) {
      const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
      for (const status of statuses) {
        if (onExitCodes.containerName !== undefined && onExitCodes.containerName !== status.name) continue;
        const exitCode = status.state?.terminated?.exitCode;
        if (exitCode === undefined || exitCode === 0) continue;
        const listed = onExitCodes.values.includes(exitCode);
        if (onExitCodes.operator === 'In' ? listed : onExitCodes.operator === 'NotIn' && !listed) {
          return { index, rule, message: `Container ${status.name} for pod ${name} failed with exit code ${exitCode} matching ${rule.action} rule at index ${index}` };
        }
      }
    }
    for (const pattern of rule.onPodConditions ?? []) {
      const condition = pod.status?.conditions?.find((c) => c.type === pattern.type && c.status === pattern.status);
      if (condition) return { index, rule, message: `Pod ${name} has condition ${pattern.type} matching ${rule.action} rule at index ${index}` };
    }
  }
  return undefined;
};

/** Whether a failed pod counts towards `backoffLimit`: not when the policy's matching rule says Ignore. */
export const countsAsFailure = (job: Job, pod: Pod): boolean => {
  if (job.spec?.podFailurePolicy === undefined) return true;
  return matchPodFailurePolicy(job, pod)?.rule.action !== 'Ignore';
};
