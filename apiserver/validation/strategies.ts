/**
 * What kube-apiserver 1.32's registry strategies set on a create besides the defaults, for
 * the kinds whose steps are more than a line: a Pod's QoS class in its status, and a
 * PersistentVolumeClaim's data sources. `defaults.ts` wires them into its per-kind maps.
 * Also what an update keeps of the current object (`prepareForUpdate`, the main resource)
 * and what a status write keeps (`prepareForStatusUpdate`), per kind.
 */
import { computePodQos } from '../../projections/index.ts';
import { KINDS, type Kind, type KubeObject, type ObjectOfKind, type PersistentVolumeClaimSpec, type PodSpec } from '../../schemas/index.ts';

/**
 * kube's SetDefaults_Pod (pkg/apis/core/v1/defaults.go): a container (or init container)
 * that limits a resource without requesting it requests the limit. Pods only: a template's
 * containers keep what they say until their pods are created.
 */
export const defaultRequestsFromLimits = (spec: PodSpec): void => {
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const resources = container.resources;
    if (!resources?.limits) continue;
    const requests: Record<string, string> = { ...resources.requests };
    for (const [name, quantity] of Object.entries(resources.limits)) {
      if (!Object.hasOwn(requests, name)) requests[name] = quantity;
    }
    resources.requests = requests;
  }
};

/**
 * kube's podStrategy.PrepareForCreate: whatever the client sent, a new pod's status is
 * phase Pending with the QoS class its containers' resources make it (`qos.GetPodQOS`).
 */
export const recordPodQos = (pod: ObjectOfKind<'Pod'>): void => {
  pod.status = { phase: 'Pending', qosClass: computePodQos(pod) };
};

/** kube's dataSourceIsPvcOrSnapshot: the two kinds the legacy `dataSource` field may name. */
const isClaimOrSnapshot = (source: NonNullable<PersistentVolumeClaimSpec['dataSource']>): boolean => {
  const group = source.apiGroup ?? '';
  return (source.kind === 'PersistentVolumeClaim' && group === '') || (source.kind === 'VolumeSnapshot' && group === 'snapshot.storage.k8s.io');
};

/**
 * kube's persistentvolumeclaimStrategy.PrepareForCreate data-source steps (pkg/api/persistentvolumeclaim):
 * DropDisabledFields clears `dataSourceRef.namespace` (CrossNamespaceVolumeDataSource is
 * alpha, off); EnforceDataSourceBackwardsCompatibility drops a `dataSource` naming anything
 * but a PVC or a VolumeSnapshot when no `dataSourceRef` is given; NormalizeDataSources
 * (AnyVolumeDataSource, on) copies whichever of the two is set into the other.
 */
export const normalizeClaimDataSources = (claim: ObjectOfKind<'PersistentVolumeClaim'>): void => {
  const spec = claim.spec;
  if (!spec) return;
  if (spec.dataSourceRef) delete spec.dataSourceRef.namespace;
  if (!spec.dataSourceRef && spec.dataSource && !isClaimOrSnapshot(spec.dataSource)) delete spec.dataSource;
  const { dataSource, dataSourceRef } = spec;
  if (dataSource && !dataSourceRef) {
    spec.dataSourceRef = { kind: dataSource.kind, name: dataSource.name, ...(dataSource.apiGroup != null ? { apiGroup: dataSource.apiGroup } : {}) };
  } else if (dataSourceRef && !dataSource) {
    spec.dataSource = { kind: dataSourceRef.kind, name: dataSourceRef.name, ...(dataSourceRef.apiGroup != null ? { apiGroup: dataSourceRef.apiGroup } : {}) };
  }
};

type StatusStrategy<K extends Kind> = (next: ObjectOfKind<K>, current: ObjectOfKind<K>) => void;

/** What a `/status` write keeps of the current object, per kind (kube's <kind>StatusStrategy.PrepareForUpdate); nothing for most. */
const STATUS_STRATEGIES: { readonly [K in Kind]: StatusStrategy<K> } = {
  ...(Object.fromEntries(KINDS.map((kind) => [kind, () => undefined])) as unknown as { [K in Kind]: StatusStrategy<K> }),
  // podStatusStrategy: the QoS class is set at creation and immutable; a status without one keeps the current one.
  Pod: (next, current) => {
    const qosClass = current.status?.qosClass;
    if (qosClass && !next.status?.qosClass) next.status = { ...next.status, qosClass };
  },
};

/** Applies what a status write of `next` over `current` keeps of `current` (both of the same kind). */
export const prepareForStatusUpdate = (next: KubeObject, current: KubeObject): void => {
  (STATUS_STRATEGIES[next.kind] as StatusStrategy<Kind>)(next, current);
};

type UpdateStrategy<K extends Kind> = (next: ObjectOfKind<K>, current: ObjectOfKind<K>) => void;

/** What an update of the main resource keeps of the current object when the body leaves it out, per kind; nothing for most. */
const UPDATE_STRATEGIES: { readonly [K in Kind]: UpdateStrategy<K> } = {
  ...(Object.fromEntries(KINDS.map((kind) => [kind, () => undefined])) as unknown as { [K in Kind]: UpdateStrategy<K> }),
  // The Priority admission plugin on update: the priority and preemption policy it set at creation stay.
  Pod: (next, current) => {
    if (next.spec.priority == null && current.spec.priority != null) next.spec.priority = current.spec.priority;
    if (next.spec.preemptionPolicy == null && current.spec.preemptionPolicy != null) next.spec.preemptionPolicy = current.spec.preemptionPolicy;
  },
};

/** Applies what an update of `next` over `current` keeps of `current` (both of the same kind), before validation. */
export const prepareForUpdate = (next: KubeObject, current: KubeObject): void => {
  (UPDATE_STRATEGIES[next.kind] as UpdateStrategy<Kind>)(next, current);
};
