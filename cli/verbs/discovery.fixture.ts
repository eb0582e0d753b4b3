/**
 * Discovery for the CLI's tests: the apiserver's own discovery documents served through a
 * fake `fetch` (so the CLI's discovery client reads what a real server sends), and a
 * hand-made set of resources whose names collide, for kubectl's precedence rules.
 */
import { apiGroupList, apiResourceList, apiVersions } from '../../apiserver/discovery.ts';
import { createClient, createDiscovery, type DiscoveredResource } from '../client.ts';
import { Resources } from './kinds.ts';

/** A `fetch` answering `/api`, `/apis`, `/api/v1` and `/apis/<g>/<v>` from the apiserver's discovery; records the paths asked. */
export const legacyDiscoveryFetch = (asked: string[] = []): typeof fetch =>
  (async (input: string | URL | Request) => {
    const path = new URL(String(input)).pathname;
    asked.push(path);
    const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    if (path === '/api') return json(apiVersions('127.0.0.1:6443'));
    if (path === '/apis') return json(apiGroupList());
    // Every group/version the documents list (the stored kinds' and the review groups').
    const listed = [{ group: '', version: 'v1' }, ...apiGroupList().groups.flatMap((g) => g.versions.map((v) => ({ group: g.name, version: v.version })))];
    const gv = listed.find((g) => path === (g.group === '' ? `/api/${g.version}` : `/apis/${g.group}/${g.version}`));
    if (gv) return json(apiResourceList(gv));
    return new Response(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' }), { status: 404 });
  }) as typeof fetch;

/** The resources the apiserver serves, read through the CLI's discovery client. */
export const serverResources = async (): Promise<Resources> =>
  new Resources(await createDiscovery(createClient({ server: 'http://127.0.0.1:6443', fetch: legacyDiscoveryFetch() })).resources());

const resource = (group: string, version: string, kind: string, plural: string, extra: Partial<DiscoveredResource> = {}): DiscoveredResource => ({
  group,
  version,
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: ['get', 'list', 'watch'],
  subresources: [],
  ...extra,
});

/** Resources in discovery order with colliding names (core Events and events.k8s.io Events, a CRD using others' names). */
export const collidingResources = (): Resources =>
  new Resources([
    resource('', 'v1', 'Pod', 'pods', { shortNames: ['po'], categories: ['all'] }),
    resource('', 'v1', 'Service', 'services', { shortNames: ['svc'], categories: ['all'] }),
    resource('', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
    resource('', 'v1', 'Node', 'nodes', { shortNames: ['no'], namespaced: false }),
    resource('apps', 'v1', 'Deployment', 'deployments', { shortNames: ['deploy'], categories: ['all'], subresources: ['scale', 'status'] }),
    resource('apps', 'v1', 'ReplicaSet', 'replicasets', { shortNames: ['rs'], categories: ['all'] }),
    resource('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', { shortNames: ['hpa'], categories: ['all'] }),
    resource('autoscaling', 'v1', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', { shortNames: ['hpa'], categories: ['all'] }),
    resource('events.k8s.io', 'v1', 'Event', 'events', { shortNames: ['ev'] }),
    // A CRD whose plural is another resource's short name, and one whose short name is taken.
    resource('example.com', 'v1', 'Deploy', 'deploy', { singular: 'deploy' }),
    resource('example.com', 'v1', 'Widget', 'gizmos', { singular: 'gizmo', shortNames: ['po', 'gz'] }),
  ]);
