/**
 * A StatefulSet's pods and claims, pure (kube's `stateful_set_utils.go`): stable names
 * `<set>-<ordinal>`, the identity labels, hostname and subdomain, the volumes of the claim
 * templates, the claims `<template>-<set>-<ordinal>`, and the claim owner references the
 * `persistentVolumeClaimRetentionPolicy` asks for.
 */
import type { OwnerReference, PersistentVolumeClaim, Pod, PodTemplateSpec, StatefulSet, Volume } from '../../schemas/index.ts';
import { canonicalJson, controllerReferenceTo } from '../replicaset/objects.ts';
import { isPodAvailable, isPodReady } from '../replicaset/pods.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../history/index.ts';

/** The label naming a StatefulSet pod (a Service can select one pod with it). */
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** The label carrying a StatefulSet pod's ordinal (kube's PodIndexLabel, on by default since 1.28). */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** Pod management policies. */
export const POD_MANAGEMENT = { OrderedReady: 'OrderedReady', Parallel: 'Parallel' } as const;
/** Update strategies. */
export const SET_UPDATE = { RollingUpdate: 'RollingUpdate', OnDelete: 'OnDelete' } as const;
/** PVC retention policy values. */
export const RETENTION = { Retain: 'Retain', Delete: 'Delete' } as const;

const ORDINAL_NAME = /^(.*)-(\d+)$/;
const MAX_ORDINAL = 2 ** 31 - 1;

/** The parent name and ordinal of a pod name; ordinal -1 when the name has none (kube's `getParentNameAndOrdinal`). */
export const parentAndOrdinal = (name: string): { readonly parent: string; readonly ordinal: number } => {
  const match = ORDINAL_NAME.exec(name);
  if (!match) return { parent: '', ordinal: -1 };
  const ordinal = Number(match[2]);
  return Number.isSafeInteger(ordinal) && ordinal <= MAX_ORDINAL ? { parent: match[1] ?? '', ordinal } : { parent: '', ordinal: -1 };
};

/** The ordinal of `pod` (-1 for none). */
export const ordinalOf = (pod: Pod): number => parentAndOrdinal(pod.metadata.name).ordinal;

/** Whether `pod` is named as a member of `set` (kube's `isMemberOf`, the filter of its pod adoption). */
export const isMemberOf = (set: StatefulSet, pod: Pod): boolean => parentAndOrdinal(pod.metadata.name).parent === set.metadata.name;

/** `spec.replicas` (default 1). */
export const setReplicas = (set: StatefulSet): number => set.spec?.replicas ?? 1;
/** The first ordinal (`spec.ordinals.start`, default 0). */
export const startOrdinal = (set: StatefulSet): number => set.spec?.ordinals?.start ?? 0;
/** The last ordinal in range (start + replicas − 1). */
export const endOrdinal = (set: StatefulSet): number => startOrdinal(set) + setReplicas(set) - 1;
/** Whether `pod`'s ordinal is in the set's range. */
export const inOrdinalRange = (set: StatefulSet, pod: Pod): boolean => {
  const ordinal = ordinalOf(pod);
  return ordinal >= startOrdinal(set) && ordinal <= endOrdinal(set);
};

/** The pod name of `ordinal`. */
export const podName = (set: StatefulSet, ordinal: number): string => `${set.metadata.name}-${ordinal}`;
/** The claim name of template `claim` for `ordinal`. */
export const claimName = (set: StatefulSet, claim: string, ordinal: number): string => `${claim}-${set.metadata.name}-${ordinal}`;

/** The revision (a ControllerRevision name) a StatefulSet pod was made from, '' when unlabelled. */
export const podRevision = (pod: Pod): string => pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';

/** Running and Ready (kube's `isRunningAndReady`). */
export const isRunningAndReady = (pod: Pod): boolean => pod.status?.phase === 'Running' && isPodReady(pod);
/** Whether the pod is terminating. */
export const isTerminating = (pod: Pod): boolean => Boolean(pod.metadata.deletionTimestamp);
/** Running, Ready for minReadySeconds, and not terminating; the opposite of kube's `isUnavailable`. */
export const isHealthy = (pod: Pod | undefined, minReadySeconds: number, now: number): boolean =>
  pod !== undefined && !isTerminating(pod) && isRunningAndReady(pod) && isPodAvailable(pod, minReadySeconds, now);

/** Identity labels, name, namespace agree with `set` (kube's `identityMatches`). */
export const identityMatches = (set: StatefulSet, pod: Pod): boolean => {
  const { parent, ordinal } = parentAndOrdinal(pod.metadata.name);
  return (
    ordinal >= 0 &&
    parent === set.metadata.name &&
    (pod.metadata.namespace ?? 'default') === (set.metadata.namespace ?? 'default') &&
    pod.metadata.labels?.[POD_NAME_LABEL] === pod.metadata.name &&
    pod.metadata.labels[POD_INDEX_LABEL] === String(ordinal)
  );
};

/** `pod` with the identity labels of its ordinal (kube's `updateIdentity`). */
export const withIdentity = (pod: Pod): Pod => {
  const ordinal = ordinalOf(pod);
  return { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, [POD_NAME_LABEL]: pod.metadata.name, [POD_INDEX_LABEL]: String(ordinal) } } };
};

/** The claims of `ordinal`, in template order: named per ordinal, in the set's namespace, with the selector's labels. */
export const claimsFor = (set: StatefulSet, ordinal: number): PersistentVolumeClaim[] =>
  (set.spec?.volumeClaimTemplates ?? []).map((template) => {
    const name = template.metadata?.name ?? '';
    const labels = { ...template.metadata?.labels, ...set.spec?.selector.matchLabels };
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
        name: claimName(set, name, ordinal),
        namespace: set.metadata.namespace ?? 'default',
        ...(Object.keys(labels).length > 0 ? { labels } : {}),
      },
      ...(template.spec ? { spec: structuredClone(template.spec) } : {}),
    } as PersistentVolumeClaim;
  });

/** The template names of the set's claims. */
const claimTemplateNames = (set: StatefulSet): string[] => (set.spec?.volumeClaimTemplates ?? []).map((t) => t.metadata?.name ?? '');

/** Whether the pod mounts every claim of its ordinal (kube's `storageMatches`). */
export const storageMatches = (set: StatefulSet, pod: Pod): boolean => {
  const ordinal = ordinalOf(pod);
  if (ordinal < 0) return false;
  const volumes = new Map((pod.spec.volumes ?? []).map((v) => [v.name, v]));
  return claimTemplateNames(set).every((name) => volumes.get(name)?.persistentVolumeClaim?.claimName === claimName(set, name, ordinal));
};

/** The template's volumes with one `persistentVolumeClaim` volume per claim template first, replacing volumes of the same name (kube's `updateStorage`). */
const volumesFor = (set: StatefulSet, ordinal: number, volumes: readonly Volume[] | undefined): Volume[] => {
  const names = claimTemplateNames(set);
  const claimVolumes: Volume[] = names.map((name) => ({ name, persistentVolumeClaim: { claimName: claimName(set, name, ordinal) } }));
  return [...claimVolumes, ...(volumes ?? []).filter((v) => !names.includes(v.name))];
};

/**
 * A new pod of `ordinal` from `template` (the template of the revision it belongs to): the
 * template's labels, annotations, finalizers and spec, owned by `set`, with its identity
 * (labels, `hostname`, `subdomain` = `serviceName`), its claims' volumes and `revision` in
 * the `controller-revision-hash` label (kube's `newVersionedStatefulSetPod`).
 */
export const newStatefulSetPod = (set: StatefulSet, template: PodTemplateSpec, ordinal: number, revision: string): Pod => {
  const name = podName(set, ordinal);
  const spec = structuredClone(template.spec ?? { containers: [] });
  const volumes = volumesFor(set, ordinal, spec.volumes);
  const serviceName = set.spec?.serviceName ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: set.metadata.namespace ?? 'default',
      labels: { ...template.metadata?.labels, [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [CONTROLLER_REVISION_HASH_LABEL]: revision },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(template.metadata?.finalizers ? { finalizers: [...template.metadata.finalizers] } : {}),
      ownerReferences: [controllerReferenceTo(set)],
    },
    spec: {
      ...spec,
      ...(volumes.length > 0 ? { volumes } : {}),
      hostname: name,
      ...(serviceName ? { subdomain: serviceName } : {}),
    },
  };
};

/** A plain owner reference, made a controller one (kube's `addControllerRef` of `metav1.NewControllerRef`). */
const controllerRefTo = (owner: Pod | StatefulSet): OwnerReference => controllerReferenceTo(owner);

const refersTo = (ref: OwnerReference, owner: Pod | StatefulSet): boolean => ref.kind === owner.kind && ref.name === owner.metadata.name;

/**
 * The owner references `claim` should have for `pod` under the set's retention policy (kube's
 * `updateClaimOwnerRefForSetAndPod`): Retain/Retain none; whenDeleted Delete the set; whenScaled
 * Delete the pod once it is scaled down (out of range), the set before if whenDeleted is Delete
 * too. References to others are kept; undefined when another controller owns the claim or a
 * reference to the set or pod is stale (another uid): such a claim is left alone.
 */
export const claimOwnerReferences = (claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): OwnerReference[] | undefined => {
  const refs = claim.metadata.ownerReferences ?? [];
  const ours = (ref: OwnerReference): boolean => refersTo(ref, set) || refersTo(ref, pod);
  if (refs.some((ref) => ours(ref) && ref.uid !== (refersTo(ref, set) ? set.metadata.uid : pod.metadata.uid))) return undefined;
  if (refs.some((ref) => ref.controller === true && !ours(ref))) return undefined;
  const kept = refs.filter((ref) => !ours(ref));
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy;
  const whenDeleted = policy?.whenDeleted ?? RETENTION.Retain;
  const whenScaled = policy?.whenScaled ?? RETENTION.Retain;
  const scaledDown = !inOrdinalRange(set, pod);
  if (whenScaled === RETENTION.Delete && scaledDown && pod.metadata.uid) return [...kept, controllerRefTo(pod)];
  if (whenDeleted === RETENTION.Delete && !(whenScaled === RETENTION.Delete && scaledDown)) return [...kept, controllerRefTo(set)];
  return kept;
};

/** The owner references of a claim created for a pod in range: the set's when `whenDeleted` is Delete. */
export const initialClaimOwners = (set: StatefulSet): OwnerReference[] =>
  (set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? RETENTION.Retain) === RETENTION.Delete ? [controllerRefTo(set)] : [];

/** Whether the claim's owner references already are {@link claimOwnerReferences} (kube's `isClaimOwnerUpToDate`). */
export const claimOwnerUpToDate = (claim: PersistentVolumeClaim, set: StatefulSet, pod: Pod): boolean => {
  const wanted = claimOwnerReferences(claim, set, pod);
  return wanted === undefined || canonicalJson(wanted) === canonicalJson(claim.metadata.ownerReferences ?? []);
};
