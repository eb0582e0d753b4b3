/**
 * The pods of a Job, as kube's job controller creates them from `spec.template`: the
 * labels naming the Job, the tracking finalizer, the controller reference and, for an
 * Indexed Job, the completion index (annotation, label, `JOB_COMPLETION_INDEX`, hostname).
 *
 * Names are deterministic instead of kube's random generateName suffix (the same shape:
 * `<job>-<5 chars>`, `<job>-<index>-<5 chars>`): the suffix hashes (job uid, slot), and
 * the lowest slots whose names are free are taken, so a retried decision creates the
 * same names and the fold refuses the second create.
 */
import type { EnvVar, Job, Pod } from '../../schemas/index.ts';
import { controllerReferenceTo, safeHash } from '../replicaset/objects.ts';
import {
  CONTROLLER_UID_LABEL,
  JOB_COMPLETION_INDEX,
  JOB_COMPLETION_INDEX_ENV,
  JOB_NAME_LABEL,
  JOB_TRACKING_FINALIZER,
  LEGACY_CONTROLLER_UID_LABEL,
  LEGACY_JOB_NAME_LABEL,
} from './pods.ts';

const SUFFIX_LENGTH = 5;
/** kube's generateName keeps at most 63 − 5 characters of the base. */
const MAX_BASE_LENGTH = 58;
/** Slots searched for a free name (far beyond any real Job's retries). */
const MAX_SLOTS = 1_000_000;

const generatedName = (base: string, seed: string): string => `${base.slice(0, MAX_BASE_LENGTH)}${safeHash(seed, SUFFIX_LENGTH)}`;

/** The name base of a Job's pods: `<job>-`, or `<job>-<index>-` for an index. */
const nameBase = (job: Job, index: number | undefined): string => (index === undefined ? `${job.metadata.name}-` : `${job.metadata.name}-${index}-`);

/**
 * `count` free pod names for the Job (for `index`, when given), lowest slots first;
 * `isTaken` says whether a pod of that name exists in the namespace.
 */
export const freeJobPodNames = (job: Job, index: number | undefined, count: number, isTaken: (name: string) => boolean): string[] => {
  const names: string[] = [];
  const base = nameBase(job, index);
  const uid = job.metadata.uid ?? job.metadata.name;
  for (let slot = 0; names.length < count && slot < MAX_SLOTS; slot++) {
    const name = generatedName(base, index === undefined ? `${uid}/${slot}` : `${uid}/${index}/${slot}`);
    if (!isTaken(name) && !names.includes(name)) names.push(name);
  }
  return names;
};

/** The labels kube's apiserver adds to a Job's pod template (with a generated selector). */
export const jobPodLabels = (job: Job): Record<string, string> => ({
  [CONTROLLER_UID_LABEL]: job.metadata.uid ?? '',
  [JOB_NAME_LABEL]: job.metadata.name,
  [LEGACY_CONTROLLER_UID_LABEL]: job.metadata.uid ?? '',
  [LEGACY_JOB_NAME_LABEL]: job.metadata.name,
});

const indexEnv: EnvVar = {
  name: JOB_COMPLETION_INDEX_ENV,
  valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX}']` } },
};

/** A new pod of `job` named `name` (for completion `index` of an Indexed Job). */
export const jobPodFromTemplate = (job: Job, name: string, index: number | undefined, extraAnnotations: Readonly<Record<string, string>> = {}): Pod => {
  const template = job.spec?.template;
  if (!template) throw new TypeError(`Job ${job.metadata.name} has no pod template`);
  // Without a manual selector kube's apiserver put these labels on the template; a template
  // written without them (the apiserver here does not generate a selector) still gets them.
  const labels: Record<string, string> = { ...(job.spec?.manualSelector === true ? {} : jobPodLabels(job)), ...template.metadata?.labels };
  const annotations: Record<string, string> = { ...template.metadata?.annotations, ...extraAnnotations };
  const spec = structuredClone(template.spec);
  if (index !== undefined) {
    annotations[JOB_COMPLETION_INDEX] = String(index);
    labels[JOB_COMPLETION_INDEX] = String(index);
    spec.hostname = `${job.metadata.name}-${index}`;
    for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
      if (container.env?.some((env) => env.name === JOB_COMPLETION_INDEX_ENV)) continue;
      container.env = [...(container.env ?? []), structuredClone(indexEnv)];
    }
  }
  const finalizers = template.metadata?.finalizers ?? [];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: job.metadata.namespace ?? 'default',
      labels,
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      finalizers: finalizers.includes(JOB_TRACKING_FINALIZER) ? [...finalizers] : [...finalizers, JOB_TRACKING_FINALIZER],
      ownerReferences: [controllerReferenceTo(job)],
    },
    spec,
  };
};
