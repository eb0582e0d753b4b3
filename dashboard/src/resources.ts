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
