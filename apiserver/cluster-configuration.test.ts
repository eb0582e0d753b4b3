/**
 * The cluster configuration is a fact in the log (the security audit: `logplane replay`
 * reported DIFFERENT for a cluster started with a non-default --service-cidr, because the
 * replayer allocated ClusterIPs from the default range). On both logs: the apiserver
 * records the service CIDR it was started with, Services get addresses from it, a replay
 * with no flags at all gives the live state hash, and a restart with another CIDR fails.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { replayLog } from '../projections/index.ts';
import { ConfigurationMismatchError } from './errors.ts';
import { describeOnBothLogs, openTestLog, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

describeOnBothLogs('cluster configuration', (adapter) => {
  const temp = tempDir('cluster-config-test-');
  let log: EventLog;
  let api: TestApiServer;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const service = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
  });

  it('records the service CIDR in the log; ClusterIPs come from it and a replay without flags gives the same state hash', async () => {
    const recorded = await api.server.ensureClusterConfiguration({ serviceCIDR: '10.44.0.0/24' });
    expect(recorded).toEqual({ serviceCIDR: '10.44.0.0/24', nodePortRange: [30000, 32767] });
    const created = await api.client.request('POST', '/api/v1/namespaces/default/services', { body: service('web') });
    expect(created.status).toBe(201);
    expect(created.body.spec.clusterIP).toBe('10.44.0.1');
    const outside = await api.client.request('POST', '/api/v1/namespaces/default/services', { body: service('pinned', { clusterIP: '127.96.0.7' }) });
    expect(outside.status).toBe(422);
    expect(outside.body.message).toContain('The range of valid IPs is 10.44.0.0/24');

    const replayed = await replayLog({ log, dir: temp.dir + '/replay' });
    expect(replayed.stateHash).toBe(api.projection.stateHash());
  });

  it('keeps the recorded configuration: the same again is accepted and appends a no-op, another CIDR fails the start', async () => {
    expect(await api.server.ensureClusterConfiguration({})).toEqual({ serviceCIDR: '10.44.0.0/24', nodePortRange: [30000, 32767] });
    expect(await api.server.ensureClusterConfiguration({ serviceCIDR: '10.44.0.0/24' })).toMatchObject({ serviceCIDR: '10.44.0.0/24' });
    const refused = api.server.ensureClusterConfiguration({ serviceCIDR: '10.45.0.0/24' });
    await expect(refused).rejects.toThrow(ConfigurationMismatchError);
    await expect(api.server.ensureClusterConfiguration({ serviceCIDR: '10.45.0.0/24' })).rejects.toThrow(/service CIDR is 10\.44\.0\.0\/24 \(recorded in its log\)/);
  });

  it('lets a second apiserver with its own projection read the configuration from the log', async () => {
    const second = await startTestApiServer(log, temp.dir);
    try {
      await expect(second.server.ensureClusterConfiguration({ serviceCIDR: '127.96.0.0/16' })).rejects.toThrow(ConfigurationMismatchError);
      const created = await second.client.request('POST', '/api/v1/namespaces/default/services', { body: service('second') });
      expect(created.status).toBe(201);
      expect(created.body.spec.clusterIP).toBe('10.44.0.2');
    } finally {
      await second.close();
    }
  });
});
