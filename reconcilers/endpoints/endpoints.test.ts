import { afterEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { Endpoints, EndpointSubset, EventBody, ObjectUpdated, Pod, PodStatus, Service } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, podKey, runningPodStatus, type TestCluster } from '../testing.ts';
import { createEndpointsController, decideEndpoints, desiredSubsets, HEADLESS_LABEL } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const SERVICE_KEY = 'Service/default/web';
const ENDPOINTS_KEY = 'Endpoints/default/web';
const NOW = Date.UTC(2030, 0, 1);

type ServicePorts = NonNullable<Service['spec']['ports']>;
type ContainerPorts = NonNullable<Pod['spec']['containers'][number]['ports']>;

const service = (spec: Partial<Service['spec']> = {}, labels?: Record<string, string>): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', ...(labels ? { labels } : {}) },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
});

type PodState = 'ready' | 'notReady' | 'noIp' | 'terminating' | 'succeeded' | 'failed' | 'unscheduled';

interface PodFixture {
  readonly name: string;
  readonly state: PodState;
  readonly ip?: string;
  readonly labels?: Record<string, string>;
  readonly ports?: ContainerPorts;
}

/** A cluster with node n1, the given pods (bound to n1 and reported in their state) and, if given, the service. */
const setup = (svc: Service | undefined, pods: readonly PodFixture[]): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  if (svc) cluster.create(svc);
  pods.forEach((fixture, i) => putPod(cluster, fixture, i));
  return cluster;
};

const putPod = (cluster: TestCluster, fixture: PodFixture, index: number): void => {
  const { name, state } = fixture;
  cluster.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: fixture.labels ?? { app: 'web' } },
    spec: { containers: [{ name: 'main', image: 'logplane/echo:1', ...(fixture.ports ? { ports: fixture.ports } : {}) }] },
  });
  if (state === 'unscheduled') return;
  cluster.apply({
    type: 'PodBound',
    namespace: 'default',
    name,
    node: 'n1',
    expectedPodVersion: null,
    rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 },
  });
  const ip = fixture.ip ?? `127.100.0.${10 + index}`;
  const status = (base: PodStatus): PodStatus => (state === 'noIp' ? base : { ...base, podIP: ip, podIPs: [{ ip }] });
  switch (state) {
    case 'ready':
    case 'terminating':
      cluster.podStatus(name, status(runningPodStatus(true, NOW - 60_000)));
      break;
    case 'notReady':
    case 'noIp':
      cluster.podStatus(name, status(runningPodStatus(false, NOW - 60_000)));
      break;
    case 'succeeded':
    case 'failed':
      cluster.podStatus(name, status({ phase: state === 'failed' ? 'Failed' : 'Succeeded' }));
      break;
    default:
      break;
  }
  if (state === 'terminating') {
    const pod = cluster.view().get(podKey(name)) as Pod;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name, expectedResourceVersion: null, uid: pod.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: 30 });
  }
};

/** Decides and folds until the endpoints controller has nothing left to do; returns the commands of every round. */
const settle = (cluster: TestCluster): EventBody[][] => {
  const rounds: EventBody[][] = [];
  for (let round = 0; round < 5; round++) {
    const { commands } = decideEndpoints(SERVICE_KEY, cluster.view());
    if (commands.length === 0) return rounds;
    for (const record of cluster.apply(...commands)) expect(record.verdict.type, JSON.stringify(record.verdict)).toBe('accepted');
    rounds.push([...commands]);
  }
  throw new Error('the endpoints controller did not settle in 5 rounds');
};

const endpointsOf = (cluster: TestCluster): Endpoints | undefined => cluster.view().get(ENDPOINTS_KEY) as Endpoints | undefined;

/** Each subset as the pod names of its ready and not-ready addresses and its ports. */
const summary = (subsets: readonly EndpointSubset[] | undefined) =>
  (subsets ?? []).map((subset) => ({
    ready: (subset.addresses ?? []).map((a) => a.targetRef?.name),
    notReady: (subset.notReadyAddresses ?? []).map((a) => a.targetRef?.name),
    ports: (subset.ports ?? []).map((p) => `${p.name ?? ''}:${p.port}/${p.protocol}`),
  }));

describe('endpoints decide: which pods are addresses', () => {
  it.each<{ name: string; pods: PodFixture[]; ready: string[]; notReady: string[] }>([
    { name: 'a ready pod is a ready address', pods: [{ name: 'a', state: 'ready' }], ready: ['a'], notReady: [] },
    { name: 'a running pod that is not ready is a not-ready address', pods: [{ name: 'a', state: 'notReady' }], ready: [], notReady: ['a'] },
    {
      // By IP as a string, as kube's endpoints.SortSubsets: 127.100.0.20 before 127.100.0.5.
      name: 'ready and not-ready pods are split, each list sorted by IP',
      pods: [
        { name: 'c', state: 'ready', ip: '127.100.0.30' },
        { name: 'b', state: 'notReady', ip: '127.100.0.20' },
        { name: 'a', state: 'ready', ip: '127.100.0.10' },
        { name: 'd', state: 'notReady', ip: '127.100.0.5' },
      ],
      ready: ['a', 'c'],
      notReady: ['b', 'd'],
    },
    { name: 'a pod without an IP is left out', pods: [{ name: 'a', state: 'noIp' }, { name: 'b', state: 'ready' }], ready: ['b'], notReady: [] },
    { name: 'an unscheduled pod is left out', pods: [{ name: 'a', state: 'unscheduled' }, { name: 'b', state: 'ready' }], ready: ['b'], notReady: [] },
    { name: 'a terminating pod is left out', pods: [{ name: 'a', state: 'terminating' }, { name: 'b', state: 'ready' }], ready: ['b'], notReady: [] },
    {
      name: 'succeeded and failed pods are left out',
      pods: [{ name: 'a', state: 'succeeded' }, { name: 'b', state: 'failed' }, { name: 'c', state: 'notReady' }],
      ready: [],
      notReady: ['c'],
    },
    {
      name: 'a pod the selector does not match is left out',
      pods: [{ name: 'a', state: 'ready', labels: { app: 'db' } }, { name: 'b', state: 'ready', labels: { app: 'web', tier: 'x' } }],
      ready: ['b'],
      notReady: [],
    },
  ])('$name', ({ pods, ready, notReady }) => {
    const cluster = setup(service(), pods);
    settle(cluster);
    const subsets = endpointsOf(cluster)?.subsets;
    expect(summary(subsets)).toEqual(ready.length + notReady.length === 0 ? [] : [{ ready, notReady, ports: ['http:8080/TCP'] }]);
  });

  it('an address names its pod (namespace, name, uid) and node', () => {
    const cluster = setup(service(), [{ name: 'a', state: 'ready', ip: '127.100.0.7' }]);
    settle(cluster);
    const pod = cluster.view().get(podKey('a')) as Pod;
    expect(endpointsOf(cluster)?.subsets?.[0]?.addresses).toEqual([
      { ip: '127.100.0.7', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'default', name: 'a', uid: pod.metadata.uid } },
    ]);
  });

  it('no matching pods give an Endpoints object without subsets', () => {
    const cluster = setup(service(), [{ name: 'a', state: 'ready', labels: { app: 'db' } }]);
    const [created] = settle(cluster);
    expect(created?.[0]).toMatchObject({ type: 'ObjectCreated', object: { kind: 'Endpoints', metadata: { name: 'web', namespace: 'default' } } });
    expect(endpointsOf(cluster)).toBeDefined();
    expect(endpointsOf(cluster)?.subsets).toBeUndefined();
  });
});

describe('endpoints decide: ports', () => {
  const httpPorts: ContainerPorts = [{ name: 'http', containerPort: 8080 }];
  it.each<{ name: string; ports: ServicePorts; pods: PodFixture[]; subsets: ReturnType<typeof summary> }>([
    {
      name: 'a numeric target port is used as is',
      ports: [{ name: 'http', port: 80, targetPort: 9376 }],
      pods: [{ name: 'a', state: 'ready' }],
      subsets: [{ ready: ['a'], notReady: [], ports: ['http:9376/TCP'] }],
    },
    {
      name: 'no target port means the service port',
      ports: [{ port: 80 }],
      pods: [{ name: 'a', state: 'ready' }],
      subsets: [{ ready: ['a'], notReady: [], ports: [':80/TCP'] }],
    },
    {
      name: 'a named target port resolves per pod: pods with different numbers are different subsets',
      ports: [{ name: 'web', port: 80, targetPort: 'http' }],
      pods: [
        { name: 'a', state: 'ready', ports: [{ name: 'http', containerPort: 8080 }] },
        { name: 'b', state: 'notReady', ports: [{ name: 'http', containerPort: 9090 }] },
        { name: 'c', state: 'ready', ports: [{ name: 'http', containerPort: 8080 }] },
      ],
      subsets: [
        { ready: ['a', 'c'], notReady: [], ports: ['web:8080/TCP'] },
        { ready: [], notReady: ['b'], ports: ['web:9090/TCP'] },
      ],
    },
    {
      name: 'a pod without the named port is left out',
      ports: [{ name: 'web', port: 80, targetPort: 'http' }],
      pods: [
        { name: 'a', state: 'ready', ports: httpPorts },
        { name: 'b', state: 'ready', ports: [{ name: 'metrics', containerPort: 9100 }] },
        { name: 'c', state: 'ready' },
      ],
      subsets: [{ ready: ['a'], notReady: [], ports: ['web:8080/TCP'] }],
    },
    {
      name: 'a named port must have the service port\'s protocol',
      ports: [{ name: 'dns', port: 53, targetPort: 'dns', protocol: 'UDP' }],
      pods: [
        { name: 'tcp-only', state: 'ready', ports: [{ name: 'dns', containerPort: 5353, protocol: 'TCP' }] },
        { name: 'udp', state: 'ready', ports: [{ name: 'dns', containerPort: 5353, protocol: 'UDP' }] },
      ],
      subsets: [{ ready: ['udp'], notReady: [], ports: ['dns:5353/UDP'] }],
    },
    {
      name: 'a pod with only some of the named ports gets the ones it has',
      ports: [
        { name: 'web', port: 80, targetPort: 'http' },
        { name: 'metrics', port: 9100, targetPort: 'metrics' },
      ],
      pods: [
        { name: 'a', state: 'ready', ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9100 }] },
        { name: 'b', state: 'ready', ports: httpPorts },
      ],
      subsets: [
        { ready: ['a'], notReady: [], ports: ['web:8080/TCP', 'metrics:9100/TCP'] },
        { ready: ['b'], notReady: [], ports: ['web:8080/TCP'] },
      ],
    },
    {
      name: 'a service without ports (not headless) has no subsets',
      ports: [],
      pods: [{ name: 'a', state: 'ready' }],
      subsets: [],
    },
  ])('$name', ({ ports, pods, subsets }) => {
    const cluster = setup(service({ ports }), pods);
    settle(cluster);
    expect(summary(endpointsOf(cluster)?.subsets)).toEqual(subsets);
  });
});

describe('endpoints decide: hostnames', () => {
  const running = (name: string, ip: string, spec: Partial<Pod['spec']>, namespace = 'default'): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, uid: `uid-${name}`, labels: { app: 'web' } },
    spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'logplane/echo:1' }], ...spec },
    status: { ...runningPodStatus(true, NOW - 60_000), podIP: ip },
  });

  it("names an address by its pod's hostname when the pod's subdomain is the service, as kube's endpoints controller", () => {
    const subsets = desiredSubsets(service({ clusterIP: 'None' }), [
      running('web-0', '127.100.0.10', { hostname: 'web-0', subdomain: 'web' }),
      running('other', '127.100.0.11', { hostname: 'other', subdomain: 'elsewhere' }),
      running('plain', '127.100.0.12', {}),
    ]);
    expect((subsets[0]?.addresses ?? []).map((a) => [a.targetRef?.name, a.hostname])).toEqual([
      ['web-0', 'web-0'],
      ['other', undefined],
      ['plain', undefined],
    ]);
  });
});

describe('endpoints decide: headless services', () => {
  it('a headless service without ports lists its pods\' addresses without ports', () => {
    const cluster = setup(service({ clusterIP: 'None', ports: [] }), [
      { name: 'a', state: 'ready' },
      { name: 'b', state: 'notReady' },
    ]);
    settle(cluster);
    const endpoints = endpointsOf(cluster);
    expect(summary(endpoints?.subsets)).toEqual([{ ready: ['a'], notReady: ['b'], ports: [] }]);
    expect(endpoints?.subsets?.[0]?.ports).toBeUndefined();
    expect(endpoints?.metadata.labels).toEqual({ [HEADLESS_LABEL]: '' });
  });

  it('a headless service with ports resolves them as any other, and its Endpoints carry the headless label beside the service\'s labels', () => {
    const cluster = setup(service({ clusterIP: 'None' }, { team: 'a' }), [{ name: 'a', state: 'ready' }]);
    settle(cluster);
    expect(summary(endpointsOf(cluster)?.subsets)).toEqual([{ ready: ['a'], notReady: [], ports: ['http:8080/TCP'] }]);
    expect(endpointsOf(cluster)?.metadata.labels).toEqual({ team: 'a', [HEADLESS_LABEL]: '' });
  });

  it('a service with a cluster IP does not get the headless label, even if its own labels say so', () => {
    const cluster = setup(service({}, { team: 'a', [HEADLESS_LABEL]: '' }), [{ name: 'a', state: 'ready' }]);
    settle(cluster);
    expect(endpointsOf(cluster)?.metadata.labels).toEqual({ team: 'a' });
  });
});

describe('endpoints decide: lifecycle', () => {
  it('updates the Endpoints (with the version it read) when a pod turns ready, and does nothing once they match', () => {
    const cluster = setup(service(), [{ name: 'a', state: 'notReady' }]);
    settle(cluster);
    const before = endpointsOf(cluster);
    cluster.podStatus('a', { ...runningPodStatus(true, NOW), podIP: '127.100.0.10', podIPs: [{ ip: '127.100.0.10' }] });
    const [update] = settle(cluster);
    expect(update).toHaveLength(1);
    expect(update?.[0]).toMatchObject({ type: 'ObjectUpdated', expectedResourceVersion: before?.metadata.resourceVersion, subresource: null });
    expect(summary(endpointsOf(cluster)?.subsets)).toEqual([{ ready: ['a'], notReady: [], ports: ['http:8080/TCP'] }]);
    expect(endpointsOf(cluster)?.metadata.uid).toBe(before?.metadata.uid);
    expect(decideEndpoints(SERVICE_KEY, cluster.view()).commands).toEqual([]);
  });

  it('updates the Endpoints\' labels when the service\'s labels change', () => {
    const cluster = setup(service({}, { team: 'a' }), [{ name: 'a', state: 'ready' }]);
    settle(cluster);
    const current = cluster.view().get(SERVICE_KEY) as Service;
    const { labels: _labels, ...metadata } = current.metadata;
    cluster.apply({ type: 'ObjectUpdated', object: { ...current, metadata }, expectedResourceVersion: current.metadata.resourceVersion ?? null, subresource: null });
    const [update] = settle(cluster);
    expect((update?.[0] as ObjectUpdated | undefined)?.type).toBe('ObjectUpdated');
    expect(endpointsOf(cluster)?.metadata.labels).toBeUndefined();
  });

  it('deletes the Endpoints (uid precondition) when the service is deleted, then has nothing to do', () => {
    const cluster = setup(service(), [{ name: 'a', state: 'ready' }]);
    settle(cluster);
    const endpoints = endpointsOf(cluster);
    const current = cluster.view().get(SERVICE_KEY) as Service;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Service', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: current.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: null });
    expect(cluster.view().get(SERVICE_KEY)).toBeUndefined();
    const [deletion] = settle(cluster);
    expect(deletion).toEqual([
      { type: 'ObjectDeleted', kind: 'Endpoints', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: endpoints?.metadata.uid, propagationPolicy: null, gracePeriodSeconds: null },
    ]);
    expect(endpointsOf(cluster)).toBeUndefined();
    expect(decideEndpoints(SERVICE_KEY, cluster.view()).commands).toEqual([]);
  });

  it.each<{ name: string; svc: Service }>([
    { name: 'a service without a selector (the user manages its Endpoints)', svc: service({ selector: undefined }) },
    { name: 'an ExternalName service', svc: service({ type: 'ExternalName', ports: [] }) },
  ])('leaves alone the Endpoints of $name', ({ svc }) => {
    const { selector: _selector, ...spec } = svc.spec;
    const cluster = setup({ ...svc, spec: svc.spec.selector ? svc.spec : spec }, [{ name: 'a', state: 'ready' }]);
    const manual = cluster.create<Endpoints>({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'default' },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 5432, protocol: 'TCP' }] }],
    });
    expect(decideEndpoints(SERVICE_KEY, cluster.view()).commands).toEqual([]);
    expect(endpointsOf(cluster)).toEqual(manual);
  });
});

describe('endpoints keys', () => {
  it('maps a pod change to every service of its namespace, an Endpoints change to its service, and resyncs services and orphaned Endpoints', () => {
    const cluster = setup(service(), []);
    cluster.create<Service>({ ...service(), metadata: { name: 'api', namespace: 'default' } });
    cluster.create<Endpoints>({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'orphan', namespace: 'default' } });
    const controller = createEndpointsController();
    const change = (key: string): AppliedChange => ({ key, object: cluster.view().get(key) ?? {} }) as unknown as AppliedChange;
    expect(controller.keysFor(change('Pod/default/a'), cluster.view()).slice().sort()).toEqual(['Service/default/api', 'Service/default/web']);
    expect(controller.keysFor(change('Pod/other/a'), cluster.view())).toEqual([]);
    expect(controller.keysFor(change('Endpoints/default/orphan'), cluster.view())).toEqual(['Service/default/orphan']);
    expect(controller.keysFor(change('Node//n1'), cluster.view())).toEqual([]);
    expect(controller.initialKeys(cluster.view()).slice().sort()).toEqual(['Service/default/api', 'Service/default/orphan', 'Service/default/web']);
  });
});
