/**
 * Legacy discovery documents (`/api`, `/apis`, `/apis/apps`, `/api/v1`, `/apis/apps/v1`)
 * and `/version`. Replies are plain `application/json`, which tells kubectl to use the
 * legacy (not aggregated) discovery format.
 */
import { REVIEW_GROUP_VERSIONS, REVIEW_RESOURCES } from './authorization/review-resources.ts';
import { METRICS_GROUP_VERSION, METRICS_RESOURCES } from './metrics-api.ts';
import { BUILT_IN_RESOURCES, type ServedResources } from './custom-resources/served.ts';
import { apiVersionOf, type GroupVersion } from './resources.ts';

/** The Kubernetes version logplane speaks (kubectl's version skew checks read it). */
export const KUBERNETES_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-logplane' } as const;

/** `/version`. */
export const versionInfo = () => ({
  ...KUBERNETES_VERSION,
  gitCommit: 'logplane',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsx',
  platform: `${process.platform}/${process.arch}`,
});

/** `/api`. */
export const apiVersions = (serverAddress: string) => ({
  kind: 'APIVersions',
  versions: ['v1'],
  serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
});

const groupVersionEntry = (gv: GroupVersion) => ({ groupVersion: apiVersionOf(gv), version: gv.version });

/**
 * Every served group/version: the stored kinds', with the review resources' groups right
 * after apps and events.k8s.io, where kube lists them, then the custom resources' groups,
 * and the metrics API last (where an aggregated APIService's group comes).
 */
const discoveryGroupVersions = (served: ServedResources): readonly GroupVersion[] => {
  const { groupVersions } = served;
  const afterApps = groupVersions.filter((gv) => gv.group === '' || gv.group === 'apps' || gv.group === 'events.k8s.io').length;
  return [...groupVersions.slice(0, afterApps), ...REVIEW_GROUP_VERSIONS, ...groupVersions.slice(afterApps), METRICS_GROUP_VERSION];
};

const apiGroupOf = (served: ServedResources, group: string) => {
  const versions = discoveryGroupVersions(served).filter((gv) => gv.group === group).map(groupVersionEntry);
  return { name: group, versions, preferredVersion: versions[0] };
};

/** `/apis/{group}`. */
export const apiGroup = (group: string, served: ServedResources = BUILT_IN_RESOURCES) => ({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroupOf(served, group) });

/** `/apis`: the named groups (the core group lives at `/api`). */
export const apiGroupList = (served: ServedResources = BUILT_IN_RESOURCES) => ({
  kind: 'APIGroupList',
  apiVersion: 'v1',
  groups: [...new Set(discoveryGroupVersions(served).filter((gv) => gv.group !== '').map((gv) => gv.group))].map((group) => apiGroupOf(served, group)),
});

/** `/api/v1` or `/apis/apps/v1`: resources with verbs, short names and subresources. */
export const apiResourceList = (gv: GroupVersion, served: ServedResources = BUILT_IN_RESOURCES) => {
  const resources: unknown[] = [];
  for (const resource of served.resources.filter((r) => r.group === gv.group && r.version === gv.version)) {
    resources.push({
      name: resource.plural,
      singularName: resource.singular,
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: resource.verbs,
      ...(resource.shortNames.length > 0 ? { shortNames: resource.shortNames } : {}),
      ...(resource.categories.length > 0 ? { categories: resource.categories } : {}),
    });
    for (const sub of resource.subresources) {
      resources.push({
        name: `${resource.plural}/${sub.name}`,
        singularName: '',
        namespaced: resource.namespaced,
        ...(sub.group !== undefined ? { group: sub.group, version: sub.version } : {}),
        kind: sub.kind === '' ? resource.kind : sub.kind,
        verbs: sub.verbs,
      });
    }
  }
  for (const review of REVIEW_RESOURCES.filter((r) => r.group === gv.group && r.version === gv.version)) {
    resources.push({ name: review.plural, singularName: review.singular, namespaced: review.namespaced, kind: review.kind, verbs: ['create'] });
  }
  if (gv.group === METRICS_GROUP_VERSION.group && gv.version === METRICS_GROUP_VERSION.version) {
    for (const resource of METRICS_RESOURCES) resources.push({ ...resource, verbs: [...resource.verbs] });
  }
  if (gv.group === '') {
    resources.push({ name: 'bindings', singularName: 'binding', namespaced: true, kind: 'Binding', verbs: ['create'] });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(gv), resources };
};
