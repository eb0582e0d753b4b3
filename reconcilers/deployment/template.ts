/**
 * Pod-template identity for Deployments: the `pod-template-hash` (a stable 10-character
 * hash of the template, like kube's FNV-32a hash rendered in the safe alphabet) and the
 * comparison that finds the ReplicaSet of a template whatever hash label it carries.
 */
import type { Deployment, LabelSelector, PodTemplateSpec, ReplicaSet } from '../../schemas/index.ts';
import { canonicalJson, SAFE_ALPHABET } from '../replicaset/objects.ts';

/** The label that ties a ReplicaSet, its selector and its pods to one template. */
export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';
/** The revision of a ReplicaSet (and of its Deployment, for the current one). */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** Earlier revisions a ReplicaSet had before a rollback made it current again ("1,3"). */
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
/** The Deployment's replicas when the ReplicaSet was last scaled. */
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
/** The Deployment's replicas + maxSurge when the ReplicaSet was last scaled (for proportional scaling). */
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';

/** The annotation of the extensions/v1beta1 `rollbackTo`, never copied. */
export const DEPRECATED_ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';

/** Annotations of a Deployment that are not copied to its ReplicaSets (kube's `annotationsToSkip`). */
export const NOT_COPIED_ANNOTATIONS: ReadonlySet<string> = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  DEPRECATED_ROLLBACK_TO_ANNOTATION,
]);

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`. */
const fnv32a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
};

/**
 * The pod-template-hash of `template` (with the Deployment's `collisionCount` mixed in
 * when set): the 10 decimal digits of its FNV-1a hash, each mapped into the safe
 * alphabet as kube's `SafeEncodeString` does. Independent of key order and of absent vs
 * null fields.
 */
export const podTemplateHash = (template: PodTemplateSpec, collisionCount?: number): string => {
  const input = canonicalJson(templateWithoutHash(template)) + (collisionCount ? `#${collisionCount}` : '');
  const digits = String(fnv32a(input)).padStart(10, '0');
  return [...digits].map((digit) => SAFE_ALPHABET[digit.charCodeAt(0) % SAFE_ALPHABET.length]).join('');
};

/** `template` without the pod-template-hash label. */
export const templateWithoutHash = (template: PodTemplateSpec): PodTemplateSpec => {
  const copy = structuredClone(template);
  const labels = copy.metadata?.labels;
  if (labels && POD_TEMPLATE_HASH_LABEL in labels) {
    delete labels[POD_TEMPLATE_HASH_LABEL];
  }
  return copy;
};

/** Whether two templates are the same apart from the pod-template-hash label. */
export const sameTemplate = (a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean =>
  a !== undefined && b !== undefined && canonicalJson(templateWithoutHash(a)) === canonicalJson(templateWithoutHash(b));

/** `template` labelled with `hash`. */
export const templateWithHash = (template: PodTemplateSpec, hash: string): PodTemplateSpec => {
  const copy = structuredClone(template);
  copy.metadata = { ...copy.metadata, labels: { ...copy.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash } };
  return copy;
};

/** `selector` narrowed to the pods of one template hash. */
export const selectorWithHash = (selector: LabelSelector, hash: string): LabelSelector => ({
  ...selector,
  matchLabels: { ...selector.matchLabels, [POD_TEMPLATE_HASH_LABEL]: hash },
});

/** The revision annotation of a ReplicaSet (0 when absent or not a number). */
export const revisionOf = (rs: ReplicaSet | Deployment): number => {
  const text = rs.metadata.annotations?.[REVISION_ANNOTATION];
  const revision = text === undefined ? Number.NaN : Number(text);
  return Number.isInteger(revision) && revision > 0 ? revision : 0;
};

/** The highest revision among `replicaSets` (0 when none has one). */
export const maxRevision = (replicaSets: readonly ReplicaSet[]): number =>
  replicaSets.reduce((max, rs) => Math.max(max, revisionOf(rs)), 0);
