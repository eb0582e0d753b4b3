/**
 * The cluster DNS on the ClusterIP of its Service, queried with real `dig`: it listens there
 * once the Service has an address, moves when the Service is deleted and created again with
 * another, and opens the address once another holder lets go of it. Loopback ClusterIPs and
 * free ports, so it runs without root (the CLI asks for port 53).
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEnvelopes, envelope } from '../../projections/index.ts';
import { admin } from '../../projections/testing.ts';
import type { Service } from '../../schemas/index.ts';
import { freePort, waitFor } from '../../test/e2e/process.ts';
import { startClusterDns, type ClusterDns } from './index.ts';
import { ECHO_IP, openDnsTestCluster, type DnsTestCluster } from './testing.ts';

const run = promisify(execFile);
const logger = pino({ level: 'silent' });
const MOVED_IP = '127.96.0.51';

const digA = async (host: string, port: number, name: string, transport: '+notcp' | '+tcp' = '+notcp'): Promise<string[]> => {
  const { stdout } = await run('dig', [`@${host}`, '-p', String(port), '+short', '+tries=1', '+time=5', transport, name, 'A']);
  return stdout.split('\n').filter(Boolean);
};

const listen = (host: string, port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });

describe('the cluster DNS on its Service’s ClusterIP', () => {
  let cluster: DnsTestCluster;
  const started: ClusterDns[] = [];
  const settle = async (): Promise<void> => {
    await cluster.projection.waitFor({ desired: await cluster.log.endOffsets('desired'), observed: await cluster.log.endOffsets('observed') }, 30_000);
  };

  beforeAll(async () => {
    cluster = await openDnsTestCluster('embedded');
  }, 120_000);
  afterAll(async () => {
    for (const dns of started) await dns.close();
    await cluster?.close();
  });

  it('answers on the ClusterIP, over UDP and TCP, and follows the Service when it is made again with another address', async () => {
    const dns = await startClusterDns({ projection: cluster.projection, host: '127.0.0.1', port: 0, logger, service: { namespace: 'default', name: 'echo', port: 0 } });
    started.push(dns);
    const onService = await waitFor('the DNS on the echo ClusterIP', () => dns.serviceAddress());
    expect(onService.host).toBe(ECHO_IP);
    expect(await digA(ECHO_IP, onService.port, 'echo.default.svc.cluster.local')).toEqual([ECHO_IP]);
    expect(await digA(ECHO_IP, onService.port, 'echo.default.svc.cluster.local', '+tcp')).toEqual([ECHO_IP]);

    const echo = cluster.projection.view().get('Service/default/echo') as Service;
    await appendEnvelopes(cluster.log, [
      envelope(
        { type: 'ObjectDeleted', kind: 'Service', namespace: 'default', name: 'echo', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null },
        { actor: admin },
      ),
    ]);
    await settle();
    await waitFor('the DNS off the old ClusterIP', () => dns.serviceAddress() === undefined);
    await expect(digA(ECHO_IP, onService.port, 'echo.default.svc.cluster.local', '+tcp')).rejects.toThrow();

    const again: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo', namespace: 'default' }, spec: { ...echo.spec, clusterIP: MOVED_IP, clusterIPs: [MOVED_IP] } };
    await appendEnvelopes(cluster.log, [envelope({ type: 'ObjectCreated', object: again }, { actor: admin })]);
    await settle();
    const moved = await waitFor('the DNS on the new ClusterIP', () => dns.serviceAddress()?.host === MOVED_IP && dns.serviceAddress());
    expect(await digA(MOVED_IP, moved.port, 'echo.default.svc.cluster.local')).toEqual([MOVED_IP]);
  });

  it('opens an address another server held once it is let go', async () => {
    const port = await freePort();
    const holder = await listen(MOVED_IP, port);
    const dns = await startClusterDns({ projection: cluster.projection, host: '127.0.0.1', port: 0, logger, service: { namespace: 'default', name: 'echo', port, retryMs: 100 } });
    started.push(dns);
    // The TCP listener cannot be had: the main address answers, the ClusterIP not yet.
    expect(await digA('127.0.0.1', dns.address.port, 'echo.default.svc.cluster.local')).toEqual([MOVED_IP]);
    expect(dns.serviceAddress()).toBeUndefined();
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    await waitFor('the DNS on the freed address', () => dns.serviceAddress());
    expect(await digA(MOVED_IP, port, 'echo.default.svc.cluster.local', '+tcp')).toEqual([MOVED_IP]);
  });
});
