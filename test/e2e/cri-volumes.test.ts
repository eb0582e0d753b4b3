/**
 * Volumes and environment of CRI pods, with the real kubectl against `logplane up --runtime
 * cri` and the test's own containerd (test/e2e/cri-host.ts; everything in the network
 * namespace the harness creates). The agent prepares each volume on the host (the same code
 * as the process runtime's) and gives the container CRI mounts; what the containers print
 * shows what they see: a configMap volume file and a subPath of it, a secret env var, envFrom,
 * fieldRef, resourceFieldRef, `$(VAR)` in the command, Service variables; a ConfigMap update
 * reaching the mounted file (the atomic writer's swap) but not the subPath mount (as in kube);
 * an emptyDir shared by two containers, filled first by an init container; a subPath
 * directory; a readOnly mount refusing a write; kubelet's /etc/hosts; termination messages.
 * Needs root, as CI runs it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { type CriHost, startCriHost } from './cri-host.ts';
import { ok, tempDir, waitFor } from './process.ts';

const READER = `apiVersion: v1
kind: Pod
metadata:
  name: reader
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: reader
    image: local/busybox:1
    command: ["sh", "-c", "trap 'exit 0' TERM; while :; do echo \\"greeting=\`cat /config/greeting\` sub=\`cat /etc/greeting\` password=$PASSWORD pod=$(MY_NAME) app=$APP_MODE mem=$MEM svc=$BACKEND_SERVICE_PORT\\"; sleep 0.3; done"]
    resources:
      limits:
        memory: 64Mi
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
    - name: MEM
      valueFrom:
        resourceFieldRef:
          resource: limits.memory
          divisor: 1Mi
    - name: ABSENT
      valueFrom:
        configMapKeyRef:
          name: app-config
          key: absent
          optional: true
    envFrom:
    - prefix: APP_
      configMapRef:
        name: app-config
    volumeMounts:
    - name: config
      mountPath: /config
    - name: config
      mountPath: /etc/greeting
      subPath: greeting
  volumes:
  - name: config
    configMap:
      name: app-config
`;

const SHARED = `apiVersion: v1
kind: Pod
metadata:
  name: shared
spec:
  restartPolicy: Never
  initContainers:
  - name: init
    image: local/busybox:1
    command: ["sh", "-c", "echo written by init > /work/init.txt; mkdir /work/sub; echo in sub > /work/sub/file"]
    volumeMounts:
    - name: work
      mountPath: /work
  containers:
  - name: writer
    image: local/busybox:1
    command: ["sh", "-c", "echo written by writer > /work/writer.txt"]
    volumeMounts:
    - name: work
      mountPath: /work
  - name: reader
    image: local/busybox:1
    command: ["sh", "-c", "cat /shared/init.txt; until [ -f /shared/writer.txt ]; do sleep 0.1; done; cat /shared/writer.txt; cat /sub/file; touch /shared/mine 2>&1; grep -v '^#' /etc/hosts | tail -n 1"]
    volumeMounts:
    - name: work
      mountPath: /shared
      readOnly: true
    - name: work
      mountPath: /sub
      subPath: sub
  volumes:
  - name: work
    emptyDir: {}
`;

const ENDINGS = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: told
  spec:
    restartPolicy: Never
    containers:
    - name: main
      image: local/busybox:1
      command: ["sh", "-c", "echo not this; echo -n 'disk full' > /dev/termination-log; exit 3"]
- apiVersion: v1
  kind: Pod
  metadata:
    name: fallback
  spec:
    restartPolicy: Never
    containers:
    - name: main
      image: local/busybox:1
      terminationMessagePath: /tmp/why
      terminationMessagePolicy: FallbackToLogsOnError
      command: ["sh", "-c", "echo first; echo last; exit 2"]
`;

describe('volumes and env of pods on the cri runtime', { timeout: 240_000 }, () => {
  const dataDir = tempDir('logplane-cri-vol-');
  let host: CriHost;
  const kube = (...args: string[]) => host.kube(...args);
  const apply = async (name: string, manifest: string) => {
    const file = join(dataDir, `${name}.yaml`);
    writeFileSync(file, manifest);
    ok(await kube('apply', '-f', file));
  };
  const getPod = async (name: string): Promise<Pod> => JSON.parse(ok(await kube('get', 'pod', name, '-o', 'json'))) as Pod;

  beforeAll(async () => {
    host = await startCriHost({ dataDir, nodes: 1 });
  });

  afterAll(async () => {
    await host?.close();
  });

  it('a container sees a configMap volume file (and a subPath of it), a secret env var, envFrom, fieldRef, resourceFieldRef and Service variables; a ConfigMap update reaches the mounted file, not the subPath', async () => {
    ok(await kube('create', 'configmap', 'app-config', '--from-literal=greeting=hello', '--from-literal=MODE=fast'));
    ok(await kube('create', 'secret', 'generic', 'app-secret', '--from-literal=password=s3cret'));
    ok(await kube('create', 'service', 'clusterip', 'backend', '--tcp=8080:8080'));
    await apply('reader', READER);
    const line = await waitFor('the reader\'s line', async () => ok(await kube('logs', 'reader', '--tail=1')).trim() || undefined);
    expect(line).toBe('greeting=hello sub=hello password=s3cret pod=reader app=fast mem=64 svc=8080');
    expect((await getPod('reader')).status?.phase).toBe('Running');

    ok(await kube('patch', 'configmap', 'app-config', '--type=merge', '-p', '{"data":{"greeting":"bonjour"}}'));
    const updated = await waitFor('the updated greeting', async () => {
      const last = ok(await kube('logs', 'reader', '--tail=1')).trim();
      return last.startsWith('greeting=bonjour') ? last : undefined;
    });
    // The variables were made at the start; a subPath mount keeps the file it was given (kube documents both).
    expect(updated).toBe('greeting=bonjour sub=hello password=s3cret pod=reader app=fast mem=64 svc=8080');
    ok(await kube('delete', 'pod', 'reader', '--wait=true'));
  });

  it('an init container fills an emptyDir before the app containers start; two containers share it; a subPath directory; a readOnly mount refuses a write; /etc/hosts names the pod', async () => {
    await apply('shared', SHARED);
    const pod = await waitFor('shared Succeeded', async () => {
      const seen = await getPod('shared');
      return seen.status?.phase === 'Succeeded' ? seen : undefined;
    });
    const init = pod.status?.initContainerStatuses?.[0]?.state?.terminated;
    expect(init).toMatchObject({ exitCode: 0, reason: 'Completed' });
    for (const status of pod.status?.containerStatuses ?? []) {
      expect(status.state?.terminated?.exitCode, status.name).toBe(0);
      expect(Date.parse(status.state?.terminated?.startedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(init?.finishedAt ?? ''));
    }
    expect(ok(await kube('logs', 'shared', '-c', 'reader'))).toBe(
      `written by init\nwritten by writer\nin sub\ntouch: /shared/mine: Read-only file system\n${pod.status?.podIP}\tshared\n`,
    );
    ok(await kube('delete', 'pod', 'shared', '--wait=true'));
  });

  it('reports termination messages: the file at terminationMessagePath, or the log\'s last lines with FallbackToLogsOnError', async () => {
    await apply('endings', ENDINGS);
    const ended = async (name: string) =>
      waitFor(`${name} Failed`, async () => {
        const seen = await getPod(name);
        return seen.status?.phase === 'Failed' ? seen.status.containerStatuses?.[0]?.state?.terminated : undefined;
      });
    expect(await ended('told')).toMatchObject({ exitCode: 3, reason: 'Error', message: 'disk full' });
    expect(await ended('fallback')).toMatchObject({ exitCode: 2, reason: 'Error', message: 'first\nlast\n' });
    ok(await kube('delete', 'pod', 'told', 'fallback', '--wait=true'));
  });
});
