/**
 * Job conditions and the pod failure backoff, as kube-controller-manager 1.32 computes
 * them (pkg/controller/job/job_controller.go, backoff_utils.go). The clock is always the
 * decision's `now`, recorded with the commands it gives.
 */
import type { Job, JobCondition } from '../../schemas/index.ts';
import { isoTime } from '../replicaset/objects.ts';

/** Job condition types (batch/v1). */
export const JOB_CONDITION = {
  Complete: 'Complete',
  Failed: 'Failed',
  Suspended: 'Suspended',
  FailureTarget: 'FailureTarget',
  SuccessCriteriaMet: 'SuccessCriteriaMet',
} as const;

/** The reasons and messages kube writes with them. */
export const JOB_REASON = {
  BackoffLimitExceeded: { reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
  DeadlineExceeded: { reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' },
  CompletionsReached: { reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' },
  PodFailurePolicy: { reason: 'PodFailurePolicy', message: '' },
  MaxFailedIndexesExceeded: { reason: 'MaxFailedIndexesExceeded', message: 'Job has exceeded the specified maximal number of failed indexes' },
  FailedIndexes: { reason: 'FailedIndexes', message: 'Job has failed indexes' },
  SuccessPolicy: { reason: 'SuccessPolicy', message: 'Matched rules at index' },
  Suspended: { reason: 'JobSuspended', message: 'Job suspended' },
  Resumed: { reason: 'JobResumed', message: 'Job resumed' },
} as const;

/** kube's `DefaultJobPodFailureBackOff` and `MaxJobPodFailureBackOff`. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
export const MAX_POD_FAILURE_BACKOFF_MS = 600_000;

/** A condition as kube's `newCondition` makes it (probe and transition time `now`). */
export const newCondition = (type: string, status: 'True' | 'False', reason: string, message: string, now: number): JobCondition => ({
  type,
  status,
  lastProbeTime: isoTime(now),
  lastTransitionTime: isoTime(now),
  ...(reason === '' ? {} : { reason }),
  ...(message === '' ? {} : { message }),
});

/** The condition of `type` with status True, if the Job has one. */
export const trueCondition = (job: Job, type: string): JobCondition | undefined =>
  job.status?.conditions?.find((condition) => condition.type === type && condition.status === 'True');

/** Whether the Job has finished: Complete or Failed is True (kube's `IsJobFinished`). */
export const isJobFinished = (job: Job): boolean =>
  trueCondition(job, JOB_CONDITION.Complete) !== undefined || trueCondition(job, JOB_CONDITION.Failed) !== undefined;

/** When the Job finished (completionTime, else the Failed condition's transition); undefined while it runs. */
export const jobFinishTime = (job: Job): string | undefined => {
  if (trueCondition(job, JOB_CONDITION.Complete)) return job.status?.completionTime ?? trueCondition(job, JOB_CONDITION.Complete)?.lastTransitionTime;
  return trueCondition(job, JOB_CONDITION.Failed)?.lastTransitionTime;
};

/**
 * `conditions` with `type` set to `status` (kube's `ensureJobConditionStatus`): a changed
 * status, reason or message replaces the condition (new transition time); a missing
 * condition is added unless its status would be False. Returns whether anything changed.
 */
export const ensureCondition = (
  conditions: readonly JobCondition[],
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): { readonly conditions: JobCondition[]; readonly changed: boolean } => {
  const index = conditions.findIndex((condition) => condition.type === type);
  const current = conditions[index];
  if (current !== undefined) {
    if (current.status === status && (current.reason ?? '') === reason && (current.message ?? '') === message) return { conditions: [...conditions], changed: false };
    const next = [...conditions];
    next[index] = newCondition(type, status, reason, message, now);
    return { conditions: next, changed: true };
  }
  if (status === 'False') return { conditions: [...conditions], changed: false };
  return { conditions: [...conditions, newCondition(type, status, reason, message, now)], changed: true };
};

/**
 * How long pod creation still waits after `failures` failures since the last success, the
 * last at `lastFailureAt` (kube's `getRemainingTimeForFailuresCount`): `base · 2^(failures−1)`,
 * capped at `max`, minus the time since the last failure; 0 when none is left.
 */
export const remainingBackoffMs = (failures: number, lastFailureAt: number | undefined, now: number, baseMs: number, maxMs: number): number => {
  if (failures === 0 || lastFailureAt === undefined) return 0;
  let backoff = baseMs;
  for (let i = 1; i < failures; i++) {
    backoff *= 2;
    if (backoff >= maxMs) {
      backoff = maxMs;
      break;
    }
  }
  const elapsed = now - lastFailureAt;
  return backoff < elapsed ? 0 : backoff - elapsed;
};
