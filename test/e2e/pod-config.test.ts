/**
 * Pod configuration on the process runtime with the real kubectl 1.32, on both logs: a pod
 * reads a configMap volume file, a secret env var (secretKeyRef), a fieldRef, envFrom with a
 * prefix and the Service variables, and prints them to its log; a pod whose secret is missing
 * waits with CreateContainerConfigError and starts once the secret is created; a ConfigMap
 * update reaches the mounted file (atomic writer).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import type { Pod } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { LOG_ADAPTERS, pollUntil } from './helpers.ts';

const READER = `apiVersion: v1
kind: Pod
metadata:
  name: reader
  labels:
    app: reader
spec:
  restartPolicy: Never
  containers:
  - name: reader
    image: busybox:1.36
    command: ["sh", "-c", "while true; do echo \\"greeting=\`cat config/greeting\` password=$PASSWORD pod=$(MY_NAME) app=$APP_MODE svc=$BACKEND_SERVICE_PORT link=$BACKEND_PORT_8080_TCP_ADDR\\"; sleep 0.3; done"]
    env:
    - name: PASSWORD
      valueFrom:
        secretKeyRef:
          name: app-secret
          key: password
    - name: MY_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    envFrom:
    - prefix: APP_
      configMapRef:
        name: app-config
    volumeMounts:
    - name: config
      mountPath: /config
  volumes:
  - name: config
    configMap:
      name: app-config
`;

const WAITER = `apiVersion: v1
kind: Pod
metadata:
  name: waiter
spec:
  containers:
  - name: waiter
    image: busybox:1.36
    command: ["sh", "-c", "echo token=$TOKEN; sleep 3600"]
    env:
    - name: TOKEN
      valueFrom:
        secretKeyRef:
          name: late-secret
          key: token
`;

describe.each(LOG_ADAPTERS)('pod configuration on the process runtime, on the %s log', (adapter) => {
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
  const ok = async (...args: string[]): Promise<string> => {
    const result = await kubectl(...args);
    expect(result.stderr, args.join(' ')).toBe('');
    expect(result.code).toBe(0);
    return result.stdout;
  };
  const apply = async (name: string, manifest: string): Promise<void> => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, manifest);
    await ok('apply', '-f', file);
  };
  const pod = (name: string): Pod | undefined => cluster.projection.view().get(`Pod/default/${name}`) as Pod | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'e2e-pod-config-'));
    cluster = await startCluster({
      dataDir: dir,
      nodes: 1,
      runtime: 'process',
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      crashLoop: { initialMs: 500, maxMs: 2_000 },
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `e2e-pod-config-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a pod sees a configMap volume file, a secret env var, a fieldRef, envFrom and Service variables; a ConfigMap update reaches the file', async () => {
    await ok('create', 'configmap', 'app-config', '--from-literal=greeting=hello', '--from-literal=MODE=fast');
    await ok('create', 'secret', 'generic', 'app-secret', '--from-literal=password=s3cret');
    await ok('create', 'service', 'clusterip', 'backend', '--tcp=8080:8080');
    await apply('reader', READER);
    const line = await pollUntil('the reader\'s line', async () => {
      const logs = await kubectl('logs', 'reader');
      return logs.stdout.split('\n').find((l) => l.startsWith('greeting='));
    }, { timeoutMs: 60_000 });
    const service = cluster.projection.view().get('Service/default/backend') as { spec: { clusterIP: string } };
    expect(line).toBe(`greeting=hello password=s3cret pod=reader app=fast svc=8080 link=${service.spec.clusterIP}`);

    await ok('patch', 'configmap', 'app-config', '--type=merge', '-p', '{"data":{"greeting":"bonjour"}}');
    const updated = await pollUntil('the updated greeting', async () => {
      const logs = await kubectl('logs', 'reader', '--tail=1');
      return logs.stdout.includes('greeting=bonjour') ? logs.stdout : undefined;
    }, { timeoutMs: 60_000 });
    // The env var is read once, at the start; the file follows the ConfigMap.
    expect(updated).toContain('password=s3cret');
  }, 180_000);

  it('a container whose secret is missing waits with CreateContainerConfigError, then starts once the secret exists', async () => {
    await apply('waiter', WAITER);
    const waiting = await pollUntil('CreateContainerConfigError', async () => {
      const state = pod('waiter')?.status?.containerStatuses?.[0]?.state?.waiting;
      return state?.reason === 'CreateContainerConfigError' ? state : undefined;
    }, { timeoutMs: 60_000 });
    expect(waiting.message).toBe('secret "late-secret" not found');
    const listed = await ok('get', 'pod', 'waiter');
    expect(listed).toMatch(/waiter\s+0\/1\s+CreateContainerConfigError/);
    await ok('create', 'secret', 'generic', 'late-secret', '--from-literal=token=abc');
    const logs = await pollUntil('the waiter\'s token', async () => {
      const result = await kubectl('logs', 'waiter');
      return result.stdout.includes('token=abc') ? result.stdout : undefined;
    }, { timeoutMs: 60_000 });
    expect(logs).toBe('token=abc\n');
    // The process prints before the agent's status report of it is folded: wait for that.
    await pollUntil('the waiter Running', async () => pod('waiter')?.status?.phase === 'Running', { timeoutMs: 30_000 });
  }, 180_000);
});
