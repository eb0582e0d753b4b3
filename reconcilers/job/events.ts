/**
 * The Events of a Job's decision (kube's job controller): the pods it creates and deletes
 * (RealPodControl: SuccessfulCreate "Created pod: NAME", SuccessfulDelete "Deleted pod:
 * NAME"), and, when its status write finishes the Job, `recordJobFinished`: Normal
 * Completed "Job completed", or a Warning with the Failed condition's reason and message
 * (BackoffLimitExceeded "Job has reached the specified backoff limit", DeadlineExceeded
 * "Job was active longer than specified deadline", …); Suspended / Resumed when the
 * Suspended condition turns.
 */
import type { Job, JobCondition } from '../../schemas/index.ts';
import { recordPodControl, type Narrator } from '../events/index.ts';

const conditionOf = (conditions: readonly JobCondition[] | undefined, type: string): JobCondition | undefined =>
  conditions?.find((c) => c.type === type);

const turnedTrue = (before: Job, after: Job, type: string): JobCondition | undefined => {
  const next = conditionOf(after.status?.conditions, type);
  return next?.status === 'True' && conditionOf(before.status?.conditions, type)?.status !== 'True' ? next : undefined;
};

/** Records the pod creates and deletes, and the finishing or suspension, of the decision on the Job `key`. */
export const narrateJob: Narrator = (key, view, decision, recorder) => {
  const job = view.get(key);
  if (job?.kind !== 'Job') return;
  recordPodControl(job, decision, recorder);
  for (const command of decision.commands) {
    if (command.type !== 'ObjectUpdated' || command.subresource !== 'status' || command.object.kind !== 'Job') continue;
    const next = command.object;
    if (turnedTrue(job, next, 'Complete')) recorder.event(job, 'Normal', 'Completed', 'Job completed');
    const failed = turnedTrue(job, next, 'Failed');
    if (failed) recorder.event(job, 'Warning', failed.reason ?? 'Failed', failed.message ?? '');
    const suspended = conditionOf(next.status?.conditions, 'Suspended');
    const wasSuspended = conditionOf(job.status?.conditions, 'Suspended')?.status === 'True';
    if (suspended?.status === 'True' && !wasSuspended) recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
    if (suspended?.status === 'False' && wasSuspended) recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
  }
};
