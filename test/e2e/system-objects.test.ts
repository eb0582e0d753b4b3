/**
 * The objects kube keeps in every cluster, on `logplane up` (TLS, as a user runs it) on both
 * logs, seen with the real kubectl: the `kubernetes` Service (the first address of the
 * configured service CIDR, 443 → the apiserver's port) and its Endpoints/EndpointSlice (the
 * apiserver's address), the `kube-dns` Service (the tenth address, as kubeadm), a `kube-root-ca.crt` ConfigMap and a `default` ServiceAccount in
 * every namespace, each brought back when deleted; the ca.crt published there verifies the
 * apiserver at the `kubernetes` endpoint (real curl); and a replay from offset 0 gives the
 * live state hash.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate } from '../../apiserver/index.ts';
import { DESCRIPTION } from '../../reconcilers/root-ca-cert-publisher/index.ts';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import type { ConfigMap, Endpoints, EndpointSlice, Service, ServiceAccount } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { LOG_ADAPTERS } from './helpers.ts';
import { kubectl as runKubectl, logplane, ok, okJson, run } from './process.ts';

const SERVICE_CIDR = '10.47.0.0/16';

interface ReplayResult {
  readonly stateHash: string;
  readonly liveStateHash: string | null;
  readonly events: number;
}

describe.each(LOG_ADAPTERS)('system objects on the %s log', (adapter) => {
  let dir: string;
  let cluster: RunningCluster;
  const kubectl = (...args: string[]) => runKubectl(cluster.kubeconfig, join(dir, 'kube-cache'), args);
  /** The certificate `up` serves with (self-signed, its own CA). */
  const caPem = (): string => readFileSync(join(dir, 'apiserver.crt'), 'utf8');
  const json = async <T>(...args: string[]): Promise<T> => JSON.parse(ok(await kubectl(...args, '-o', 'json'))) as T;
  /** Polls until `check` holds, for what kubectl cannot wait on (a changed field's value). */
  const eventually = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'system-objects-e2e-'));
    cluster = await startCluster({
      dataDir: dir,
      nodes: 1,
      runtime: 'sim',
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      tls: true,
      serviceCIDR: SERVICE_CIDR,
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `system-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has the kubernetes Service on the first address of the service CIDR, and its endpoints name the apiserver', async () => {
    const port = new URL(cluster.url).port;
    expect(ok(await kubectl('get', 'svc', 'kubernetes'))).toMatch(/^kubernetes\s+ClusterIP\s+10\.47\.0\.1\s+<none>\s+443\/TCP\s+\d+s$/m);
    const service = await json<Service>('get', 'svc', 'kubernetes');
    expect(service.metadata.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
    expect(service.spec?.ports).toEqual([{ name: 'https', protocol: 'TCP', port: 443, targetPort: Number(port) }]);
    expect(ok(await kubectl('get', 'endpoints', 'kubernetes'))).toMatch(new RegExp(`^kubernetes\\s+127\\.0\\.0\\.1:${port}\\s+\\d+s$`, 'm'));
    const slice = await json<EndpointSlice>('get', 'endpointslices.discovery.k8s.io', 'kubernetes');
    expect(slice).toMatchObject({ addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'https', port: Number(port), protocol: 'TCP' }] });
    expect(slice.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'kubernetes' });
    const leases = ok(await kubectl('get', 'leases', '-n', 'kube-system', '-l', 'apiserver.kubernetes.io/identity=kube-apiserver', '-o', 'name'));
    expect(leases.trim().split('\n')).toHaveLength(1);
  });

  it('brings the kubernetes Service and its Endpoints back when they are deleted', async () => {
    const before = await json<Service>('get', 'svc', 'kubernetes');
    ok(await kubectl('delete', 'svc', 'kubernetes'));
    ok(await kubectl('wait', '--for=create', 'svc/kubernetes', '--timeout=30s'));
    const after = await json<Service>('get', 'svc', 'kubernetes');
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec?.clusterIP).toBe('10.47.0.1');
    ok(await kubectl('delete', 'endpoints', 'kubernetes'));
    ok(await kubectl('wait', '--for=create', 'endpoints/kubernetes', '--timeout=30s'));
    await eventually('the endpoints to list the apiserver', async () => (await json<Endpoints>('get', 'endpoints', 'kubernetes')).subsets?.[0]?.addresses?.[0]?.ip === '127.0.0.1');
  });

  it('has the kube-dns Service on the tenth address of the service CIDR, as kubeadm, and brings it back when deleted', async () => {
    expect(ok(await kubectl('get', 'svc', '-n', 'kube-system', 'kube-dns'))).toMatch(/^kube-dns\s+ClusterIP\s+10\.47\.0\.10\s+<none>\s+53\/UDP,53\/TCP,9153\/TCP\s+\d+s$/m);
    const before = await json<Service>('get', '-n', 'kube-system', 'svc', 'kube-dns');
    expect(before.metadata.labels).toEqual({ 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' });
    expect(before.spec?.selector).toEqual({ 'k8s-app': 'kube-dns' });
    ok(await kubectl('delete', '-n', 'kube-system', 'svc', 'kube-dns'));
    ok(await kubectl('wait', '-n', 'kube-system', '--for=create', 'svc/kube-dns', '--timeout=30s'));
    const after = await json<Service>('get', '-n', 'kube-system', 'svc', 'kube-dns');
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec?.clusterIP).toBe('10.47.0.10');
  });

  it('gives a new namespace kube-root-ca.crt and the default ServiceAccount, and recreates them when deleted', async () => {
    ok(await kubectl('create', 'ns', 'x'));
    ok(await kubectl('wait', '--for=create', '-n', 'x', 'configmap/kube-root-ca.crt', 'serviceaccount/default', '--timeout=30s'));
    const cm = await json<ConfigMap>('get', '-n', 'x', 'configmap', 'kube-root-ca.crt');
    expect(cm.data).toEqual({ 'ca.crt': caPem() });
    expect(cm.metadata.annotations).toEqual({ 'kubernetes.io/description': DESCRIPTION });
    expect(ok(await kubectl('get', 'sa', '-n', 'x'))).toMatch(/^default\s+0\s+\d+s$/m);

    const sa = await json<ServiceAccount>('get', '-n', 'x', 'sa', 'default');
    ok(await kubectl('delete', '-n', 'x', 'configmap', 'kube-root-ca.crt'));
    ok(await kubectl('delete', '-n', 'x', 'sa', 'default'));
    ok(await kubectl('wait', '--for=create', '-n', 'x', 'configmap/kube-root-ca.crt', 'serviceaccount/default', '--timeout=30s'));
    expect((await json<ConfigMap>('get', '-n', 'x', 'configmap', 'kube-root-ca.crt')).metadata.uid).not.toBe(cm.metadata.uid);
    expect((await json<ServiceAccount>('get', '-n', 'x', 'sa', 'default')).metadata.uid).not.toBe(sa.metadata.uid);

    // An edit of the published CA is put back.
    ok(await kubectl('patch', '-n', 'x', 'configmap', 'kube-root-ca.crt', '--type', 'merge', '-p', '{"data":{"ca.crt":"forged"}}'));
    await eventually('the CA to be restored', async () => (await json<ConfigMap>('get', '-n', 'x', 'configmap', 'kube-root-ca.crt')).data?.['ca.crt'] === caPem());

    // The namespace still goes away with its content, and nothing comes back in it.
    ok(await kubectl('delete', 'ns', 'x', '--timeout=60s'));
    expect((await kubectl('get', 'ns', 'x')).stderr).toMatch(/namespaces "x" not found/);
  });

  it('verifies the apiserver at the kubernetes endpoint with the ca.crt published in the namespace (real curl)', async () => {
    const cm = await json<ConfigMap>('get', '-n', 'default', 'configmap', 'kube-root-ca.crt');
    const endpoints = await json<Endpoints>('get', 'endpoints', 'kubernetes');
    const address = endpoints.subsets?.[0]?.addresses?.[0]?.ip;
    const port = endpoints.subsets?.[0]?.ports?.[0]?.port;
    const caFile = join(dir, 'published-ca.crt');
    writeFileSync(caFile, cm.data?.['ca.crt'] ?? '');
    const url = `https://${address}:${port}/version`;
    const answer = await run('curl', ['--silent', '--show-error', '--fail', '--cacert', caFile, '-H', `Authorization: Bearer ${cluster.token}`, url]);
    expect(JSON.parse(ok(answer))).toMatchObject({ major: '1', minor: '32' });
    // Another CA does not verify it: the check above could fail.
    const otherFile = join(dir, 'other-ca.crt');
    writeFileSync(otherFile, generateSelfSignedCertificate().cert);
    const refused = await run('curl', ['--silent', '--show-error', '--cacert', otherFile, url]);
    expect(refused.code).toBe(60);
  });

  it('replays the log from offset 0 to the live state hash', async () => {
    const replay = okJson<ReplayResult>(await logplane(cluster.kubeconfig, ['replay', '-o', 'json']));
    expect(replay.events).toBeGreaterThan(10);
    expect(replay.stateHash).toBe(replay.liveStateHash);
  });
});
