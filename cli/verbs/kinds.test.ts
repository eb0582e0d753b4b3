import { describe, expect, it } from 'vitest';
import { createClient, createDiscovery } from '../client.ts';
import { collidingResources, legacyDiscoveryFetch, serverResources } from './discovery.fixture.ts';
import { collectionPath, historyKey, historyKindRef, objectPath, parseObjectReference, qualifiedKind, resolveResourceType, splitObjectReference, typedName, type ResourceType } from './kinds.ts';
import { parseLabelSelector, selectorMatches } from './selector.ts';

const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200 });

describe('discovery', () => {
  it('reads the legacy documents once per command run, preferred versions first', async () => {
    const asked: string[] = [];
    const discovery = createDiscovery(createClient({ server: 'http://127.0.0.1:6443', fetch: legacyDiscoveryFetch(asked) }));
    const [first, second] = await Promise.all([discovery.resources(), discovery.resources()]);
    expect(second).toBe(first);
    expect(await discovery.resources()).toBe(first);
    expect(asked.filter((p) => p === '/api')).toHaveLength(1);
    expect(asked).toContain('/api/v1');
    expect(asked).toContain('/apis/apps/v1');
    const pods = first.find((r) => r.plural === 'pods')!;
    expect(pods).toMatchObject({ group: '', version: 'v1', kind: 'Pod', singular: 'pod', namespaced: true, shortNames: ['po'] });
    expect(pods.subresources).toContain('status');
    expect(first.some((r) => r.plural.includes('/'))).toBe(false);
    expect(first[0]!.group).toBe('');
  });

  it('reads aggregated discovery when the server sends it', async () => {
    const asked: { path: string; accept: string | null }[] = [];
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const path = new URL(String(input)).pathname;
      asked.push({ path, accept: new Headers(init?.headers).get('accept') });
      const group = (name: string, versions: { version: string; resources: unknown[] }[]) => ({ metadata: { name }, versions });
      if (path === '/api') {
        return json({
          kind: 'APIGroupDiscoveryList',
          apiVersion: 'apidiscovery.k8s.io/v2',
          items: [group('', [{ version: 'v1', resources: [{ resource: 'pods', responseKind: { group: '', version: 'v1', kind: 'Pod' }, scope: 'Namespaced', singularResource: 'pod', shortNames: ['po'], categories: ['all'], verbs: ['get'], subresources: [{ subresource: 'log' }] }] }])],
        });
      }
      if (path === '/apis') {
        return json({
          kind: 'APIGroupDiscoveryList',
          apiVersion: 'apidiscovery.k8s.io/v2',
          items: [
            group('autoscaling', [
              { version: 'v2', resources: [{ resource: 'horizontalpodautoscalers', responseKind: { kind: 'HorizontalPodAutoscaler' }, scope: 'Namespaced', singularResource: 'horizontalpodautoscaler', shortNames: ['hpa'] }] },
              { version: 'v1', resources: [{ resource: 'horizontalpodautoscalers', responseKind: { kind: 'HorizontalPodAutoscaler' }, scope: 'Namespaced', singularResource: 'horizontalpodautoscaler', shortNames: ['hpa'] }] },
            ]),
          ],
        });
      }
      return new Response('{}', { status: 404 });
    }) as typeof globalThis.fetch;
    const resources = await createDiscovery(createClient({ server: 'http://x:1', fetch })).resources();
    expect(asked.map((a) => a.path).sort()).toEqual(['/api', '/apis']);
    expect(asked[0]!.accept).toMatch(/^application\/json;g=apidiscovery\.k8s\.io;v=v2;as=APIGroupDiscoveryList,/);
    expect(resources.map((r) => `${r.group}/${r.version}/${r.plural}`)).toEqual(['/v1/pods', 'autoscaling/v2/horizontalpodautoscalers', 'autoscaling/v1/horizontalpodautoscalers']);
    expect(resources[0]).toMatchObject({ kind: 'Pod', namespaced: true, categories: ['all'], subresources: ['log'] });
  });
});

describe('resolving a resource argument (kubectl precedence)', () => {
  const resources = collidingResources();
  const resolved = (arg: string): string => {
    const r = resources.resolve(arg);
    return `${r.plural}.${r.version}.${r.group}`;
  };

  it.each([
    ['pods', 'pods.v1.'],
    ['pod', 'pods.v1.'],
    ['Pod', 'pods.v1.'],
    ['PODS', 'pods.v1.'],
    // A short name taken by a later group resolves to the earlier one.
    ['po', 'pods.v1.'],
    ['svc', 'services.v1.'],
    // An exact plural beats another resource's short name.
    ['deploy', 'deploy.v1.example.com'],
    ['deployments', 'deployments.v1.apps'],
    ['deployment', 'deployments.v1.apps'],
    ['deployments.apps', 'deployments.v1.apps'],
    ['deployments.v1.apps', 'deployments.v1.apps'],
    ['deploy.apps', 'deployments.v1.apps'],
    ['rs', 'replicasets.v1.apps'],
    // The preferred version (listed first) wins; a version may be asked for.
    ['hpa', 'horizontalpodautoscalers.v2.autoscaling'],
    ['horizontalpodautoscalers.v1.autoscaling', 'horizontalpodautoscalers.v1.autoscaling'],
    ['hpa.autoscal', 'horizontalpodautoscalers.v2.autoscaling'],
    // The core group comes first in discovery.
    ['events', 'events.v1.'],
    ['ev', 'events.v1.'],
    ['events.events.k8s.io', 'events.v1.events.k8s.io'],
    ['ev.events.k8s.io', 'events.v1.events.k8s.io'],
    ['gz', 'gizmos.v1.example.com'],
    ['po.example.com', 'gizmos.v1.example.com'],
    // A kind, when no resource is named so.
    ['Widget', 'gizmos.v1.example.com'],
    ['Widget.example.com', 'gizmos.v1.example.com'],
    ['Widget.v1.example.com', 'gizmos.v1.example.com'],
  ])('%s → %s', (arg, expected) => {
    expect(resolved(arg)).toBe(expected);
  });

  it('says the server lacks unknown types, naming the resource part', () => {
    expect(() => resources.resolve('widgets')).toThrow('the server doesn\'t have a resource type "widgets"');
    expect(() => resources.resolve('pods.apps')).toThrow('the server doesn\'t have a resource type "pods"');
    expect(() => resources.resolve('widget')).toThrow(/doesn't have/);
  });

  it('expands categories from discovery, one entry per resource, and drops duplicates', () => {
    expect(resources.expand('all').map((r) => `${r.plural}.${r.version}`)).toEqual([
      'pods.v1',
      'services.v1',
      'deployments.v1',
      'replicasets.v1',
      'horizontalpodautoscalers.v2',
    ]);
    expect(resources.expand('po,pods,pod').map((r) => r.plural)).toEqual(['pods']);
    expect(resources.expand('pods,svc,no').map((r) => r.plural)).toEqual(['pods', 'services', 'nodes']);
    expect(resources.expand('nodes,all')).toHaveLength(6);
  });

  it('finds a manifest\'s kind in its apiVersion only', () => {
    expect(resources.forApiVersionKind('apps/v1', 'Deployment').plural).toBe('deployments');
    expect(resources.forApiVersionKind('autoscaling/v1', 'HorizontalPodAutoscaler').version).toBe('v1');
    expect(() => resources.forApiVersionKind('v1', 'Deployment')).toThrow('no matches for kind "Deployment" in version "v1"');
  });
});

describe('the server\'s own discovery', () => {
  it('resolves what the apiserver serves', async () => {
    const resources = await serverResources();
    for (const [arg, kind] of [['po', 'Pod'], ['svc', 'Service'], ['deploy', 'Deployment'], ['deployments.apps', 'Deployment'], ['rs', 'ReplicaSet'], ['ep', 'Endpoints'], ['no', 'Node'], ['ns', 'Namespace']] as const) {
      expect(resources.resolve(arg).kind).toBe(kind);
    }
    // Every served resource resolves by its plural, singular, short names and kind.
    for (const r of resources.all) {
      const qualified = r.group === '' ? '' : `.${r.group}`;
      for (const name of [r.plural, r.singular, ...r.shortNames, r.kind]) expect(resources.resolve(`${name}${qualified}`).kind).toBe(r.kind);
    }
    expect(resources.expand('all').length).toBeGreaterThan(0);
  });
});

describe('paths and names', () => {
  it('builds kube-apiserver paths and kubectl names', async () => {
    const resources = await serverResources();
    const deploy = resources.resolve('deploy');
    const node = resources.resolve('node');
    expect(collectionPath(deploy, 'default')).toBe('/apis/apps/v1/namespaces/default/deployments');
    expect(collectionPath(deploy, undefined)).toBe('/apis/apps/v1/deployments');
    expect(objectPath(deploy, 'default', 'web', 'scale')).toBe('/apis/apps/v1/namespaces/default/deployments/web/scale');
    expect(objectPath(node, 'default', 'node-1')).toBe('/api/v1/nodes/node-1');
    expect(typedName(deploy, 'web')).toBe('deployment.apps/web');
    expect(typedName(resources.resolve('svc'), 'web')).toBe('service/web');
    expect(qualifiedKind(resources.resolve('ep'))).toBe('endpoints');
    expect(historyKey(deploy, 'default', 'web')).toBe('Deployment/default/web');
    expect(historyKey(node, 'default', 'node-1')).toBe('Node//node-1');
  });

  it('parses KIND/NAME and KIND NAME', () => {
    const resources = collidingResources();
    expect(parseObjectReference(['deployments/web'], 'x', resources)).toMatchObject({ type: { kind: 'Deployment' }, name: 'web' });
    expect(parseObjectReference(['po', 'web-1'], 'x', resources)).toMatchObject({ type: { kind: 'Pod' }, name: 'web-1' });
    expect(() => parseObjectReference(['po'], 'KIND/NAME', resources)).toThrow('expected KIND/NAME');
    expect(() => parseObjectReference(['po/a', 'b'], 'KIND/NAME', resources)).toThrow(/no need to specify a resource type/);
  });

  it('keys custom objects by their Kind.group, built-in ones by their stored ref', async () => {
    const resources = await serverResources();
    const database: ResourceType = { ...resources.resolve('deploy'), group: 'ops.example.com', version: 'v1', kind: 'Database', plural: 'databases', singular: 'database', shortNames: ['db'] };
    expect(historyKey(database, 'shop', 'orders')).toBe('Database.ops.example.com/shop/orders');
    expect(historyKindRef(database)).toBe('Database.ops.example.com');
    expect(historyKindRef(resources.resolve('jobs'))).toBe('Job.batch');
    expect(historyKindRef(resources.resolve('events.events.k8s.io'))).toBe('Event');
    expect(historyKindRef(resources.resolve('po'))).toBe('Pod');
  });

  it('splits KIND/NAME and KIND NAME without resolving the type', () => {
    expect(splitObjectReference(['databases.ops.example.com/orders'], 'x')).toEqual({ type: 'databases.ops.example.com', name: 'orders' });
    expect(splitObjectReference(['db', 'orders'], 'x')).toEqual({ type: 'db', name: 'orders' });
    expect(() => splitObjectReference(['db/'], 'KIND/NAME')).toThrow('expected KIND/NAME');
  });

  it('resolves the history verbs\' arguments against the stored kinds', () => {
    expect(resolveResourceType('deploy').kind).toBe('Deployment');
    expect(parseObjectReference(['po/web'], 'x')).toMatchObject({ type: { kind: 'Pod', group: '' }, name: 'web' });
  });
});

describe('label selectors', () => {
  it.each([
    ['app=web', { app: 'web' }, true],
    ['app==web', { app: 'shop' }, false],
    ['app!=web', {}, true],
    ['app=web,tier in (a, b)', { app: 'web', tier: 'b' }, true],
    ['tier notin (a,b)', { tier: 'a' }, false],
    ['gpu', { gpu: '' }, true],
    ['!gpu', { gpu: '' }, false],
    ['', {}, true],
  ])('%s on %j → %s', (selector, labels, expected) => {
    expect(selectorMatches(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it('rejects what it cannot read', () => {
    expect(() => parseLabelSelector('a b c')).toThrow(/unable to parse requirement/);
  });
});
