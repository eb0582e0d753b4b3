/**
 * Deployment ↔ ReplicaSet relations as kubectl computes them: which ReplicaSets a
 * Deployment controls, their revisions, and whether a ReplicaSet's pod template is the
 * Deployment's (ignoring the `pod-template-hash` label the controller adds).
 */
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../schemas/index.ts';

/** The annotation holding a Deployment's or ReplicaSet's revision number. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** The label the deployment controller adds to a ReplicaSet's template and pods. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** A template without the `pod-template-hash` label (and without metadata left empty by removing it). */
export const stripHash = (template: PodTemplateSpec | undefined): PodTemplateSpec | undefined => {
  if (!template) return template;
  const copy = structuredClone(template);
  if (copy.metadata?.labels) {
    delete copy.metadata.labels[POD_TEMPLATE_HASH_LABEL];
    if (Object.keys(copy.metadata.labels).length === 0) delete copy.metadata.labels;
  }
  if (copy.metadata && Object.keys(copy.metadata).length === 0) delete copy.metadata;
  return copy;
};

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
};

/** Whether two pod templates are equal apart from the `pod-template-hash` label. */
export const sameTemplate = (a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean =>
  JSON.stringify(canonical(stripHash(a))) === JSON.stringify(canonical(stripHash(b)));

/** The ReplicaSets whose controller owner reference is the Deployment (by uid; by name when the reference has no uid). */
export const ownedReplicaSets = (deployment: Deployment, replicaSets: readonly ReplicaSet[]): ReplicaSet[] =>
  replicaSets.filter((rs) =>
    (rs.metadata.ownerReferences ?? []).some(
      (o) => o.controller === true && o.kind === 'Deployment' && (o.uid ? o.uid === deployment.metadata.uid : o.name === deployment.metadata.name),
    ),
  );

/** The revision of a ReplicaSet or Deployment, if its annotation holds a number. */
export const revisionOf = (object: { metadata: { annotations?: Record<string, string> } }): number | undefined => {
  const text = object.metadata.annotations?.[REVISION_ANNOTATION];
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  return Number(text);
};

/**
 * The ReplicaSets a Deployment controls, split like kubectl describe: the one whose
 * template is the Deployment's, and the old ones that still have replicas.
 */
export const splitReplicaSets = (deployment: Deployment, replicaSets: readonly ReplicaSet[]): { current?: ReplicaSet; old: ReplicaSet[] } => {
  const owned = ownedReplicaSets(deployment, replicaSets);
  const current = owned.find((rs) => sameTemplate(rs.spec.template, deployment.spec.template));
  return { ...(current ? { current } : {}), old: owned.filter((rs) => rs !== current && (rs.spec.replicas ?? 0) > 0) };
};
