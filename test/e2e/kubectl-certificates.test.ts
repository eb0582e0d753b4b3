/**
 * kubectl certificate approve and deny, on both logs: the `approval` subresource of
 * CertificateSigningRequests (kube's approval strategy: only conditions change, Approved
 * and Denied exclude each other).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { LOG_ADAPTERS } from './helpers.ts';

const item = (name: string, extra = '') => `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: ${name}
  data:
    key: value
${extra}`;

const deployment = (replicas: string) => `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: listed
  spec:
    replicas: ${replicas}
    selector:
      matchLabels: {app: listed}
    template:
      metadata:
        labels: {app: listed}
      spec:
        containers: [{name: main, image: logplane/sleeper}]
`;

describe.each(LOG_ADAPTERS)('kubectl certificate approve and deny on the %s log', (adapter) => {
  let cluster: RunningCluster;
  let dir: string;
  const kubectl = (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', cluster.kubeconfig, '--cache-dir', join(dir, 'kube-cache'), '--request-timeout', '30s', ...args],
        { timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const csr = (name: string): string => {
    const path = join(dir, `${name}.yaml`);
    const request = Buffer.from(`-----BEGIN CERTIFICATE REQUEST-----\n${'A'.repeat(64)}\n-----END CERTIFICATE REQUEST-----\n`).toString('base64');
    writeFileSync(path, `apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: ${name}\nspec:\n  request: ${request}\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n`);
    return path;
  };
  const conditions = (name: string) => (cluster.projection.view().get(`CertificateSigningRequest.certificates.k8s.io//${name}`) as { status?: { conditions?: { type: string; status: string; reason?: string }[] } } | undefined)?.status?.conditions;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'e2e-kubectl-csr-'));
    // TLS, as `logplane up` serves it (over plain HTTP, kubectl asked for /openapi/v2 without its token).
    cluster = await startCluster({
      dataDir: dir,
      nodes: 1,
      runtime: 'sim',
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `e2e-kubectl-csr-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('approves a request with kubectl certificate approve, recording the condition kubectl sends', async () => {
    expect((await kubectl('create', '-f', csr('alice'))).code).toBe(0);
    const approved = await kubectl('certificate', 'approve', 'alice');
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toContain('certificatesigningrequest.certificates.k8s.io/alice approved');
    expect(conditions('alice')).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'KubectlApprove' })]);
    const listed = await kubectl('get', 'csr', 'alice');
    expect(listed.stdout).toMatch(/alice\s+\S+\s+kubernetes.io\/kube-apiserver-client\s+\S+\s+<none>\s+Approved/);
  });

  it('refuses to deny an approved request (Approved and Denied exclude each other) and changes nothing', async () => {
    // kubectl itself refuses (even with --force); a client that sends both conditions gets kube's 422.
    expect((await kubectl('certificate', 'deny', 'alice', '--force')).stderr).toContain('certificate signing request "alice" is already Approved');
    const current = JSON.parse((await kubectl('get', 'csr', 'alice', '-o', 'json')).stdout);
    current.status.conditions.push({ type: 'Denied', status: 'True', reason: 'Mine' });
    const body = join(dir, 'both.json');
    writeFileSync(body, JSON.stringify(current));
    const denied = await kubectl('replace', '--raw', '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval', '-f', body);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('Approved and Denied conditions are mutually exclusive');
    expect(conditions('alice')?.map((c) => c.type)).toEqual(['Approved']);
  });

  it('denies another request', async () => {
    expect((await kubectl('create', '-f', csr('bob'))).code).toBe(0);
    expect((await kubectl('certificate', 'deny', 'bob')).stdout).toContain('certificatesigningrequest.certificates.k8s.io/bob denied');
    expect(conditions('bob')).toEqual([expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' })]);
  });
});
