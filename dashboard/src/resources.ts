/**
 * The resources the cluster serves, read from discovery (`/api`, `/apis`), so kinds the
 * server adds show up without a change here; and the URLs of their collections and objects.
 */
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { get } from './api.ts';

/** A served resource that can be listed and watched. */
export interface Resource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/**
 * How the history API and the log's keys name a resource's kind: `Pod`, `Deployment`,
 * `Job.batch`, a custom resource's `Database.ops.example.com` (the server's kind refs).
 */
export const kindRefOfResource = (resource: Resource): string => kindRefOf(resource.group, resource.kind);

/**
 * How the dashboard's routes name a resource: its plural for the core group, `plural.group`
 * for every other (kubectl's fully-qualified `deployments.apps`), so two groups' resources of
 * one plural (core and events.k8s.io `events`, a custom resource named like a built-in) are
 * two pages.
 */
export const routeNameOf = (resource: Resource): string => (resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`);

/**
 * The resource a route names: by `plural.group` (or a core plural), else, for links written
 * with a bare plural, the first served resource of that plural in discovery order (core first).
 */
export const resourceOfRoute = (resources: readonly Resource[], name: string | undefined): Resource | undefined =>
  resources.find((r) => routeNameOf(r) === name) ?? resources.find((r) => r.plural === name);

/** The resource whose objects an event key's kind ref (`Pod`, `Job.batch`, `Database.ops.example.com`) names. */
export const resourceOfKindRef = (resources: readonly Resource[], kindRef: string): Resource | undefined =>
  resources.find((r) => kindRefOfResource(r) === kindRef);

/**
 * The resource of an owner reference: its apiVersion's group and its kind (kube always sends
 * the apiVersion; without one, the first served resource of the kind).
 */
export const resourceOfOwner = (resources: readonly Resource[], owner: { readonly apiVersion?: string | undefined; readonly kind: string }): Resource | undefined => {
  if (owner.apiVersion === undefined) return resources.find((r) => r.kind === owner.kind);
  const slash = owner.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : owner.apiVersion.slice(0, slash);
  return resources.find((r) => r.group === group && r.kind === owner.kind);
};

interface ApiResourceList {
  readonly groupVersion: string;
  readonly resources: readonly { name: string; kind: string; namespaced: boolean; verbs: readonly string[] }[];
}

const fromList = (list: ApiResourceList): Resource[] => {
  const [group, version] = list.groupVersion.includes('/') ? list.groupVersion.split('/') : ['', list.groupVersion];
  return list.resources
    .filter((r) => !r.name.includes('/') && r.verbs.includes('list') && r.verbs.includes('watch'))
    .map((r) => ({ group: group ?? '', version: version ?? 'v1', plural: r.name, kind: r.kind, namespaced: r.namespaced }));
};

/** Every listable, watchable resource the server serves, in discovery order (core first). */
export const discoverResources = async (): Promise<Resource[]> => {
  const core = await get<{ versions: readonly string[] }>('/api');
  const groups = await get<{ groups: readonly { name: string; preferredVersion: { groupVersion: string } }[] }>('/apis');
  const lists = await Promise.all([
    ...core.versions.map((v) => get<ApiResourceList>(`/api/${v}`)),
    ...groups.groups.map((g) => get<ApiResourceList>(`/apis/${g.preferredVersion.groupVersion}`)),
  ]);
  return lists.flatMap(fromList);
};

const prefix = (resource: Resource): string => (resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`);

/** The collection URL: one namespace's, or all namespaces' when `namespace` is empty. */
export const collectionPath = (resource: Resource, namespace: string): string =>
  resource.namespaced && namespace !== '' ? `${prefix(resource)}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}` : `${prefix(resource)}/${resource.plural}`;

/** The URL of one object. */
export const objectPath = (resource: Resource, namespace: string, name: string): string =>
  `${collectionPath(resource, resource.namespaced ? namespace : '')}/${encodeURIComponent(name)}`;
