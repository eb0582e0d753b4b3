/**
 * Aggregated discovery (apidiscovery.k8s.io v2, and v2beta1 for older clients): `/api` and
 * `/apis` answer every group, version and resource in one document when the client asks
 * for it in `Accept` (kubectl 1.26+ and client-go do), as kube-apiserver 1.32 does. Built
 * from the legacy documents (`discovery.ts`), so the two can never disagree.
 */
import { BUILT_IN_RESOURCES, type ServedResources } from './custom-resources/served.ts';
import { apiGroupList, apiResourceList } from './discovery.ts';
import type { GroupVersion } from './resources.ts';

export type AggregatedVersion = 'v2' | 'v2beta1';

const AGGREGATED_VERSIONS: readonly AggregatedVersion[] = ['v2', 'v2beta1'];

/**
 * The aggregated format the client's `Accept` asks for first, if any: a media type
 * `application/json;g=apidiscovery.k8s.io;v=<v2|v2beta1>;as=APIGroupDiscoveryList`.
 */
export const aggregatedVersionOf = (accept: string | undefined): AggregatedVersion | undefined => {
  for (const range of (accept ?? '').split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim());
    if (type !== 'application/json') continue;
    const params = new Map(parameters.map((parameter) => parameter.split('=', 2) as [string, string | undefined]).map(([key, value]) => [key.toLowerCase(), value ?? '']));
    if (params.get('g') !== 'apidiscovery.k8s.io' || params.get('as') !== 'APIGroupDiscoveryList') continue;
    const version = AGGREGATED_VERSIONS.find((candidate) => candidate === params.get('v'));
    if (version) return version;
  }
  return undefined;
};

/** The Content-Type of an aggregated answer. */
export const aggregatedContentType = (version: AggregatedVersion): string => `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;

interface LegacyResource {
  readonly name: string;
  readonly singularName: string;
  readonly namespaced: boolean;
  readonly kind: string;
  readonly verbs: readonly string[];
  readonly group?: string;
  readonly version?: string;
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

const responseKind = (gv: GroupVersion, resource: LegacyResource) => ({
  group: resource.group ?? gv.group,
  version: resource.version ?? gv.version,
  kind: resource.kind,
});

/** One version's resources with their subresources nested, as APIVersionDiscovery holds them. */
const versionDiscovery = (gv: GroupVersion, served: ServedResources) => {
  const legacy = apiResourceList(gv, served).resources as LegacyResource[];
  const main = legacy.filter((resource) => !resource.name.includes('/'));
  return {
    version: gv.version,
    resources: main.map((resource) => {
      const subresources = legacy
        .filter((sub) => sub.name.startsWith(`${resource.name}/`))
        .map((sub) => ({ subresource: sub.name.slice(resource.name.length + 1), responseKind: responseKind(gv, sub), verbs: sub.verbs }));
      return {
        resource: resource.name,
        responseKind: responseKind(gv, resource),
        scope: resource.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: resource.singularName,
        verbs: resource.verbs,
        ...(resource.shortNames ? { shortNames: resource.shortNames } : {}),
        ...(resource.categories ? { categories: resource.categories } : {}),
        ...(subresources.length > 0 ? { subresources } : {}),
      };
    }),
    freshness: 'Current',
  };
};

const list = (version: AggregatedVersion, items: unknown[]) => ({
  kind: 'APIGroupDiscoveryList',
  apiVersion: `apidiscovery.k8s.io/${version}`,
  metadata: {},
  items,
});

/** `/api` in the aggregated format: the core group, unnamed. */
export const aggregatedCore = (version: AggregatedVersion) =>
  list(version, [{ metadata: { creationTimestamp: null }, versions: [versionDiscovery({ group: '', version: 'v1' }, BUILT_IN_RESOURCES)] }]);

/** `/apis` in the aggregated format: every named group, its versions in order of preference. */
export const aggregatedGroups = (version: AggregatedVersion, served: ServedResources = BUILT_IN_RESOURCES) =>
  list(
    version,
    (apiGroupList(served).groups as { name: string; versions: { version: string }[] }[]).map((group) => ({
      metadata: { name: group.name, creationTimestamp: null },
      versions: group.versions.map((entry) => versionDiscovery({ group: group.name, version: entry.version }, served)),
    })),
  );
