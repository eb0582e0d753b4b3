/**
 * Several apiservers on one log keep one `kubernetes` Service, and its Endpoints and
 * EndpointSlice list every apiserver whose Lease in kube-system is live: one that stops
 * leaves them at once, one that stops renewing (a crash) is dropped when its Lease expires.
 */
import { randomUUID } from 'node:crypto';
import { expect, it, vi } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import type { Endpoints, EndpointSlice, Lease, Service } from '../../schemas/index.ts';
import { describeOnBothLogs, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
const WAIT = { timeout: 20_000, interval: 50 };

describeOnBothLogs('the kubernetes Service of several apiservers', (adapter) => {
  it.each([1, 3])('with %i partition(s): lists every live apiserver, drops one that leaves and one whose Lease expires', async (partitions) => {
    const temp = tempDir('system-objects-');
    const cluster = `system-${randomUUID().slice(0, 8)}`;
    const logs: EventLog[] = [];
    const servers: TestApiServer[] = [];
    try {
      logs.push(await openTestLog(adapter, { dir: temp.dir, cluster, partitions }));
      logs.push(adapter === 'kafka' ? await openTestLog(adapter, { dir: temp.dir, cluster, partitions }) : logs[0]!);
      servers.push(await startTestApiServer(logs[0]!, temp.dir, { host: '127.0.0.1' }));
      servers.push(await startTestApiServer(logs[1]!, temp.dir, { host: '127.0.0.2' }));
      const [a, b] = servers as [TestApiServer, TestApiServer];
      for (const s of servers) await s.server.ensureClusterConfiguration();
      await Promise.all(servers.map((s) => s.server.startSystemObjects({ intervalMs: 200, leaseDurationSeconds: 2 }).ready));

      const addresses = async (server: TestApiServer) => {
        const endpoints = (await server.client.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).body as Endpoints;
        const slice = (await server.client.request('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).body as EndpointSlice;
        return { endpoints: endpoints.subsets?.[0]?.addresses?.map((x) => x.ip), slice: slice.endpoints?.map((e) => e.addresses[0]) };
      };
      const both = ['127.0.0.1', '127.0.0.2'];
      await vi.waitFor(async () => expect(await addresses(a)).toEqual({ endpoints: both, slice: both }), WAIT);
      await vi.waitFor(async () => expect(await addresses(b)).toEqual({ endpoints: both, slice: both }), WAIT);
      const services = (await a.client.request('GET', '/api/v1/namespaces/default/services')).body as { items: Service[] };
      expect(services.items.map((s) => [s.metadata.name, s.spec?.clusterIP])).toEqual([['kubernetes', '127.96.0.1']]);
      const leases = (await a.client.request('GET', LEASES)).body as { items: Lease[] };
      expect(leases.items.map((l) => l.metadata.annotations?.['logplane.io/advertise-address']).sort()).toEqual(both);

      // An apiserver that crashed: its Lease was renewed once, 1 s long, and never again.
      const crashed: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: 'apiserver-crashed',
          labels: { 'apiserver.kubernetes.io/identity': 'kube-apiserver' },
          annotations: { 'logplane.io/advertise-address': '127.0.0.9', 'logplane.io/secure-port': '6443' },
        },
        spec: { holderIdentity: 'apiserver-crashed_1', leaseDurationSeconds: 3, renewTime: new Date().toISOString().replace('Z', '000Z') },
      };
      expect((await a.client.request('POST', LEASES, { body: crashed })).status).toBe(201);
      await vi.waitFor(async () => expect((await addresses(b)).endpoints).toEqual([...both, '127.0.0.9']), WAIT);
      await vi.waitFor(async () => expect(await addresses(b)).toEqual({ endpoints: both, slice: both }), WAIT);
      expect((await a.client.request('GET', `${LEASES}/apiserver-crashed`)).status).toBe(404);

      // b stops: it deletes its Lease and takes its address out before it closes.
      await b.close();
      servers.pop();
      expect(await addresses(a)).toEqual({ endpoints: ['127.0.0.1'], slice: ['127.0.0.1'] });
      expect(((await a.client.request('GET', LEASES)).body as { items: Lease[] }).items).toHaveLength(1);
    } finally {
      for (const server of servers) await server.close();
      for (const log of new Set(logs)) await log.close();
      temp.remove();
    }
  });

  it('keeps the endpoints when a user Service already holds the reserved address, and creates the Service once it is free', async () => {
    const temp = tempDir('system-objects-taken-');
    const log = await openTestLog(adapter, { dir: temp.dir });
    const api = await startTestApiServer(log, temp.dir);
    try {
      await api.server.ensureClusterConfiguration();
      const squatter = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'squatter' }, spec: { clusterIP: '127.96.0.1', ports: [{ port: 80 }] } };
      expect((await api.client.request('POST', '/api/v1/namespaces/default/services', { body: squatter })).status).toBe(201);
      await api.server.startSystemObjects({ intervalMs: 200 }).ready;
      expect((await api.client.request('GET', '/api/v1/namespaces/default/services/kubernetes')).status).toBe(404);
      const endpoints = (await api.client.request('GET', '/api/v1/namespaces/default/endpoints/kubernetes')).body as Endpoints;
      expect(endpoints.subsets?.[0]?.addresses?.map((x) => x.ip)).toEqual(['127.0.0.1']);
      expect((await api.client.request('DELETE', '/api/v1/namespaces/default/services/squatter')).status).toBe(200);
      await vi.waitFor(async () => {
        const service = (await api.client.request('GET', '/api/v1/namespaces/default/services/kubernetes')).body as Service;
        expect(service.spec?.clusterIP).toBe('127.96.0.1');
      }, WAIT);
    } finally {
      await api.close();
      await log.close();
      temp.remove();
    }
  });
});
