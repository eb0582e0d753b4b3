/**
 * The cluster DNS of `logplane agent` in distributed mode: an apiserver and an agent as
 * separate components on one log (the embedded one, in this process; the Kafka walkthrough in
 * distributed.test.ts runs them as processes), the agent's DNS answering from the
 * agent's own projection to real `dig`: a Service the user creates through the apiserver, and
 * the kube-dns Service the apiserver keeps on the tenth address of the service CIDR.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterDns } from '../../addons/dns/index.ts';
import { runAgent, runApiserver, type Component } from '../../cli/components.ts';
import { adminCredentials, type LogTarget } from '../../cli/wiring.ts';
import type { Service } from '../../schemas/index.ts';
import { waitFor } from './process.ts';

const exec = promisify(execFile);
const logger = pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' });
const SERVICE_CIDR = '127.92.0.0/16';

describe('the cluster DNS of logplane agent (distributed mode)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-dns-agent-'));
  const components: Component[] = [];
  let url = '';
  let token = '';
  let dns: ClusterDns;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
  const dig = async (...args: string[]): Promise<string[]> => {
    const { stdout } = await exec('dig', [`@${dns.address.host}`, '-p', String(dns.address.port), '+short', '+tries=1', '+time=5', ...args]);
    return stdout.split('\n').filter(Boolean).sort();
  };

  beforeAll(async () => {
    const target: LogTarget = { type: 'embedded', dir: join(dir, 'log'), cluster: 'dns', partitions: 1 };
    const pkiDir = join(dir, 'pki');
    const apiserver = await runApiserver({ target, dataDir: join(dir, 'api'), pkiDir, port: 0, host: '127.0.0.1', tls: false, logger, serviceCIDR: SERVICE_CIDR });
    components.push(apiserver);
    url = apiserver.url;
    token = adminCredentials(join(dir, 'api')).token;
    const agent = await runAgent({
      target,
      dataDir: join(dir, 'agent'),
      pkiDir,
      nodes: ['dns-node'],
      runtime: 'sim',
      proxy: 'none',
      podCIDR: '127.124.0.0/24',
      dns: { host: '127.0.0.1', port: 0 },
      logger,
    });
    components.push(agent);
    dns = agent.dns!;
  }, 120_000);

  afterAll(async () => {
    try {
      for (const component of components.reverse()) await component.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints where it listens', () => {
    const description = components[1]?.description ?? '';
    // The apiserver here serves plain HTTP: it publishes no cluster-info, so the agent calls none.
    expect(description).toBe(`agent for dns-node (sim runtime, proxy none); cluster DNS 127.0.0.1:${dns.address.port} (UDP and TCP); calls no apiserver`);
  });

  it('answers the kube-dns Service the apiserver keeps, on the tenth address of the service CIDR', async () => {
    const answer = await waitFor('kube-dns in the agent’s DNS', async () => {
      const ips = await dig('kube-dns.kube-system.svc.cluster.local', 'A');
      return ips.length === 1 && ips;
    });
    expect(answer).toEqual(['127.92.0.10']);
    expect(await dig('_dns._udp.kube-dns.kube-system.svc.cluster.local', 'SRV')).toEqual(['0 100 53 kube-dns.kube-system.svc.cluster.local.']);
    expect(await dig('_dns-tcp._tcp.kube-dns.kube-system.svc.cluster.local', 'SRV')).toEqual(['0 100 53 kube-dns.kube-system.svc.cluster.local.']);
  });

  it('dig echo.default.svc.cluster.local answers the ClusterIP of a Service created through the apiserver', async () => {
    const created = await api('/api/v1/namespaces/default/services', {
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'echo' }, spec: { selector: { app: 'echo' }, ports: [{ name: 'http', port: 8080 }] } }),
    });
    expect(created.status).toBe(201);
    const clusterIP = ((await created.json()) as Service).spec?.clusterIP;
    expect(clusterIP).toMatch(/^127\.92\.0\.\d+$/);
    const answer = await waitFor('echo in the agent’s DNS', async () => {
      const ips = await dig('echo.default.svc.cluster.local', 'A');
      return ips.length === 1 && ips;
    });
    expect(answer).toEqual([clusterIP]);
    expect(await dig('+tcp', '_http._tcp.echo.default.svc.cluster.local', 'SRV')).toEqual(['0 100 8080 echo.default.svc.cluster.local.']);
  });
});
