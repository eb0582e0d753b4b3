import { afterEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { EndpointSlice, Endpoints, EventBody, Service } from '../../schemas/index.ts';
import { createTestCluster, type TestCluster } from '../testing.ts';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../endpointslice/slices.ts';
import { updateCommand } from '../replicaset/objects.ts';
import {
  createEndpointSliceMirroringController,
  decideMirroredSlices,
  mirroredAnnotations,
  mirroredGroups,
  mirroredLabels,
  MIRRORING_CONTROLLER_NAME,
  shouldMirror,
  SKIP_MIRROR_LABEL,
} from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const KEY = 'Endpoints/default/ext';

const service = (selector?: Record<string, string>): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'ext', namespace: 'default' },
  spec: { ports: [{ name: 'http', port: 80 }], ...(selector ? { selector } : {}) },
});

type Subsets = NonNullable<Endpoints['subsets']>;

const endpoints = (subsets: Subsets, metadata: Partial<Endpoints['metadata']> = {}): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'ext', namespace: 'default', ...metadata },
  subsets,
});

const HTTP = [{ name: 'http', port: 8080, protocol: 'TCP' as const }];
const ips = (...list: string[]) => list.map((ip) => ({ ip }));

const setup = (svc: Service | undefined, eps: Endpoints | undefined): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  if (svc) cluster.create(svc);
  if (eps) cluster.create(eps);
  return cluster;
};

/** Decides and folds until the controller has nothing left to do; returns the commands of every round. */
const settle = (cluster: TestCluster, max?: number): EventBody[][] => {
  const rounds: EventBody[][] = [];
  for (let round = 0; round < 5; round++) {
    const { commands } = decideMirroredSlices(KEY, cluster.view(), max);
    if (commands.length === 0) return rounds;
    for (const record of cluster.apply(...commands)) expect(record.verdict.type, JSON.stringify(record.verdict)).toBe('accepted');
    rounds.push([...commands]);
  }
  throw new Error('the mirroring controller did not settle in 5 rounds');
};

const slicesOf = (cluster: TestCluster): EndpointSlice[] =>
  (cluster.view().list('EndpointSlice', 'default') as EndpointSlice[]).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

const addressesOf = (slice: EndpointSlice): string[] => (slice.endpoints ?? []).map((e) => e.addresses[0]!);

const updateEndpoints = (cluster: TestCluster, change: (eps: Endpoints) => Endpoints): void => {
  const current = cluster.view().get(KEY) as Endpoints;
  cluster.apply(updateCommand(current, change(current)));
};

describe('mirroredGroups', () => {
  it.each<[string, Subsets, { addressType: string; ports: number[]; addresses: [string, boolean][] }[], number]>([
    ['ready then not-ready addresses, ready as the condition', [{ addresses: ips('10.0.0.1'), notReadyAddresses: ips('10.0.0.2'), ports: HTTP }], [{ addressType: 'IPv4', ports: [8080], addresses: [['10.0.0.1', true], ['10.0.0.2', false]] }], 0],
    ['one group per address family', [{ addresses: ips('10.0.0.1', 'fd00::1'), ports: HTTP }], [{ addressType: 'IPv4', ports: [8080], addresses: [['10.0.0.1', true]] }, { addressType: 'IPv6', ports: [8080], addresses: [['fd00::1', true]] }], 0],
    ['subsets of the same ports merge', [{ addresses: ips('10.0.0.1'), ports: HTTP }, { addresses: ips('10.0.0.2'), ports: HTTP }], [{ addressType: 'IPv4', ports: [8080], addresses: [['10.0.0.1', true], ['10.0.0.2', true]] }], 0],
    ['subsets of other ports stay apart', [{ addresses: ips('10.0.0.1'), ports: HTTP }, { addresses: ips('10.0.0.2'), ports: [{ name: 'http', port: 9090, protocol: 'TCP' }] }], [{ addressType: 'IPv4', ports: [8080], addresses: [['10.0.0.1', true]] }, { addressType: 'IPv4', ports: [9090], addresses: [['10.0.0.2', true]] }], 0],
    ['an address that is not an IP is skipped', [{ addresses: ips('10.0.0.1', 'not-an-ip'), ports: HTTP }], [{ addressType: 'IPv4', ports: [8080], addresses: [['10.0.0.1', true]] }], 1],
    ['a duplicate address is skipped', [{ addresses: ips('10.0.0.1', '10.0.0.1'), ports: HTTP }], [{ addressType: 'IPv4', ports: [8080], addresses: [['10.0.0.1', true]] }], 1],
  ])('%s', (_name, subsets, expected, skipped) => {
    const mirrored = mirroredGroups(endpoints(subsets));
    expect(mirrored.groups.map((g) => ({ addressType: g.addressType, ports: g.ports.map((p) => p.port), addresses: g.endpoints.map((e) => [e.addresses[0], e.conditions?.ready]) })).sort((a, b) => `${a.addressType}${a.ports}`.localeCompare(`${b.addressType}${b.ports}`))).toEqual(expected);
    expect(mirrored.skipped).toBe(skipped);
  });

  it('mirrors at most maxEndpointsPerSubset addresses of each subset, ready ones first', () => {
    const mirrored = mirroredGroups(endpoints([{ addresses: ips('10.0.0.1', '10.0.0.2'), notReadyAddresses: ips('10.0.0.3'), ports: HTTP }, { addresses: ips('10.0.0.4'), ports: HTTP }]), 2);
    expect(mirrored.groups[0]!.endpoints.map((e) => e.addresses[0])).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.4']);
    expect(mirrored.skipped).toBe(1);
  });

  it('copies targetRef, nodeName and hostname, and the port fields', () => {
    const targetRef = { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u1' };
    const [group] = mirroredGroups(endpoints([{ addresses: [{ ip: '10.0.0.1', targetRef, nodeName: 'n1', hostname: 'h' }], ports: [{ port: 53, protocol: 'UDP', appProtocol: 'dns' }] }])).groups;
    expect(group!.endpoints).toEqual([{ addresses: ['10.0.0.1'], conditions: { ready: true }, targetRef, nodeName: 'n1', hostname: 'h' }]);
    expect(group!.ports).toEqual([{ name: '', port: 53, protocol: 'UDP', appProtocol: 'dns' }]);
  });
});

describe('labels, annotations, shouldMirror', () => {
  it('copies every label, overriding service-name and managed-by', () => {
    expect(mirroredLabels(endpoints([], { labels: { team: 'a', [MANAGED_BY_LABEL]: 'me', [SERVICE_NAME_LABEL]: 'other' } }))).toEqual({ team: 'a', [SERVICE_NAME_LABEL]: 'ext', [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME });
  });

  it('copies annotations but the trigger time and the last-applied configuration', () => {
    const annotations = { note: 'x', 'endpoints.kubernetes.io/last-change-trigger-time': '2030-01-01T00:00:00Z', 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    expect(mirroredAnnotations(endpoints([], { annotations }))).toEqual({ note: 'x' });
  });

  it.each<[string, Partial<Endpoints['metadata']>, boolean]>([
    ['plain Endpoints', {}, true],
    ['skip-mirror "true"', { labels: { [SKIP_MIRROR_LABEL]: 'true' } }, false],
    ['skip-mirror "false"', { labels: { [SKIP_MIRROR_LABEL]: 'false' } }, true],
    ['a leader-election lock', { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } }, false],
  ])('%s → %s', (_name, metadata, expected) => {
    expect(shouldMirror(endpoints([], metadata))).toBe(expected);
  });
});

describe('decideMirroredSlices', () => {
  const subsets: Subsets = [{ addresses: ips('10.0.0.1', '10.0.0.2'), ports: HTTP }];

  it('creates a slice owned by the Endpoints, named after it, labelled and with its endpoints and ports', () => {
    const cluster = setup(service(), endpoints(subsets, { labels: { team: 'a' } }));
    settle(cluster);
    const [slice, ...rest] = slicesOf(cluster);
    expect(rest).toEqual([]);
    const eps = cluster.view().get(KEY) as Endpoints;
    expect(slice!.metadata.name).toMatch(/^ext-[a-z0-9]{5}$/);
    expect(slice!.metadata.labels).toEqual({ team: 'a', [SERVICE_NAME_LABEL]: 'ext', [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME });
    expect(slice!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Endpoints', name: 'ext', uid: eps.metadata.uid, controller: true })]);
    expect(slice!.addressType).toBe('IPv4');
    expect(addressesOf(slice!)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(slice!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(decideMirroredSlices(KEY, cluster.view()).commands).toEqual([]);
  });

  it('updates the slice in place when the Endpoints change, and splits a group over the limit', () => {
    const cluster = setup(service(), endpoints(subsets));
    settle(cluster);
    const [first] = slicesOf(cluster);
    updateEndpoints(cluster, (eps) => ({ ...eps, subsets: [{ addresses: ips('10.0.0.3'), notReadyAddresses: ips('10.0.0.4'), ports: HTTP }] }));
    const [round] = settle(cluster);
    expect(round!.map((c) => c.type)).toEqual(['ObjectUpdated']);
    expect(slicesOf(cluster).map((s) => s.metadata.name)).toEqual([first!.metadata.name]);
    expect(slicesOf(cluster)[0]!.endpoints?.map((e) => [e.addresses[0], e.conditions?.ready])).toEqual([['10.0.0.3', true], ['10.0.0.4', false]]);
    updateEndpoints(cluster, (eps) => ({ ...eps, subsets: [{ addresses: ips('10.0.0.1'), ports: HTTP }, { addresses: ips('10.0.0.2'), ports: HTTP }, { addresses: ips('10.0.0.3'), ports: HTTP }] }));
    settle(cluster, 2);
    expect(slicesOf(cluster).map(addressesOf).flat().sort()).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    expect(slicesOf(cluster).every((s) => (s.endpoints ?? []).length <= 2)).toBe(true);
  });

  it('moves to a new slice when the ports change, and follows the labels', () => {
    const cluster = setup(service(), endpoints(subsets));
    settle(cluster);
    const [old] = slicesOf(cluster);
    updateEndpoints(cluster, (eps) => ({ ...eps, metadata: { ...eps.metadata, labels: { tier: 'db' } }, subsets: [{ addresses: ips('10.0.0.1'), ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] }] }));
    settle(cluster);
    const slices = slicesOf(cluster);
    expect(slices.map((s) => s.metadata.name)).not.toContain(old!.metadata.name);
    expect(slices.map((s) => [s.ports?.[0]?.port, s.metadata.labels?.['tier']])).toEqual([[5432, 'db']]);
  });

  type Change = (cluster: TestCluster) => void;
  it.each<[string, Change]>([
    ['the Endpoints is deleted', (c) => c.apply({ type: 'ObjectDeleted', kind: 'Endpoints', namespace: 'default', name: 'ext', expectedResourceVersion: null, uid: null, propagationPolicy: 'Orphan', gracePeriodSeconds: null })],
    ['the Endpoints loses its addresses', (c) => updateEndpoints(c, (eps) => ({ ...eps, subsets: [] }))],
    ['the Endpoints gets skip-mirror', (c) => updateEndpoints(c, (eps) => ({ ...eps, metadata: { ...eps.metadata, labels: { [SKIP_MIRROR_LABEL]: 'true' } } }))],
    ['the Service is deleted', (c) => c.apply({ type: 'ObjectDeleted', kind: 'Service', namespace: 'default', name: 'ext', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null })],
    ['the Service gets a selector', (c) => {
      const svc = c.view().get('Service/default/ext') as Service;
      c.apply({ type: 'ObjectUpdated', object: { ...svc, spec: { ...svc.spec, selector: { app: 'x' } } }, expectedResourceVersion: null, subresource: null });
    }],
  ])('deletes the mirrored slices when %s', (_name, change) => {
    const cluster = setup(service(), endpoints(subsets));
    settle(cluster);
    expect(slicesOf(cluster)).toHaveLength(1);
    change(cluster);
    const [round] = settle(cluster);
    expect(round!.map((c) => c.type)).toEqual(['ObjectDeleted']);
    expect(slicesOf(cluster)).toEqual([]);
  });

  it.each<[string, Service | undefined, Endpoints]>([
    ['no Service', undefined, endpoints(subsets)],
    ['a Service with a selector', service({ app: 'web' }), endpoints(subsets)],
    ['skip-mirror Endpoints', service(), endpoints(subsets, { labels: { [SKIP_MIRROR_LABEL]: 'true' } })],
  ])('mirrors nothing for %s', (_name, svc, eps) => {
    const cluster = setup(svc, eps);
    expect(decideMirroredSlices(KEY, cluster.view()).commands).toEqual([]);
  });

  it('leaves slices of other managers alone', () => {
    const cluster = setup(service(), undefined);
    cluster.create({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'ext-user', namespace: 'default', labels: { [SERVICE_NAME_LABEL]: 'ext' } }, addressType: 'IPv4', endpoints: [] } as EndpointSlice);
    expect(decideMirroredSlices(KEY, cluster.view()).commands).toEqual([]);
  });
});

describe('the controller', () => {
  it('wakes the Endpoints for itself, its Service and its mirrored slices, and records AddressesNotMirrored', () => {
    const cluster = setup(service(), endpoints([{ addresses: ips('10.0.0.1', 'bogus'), ports: HTTP }]));
    const controller = createEndpointSliceMirroringController();
    const view = cluster.view();
    const change = (key: string, object: unknown): AppliedChange => ({ type: 'ADDED', key, eventId: 'e', object: object as AppliedChange['object'], topic: 'desired', partition: 0, offset: 0 });
    expect(controller.keysFor(change(KEY, view.get(KEY)), view)).toEqual([KEY]);
    expect(controller.keysFor(change('Service/default/ext', view.get('Service/default/ext')), view)).toEqual([KEY]);
    const slice = (managedBy: string) => ({ kind: 'EndpointSlice', metadata: { name: 'x', namespace: 'default', labels: { [SERVICE_NAME_LABEL]: 'ext', [MANAGED_BY_LABEL]: managedBy } } });
    expect(controller.keysFor(change('EndpointSlice/default/x', slice(MIRRORING_CONTROLLER_NAME)), view)).toEqual([KEY]);
    expect(controller.keysFor(change('EndpointSlice/default/x', slice('endpointslice-controller.k8s.io')), view)).toEqual([]);
    expect(controller.initialKeys(view)).toEqual([KEY]);
    const { commands } = controller.decide(KEY, view, { now: Date.UTC(2030, 0, 1) });
    const events = commands.flatMap((c) => (c.type === 'ObjectCreated' && c.object.kind === 'Event' ? [c.object] : []));
    expect(events.map((e) => [e.type, e.reason, e.message, e.involvedObject.kind])).toEqual([['Warning', 'AddressesNotMirrored', '1 addresses in ext Endpoints were not mirrored to EndpointSlices', 'Endpoints']]);
  });
});
