/**
 * The resources logplane serves, with everything discovery, routing, validation and the
 * error messages need to know about each (plural, kind, group, scope, short names,
 * subresources). One table, read everywhere.
 */
import type { Kind } from '../schemas/index.ts';

/** An API group/version; the core group is `''`. */
export interface GroupVersion {
  readonly group: '' | 'apps';
  readonly version: 'v1';
}

/** A subresource of a resource, e.g. `scale` of `deployments`. */
export interface SubresourceInfo {
  readonly name: 'status' | 'scale' | 'binding' | 'log';
  /** The kind the subresource reads and writes (Scale is autoscaling/v1). */
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
}

/** Everything the apiserver knows about one resource. */
export interface ResourceInfo extends GroupVersion {
  /** The plural name used in URLs: `pods`. */
  readonly plural: string;
  readonly singular: string;
  readonly kind: Kind;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly subresources: readonly SubresourceInfo[];
  /** Names must be DNS-1123 labels (services, namespaces) or subdomains (the rest). */
  readonly nameFormat: 'label' | 'subdomain';
  /** Fields a fieldSelector may name for this resource. */
  readonly selectableFields: readonly string[];
}

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

const STATUS: SubresourceInfo = { name: 'status', kind: '', verbs: ['get', 'patch', 'update'] };
const SCALE: SubresourceInfo = { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] };
const BASE_FIELDS = ['metadata.name', 'metadata.namespace'] as const;

/** The served resources, in discovery order. */
export const RESOURCES: readonly ResourceInfo[] = [
  {
    group: '', version: 'v1', plural: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false,
    shortNames: ['ns'], categories: [], subresources: [STATUS], nameFormat: 'label',
    selectableFields: [...BASE_FIELDS, 'status.phase'],
  },
  {
    group: '', version: 'v1', plural: 'nodes', singular: 'node', kind: 'Node', namespaced: false,
    shortNames: ['no'], categories: [], subresources: [STATUS], nameFormat: 'subdomain',
    selectableFields: [...BASE_FIELDS, 'spec.unschedulable'],
  },
  {
    group: '', version: 'v1', plural: 'pods', singular: 'pod', kind: 'Pod', namespaced: true,
    shortNames: ['po'], categories: ['all'], nameFormat: 'subdomain',
    subresources: [
      STATUS,
      { name: 'binding', kind: 'Binding', verbs: ['create'] },
      { name: 'log', kind: 'Pod', verbs: ['get'] },
    ],
    selectableFields: [...BASE_FIELDS, 'spec.nodeName', 'status.phase', 'spec.restartPolicy', 'spec.schedulerName', 'status.podIP'],
  },
  {
    group: '', version: 'v1', plural: 'services', singular: 'service', kind: 'Service', namespaced: true,
    shortNames: ['svc'], categories: ['all'], subresources: [STATUS], nameFormat: 'label',
    selectableFields: [...BASE_FIELDS, 'spec.clusterIP', 'spec.type'],
  },
  {
    group: '', version: 'v1', plural: 'endpoints', singular: 'endpoints', kind: 'Endpoints', namespaced: true,
    shortNames: ['ep'], categories: [], subresources: [], nameFormat: 'subdomain',
    selectableFields: [...BASE_FIELDS],
  },
  {
    group: 'apps', version: 'v1', plural: 'deployments', singular: 'deployment', kind: 'Deployment', namespaced: true,
    shortNames: ['deploy'], categories: ['all'], subresources: [STATUS, SCALE], nameFormat: 'subdomain',
    selectableFields: [...BASE_FIELDS],
  },
  {
    group: 'apps', version: 'v1', plural: 'replicasets', singular: 'replicaset', kind: 'ReplicaSet', namespaced: true,
    shortNames: ['rs'], categories: ['all'], subresources: [STATUS, SCALE], nameFormat: 'subdomain',
    selectableFields: [...BASE_FIELDS, 'status.replicas'],
  },
];

/** `v1` or `apps/v1`. */
export const apiVersionOf = (gv: GroupVersion): string => (gv.group === '' ? gv.version : `${gv.group}/${gv.version}`);

/** The resource of `plural` in a group/version, if served. */
export const findResource = (group: string, version: string, plural: string): ResourceInfo | undefined =>
  RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);

/** The resource that stores `kind`. */
export const resourceOfKind = (kind: Kind): ResourceInfo => {
  const found = RESOURCES.find((r) => r.kind === kind);
  if (!found) throw new Error(`no resource serves kind ${kind}`);
  return found;
};

/** Served group/versions, core first. */
export const GROUP_VERSIONS: readonly GroupVersion[] = [
  { group: '', version: 'v1' },
  { group: 'apps', version: 'v1' },
];

/** `deployments.apps` or `pods`: how kube names a resource in error messages. */
export const qualifiedResource = (r: ResourceInfo): string => (r.group === '' ? r.plural : `${r.plural}.${r.group}`);

/** `Deployment.apps` or `Pod`: how kube names a kind in "is invalid" messages. */
export const qualifiedKind = (r: ResourceInfo): string => (r.group === '' ? r.kind : `${r.kind}.${r.group}`);
