/**
 * The resources logplane serves, with everything discovery, routing, validation and the
 * error messages need to know about each (plural, kind, group, scope, short names,
 * subresources). Derived from the kind registry (`schemas/kinds/`) for every kind the
 * current event schema stores; nothing here lists kinds.
 */
import { KINDS, kindRef, type CustomResourceDefinition, type CustomResourceDefinitionVersion, type Kind } from '../schemas/index.ts';
import { storedKind, kindByRef, REGISTERED_KINDS, type RegisteredKind } from '../schemas/kinds/registry.ts';
import { conversionOf, type Conversion } from './conversion/index.ts';

/** An API group/version; the core group is `''`. */
export interface GroupVersion {
  readonly group: string;
  readonly version: string;
}

/** The subresources the apiserver has handlers for; a kind serves those of them its descriptor has. */
export const HANDLED_SUBRESOURCES = ['status', 'scale', 'binding', 'log', 'token', 'approval', 'eviction', 'exec', 'attach', 'portforward'] as const;
export type HandledSubresource = (typeof HANDLED_SUBRESOURCES)[number];

/** A subresource of a resource, e.g. `scale` of `deployments`. */
export interface SubresourceInfo {
  readonly name: HandledSubresource;
  /** The kind the subresource reads and writes (Scale is autoscaling/v1). */
  readonly kind: string;
  readonly group?: string;
  readonly version?: string;
  readonly verbs: readonly string[];
}

/**
 * How a custom resource is served at one version: from its CustomResourceDefinition, as
 * apiextensions-apiserver's crdHandler serves it (`apiserver/custom-resources/`).
 */
export interface CustomServing {
  readonly crd: CustomResourceDefinition;
  /** The CRD's entry for the served version: its schema, subresources and printer columns. */
  readonly version: CustomResourceDefinitionVersion;
  readonly listKind: string;
}

/** Everything the apiserver knows about one resource. */
export interface ResourceInfo extends GroupVersion {
  /**
   * How keys name the kind (`Pod`, `Job.batch`, a custom resource's `CronTab.stable.example.com`):
   * the prefix of its objects' keys.
   */
  readonly ref: string;
  /** Set for a custom resource, whose `kind` is its CRD's (no stored kind of the schema). */
  readonly custom?: CustomServing;
  /** The plural name used in URLs: `pods`. */
  readonly plural: string;
  readonly singular: string;
  readonly kind: Kind;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly subresources: readonly SubresourceInfo[];
  /** How names are validated: DNS-1123 labels (services, namespaces), subdomains (most), path segments. */
  readonly nameFormat: RegisteredKind['nameFormat'];
  /** Fields a fieldSelector may name for this resource. */
  readonly selectableFields: readonly string[];
  /** The verbs of the main resource (kube's: namespaces have no deletecollection). */
  readonly verbs: readonly string[];
  /** The kind's definition in the vendored API document, at this version. */
  readonly definition: string;
  /** How this version converts to and from the stored one; absent for the stored version itself. */
  readonly conversion?: Conversion;
}

const BASE_FIELDS = ['metadata.name', 'metadata.namespace'] as const;

const isHandled = (name: string): name is HandledSubresource => (HANDLED_SUBRESOURCES as readonly string[]).includes(name);

/**
 * The resource of a registered kind at one of its versions, with the subresources the
 * apiserver handles. `kind` is the stored kind whose records hold its objects; a version
 * other than the stored one (or a kind served from another's storage) has a conversion.
 */
const resourceOf = (registered: RegisteredKind, version: string, stored: Kind, conversion: Conversion | undefined): ResourceInfo => ({
  ref: kindRef(stored),
  group: registered.group,
  version,
  plural: registered.plural,
  singular: registered.singular,
  kind: stored,
  namespaced: registered.scope === 'Namespaced',
  shortNames: registered.shortNames,
  categories: registered.categories,
  nameFormat: registered.nameFormat,
  selectableFields: [...BASE_FIELDS, ...registered.selectableFields],
  verbs: registered.verbs,
  definition: conversion?.definition ?? registered.definition,
  ...(conversion ? { conversion } : {}),
  subresources: registered.subresources
    .filter((sub) => isHandled(sub.name))
    .map((sub) => ({
      name: sub.name as HandledSubresource,
      // The log subresource answers text; its Table and discovery kind is the Pod itself, as kube shows it.
      kind: sub.kind === '' && sub.name === 'log' ? stored : sub.kind,
      ...(sub.group !== undefined ? { group: sub.group } : {}),
      ...(sub.version !== undefined ? { version: sub.version } : {}),
      verbs: sub.verbs,
    })),
});

const storedResource = (kind: Kind): ResourceInfo => {
  const registered = storedKind(kind);
  if (!registered) throw new Error(`the current event schema stores ${kind}, which the kind registry does not have`);
  const [version = 'v1'] = registered.versions;
  return resourceOf(registered, version, kind, undefined);
};

/** A served version without records of its own; the registry and the conversions must agree on each. */
const convertedResource = (registered: RegisteredKind, version: string): ResourceInfo => {
  const stored = kindByRef(registered.storageRef);
  if (!stored || !(KINDS as readonly string[]).includes(stored.kind)) throw new Error(`${registered.ref} is stored as ${registered.storageRef}, which the current event schema does not store`);
  const conversion = conversionOf(registered.group, version, registered.kind);
  if (!conversion) throw new Error(`${registered.ref} ${version} is served from ${registered.storageRef}'s records, but apiserver/conversion has no conversion for it`);
  return resourceOf(registered, version, stored.kind as Kind, conversion);
};

/** Every served version other than each kind's stored one: the other versions of a stored kind, and the kinds stored as another. */
const convertedResources = (): ResourceInfo[] =>
  REGISTERED_KINDS.flatMap((registered) => {
    const storedHere = registered.storageRef === registered.ref;
    if (storedHere && !(KINDS as readonly string[]).includes(registered.kind)) return [];
    const versions = storedHere ? registered.versions.slice(1) : registered.versions;
    return versions.map((version) => convertedResource(registered, version));
  });

const DISCOVERY_ORDER: ReadonlyMap<string, number> = new Map(REGISTERED_KINDS.map((kind, index) => [`${kind.group}/${kind.plural}`, index]));
const discoveryIndex = (resource: ResourceInfo): number => DISCOVERY_ORDER.get(`${resource.group}/${resource.plural}`) ?? Number.MAX_SAFE_INTEGER;

/** The served resources, in the registry's (kube's discovery) order; each kind's stored version first. */
export const RESOURCES: readonly ResourceInfo[] = [...KINDS.map(storedResource), ...convertedResources()].sort((a, b) => discoveryIndex(a) - discoveryIndex(b));

/** `v1` or `apps/v1`. */
export const apiVersionOf = (gv: GroupVersion): string => (gv.group === '' ? gv.version : `${gv.group}/${gv.version}`);

/** The resource of `plural` in a group/version, if served. */
export const findResource = (group: string, version: string, plural: string): ResourceInfo | undefined =>
  RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);

/** The resource that stores `kind`. */
export const resourceOfKind = (kind: Kind): ResourceInfo => {
  const found = RESOURCES.find((r) => r.kind === kind && r.conversion === undefined);
  if (!found) throw new Error(`no resource serves kind ${kind}`);
  return found;
};

/** Served group/versions, core first, in the registry's order. */
export const GROUP_VERSIONS: readonly GroupVersion[] = RESOURCES.reduce<GroupVersion[]>((served, resource) => {
  if (!served.some((gv) => gv.group === resource.group && gv.version === resource.version)) served.push({ group: resource.group, version: resource.version });
  return served;
}, []).sort((a, b) => (a.group === '' ? -1 : b.group === '' ? 1 : 0));

/** `deployments.apps` or `pods`: how kube names a resource in error messages. */
export const qualifiedResource = (r: ResourceInfo): string => (r.group === '' ? r.plural : `${r.plural}.${r.group}`);

/** `Deployment.apps` or `Pod`: how kube names a kind in "is invalid" messages. */
export const qualifiedKind = (r: ResourceInfo): string => (r.group === '' ? r.kind : `${r.kind}.${r.group}`);
