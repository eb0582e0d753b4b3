/**
 * The Jobs of a CronJob: the one it creates for an activation (kube's
 * `getJobFromTemplate2`: `<cronjob>-<scheduled minutes since the epoch>`, the template's
 * labels and annotations, `batch.kubernetes.io/cronjob-scheduled-timestamp`, a controller
 * reference), which Jobs it owns, whether they finished, and their start-time order.
 *
 * Controllers append to the log without the apiserver's create strategy, so the Job
 * carries what the Job strategy's `generateSelector` gives one created through the API:
 * a uid (derived from the CronJob's uid and the Job's name, so a re-run decision writes
 * the same Job) and the selector and template labels on it.
 */
import { createHash } from 'node:crypto';
import type { CronJob, Job, JobCondition, ObjectReference } from '../../schemas/index.ts';
import { JOB_CONDITION } from '../job/conditions.ts';
import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL } from '../job/pods.ts';
import { controllerRef, controllerReferenceTo, parseTime } from '../replicaset/objects.ts';
import { rfc3339InZone } from '../../schemas/cron-schedule.ts';

/** The annotation of a scheduled Job: its activation time, RFC 3339 in the CronJob's zone. */
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** The annotation `kubectl create job --from=cronjob/…` puts on the Job it creates. */
export const INSTANTIATE_ANNOTATION = 'cronjob.kubernetes.io/instantiate';

/** kube's `getJobName`: the CronJob's name and the activation in minutes since the epoch. */
export const scheduledJobName = (cj: CronJob, scheduledMs: number): string => `${cj.metadata.name}-${Math.floor(scheduledMs / 60_000)}`;

/** A name-based UUID (version 5 layout over SHA-256) of `seed`. */
const uuidOf = (seed: string): string => {
  const hex = createHash('sha256').update(seed).digest('hex');
  const variant = ((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

/** The Job for the activation at `scheduledMs` of `cj`. */
export const jobForSchedule = (cj: CronJob, scheduledMs: number): Job => {
  const name = scheduledJobName(cj, scheduledMs);
  const template = cj.spec?.jobTemplate;
  const spec = structuredClone(template?.spec ?? { template: { spec: { containers: [] } } });
  const uid = uuidOf(`${cj.metadata.uid ?? ''}/${name}`);
  if (spec.manualSelector !== true) {
    const podMetadata = (spec.template.metadata ??= {});
    podMetadata.labels = {
      ...podMetadata.labels,
      [CONTROLLER_UID_LABEL]: uid,
      [JOB_NAME_LABEL]: name,
      [LEGACY_CONTROLLER_UID_LABEL]: uid,
      [LEGACY_JOB_NAME_LABEL]: name,
    };
    spec.selector = { matchLabels: { [CONTROLLER_UID_LABEL]: uid } };
  }
  const labels = template?.metadata?.labels;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: cj.metadata.namespace ?? 'default',
      uid,
      ...(labels === undefined ? {} : { labels: { ...labels } }),
      annotations: { ...template?.metadata?.annotations, [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339InZone(scheduledMs, cj.spec?.timeZone ?? 'UTC') },
      ownerReferences: [controllerReferenceTo(cj)],
    },
    spec,
  };
};

/** Whether `job` belongs to `cj` as kube's `getJobsToBeReconciled` decides: its controller is a CronJob of that name. */
export const isJobOf = (job: Job, cj: CronJob): boolean => {
  const owner = controllerRef(job);
  return owner?.kind === 'CronJob' && owner.name === cj.metadata.name;
};

/** The first Complete or Failed condition that is True (kube's `getFinishedStatus`). */
export const finishedCondition = (job: Job): JobCondition | undefined =>
  job.status?.conditions?.find((c) => (c.type === JOB_CONDITION.Complete || c.type === JOB_CONDITION.Failed) && c.status === 'True');

/** kube's `byJobStartTime`: started Jobs first, earliest first, then by name. */
export const byJobStartTime = (a: Job, b: Job): number => {
  const sa = parseTime(a.status?.startTime);
  const sb = parseTime(b.status?.startTime);
  if (sa === undefined && sb !== undefined) return 1;
  if (sa !== undefined && sb === undefined) return -1;
  if (sa === sb) return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
  return (sa ?? 0) - (sb ?? 0);
};

/** The reference `status.active` holds for `job`. */
export const jobReference = (job: Job): ObjectReference => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  name: job.metadata.name,
  namespace: job.metadata.namespace ?? 'default',
  ...(job.metadata.uid === undefined ? {} : { uid: job.metadata.uid }),
});
