/**
 * ExternalName Services through the fold, as kube allocates for them, on both logs: none
 * gets a ClusterIP, a Service that becomes ExternalName gives its address back (another
 * Service can then ask for it), and one that stops being ExternalName gets one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { describeOnBothLogs, openTestLog, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

type Service = { metadata: { resourceVersion: string }; spec: { clusterIP?: string; clusterIPs?: string[]; type?: string } };

describeOnBothLogs('ExternalName services', (adapter) => {
  const temp = tempDir('external-name-');
  let log: EventLog;
  let api: TestApiServer;
  const path = '/api/v1/namespaces/default/services';

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const put = async (name: string, spec: Record<string, unknown>) => {
    const current = (await api.client.request('GET', `${path}/${name}`)).body as Service;
    return api.client.request('PUT', `${path}/${name}`, { body: { metadata: { name, resourceVersion: current.metadata.resourceVersion }, spec } });
  };

  it('allocates no ClusterIP for an ExternalName service', async () => {
    const created = await api.client.request('POST', path, { body: { metadata: { name: 'db' }, spec: { type: 'ExternalName', externalName: 'db.example.com' } } });
    expect(created.status).toBe(201);
    const spec = (created.body as Service).spec;
    expect(spec.clusterIP).toBeUndefined();
    expect(spec.clusterIPs).toBeUndefined();
  });

  it('gives the address back when a service becomes ExternalName, and allocates one when it stops being one', async () => {
    const created = await api.client.request('POST', path, { body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } } });
    const address = (created.body as Service).spec.clusterIP!;
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const external = await put('web', { type: 'ExternalName', externalName: 'web.example.com' });
    expect(external.status).toBe(200);
    expect((external.body as Service).spec.clusterIP).toBeUndefined();
    // The address is free again: another service may ask for it.
    const claimant = await api.client.request('POST', path, { body: { metadata: { name: 'claimant' }, spec: { clusterIP: address, ports: [{ port: 81 }] } } });
    expect(claimant.status).toBe(201);
    expect((claimant.body as Service).spec.clusterIP).toBe(address);
    const back = await put('web', { type: 'ClusterIP', ports: [{ port: 80 }] });
    expect(back.status).toBe(200);
    const ip = (back.body as Service).spec.clusterIP!;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(ip).not.toBe(address);
    expect((back.body as Service).spec.clusterIPs).toEqual([ip]);
  });
});
