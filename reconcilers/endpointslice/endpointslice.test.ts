import { afterEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { EndpointSlice, EventBody, Pod, PodStatus, Service } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, podKey, runningPodStatus, type TestCluster } from '../testing.ts';
import { CONTROLLER_NAME, createEndpointSliceController, decideEndpointSlices, MANAGED_BY_LABEL, MAX_ENDPOINTS_PER_SLICE, SERVICE_NAME_LABEL } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const SERVICE_KEY = 'Service/default/web';
const NOW = Date.UTC(2030, 0, 1);

type ContainerPorts = NonNullable<Pod['spec']['containers'][number]['ports']>;

const service = (spec: Partial<Service['spec']> = {}, labels?: Record<string, string>): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', ...(labels ? { labels } : {}) },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec },
});

type PodState = 'ready' | 'notReady' | 'noIp' | 'terminating' | 'succeeded';

interface PodFixture {
  readonly name: string;
  readonly state: PodState;
  readonly labels?: Record<string, string>;
  readonly ports?: ContainerPorts;
}

let nextIp = 10;

const putPod = (cluster: TestCluster, fixture: PodFixture): void => {
  const { name, state } = fixture;
  cluster.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: fixture.labels ?? { app: 'web' } },
    spec: { containers: [{ name: 'main', image: 'logplane/echo:1', ...(fixture.ports ? { ports: fixture.ports } : {}) }] },
  });
  cluster.apply({ type: 'PodBound', namespace: 'default', name, node: 'n1', expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } });
  const n = nextIp++;
  const ip = `127.101.${Math.floor(n / 250)}.${n % 250}`;
  const status = (base: PodStatus): PodStatus => (state === 'noIp' ? base : { ...base, podIP: ip, podIPs: [{ ip }] });
  if (state === 'succeeded') cluster.podStatus(name, status({ phase: 'Succeeded' }));
  else cluster.podStatus(name, status(runningPodStatus(state === 'ready' || state === 'terminating', NOW - 60_000)));
  if (state === 'terminating') deletePod(cluster, name, 30);
};

const deletePod = (cluster: TestCluster, name: string, gracePeriodSeconds: number | null = 0): void => {
  const pod = cluster.view().get(podKey(name)) as Pod;
  cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name, expectedResourceVersion: null, uid: pod.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds });
};

const setup = (svc: Service | undefined, pods: readonly PodFixture[], zone?: string): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  const node = nodeObject('n1');
  cluster.create(zone ? { ...node, metadata: { ...node.metadata, labels: { ...node.metadata.labels, 'topology.kubernetes.io/zone': zone } } } : node);
  if (svc) cluster.create(svc);
  for (const pod of pods) putPod(cluster, pod);
  return cluster;
};

/** Decides and folds until the controller has nothing left to do; returns the commands of every round. */
const settle = (cluster: TestCluster): EventBody[][] => {
  const rounds: EventBody[][] = [];
  for (let round = 0; round < 5; round++) {
    const { commands } = decideEndpointSlices(SERVICE_KEY, cluster.view());
    if (commands.length === 0) return rounds;
    for (const record of cluster.apply(...commands)) expect(record.verdict.type, JSON.stringify(record.verdict)).toBe('accepted');
    rounds.push([...commands]);
  }
  throw new Error('the endpointslice controller did not settle in 5 rounds');
};

const slicesOf = (cluster: TestCluster): EndpointSlice[] =>
  (cluster.view().list('EndpointSlice', 'default') as EndpointSlice[]).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

const podsIn = (slice: EndpointSlice): string[] => (slice.endpoints ?? []).map((e) => e.targetRef?.name ?? '?');

describe('endpointslice decide', () => {
  it("lists the selected pods with kube's conditions, labels, owner and ports, and settles", () => {
    const cluster = setup(service({}, { tier: 'front', [SERVICE_NAME_LABEL]: 'spoofed' }), [
      { name: 'a', state: 'ready' },
      { name: 'b', state: 'notReady' },
      { name: 'c', state: 'terminating' },
      { name: 'd', state: 'noIp' },
      { name: 'e', state: 'succeeded' },
      { name: 'f', state: 'ready', labels: { app: 'db' } },
    ], 'moon-1');
    const rounds = settle(cluster);
    expect(rounds).toHaveLength(1);
    const [slice, ...others] = slicesOf(cluster);
    expect(others).toEqual([]);
    const svc = cluster.view().get(SERVICE_KEY) as Service;
    expect(slice!.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata.labels).toEqual({ tier: 'front', [SERVICE_NAME_LABEL]: 'web', [MANAGED_BY_LABEL]: CONTROLLER_NAME });
    expect(slice!.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(slice!.addressType).toBe('IPv4');
    expect(slice!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const conditions = Object.fromEntries((slice!.endpoints ?? []).map((e) => [e.targetRef?.name, e.conditions]));
    expect(conditions).toEqual({
      a: { ready: true, serving: true, terminating: false },
      b: { ready: false, serving: false, terminating: false },
      // Terminating pods stay listed, not ready, serving while their readiness lasts.
      c: { ready: false, serving: true, terminating: true },
    });
    expect(slice!.endpoints?.[0]).toMatchObject({ nodeName: 'n1', zone: 'moon-1', targetRef: { kind: 'Pod', namespace: 'default', name: 'a' } });
  });

  it('keeps a placeholder slice without endpoints or ports while the Service selects nothing, and replaces it once a pod appears', () => {
    const cluster = setup(service(), []);
    settle(cluster);
    const [placeholder, ...others] = slicesOf(cluster);
    expect(others).toEqual([]);
    expect(placeholder).toMatchObject({ addressType: 'IPv4', endpoints: [] });
    expect(placeholder!.ports ?? []).toEqual([]);
    expect(decideEndpointSlices(SERVICE_KEY, cluster.view()).commands).toEqual([]);
    putPod(cluster, { name: 'a', state: 'ready' });
    const [round] = settle(cluster);
    expect(round!.map((c) => c.type).sort()).toEqual(['ObjectCreated', 'ObjectDeleted']);
    expect(slicesOf(cluster).map(podsIn)).toEqual([['a']]);
  });

  it(`packs ${MAX_ENDPOINTS_PER_SLICE} endpoints per slice and keeps churn low: a replaced pod takes the freed room, no slice is rewritten for nothing`, () => {
    const pods = Array.from({ length: 250 }, (_, i) => ({ name: `p${String(i).padStart(3, '0')}`, state: 'ready' as const }));
    const cluster = setup(service(), pods);
    settle(cluster);
    const before = slicesOf(cluster);
    expect(before.map((s) => (s.endpoints ?? []).length).sort()).toEqual([100, 100, 50]);
    const full = before.find((s) => (s.endpoints ?? []).length === 100)!;
    const gone = podsIn(full)[7]!;
    deletePod(cluster, gone);
    putPod(cluster, { name: 'zz-new', state: 'ready' });
    const rounds = settle(cluster);
    // One update of the slice the pod left: the new pod fills its room.
    expect(rounds.flat().map((c) => `${c.type} ${c.type === 'ObjectUpdated' ? c.object.metadata.name : ''}`)).toEqual([`ObjectUpdated ${full.metadata.name}`]);
    const after = slicesOf(cluster).find((s) => s.metadata.name === full.metadata.name)!;
    expect(podsIn(after)).toContain('zz-new');
    expect(podsIn(after)).not.toContain(gone);
  });

  it('groups pods by the ports the Service resolves on them (named target ports)', () => {
    const svc = service({ ports: [{ name: 'http', port: 80, targetPort: 'web' }] });
    const cluster = setup(svc, [
      { name: 'a', state: 'ready', ports: [{ name: 'web', containerPort: 8080 }] },
      { name: 'b', state: 'ready', ports: [{ name: 'web', containerPort: 9090 }] },
      { name: 'c', state: 'ready', ports: [{ name: 'web', containerPort: 8080 }] },
    ]);
    settle(cluster);
    const byPort = Object.fromEntries(slicesOf(cluster).map((s) => [s.ports?.[0]?.port, podsIn(s).sort()]));
    expect(byPort).toEqual({ 8080: ['a', 'c'], 9090: ['b'] });
  });

  it('labels the slices of a headless Service and marks every endpoint ready with publishNotReadyAddresses', () => {
    const cluster = setup(service({ clusterIP: 'None', publishNotReadyAddresses: true }), [{ name: 'a', state: 'notReady' }]);
    settle(cluster);
    const [slice] = slicesOf(cluster);
    expect(slice!.metadata.labels?.['service.kubernetes.io/headless']).toBe('');
    expect(slice!.endpoints?.[0]?.conditions).toEqual({ ready: true, serving: false, terminating: false });
  });

  it('follows the Service: relabelled slices, and slices of an earlier incarnation deleted', () => {
    const cluster = setup(service(), [{ name: 'a', state: 'ready' }]);
    settle(cluster);
    const svc = cluster.view().get(SERVICE_KEY) as Service;
    cluster.apply({ type: 'ObjectUpdated', object: { ...svc, metadata: { ...svc.metadata, labels: { tier: 'back' } } }, expectedResourceVersion: null, subresource: null });
    const [round] = settle(cluster);
    expect(round!.map((c) => c.type)).toEqual(['ObjectUpdated']);
    expect(slicesOf(cluster)[0]!.metadata.labels?.['tier']).toBe('back');
    // The Service deleted and created again (a new uid): the old slice is not its own.
    const old = slicesOf(cluster)[0]!;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Service', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    expect(decideEndpointSlices(SERVICE_KEY, cluster.view()).commands).toEqual([]);
    cluster.create(service());
    settle(cluster);
    expect(slicesOf(cluster).map((s) => s.metadata.name)).not.toContain(old.metadata.name);
    expect(slicesOf(cluster).map(podsIn)).toEqual([['a']]);
  });

  it.each<[string, Partial<Service['spec']>]>([
    ['a Service without a selector (its slices are the user\'s)', { selector: undefined }],
    ['an ExternalName Service', { type: 'ExternalName', externalName: 'example.com', ports: [] }],
  ])('leaves %s alone', (_name, spec) => {
    const svc = service(spec);
    if (spec.selector === undefined) delete (svc.spec as { selector?: unknown }).selector;
    const cluster = setup(svc, [{ name: 'a', state: 'ready' }]);
    expect(decideEndpointSlices(SERVICE_KEY, cluster.view()).commands).toEqual([]);
  });

  it('wakes the Service for its pods, its Service and its own slices, not for slices of another manager', () => {
    const cluster = setup(service(), [{ name: 'a', state: 'ready' }]);
    const controller = createEndpointSliceController();
    const change = (key: string, object: unknown): AppliedChange => ({ type: 'ADDED', key, eventId: 'e', object: object as AppliedChange['object'], topic: 'desired', partition: 0, offset: 0 });
    const view = cluster.view();
    expect(controller.keysFor(change(podKey('a'), view.get(podKey('a'))), view)).toEqual([SERVICE_KEY]);
    expect(controller.keysFor(change(SERVICE_KEY, view.get(SERVICE_KEY)), view)).toEqual([SERVICE_KEY]);
    const slice = (managedBy: string) => ({ kind: 'EndpointSlice', metadata: { name: 'x', namespace: 'default', labels: { [SERVICE_NAME_LABEL]: 'web', [MANAGED_BY_LABEL]: managedBy } } });
    expect(controller.keysFor(change('EndpointSlice/default/x', slice(CONTROLLER_NAME)), view)).toEqual([SERVICE_KEY]);
    expect(controller.keysFor(change('EndpointSlice/default/x', slice('someone-else')), view)).toEqual([]);
    expect(controller.initialKeys(view)).toEqual([SERVICE_KEY]);
  });
});
