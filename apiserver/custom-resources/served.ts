/**
 * The resources the apiserver serves: the registry's kinds and, as apiextensions-apiserver
 * adds them, the custom resources of every Established CustomResourceDefinition in the
 * projection (each served version, under the CRD's accepted names). Routing and discovery
 * read them through {@link ServedResources}; the set is rebuilt only when a CRD changes.
 */
import type { View } from '../../projections/index.ts';
import type { CustomResourceDefinition, Kind } from '../../schemas/index.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { noneConversion } from './conversion.ts';
import { findResource, GROUP_VERSIONS, RESOURCES, type GroupVersion, type ResourceInfo, type SubresourceInfo } from '../resources.ts';

/** What one request may address. */
export interface ServedResources {
  /** Every served resource: the registry's, then the custom ones. */
  readonly resources: readonly ResourceInfo[];
  /** Every served group/version: the registry's, then the custom ones. */
  readonly groupVersions: readonly GroupVersion[];
  find(group: string, version: string, plural: string): ResourceInfo | undefined;
}

/** Only the registry's kinds (no CRD is read). */
export const BUILT_IN_RESOURCES: ServedResources = { resources: RESOURCES, groupVersions: GROUP_VERSIONS, find: findResource };

/** The verbs of every custom resource (apiextensions-apiserver's crdHandler). */
const CUSTOM_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'] as const;

/** Whether a CRD is Established: its names are accepted and its resources served. */
export const isEstablished = (crd: CustomResourceDefinition): boolean =>
  (crd.status?.conditions ?? []).some((condition) => condition.type === 'Established' && condition.status === 'True');

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d*))?$/;
const STABILITY = { '': 2, beta: 1, alpha: 0 } as const;

/**
 * kube's version priority (`version.CompareKubeAwareVersionStrings`): GA before beta before
 * alpha, higher numbers first; versions not of that form after them, by name. The first
 * served version is the group's preferred one.
 */
export const compareKubeVersions = (a: string, b: string): number => {
  const x = KUBE_VERSION.exec(a);
  const y = KUBE_VERSION.exec(b);
  if (!x || !y) return x ? -1 : y ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const stability = STABILITY[(y[2] ?? '') as keyof typeof STABILITY] - STABILITY[(x[2] ?? '') as keyof typeof STABILITY];
  if (stability !== 0) return stability;
  const major = Number(y[1]) - Number(x[1]);
  if (major !== 0) return major;
  return Number(y[3] || 0) - Number(x[3] || 0);
};

/** The resources one CRD serves: one per served version, in kube's version priority, under its accepted names. */
export const customResourcesOf = (crd: CustomResourceDefinition): ResourceInfo[] => {
  const names = crd.status?.acceptedNames?.kind ? crd.status.acceptedNames : crd.spec.names;
  const group = crd.spec.group;
  return crd.spec.versions
    .filter((version) => version.served)
    .sort((a, b) => compareKubeVersions(a.name, b.name))
    .map((version): ResourceInfo => {
      const subresources: SubresourceInfo[] = [];
      if (version.subresources?.scale) subresources.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUBRESOURCE_VERBS });
      if (version.subresources?.status !== undefined) subresources.push({ name: 'status', kind: '', verbs: SUBRESOURCE_VERBS });
      return {
        ref: kindRefOf(group, names.kind),
        custom: { crd, version, listKind: names.listKind ?? `${names.kind}List` },
        group,
        version: version.name,
        plural: names.plural,
        singular: names.singular ?? names.kind.toLowerCase(),
        // A custom kind is no kind of the schema: it is typed by its CRD (ResourceInfo.custom).
        kind: names.kind as Kind,
        namespaced: crd.spec.scope === 'Namespaced',
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        subresources,
        // apiextensions' custom resource validation: names are DNS subdomains.
        nameFormat: 'subdomain',
        selectableFields: ['metadata.name', 'metadata.namespace'],
        verbs: CUSTOM_VERBS,
        definition: '',
        // Objects are stored at the storage version and shown at each served one (None conversion).
        conversion: noneConversion(crd, version, names.kind),
      };
    });
};

/**
 * The resources served at `view`'s position: built in, then every Established CRD's, in CRD
 * name order. Cached while the CRDs (their keys and resourceVersions) stay the same.
 */
export const createServedResources = (): ((view: View) => ServedResources) => {
  let signature = '';
  let served = BUILT_IN_RESOURCES;
  return (view) => {
    const crds = view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[];
    const next = crds.map((crd) => `${crd.metadata.name}@${crd.metadata.resourceVersion}`).join(',');
    if (next === signature) return served;
    signature = next;
    const custom = crds.filter(isEstablished).flatMap(customResourcesOf);
    if (custom.length === 0) {
      served = BUILT_IN_RESOURCES;
      return served;
    }
    const groupVersions = [...GROUP_VERSIONS];
    for (const resource of custom) {
      if (!groupVersions.some((gv) => gv.group === resource.group && gv.version === resource.version)) groupVersions.push({ group: resource.group, version: resource.version });
    }
    const byPath = new Map(custom.map((resource) => [`${resource.group}/${resource.version}/${resource.plural}`, resource]));
    served = {
      resources: [...RESOURCES, ...custom],
      groupVersions,
      // A CRD may not take a built-in resource's name: the registry's come first, as kube's own groups do.
      find: (group, version, plural) => findResource(group, version, plural) ?? byPath.get(`${group}/${version}/${plural}`),
    };
    return served;
  };
};
