/**
 * A LoadBalancer Service with externalTrafficPolicy Local gets `spec.healthCheckNodePort`
 * from the NodePort range, as kube-apiserver allocates it (the fold allocates it, as it
 * does NodePorts), through the real apiserver on the embedded log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { openTestLog, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

type Reply = { status: number; body: any };

describe('health-check NodePorts', () => {
  const temp = tempDir('health-check-');
  let log: EventLog;
  let api: TestApiServer;
  const path = '/api/v1/namespaces/default/services';
  const post = (body: unknown): Promise<Reply> => api.client.request('POST', path, { body }) as Promise<Reply>;

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('allocates one for LoadBalancer with policy Local, none with policy Cluster, and refuses one already taken', async () => {
    const local = await post({ metadata: { name: 'local' }, spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] } });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    const { healthCheckNodePort, ports } = local.body.spec;
    expect(healthCheckNodePort).toBeGreaterThanOrEqual(30000);
    expect(healthCheckNodePort).toBeLessThanOrEqual(32767);
    expect(healthCheckNodePort).not.toBe(ports[0].nodePort);
    const cluster = await post({ metadata: { name: 'cluster' }, spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', ports: [{ port: 80 }] } });
    expect(cluster.status).toBe(201);
    expect(cluster.body.spec.healthCheckNodePort).toBeUndefined();
    const clash = await post({ metadata: { name: 'clash' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: healthCheckNodePort }] } });
    expect(clash.status).toBe(422);
    expect(clash.body.details.causes).toContainEqual(expect.objectContaining({ field: 'spec.ports[0].nodePort' }));
  });
});
