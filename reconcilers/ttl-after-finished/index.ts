/**
 * The ttl-after-finished controller (kube's TTLAfterFinishedController): deletes a
 * finished Job (Complete or Failed) `spec.ttlSecondsAfterFinished` seconds after it
 * finished, with background propagation so the garbage collector removes its pods. The
 * expiry is judged on the decision's `now`; until then the key is requeued for the
 * moment it expires.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { Job } from '../../schemas/index.ts';
import { isJobFinished, jobFinishTime } from '../job/conditions.ts';
import { keyOf, parseTime } from '../replicaset/objects.ts';
import type { Controller, Decision } from '../runtime.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:ttl-after-finished`). */
export const TTL_AFTER_FINISHED_CONTROLLER = 'ttl-after-finished';

/** When the Job expires (epoch ms); undefined when it has no TTL, has not finished or is being deleted. */
export const jobExpiresAt = (job: Job): number | undefined => {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  if (ttl === undefined || job.metadata.deletionTimestamp || !isJobFinished(job)) return undefined;
  const finished = parseTime(jobFinishTime(job));
  return finished === undefined ? undefined : finished + ttl * 1000;
};

/** Deletes Job `key` once its TTL after finishing has passed at `now` (uid and resourceVersion preconditions, as kube's). */
export const decideTtl = (key: string, view: View, now: number): Decision => {
  const job = view.get(key);
  if (job?.kind !== 'Job') return { commands: [] };
  const expiresAt = jobExpiresAt(job);
  if (expiresAt === undefined) return { commands: [] };
  if (expiresAt > now) return { commands: [], requeueAfterMs: expiresAt - now };
  return {
    commands: [
      {
        type: 'ObjectDeleted',
        kind: 'Job',
        namespace: job.metadata.namespace ?? null,
        name: job.metadata.name,
        expectedResourceVersion: job.metadata.resourceVersion ?? null,
        uid: job.metadata.uid ?? null,
        propagationPolicy: 'Background',
        gracePeriodSeconds: null,
      },
    ],
  };
};

/** Jobs with a TTL: a change of one maps to itself. */
export const ttlKeysFor = (change: AppliedChange): string[] =>
  change.object.kind === 'Job' && change.type !== 'DELETED' && change.object.spec?.ttlSecondsAfterFinished !== undefined ? [change.key] : [];

/** Creates the ttl-after-finished controller. */
export const createTtlAfterFinishedController = (): Controller => ({
  name: TTL_AFTER_FINISHED_CONTROLLER,
  keysFor: ttlKeysFor,
  initialKeys: (view) => (view.list('Job') as Job[]).filter((job) => job.spec?.ttlSecondsAfterFinished !== undefined).map(keyOf),
  decide: (key, view, { now }) => decideTtl(key, view, now),
});
