/**
 * The cronjob controller (kube's CronJobController v2): starts a CronJob's Jobs on its
 * schedule, as its concurrencyPolicy allows, keeps its history limits, and reports
 * `status.active`, `lastScheduleTime` and `lastSuccessfulTime`.
 *
 * Keys are CronJobs (`CronJob.batch/<ns>/<name>`). A CronJob change maps to itself (its
 * own status writes excepted), a Job's change to the CronJob controlling it. Time moves
 * nothing in the log, so each decision asks to be requeued for just after the next
 * activation (the runtime's `requeueAfterMs`, as ttl-after-finished does for expiries),
 * and the initial resync of a new owner catches activations missed while none ran.
 */
import type { AppliedChange } from '../../projections/index.ts';
import type { CronJob } from '../../schemas/index.ts';
import { controllerRef, keyOf, ownerKey } from '../replicaset/objects.ts';
import type { Controller } from '../runtime.ts';
import { decideCronJob } from './decide.ts';

export * from './decide.ts';
export * from './job.ts';
export * from '../../schemas/cron-schedule.ts';
export * from './times.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:cronjob`). */
export const CRONJOB_CONTROLLER = 'cronjob';

/** The CronJobs a change concerns. */
export const cronJobKeysFor = (change: AppliedChange): string[] => {
  const object = change.object;
  switch (object.kind) {
    case 'CronJob':
      return change.topic === 'observed' || change.type === 'DELETED' ? [] : [change.key];
    case 'Job': {
      const owner = controllerRef(object);
      return owner?.kind === 'CronJob' ? [ownerKey(owner, object.metadata.namespace)] : [];
    }
    default:
      return [];
  }
};

/** Creates the cronjob controller. */
export const createCronJobController = (): Controller => ({
  name: CRONJOB_CONTROLLER,
  keysFor: cronJobKeysFor,
  initialKeys: (view) => (view.list('CronJob') as CronJob[]).map(keyOf),
  decide: (key, view, { now }) => decideCronJob(key, view, now),
});
