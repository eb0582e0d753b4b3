/**
 * The job controller: runs a Job's pods to completion (completions, parallelism, Indexed
 * completion mode, suspend, successPolicy), fails it at its backoffLimit (with kube's
 * exponential pod failure backoff), its backoffLimitPerIndex / maxFailedIndexes, its
 * activeDeadlineSeconds or a pod failure policy's FailJob rule, and tracks finished pods
 * with the `batch.kubernetes.io/job-tracking` finalizer.
 *
 * Keys are Jobs (`Job.batch/<ns>/<name>`) and, as kube's `syncOrphanPod`, pods that still
 * carry the tracking finalizer while their Job is gone or finished (the key is the pod's).
 * A Job change maps to itself, its own status writes included: counting a finished pod
 * takes a status write, a finalizer removal and a status write, each judged on what the
 * one before it left in the view.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { Decision } from '../runtime.ts';
import type { Controller } from '../runtime.ts';
import type { Job, KubeObject, Pod } from '../../schemas/index.ts';
import { controllerRef, keyOf, ownerKey } from '../replicaset/objects.ts';
import { isJobFinished } from './conditions.ts';
import { decideJob } from './decide.ts';
import type { JobDecideOptions } from './manage.ts';
import { hasTrackingFinalizer, withoutTrackingFinalizer } from './pods.ts';
import { narrateJob } from './events.ts';
import { withEvents } from '../events/index.ts';

export * from './conditions.ts';
export * from './decide.ts';
export * from './indexes.ts';
export * from './manage.ts';
export * from './pods.ts';
export * from './template.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:job`). */
export const JOB_CONTROLLER = 'job';

export type JobControllerOptions = JobDecideOptions;

const POD_PREFIX = 'Pod/';

/** The live, unfinished Job controlling `pod`, if any. */
const controllingJob = (pod: KubeObject, view: View): Job | undefined => {
  const owner = controllerRef(pod);
  if (owner?.kind !== 'Job') return undefined;
  const job = view.get(ownerKey(owner, pod.metadata.namespace));
  return job?.kind === 'Job' && job.metadata.uid === owner.uid ? job : undefined;
};

/** Whether `pod` holds the tracking finalizer for nothing: its Job is gone or finished (kube's orphan pod). */
const holdsOrphanFinalizer = (pod: Pod, view: View): boolean => {
  if (!hasTrackingFinalizer(pod)) return false;
  const job = controllingJob(pod, view);
  return job === undefined || isJobFinished(job);
};

/** Jobs in the pod's namespace whose (non-empty) selector matches the orphan pod. */
const selectingJobs = (pod: Pod, view: View): string[] =>
  (view.list('Job', pod.metadata.namespace) as Job[])
    .filter((job) => {
      if (job.spec?.selector === undefined) return false;
      const selector = labelSelectorToRequirements(job.spec.selector);
      return selector.type === 'ok' && selector.requirements.length > 0 && matchesLabels(selector.requirements, pod.metadata.labels);
    })
    .map(keyOf);

/** The keys a change concerns: the Job itself; a pod's Job (or the pod, holding an orphan finalizer); a deleted Job's pods. */
export const jobKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  if (object.kind === 'Job') {
    // A deleted or finished Job leaves its pods' finalizers to the orphan pod keys.
    const trackedPods = (): string[] =>
      view.ownedBy(object.metadata.uid ?? '').filter((o): o is Pod => o.kind === 'Pod' && hasTrackingFinalizer(o)).map(keyOf);
    if (change.type === 'DELETED') return trackedPods();
    return isJobFinished(object) ? [change.key, ...trackedPods()] : [change.key];
  }
  if (object.kind !== 'Pod' || change.type === 'DELETED') return [];
  const owner = controllerRef(object);
  if (owner === undefined) return object.metadata.deletionTimestamp ? [] : selectingJobs(object, view);
  if (owner.kind !== 'Job') return [];
  return holdsOrphanFinalizer(object, view) ? [change.key] : [ownerKey(owner, object.metadata.namespace)];
};

/** Removes the tracking finalizer of pod `key` when its Job is gone or finished (kube's `syncOrphanPod`). */
export const decideOrphanPod = (key: string, view: View): Decision => {
  const pod = view.get(key);
  if (pod?.kind !== 'Pod' || !holdsOrphanFinalizer(pod, view)) return { commands: [] };
  return { commands: [withoutTrackingFinalizer(pod)] };
};

/** Creates the job controller. */
export const createJobController = (options: JobControllerOptions = {}): Controller =>
  withEvents(
    {
      name: JOB_CONTROLLER,
      keysFor: jobKeysFor,
      initialKeys: (view) => [
        ...view.list('Job').map(keyOf),
        ...(view.list('Pod') as Pod[]).filter((pod) => holdsOrphanFinalizer(pod, view)).map(keyOf),
      ],
      decide: (key, view, { now }) => (key.startsWith(POD_PREFIX) ? decideOrphanPod(key, view) : decideJob(key, view, now, options)),
    },
    { component: 'job-controller' },
    narrateJob,
  );
