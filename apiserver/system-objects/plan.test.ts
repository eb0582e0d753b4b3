import { describe, expect, it } from 'vitest';
import { createProjection, type Projection } from '../../projections/index.ts';
import { makeEvent, toBatches } from '../../projections/testing.ts';
import { tempProjections } from '../../projections/temp-projections.ts';
import { CLUSTER_CONFIGURATION_KEY } from '../../schemas/kinds/domains.ts';
import type { Endpoints, EndpointSlice, EventBody, Lease, Service } from '../../schemas/index.ts';
import { kubeDnsServiceIP, kubernetesServiceIP, planSystemObjects, type ApiserverIdentity, type PlanInput } from './plan.ts';

const temp = tempProjections('logplane-system-objects-');
const T0 = Date.UTC(2026, 11, 1, 12);

const apiserver = (n: number, port = 6443): ApiserverIdentity => ({
  leaseName: `apiserver-${n}`,
  holderIdentity: `apiserver-${n}_uuid`,
  hostname: 'host',
  address: `127.0.0.${n}`,
  port,
});

/** A projection with the cluster configured and the default namespaces, fed by hand. */
const cluster = (serviceCIDR = '10.96.0.0/12', namespaces = ['default', 'kube-system']) => {
  const projection: Projection = temp.track(createProjection({ dir: temp.dir() }));
  let next = 0;
  const fold = (key: string, body: EventBody): void => {
    for (const batch of toBatches('desired', [makeEvent(key, body)], 1, [next])) projection.applyBatch(batch);
    next += 1;
  };
  fold(CLUSTER_CONFIGURATION_KEY, { type: 'ClusterConfigured', serviceCIDR, nodePortLow: 30000, nodePortHigh: 32767 });
  for (const name of namespaces) fold(`Namespace//${name}`, { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  /** Plans and folds until nothing is left to write; returns how many writes it took. */
  const settle = (input: Omit<PlanInput, 'view' | 'serviceCIDR' | 'leaseDurationSeconds'>): number => {
    let writes = 0;
    for (let round = 0; round < 10; round++) {
      const planned = planSystemObjects({ ...input, view: projection.view(), serviceCIDR, leaseDurationSeconds: 15 });
      if (planned.length === 0) return writes;
      for (const write of planned) fold(write.key, write.body);
      writes += planned.length;
      input = { ...input, renew: false };
    }
    throw new Error('the plan did not settle');
  };
  return { projection, fold, settle, view: () => projection.view() };
};

const endpointsOf = (c: ReturnType<typeof cluster>) => {
  const endpoints = c.view().get('Endpoints/default/kubernetes') as Endpoints;
  const slice = c.view().get('EndpointSlice.discovery.k8s.io/default/kubernetes') as EndpointSlice;
  return {
    endpoints: endpoints.subsets?.[0]?.addresses?.map((a) => a.ip) ?? [],
    port: endpoints.subsets?.[0]?.ports?.[0]?.port,
    slice: slice.endpoints.map((e) => e.addresses[0]),
    slicePort: slice.ports?.[0]?.port,
  };
};

describe('the system objects plan', () => {
  it.each([
    ['10.96.0.0/12', '10.96.0.1'],
    ['127.96.0.0/16', '127.96.0.1'],
    ['10.44.0.0/24', '10.44.0.1'],
  ])('reserves the first address of %s (%s) for the kubernetes Service', (cidr, ip) => {
    expect(kubernetesServiceIP(cidr)).toBe(ip);
  });

  it('creates the kubernetes Service, its Lease and endpoints as kube-apiserver does, then has nothing to do', () => {
    const c = cluster();
    const self = apiserver(1, 6443);
    expect(c.settle({ self, now: T0, renew: true, leaving: false })).toBe(5);
    const service = c.view().get('Service/default/kubernetes') as Service;
    expect(service.metadata.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
    expect(service.spec).toMatchObject({ type: 'ClusterIP', clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], sessionAffinity: 'None' });
    expect(service.spec?.selector).toBeUndefined();
    expect(service.spec?.ports).toEqual([{ name: 'https', protocol: 'TCP', port: 443, targetPort: 6443 }]);
    expect(endpointsOf(c)).toEqual({ endpoints: ['127.0.0.1'], port: 6443, slice: ['127.0.0.1'], slicePort: 6443 });
    const endpoints = c.view().get('Endpoints/default/kubernetes') as Endpoints;
    expect(endpoints.metadata.labels).toEqual({ 'endpointslice.kubernetes.io/skip-mirror': 'true' });
    const slice = c.view().get('EndpointSlice.discovery.k8s.io/default/kubernetes') as EndpointSlice;
    expect(slice.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    expect(slice).toMatchObject({ addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }] });
    const lease = c.view().get('Lease.coordination.k8s.io/kube-system/apiserver-1') as Lease;
    expect(lease.spec).toEqual({
      holderIdentity: 'apiserver-1_uuid',
      leaseDurationSeconds: 15,
      acquireTime: '2026-12-01T12:00:00.000000Z',
      renewTime: '2026-12-01T12:00:00.000000Z',
    });
    expect(lease.metadata.labels).toMatchObject({ 'apiserver.kubernetes.io/identity': 'kube-apiserver' });
    // A pass woken by a change writes nothing; a periodic pass only renews.
    expect(planSystemObjects({ view: c.view(), self, serviceCIDR: '10.96.0.0/12', now: T0 + 1000, renew: false, leaving: false, leaseDurationSeconds: 15 })).toEqual([]);
    expect(c.settle({ self, now: T0 + 10_000, renew: true, leaving: false })).toBe(1);
    const renewed = c.view().get('Lease.coordination.k8s.io/kube-system/apiserver-1') as Lease;
    expect(renewed.spec).toMatchObject({ acquireTime: '2026-12-01T12:00:00.000000Z', renewTime: '2026-12-01T12:00:10.000000Z' });
  });

  it('recreates a deleted Service and resets edited endpoints, but leaves an existing Service as it is', () => {
    const c = cluster();
    const self = apiserver(1);
    c.settle({ self, now: T0, renew: true, leaving: false });
    const service = c.view().get('Service/default/kubernetes') as Service;
    c.fold('Service/default/kubernetes', { type: 'ObjectUpdated', object: { ...service, metadata: { ...service.metadata, labels: { edited: 'yes' } } }, expectedResourceVersion: null, subresource: null });
    const endpoints = c.view().get('Endpoints/default/kubernetes') as Endpoints;
    c.fold('Endpoints/default/kubernetes', { type: 'ObjectUpdated', object: { ...endpoints, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ name: 'https', port: 1, protocol: 'TCP' }] }] }, expectedResourceVersion: null, subresource: null });
    expect(c.settle({ self, now: T0, renew: false, leaving: false })).toBe(1);
    expect(endpointsOf(c).endpoints).toEqual(['127.0.0.1']);
    expect((c.view().get('Service/default/kubernetes') as Service).metadata.labels).toEqual({ edited: 'yes' });
    c.fold('Service/default/kubernetes', { type: 'ObjectDeleted', kind: 'Service', namespace: 'default', name: 'kubernetes', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    expect(c.settle({ self, now: T0, renew: false, leaving: false })).toBe(1);
    expect((c.view().get('Service/default/kubernetes') as Service).spec?.clusterIP).toBe('10.96.0.1');
  });

  it('lists every apiserver whose Lease is live, drops one that stopped renewing, and one that leaves', () => {
    const c = cluster();
    const [one, two, three] = [apiserver(1), apiserver(2), apiserver(3)];
    c.settle({ self: one, now: T0, renew: true, leaving: false });
    c.settle({ self: two, now: T0 + 1000, renew: true, leaving: false });
    c.settle({ self: three, now: T0 + 2000, renew: true, leaving: false });
    expect(endpointsOf(c).endpoints).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    expect(c.settle({ self: one, now: T0 + 2000, renew: false, leaving: false })).toBe(0);
    // Two stops renewing: 15 s after its last renewal, one's pass deletes its Lease and its address.
    c.settle({ self: three, now: T0 + 10_000, renew: true, leaving: false });
    c.settle({ self: one, now: T0 + 16_500, renew: true, leaving: false });
    expect(c.view().get('Lease.coordination.k8s.io/kube-system/apiserver-2')).toBeUndefined();
    expect(endpointsOf(c).endpoints).toEqual(['127.0.0.1', '127.0.0.3']);
    // Three stops cleanly: its Lease and address go at once.
    c.settle({ self: three, now: T0 + 17_000, renew: false, leaving: true });
    expect(c.view().get('Lease.coordination.k8s.io/kube-system/apiserver-3')).toBeUndefined();
    expect(endpointsOf(c)).toMatchObject({ endpoints: ['127.0.0.1'], slice: ['127.0.0.1'] });
  });

  it('does not flap when apiservers serve different ports: every one picks the port of the first Lease by name', () => {
    const c = cluster();
    const one = apiserver(1, 7001);
    const two = apiserver(2, 7002);
    c.settle({ self: two, now: T0, renew: true, leaving: false });
    expect(endpointsOf(c).port).toBe(7002);
    c.settle({ self: one, now: T0, renew: true, leaving: false });
    expect(endpointsOf(c)).toMatchObject({ port: 7001, slicePort: 7001 });
    expect(c.settle({ self: two, now: T0, renew: false, leaving: false })).toBe(0);
    expect(c.settle({ self: one, now: T0, renew: false, leaving: false })).toBe(0);
  });

  it.each([
    ['10.96.0.0/12', '10.96.0.10'],
    ['127.96.0.0/16', '127.96.0.10'],
    ['10.44.0.16/28', '10.44.0.26'],
    ['10.44.0.8/29', undefined],
  ])('gives kube-dns the tenth address of %s (%s), as kubeadm', (cidr, ip) => {
    expect(kubeDnsServiceIP(cidr)).toBe(ip);
  });

  it('creates the kube-dns Service as kubeadm’s CoreDNS add-on does, once, and again only when deleted', () => {
    const c = cluster();
    const self = apiserver(1);
    c.settle({ self, now: T0, renew: true, leaving: false });
    const service = c.view().get('Service/kube-system/kube-dns') as Service;
    expect(service.metadata.labels).toEqual({ 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' });
    expect(service.metadata.annotations).toEqual({ 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' });
    expect(service.spec).toMatchObject({ type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], selector: { 'k8s-app': 'kube-dns' } });
    expect(service.spec?.ports).toEqual([
      { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
      { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
    ]);
    c.fold('Service/kube-system/kube-dns', { type: 'ObjectUpdated', object: { ...service, metadata: { ...service.metadata, labels: { edited: 'yes' } } }, expectedResourceVersion: null, subresource: null });
    expect(c.settle({ self, now: T0, renew: false, leaving: false })).toBe(0);
    c.fold('Service/kube-system/kube-dns', { type: 'ObjectDeleted', kind: 'Service', namespace: 'kube-system', name: 'kube-dns', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    expect(c.settle({ self, now: T0, renew: false, leaving: false })).toBe(1);
    expect((c.view().get('Service/kube-system/kube-dns') as Service).spec?.clusterIP).toBe('10.96.0.10');
  });

  it('creates no kube-dns Service before kube-system exists', () => {
    const c = cluster('10.96.0.0/12', ['default']);
    const planned = planSystemObjects({ view: c.view(), self: apiserver(1), serviceCIDR: '10.96.0.0/12', now: T0, renew: true, leaving: false, leaseDurationSeconds: 15 });
    expect(planned.map((w) => w.key)).not.toContain('Service/kube-system/kube-dns');
  });

  it('creates no kubernetes Service before the cluster is configured', () => {
    const c = cluster();
    const planned = planSystemObjects({ view: c.view(), self: apiserver(1), serviceCIDR: undefined, now: T0, renew: true, leaving: false, leaseDurationSeconds: 15 });
    expect(planned.map((w) => w.key)).not.toContain('Service/default/kubernetes');
  });
});
