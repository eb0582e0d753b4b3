/**
 * kubectl's client-side validation of `kind: List` files, on both logs: kubectl validates
 * a List's items itself, against `/openapi/v2` (the protobuf document), since server-side
 * field validation sees only one object at a time. A valid List is created; a List with an
 * unknown field and a mistyped one is refused by kubectl with its messages naming them, and
 * nothing of it reaches the server.
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

describe.each(LOG_ADAPTERS)('kubectl apply of a kind: List on the %s log', (adapter) => {
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
  const file = (name: string, items: string): string => {
    const path = join(dir, name);
    writeFileSync(path, `apiVersion: v1\nkind: List\nitems:\n${items}`);
    return path;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'e2e-kubectl-list-'));
    // TLS, as `logplane up` serves it (over plain HTTP, kubectl asked for /openapi/v2 without its token).
    cluster = await startCluster({
      dataDir: dir,
      nodes: 1,
      runtime: 'sim',
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `e2e-kubectl-list-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('creates every item of a valid List', async () => {
    const result = await kubectl('apply', '-f', file('valid.yaml', item('listed-a') + deployment('2')));
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('configmap/listed-a created');
    expect(result.stdout).toContain('deployment.apps/listed created');
    expect(cluster.projection.view().get('ConfigMap/default/listed-a')).toBeDefined();
  });

  it('refuses a List with an unknown and a mistyped field on the client, naming both, and creates nothing', async () => {
    const result = await kubectl('apply', '-f', file('invalid.yaml', item('listed-b', '  bogus: 1\n') + deployment('"two"').replace('name: listed', 'name: listed-bad')));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('unknown field "bogus" in io.k8s.api.core.v1.ConfigMap');
    expect(result.stderr).toContain('invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: got "string", expected "integer"');
    expect(cluster.projection.view().get('ConfigMap/default/listed-b')).toBeUndefined();
    expect(cluster.projection.view().get('Deployment/default/listed-bad')).toBeUndefined();
  });
});
