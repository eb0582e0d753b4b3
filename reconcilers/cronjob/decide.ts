/**
 * The CronJob decision, pure (kube-controller-manager 1.32's cronjob_controllerv2 `sync`):
 * finished Jobs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit` are deleted,
 * oldest start first; `status.active` follows the Jobs (finished and missing ones leave
 * it), `lastSuccessfulTime` the latest completion; then, unless the CronJob is being
 * deleted, suspended, or its zone or schedule is bad, the most recent unmet activation
 * (within `startingDeadlineSeconds`) starts a Job as `concurrencyPolicy` allows (Forbid
 * waits for the active ones, Replace deletes them), and the key is requeued for just
 * after the next activation.
 *
 * The clock is the decision's `now` (recorded with the commands, so `debug reconcile`
 * decides the same). kube's Events are returned as `events` with its reasons and messages.
 */
import type { View } from '../../projections/index.ts';
import type { CronJob, CronJobStatus, EventBody, Job } from '../../schemas/index.ts';
import { kindRef } from '../../schemas/keys.ts';
import { canonicalJson, deleteCommand, isControlledBy, isoTime, parseTime, statusCommand } from '../replicaset/objects.ts';
import { createRecorder } from '../../projections/event-recorder.ts';
import type { Decision } from '../runtime.ts';
import { byJobStartTime, finishedCondition, isJobOf, jobForSchedule, jobReference, scheduledJobName } from './job.ts';
import { formatSchedule, parseSchedule, timeZoneError } from '../../schemas/cron-schedule.ts';
import { MISSED, nextScheduleTime, nextScheduleTimeDuration } from './times.ts';

/** `spec.concurrencyPolicy` values. */
export const CONCURRENCY_POLICY = { Allow: 'Allow', Forbid: 'Forbid', Replace: 'Replace' } as const;

/** kube's component of the cronjob controller's Events. */
export const CRONJOB_EVENT_SOURCE = { component: 'cronjob-controller' } as const;

/** An Event kube's cronjob controller records (the recorder of {@link decideCronJob} writes them). */
export interface CronJobEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** What one sync of a CronJob does. */
export interface CronJobPlan {
  readonly commands: EventBody[];
  readonly status: CronJobStatus;
  readonly events: CronJobEvent[];
  readonly requeueAfterMs?: number;
}

/** Go's time.RFC1123Z in UTC ("Mon, 02 Jan 2006 15:04:05 +0000"), as the MissSchedule event prints it. */
const rfc1123z = (ms: number): string => new Date(ms).toUTCString().replace(/GMT$/, '+0000');

/** The CronJob's status without an empty active list (kube's omitempty). */
const normalized = (status: CronJobStatus): CronJobStatus => {
  const copy: CronJobStatus = { ...status };
  if (copy.active?.length === 0) delete copy.active;
  return copy;
};

/**
 * Plans one sync of `cj` whose Jobs (by kube's `getJobsToBeReconciled`) are `jobs`, at
 * `now`; `jobNamed` finds a Job of the CronJob's namespace by name, whoever owns it.
 */
export const planCronJob = (
  cj: CronJob,
  jobs: readonly Job[],
  now: number,
  jobNamed: (name: string) => Job | undefined = (name) => jobs.find((job) => job.metadata.name === name),
): CronJobPlan => {
  const commands: EventBody[] = [];
  const events: CronJobEvent[] = [];
  const status: CronJobStatus = structuredClone(cj.status ?? {});
  let active = [...(status.active ?? [])];
  const spec = cj.spec;
  const finish = (requeueAfterMs?: number): CronJobPlan => {
    const next = normalized({ ...status, active });
    if (canonicalJson(next) !== canonicalJson(cj.status ?? {})) commands.push(statusCommand(cj, next));
    return requeueAfterMs === undefined ? { commands, status: next, events } : { commands, status: next, events, requeueAfterMs };
  };
  const removeJob = (job: Job): void => {
    if (!job.metadata.deletionTimestamp) commands.push(deleteCommand(job, 'Background'));
    active = active.filter((ref) => ref.uid !== job.metadata.uid);
    events.push({ type: 'Normal', reason: 'SuccessfulDelete', message: `Deleted job ${job.metadata.name}` });
  };

  // cleanupFinishedJobs
  if (spec?.successfulJobsHistoryLimit !== undefined || spec?.failedJobsHistoryLimit !== undefined) {
    const finishedAs = (type: string): Job[] => jobs.filter((job) => finishedCondition(job)?.type === type).sort(byJobStartTime);
    const limits: [string, number | undefined][] = [
      ['Complete', spec.successfulJobsHistoryLimit],
      ['Failed', spec.failedJobsHistoryLimit],
    ];
    for (const [type, limit] of limits) {
      if (limit === undefined) continue;
      const finished = finishedAs(type);
      for (const job of finished.slice(0, Math.max(0, finished.length - limit))) removeJob(job);
    }
  }

  // syncCronJob: the active list and lastSuccessfulTime from the Jobs.
  const children = new Set(jobs.map((job) => job.metadata.uid));
  for (const job of jobs) {
    const found = active.some((ref) => ref.uid === job.metadata.uid);
    const finished = finishedCondition(job);
    if (!found && finished === undefined) {
      events.push({ type: 'Warning', reason: 'UnexpectedJob', message: `Saw a job that the controller did not create or forgot: ${job.metadata.name}` });
    } else if (finished !== undefined) {
      if (found) {
        active = active.filter((ref) => ref.uid !== job.metadata.uid);
        events.push({ type: 'Normal', reason: 'SawCompletedJob', message: `Saw completed job: ${job.metadata.name}, condition: ${finished.type}` });
      }
      const completed = parseTime(job.status?.completionTime);
      if (finished.type === 'Complete' && completed !== undefined && completed > (parseTime(status.lastSuccessfulTime) ?? Number.NEGATIVE_INFINITY)) {
        status.lastSuccessfulTime = job.status?.completionTime;
      }
    }
  }
  for (const ref of [...active]) {
    if (children.has(ref.uid)) continue;
    events.push({ type: 'Normal', reason: 'MissingJob', message: `Active job went missing: ${ref.name ?? ''}` });
    active = active.filter((other) => other.uid !== ref.uid);
  }
  if (cj.metadata.deletionTimestamp || !spec) return finish();

  const timeZone = spec.timeZone;
  if (timeZone !== undefined) {
    const error = timeZoneError(timeZone);
    if (error !== undefined) {
      events.push({ type: 'Warning', reason: 'UnknownTimeZone', message: `invalid timeZone: ${JSON.stringify(timeZone)}: ${error}` });
      return finish();
    }
  }
  if (spec.suspend === true) return finish();
  if (spec.schedule.includes('TZ')) {
    events.push({
      type: 'Warning',
      reason: 'UnsupportedSchedule',
      message: `CRON_TZ or TZ used in schedule ${JSON.stringify(spec.schedule)} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`,
    });
  }
  const parsed = parseSchedule(formatSchedule(spec.schedule, timeZone));
  if (parsed.type === 'invalid') {
    events.push({ type: 'Warning', reason: 'UnparseableSchedule', message: `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${parsed.message}` });
    return finish();
  }
  const schedule = parsed.schedule;
  const withStatus = (): CronJob => ({ ...cj, status: normalized({ ...status, active }) });
  const requeue = (): number | undefined => nextScheduleTimeDuration(withStatus(), now, schedule);

  const next = nextScheduleTime(withStatus(), now, schedule);
  if (next.missed === MISSED.Many && next.time !== undefined) {
    events.push({ type: 'Warning', reason: 'TooManyMissedTimes', message: 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew' });
  }
  if (next.error !== undefined) {
    events.push({ type: 'Warning', reason: 'InvalidSchedule', message: `invalid schedule: ${spec.schedule} : ${next.error}` });
    return finish();
  }
  const scheduled = next.time;
  if (scheduled === undefined) return finish(requeue());

  const deadline = spec.startingDeadlineSeconds;
  if (deadline !== undefined && scheduled + deadline * 1000 < now) {
    events.push({ type: 'Warning', reason: 'MissSchedule', message: `Missed scheduled time to start a job: ${rfc1123z(scheduled)}` });
    return finish(requeue());
  }
  const name = scheduledJobName(cj, scheduled);
  if (active.some((ref) => ref.name === name) || parseTime(status.lastScheduleTime) === scheduled) return finish(requeue());
  if (spec.concurrencyPolicy === CONCURRENCY_POLICY.Forbid && active.length > 0) {
    events.push({ type: 'Normal', reason: 'JobAlreadyActive', message: 'Not starting job because prior execution is running and concurrency policy is Forbid' });
    return finish(requeue());
  }
  if (spec.concurrencyPolicy === CONCURRENCY_POLICY.Replace) {
    for (const ref of [...active]) {
      const job = jobs.find((j) => j.metadata.uid === ref.uid);
      if (job) removeJob(job);
    }
  }

  const existing = jobNamed(name);
  if (existing === undefined) {
    const job = jobForSchedule(cj, scheduled);
    commands.push({ type: 'ObjectCreated', object: job });
    events.push({ type: 'Normal', reason: 'SuccessfulCreate', message: `Created job ${name}` });
    active.push(jobReference(job));
  } else {
    // Already created (a decision whose status write was lost): record it, as kube does on
    // AlreadyExists; a Job of that name another controller owns is left to its owner.
    if (!isControlledBy(existing, cj.metadata.uid)) return finish();
    active.push(jobReference(existing));
  }
  status.lastScheduleTime = isoTime(scheduled);
  return finish(requeue());
};

/**
 * The Jobs the CronJob controls, found through the owner index (kube lists the namespace's
 * Jobs and matches the controller's name; a Job of an earlier CronJob of the same name is
 * the garbage collector's, since its owner's uid is gone).
 */
export const jobsOf = (cj: CronJob, view: View): Job[] =>
  view
    .ownedBy(cj.metadata.uid ?? '')
    .filter((o): o is Job => o.kind === 'Job' && o.metadata.namespace === cj.metadata.namespace && isJobOf(o, cj));

/** Decides CronJob `key` at `now`; the plan's Events are recorded on the CronJob as `cronjob-controller`. */
export const decideCronJob = (key: string, view: View, now: number): Decision => {
  const cj = view.get(key);
  if (cj?.kind !== 'CronJob') return { commands: [] };
  const jobNamed = (name: string): Job | undefined => {
    const job = view.get(`${kindRef('Job')}/${cj.metadata.namespace ?? ''}/${name}`);
    return job?.kind === 'Job' ? job : undefined;
  };
  const plan = planCronJob(cj, jobsOf(cj, view), now, jobNamed);
  const recorder = createRecorder(view, now, CRONJOB_EVENT_SOURCE);
  for (const event of plan.events) recorder.event(cj, event.type, event.reason, event.message);
  const commands = [...plan.commands, ...recorder.commands()];
  return plan.requeueAfterMs === undefined ? { commands } : { commands, requeueAfterMs: plan.requeueAfterMs };
};
