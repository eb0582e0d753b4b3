/**
 * The partition domains: which kinds' events share a partition key, by kind ref. Every
 * precondition the fold judges must find everything it depends on in one partition, in
 * one total order, for any partition count (DESIGN invariant 2), so:
 *
 * - `scheduling`: Pods and Nodes (node capacity and "bound at most once" range over all
 *   pods and nodes), and what is judged with pods: ResourceQuota (the compute resources
 *   and pod counts a pod create is charged against) and PodDisruptionBudget (an eviction,
 *   an event of its pod, is judged against the budget's disruptions allowed). Object-count
 *   quota of kinds in other domains is charged by an event in the quota's partition before
 *   the create, as kube-apiserver's quota admission charges before storage (a charge whose
 *   create then fails is released by the quota controller's recount, as in kube).
 * - `services`: Services (ClusterIPs and NodePorts are unique across all of them).
 *   The services fold's configuration (service CIDR, NodePort range) is the
 *   `ClusterConfigured` event keyed {@link CLUSTER_CONFIGURATION_KEY}, in this domain, so
 *   every Service event is ordered after it.
 * - `storage`: PersistentVolumes and PersistentVolumeClaims (a volume is bound to at most
 *   one claim, a claim to one volume).
 *
 * - `customResourceGroup`: the CustomResourceDefinitions of one API group, the schemas they
 *   register (SchemaRegistered, keyed by the CRD) and every custom object of the group's kinds
 *   share the partition key `customresources/<group>`, so the fold judges a custom object
 *   against its CRD (served version, registered schema, deletion) in log order. A kind ref no
 *   registered kind has and that carries a group (custom groups always contain a dot) is a
 *   custom resource's.
 *
 * Every other kind spreads by its own object key. Pod/, Node/ and Service/ keys map to the
 * same partition keys as before this table existed ("scheduling", "services"), so logs
 * written before replay to the same partitions. Moving a kind between domains later would
 * move its existing objects: a domain, once released, does not change.
 */
import type { PartitionDomain } from './descriptor.ts';

const shared = (key: string): PartitionDomain => ({ type: 'shared', key });

export const SCHEDULING_DOMAIN = shared('scheduling');
export const SERVICES_DOMAIN = shared('services');
export const STORAGE_DOMAIN = shared('storage');

/** The key of the `ClusterConfigured` event: the configuration the services fold reads. */
export const CLUSTER_CONFIGURATION_KEY = 'ClusterConfiguration.logplane.io//services';

/** The kinds (by kind ref) that share a domain; every kind not here is `{ type: 'object' }`. */
export const SHARED_DOMAINS: ReadonlyMap<string, PartitionDomain> = new Map([
  ['Pod', SCHEDULING_DOMAIN],
  ['Node', SCHEDULING_DOMAIN],
  ['ResourceQuota', SCHEDULING_DOMAIN],
  ['PodDisruptionBudget.policy', SCHEDULING_DOMAIN],
  ['Service', SERVICES_DOMAIN],
  ['ClusterConfiguration.logplane.io', SERVICES_DOMAIN],
  ['PersistentVolume', STORAGE_DOMAIN],
  ['PersistentVolumeClaim', STORAGE_DOMAIN],
]);

const OWN_KEY: PartitionDomain = { type: 'object' };
const CUSTOM_RESOURCE_GROUP: PartitionDomain = { type: 'customResourceGroup' };

/** The kind ref of apiextensions.k8s.io/v1 CustomResourceDefinition, whose names read `<plural>.<group>`. */
export const CUSTOM_RESOURCE_DEFINITION_REF = 'CustomResourceDefinition.apiextensions.k8s.io';

/** The partition domain of the registered kind `kindRef` names. */
export const partitionDomainOf = (kindRef: string): PartitionDomain =>
  SHARED_DOMAINS.get(kindRef) ?? (kindRef === CUSTOM_RESOURCE_DEFINITION_REF ? CUSTOM_RESOURCE_GROUP : OWN_KEY);

/** The partition domain of a kind ref no registered kind has: a custom resource's when it carries a group. */
export const unregisteredDomainOf = (kindRef: string): PartitionDomain =>
  SHARED_DOMAINS.get(kindRef) ?? (kindRef.includes('.') ? CUSTOM_RESOURCE_GROUP : OWN_KEY);

/**
 * The partition key of the custom-resource group an object key is in: a CRD's
 * (`CustomResourceDefinition.apiextensions.k8s.io//<plural>.<group>`) or a custom object's
 * (`<Kind>.<group>/<namespace>/<name>`).
 */
export const customResourceGroupKey = (objectKey: string): string => {
  const slash = objectKey.indexOf('/');
  const ref = slash < 0 ? objectKey : objectKey.slice(0, slash);
  const named = ref === CUSTOM_RESOURCE_DEFINITION_REF ? objectKey.slice(objectKey.lastIndexOf('/') + 1) : ref;
  return `customresources/${named.slice(named.indexOf('.') + 1)}`;
};
