/**
 * What the PersistentVolume controller, the local-path provisioner and the scheduler's
 * VolumeBinding plugin share about claims, volumes and classes: kube's annotations, a
 * claim's and a volume's class, storage sizes, a volume's node affinity, and kube's
 * `findMatchingVolume` (pkg/controller/volume/persistentvolume/util), all pure.
 */
import { matchesLabels, labelSelectorToRequirements } from '../../projections/selectors.ts';
import { compareQuantities, parseQuantity, type Quantity } from '../../schemas/quantity.ts';
import type { Node, NodeSelectorRequirement, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../schemas/index.ts';
import { objectKey } from '../../schemas/keys.ts';

/** On a claim: the binding is complete (kube's `AnnBindCompleted`). */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** On a claim or volume: the controller, not the user, bound it (kube's `AnnBoundByController`). */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** On a claim: the node the scheduler chose for its first consumer (kube's `AnnSelectedNode`). */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** On a claim: the provisioner expected to provision it (kube's `AnnStorageProvisioner` and its beta twin). */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** On a volume: the provisioner that created it (kube's `AnnDynamicallyProvisioned`). */
export { ANN_PROVISIONED_BY } from '../../projections/local-path.ts';
/** The class annotation older than `spec.storageClassName`, still honoured. */
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
/** A class whose volumes are made by hand (kube's `NotSupportedProvisioner`). */
export const NOT_SUPPORTED_PROVISIONER = 'kubernetes.io/no-provisioner';
/** The node label a local volume's affinity names. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** The projection key of the StorageClass `name` (its kind's key names its group). */
export const storageClassKey = (name: string): string => objectKey({ kind: 'StorageClass', metadata: { name } });

/** kube's `GetPersistentVolumeClaimClass`: the beta annotation, else `spec.storageClassName`, else "". */
export const claimClass = (claim: PersistentVolumeClaim): string =>
  claim.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? claim.spec?.storageClassName ?? '';

/** kube's `GetPersistentVolumeClass`. */
export const volumeClass = (volume: PersistentVolume): string =>
  volume.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? volume.spec?.storageClassName ?? '';

const parsedSize = (text: string | undefined): Quantity | undefined => {
  if (text === undefined) return undefined;
  try {
    return parseQuantity(text);
  } catch {
    return undefined;
  }
};

/** The storage a claim requests ("0" when it names none). */
export const requestedStorage = (claim: PersistentVolumeClaim): string => claim.spec?.resources?.requests?.storage ?? '0';

/** Whether `volume`'s capacity is at least `claim`'s request. */
export const volumeHoldsClaim = (volume: PersistentVolume, claim: PersistentVolumeClaim): boolean => {
  const capacity = parsedSize(volume.spec?.capacity?.storage);
  const requested = parsedSize(requestedStorage(claim));
  return capacity !== undefined && requested !== undefined && compareQuantities(capacity, requested) >= 0;
};

/** kube's `IsVolumeBoundToClaim`: the volume's claimRef names the claim (and its uid, when the ref has one). */
export const isVolumeBoundToClaim = (volume: PersistentVolume, claim: PersistentVolumeClaim): boolean => {
  const ref = volume.spec?.claimRef;
  if (!ref || ref.name !== claim.metadata.name || (ref.namespace ?? '') !== (claim.metadata.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
};

/** kube's `CheckVolumeModeMismatches` (both default to Filesystem). */
const volumeModeMismatch = (claim: PersistentVolumeClaim, volume: PersistentVolume): boolean =>
  (claim.spec?.volumeMode ?? 'Filesystem') !== (volume.spec?.volumeMode ?? 'Filesystem');

/** kube's `CheckAccessModes`: every mode the claim asks for is one the volume offers. */
const offersAccessModes = (claim: PersistentVolumeClaim, volume: PersistentVolume): boolean => {
  const offered = new Set(volume.spec?.accessModes ?? []);
  return (claim.spec?.accessModes ?? []).every((mode) => offered.has(mode));
};

/** A Go `strconv.ParseInt` base-10 integer, as kube's label selector reads Gt/Lt values. */
const INTEGER = /^[+-]?\d+$/;

/**
 * Whether kube's `NodeSelectorRequirementsAsSelector` rejects `requirement` (In/NotIn without
 * values, Exists/DoesNotExist with values, Gt/Lt without exactly one integer, an unknown
 * operator): a term holding one matches no node, as in the scheduler's NodeAffinity plugin.
 */
const malformed = (requirement: NodeSelectorRequirement): boolean => {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
    case 'NotIn':
      return values.length === 0;
    case 'Exists':
    case 'DoesNotExist':
      return values.length > 0;
    case 'Gt':
    case 'Lt':
      return values.length !== 1 || !INTEGER.test(values[0] ?? '');
    default:
      return true;
  }
};

const requirementHolds = (requirement: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean => {
  if (malformed(requirement)) return false;
  const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default: {
      // Gt or Lt (malformed() let nothing else through): the label must be an integer too.
      if (value === undefined || !INTEGER.test(value)) return false;
      const have = Number.parseInt(value, 10);
      const bound = Number.parseInt(values[0] ?? '', 10);
      return requirement.operator === 'Gt' ? have > bound : have < bound;
    }
  }
};

/** The only field `matchFields` may test (kube's node field selector). */
const NODE_NAME_FIELD = 'metadata.name';

/** kube's `CheckNodeAffinity`: whether `node` satisfies the volume's required node affinity (no affinity: every node). */
export const volumeFitsNode = (volume: PersistentVolume, node: Node): boolean => {
  const terms = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  if (terms === undefined) return true;
  const labels = node.metadata.labels ?? {};
  const fields: Readonly<Record<string, string>> = { [NODE_NAME_FIELD]: node.metadata.name };
  return terms.some(
    (term) =>
      ((term.matchExpressions ?? []).length > 0 || (term.matchFields ?? []).length > 0) &&
      (term.matchExpressions ?? []).every((requirement) => requirementHolds(requirement, labels)) &&
      (term.matchFields ?? []).every((requirement) => requirement.key === NODE_NAME_FIELD && requirementHolds(requirement, fields)),
  );
};

/** The node a local volume is pinned to: the one value of its `kubernetes.io/hostname In` affinity, if it has exactly that. */
export const pinnedNode = (volume: PersistentVolume): string | undefined => {
  const terms = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length !== 1) return undefined;
  const expressions = terms[0]?.matchExpressions ?? [];
  const hostname = expressions.find((requirement) => requirement.key === HOSTNAME_LABEL && requirement.operator === 'In');
  return hostname?.values?.length === 1 ? hostname.values[0] : undefined;
};

/** kube's `IsDelayBindingMode`: the claim's class binds when its first consumer is scheduled. */
export const isDelayBinding = (claim: PersistentVolumeClaim, classOf: (name: string) => StorageClass | undefined): boolean => {
  const name = claimClass(claim);
  return name !== '' && classOf(name)?.volumeBindingMode === 'WaitForFirstConsumer';
};

const sizeOf = (volume: PersistentVolume): Quantity | undefined => parsedSize(volume.spec?.capacity?.storage);

/**
 * kube's `findMatchingVolume`: the volume pre-bound to `claim` if there is one (and it is
 * big enough and fits `node`), else the smallest Available volume of the claim's class
 * whose access modes, volume mode, capacity, labels (the claim's selector) and node affinity
 * (on `node`, when given) suit it. With `delayBinding` and no `node`, only a pre-bound volume
 * matches (the scheduler picks the others). Ties go to the fewest access modes, then the name.
 */
export const findMatchingVolume = (
  claim: PersistentVolumeClaim,
  volumes: readonly PersistentVolume[],
  node: Node | undefined,
  delayBinding: boolean,
): PersistentVolume | undefined => {
  const selector = claim.spec?.selector ? labelSelectorToRequirements(claim.spec.selector) : undefined;
  if (selector?.type === 'invalid') return undefined;
  const requestedClass = claimClass(claim);
  let best: PersistentVolume | undefined;
  for (const volume of volumes) {
    if (volumeModeMismatch(claim, volume) || volume.metadata.deletionTimestamp || !offersAccessModes(claim, volume)) continue;
    const affinityFits = node === undefined || volumeFitsNode(volume, node);
    if (isVolumeBoundToClaim(volume, claim)) {
      if (!volumeHoldsClaim(volume, claim)) continue;
      return affinityFits ? volume : undefined;
    }
    if (node === undefined && delayBinding) continue;
    if (volume.spec?.claimRef || volume.status?.phase !== 'Available') continue;
    if (selector !== undefined && !matchesLabels(selector.requirements, volume.metadata.labels)) continue;
    if (volumeClass(volume) !== requestedClass || !affinityFits || !volumeHoldsClaim(volume, claim)) continue;
    if (best === undefined || ranksBefore(volume, best)) best = volume;
  }
  return best;
};

const ranksBefore = (volume: PersistentVolume, other: PersistentVolume): boolean => {
  const size = sizeOf(volume);
  const otherSize = sizeOf(other);
  const bySize = size !== undefined && otherSize !== undefined ? compareQuantities(size, otherSize) : 0;
  if (bySize !== 0) return bySize < 0;
  const modes = (volume.spec?.accessModes ?? []).length - (other.spec?.accessModes ?? []).length;
  if (modes !== 0) return modes < 0;
  return volume.metadata.name < other.metadata.name;
};

/** The claims a pod's volumes name, in order: its `persistentVolumeClaim` volumes' and its ephemeral volumes' (`<pod>-<volume>`). */
export const claimNamesOf = (pod: Pod): string[] => {
  const names: string[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.persistentVolumeClaim) names.push(volume.persistentVolumeClaim.claimName);
    else if (volume.ephemeral) names.push(`${pod.metadata.name}-${volume.name}`);
  }
  return names;
};

/** Whether a pod has any claim to look at (cheap: no allocation for a pod without volumes). */
export const hasClaims = (pod: Pod): boolean => (pod.spec?.volumes ?? []).some((volume) => volume.persistentVolumeClaim !== undefined || volume.ephemeral !== undefined);
