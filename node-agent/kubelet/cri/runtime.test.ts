/**
 * The `cri` pod runtime on a real containerd (see testing.ts): pods from the API's shape
 * run as containers in CNI sandboxes and report their status as kubelet would. Needs
 * root, as CI runs it. No mocks.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPodRuntime } from '../index.ts';
import { NO_POD_OBJECTS, type PodObjectChange, type PodObjectSource } from '../pod-objects.ts';
import type { PodRuntime } from '../runtime.ts';
import { condition, containerStatus, eventually, makePod, testLogger, waitForStatus } from '../testing.ts';
import { BUSYBOX_IMAGE, type TestContainerd, startTestContainerd } from './testing.ts';

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

describe('cri pod runtime on a real containerd', () => {
  let harness: TestContainerd;
  let runtime: PodRuntime;

  beforeAll(async () => {
    harness = await startTestContainerd();
    runtime = createPodRuntime({
      kind: 'cri',
      node: 'node-a',
      dataDir: join(harness.dir, 'agent'),
      cri: { endpoint: harness.containerd.endpoint, cgroupParent: harness.cgroupParent, pollMs: 100 },
      crashLoop: { initialMs: 200, maxMs: 1_000 },
      logger: testLogger,
    });
  });

  afterAll(async () => {
    await runtime?.close({ stopPods: true });
    await harness?.close();
  });

  it('runs a pod: Running with a CNI address, env, logs, memory limit, HTTP, usage from ContainerStats; a failing pod ends Failed with its exit code, a memory hog OOMKilled; removal cleans up', async () => {
    const web = makePod('web', [
      {
        name: 'app',
        image: BUSYBOX_IMAGE,
        command: ['sh', '-c'],
        args: ['echo "hi $GREETING"; exec httpd -f -p 8080 -h /www'],
        env: [{ name: 'GREETING', value: 'there' }],
        resources: { limits: { memory: '32Mi', cpu: '250m' } },
      },
    ], { terminationGracePeriodSeconds: 1 });
    const failing = makePod('failing', [{ name: 'job', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'echo done; exit 3'] }], { restartPolicy: 'Never' });
    // Holds 64 MiB in a shell variable under a 16 MiB limit: the kernel's OOM killer ends it.
    const hog = makePod('hog', [{ name: 'hog', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'x=$(head -c 67108864 /dev/zero | tr "\\0" a); echo survived'], resources: { limits: { memory: '16Mi' } } }], { restartPolicy: 'Never' });

    const started = performance.now();
    const running = waitForStatus(runtime, web, (u) => u.status.phase === 'Running' && condition(u, 'Ready') === 'True');
    const failed = waitForStatus(runtime, failing, (u) => u.status.phase === 'Failed');
    const oomKilled = waitForStatus(runtime, hog, (u) => u.status.phase === 'Failed');
    runtime.sync([web, failing, hog]);
    const webStatus = await running;
    const syncToRunningMs = performance.now() - started;

    expect(webStatus.status.podIP).toMatch(new RegExp(`^10\\.244\\.${harness.subnetOctet}\\.\\d+$`));
    const app = containerStatus(webStatus);
    expect(app).toMatchObject({ name: 'app', ready: true, restartCount: 0, image: BUSYBOX_IMAGE });
    expect(app.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(app.state?.running).toBeDefined();

    const containerId = app.containerID!.slice('containerd://'.length);
    const podCgroup = join(harness.cgroupParent, `pod${web.metadata.uid}`, containerId);
    expect(readFileSync(join('/sys/fs/cgroup/memory', podCgroup, 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(32 * 1024 * 1024));
    expect(readFileSync(join('/sys/fs/cgroup/cpu', podCgroup, 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('25000');

    expect(await eventually(() => harness.inNetns('busybox', 'wget', '-q', '-O', '-', `http://${webStatus.status.podIP}:8080/`))).toBe('busybox says hi\n');
    expect(await eventually(async () => {
      const text = await collect(runtime.logs('default', 'web', 'app', {}));
      if (text === '') throw new Error('no log yet');
      return text;
    })).toBe('hi there\n');

    // Resource usage from CRI ContainerStats (the metrics API's figures): the running httpd's cgroup.
    const usage = (await runtime.usage()).find((pod) => pod.name === 'web');
    expect(usage?.containers).toEqual([expect.objectContaining({ name: 'app', restartCount: 0 })]);
    expect(usage!.containers[0]!.cpuUsageNanoSeconds).toBeGreaterThan(0);
    expect(usage!.containers[0]!.memoryWorkingSetBytes).toBeGreaterThan(0);
    expect(usage!.containers[0]!.memoryWorkingSetBytes).toBeLessThanOrEqual(32 * 1024 * 1024);

    const failedStatus = await failed;
    expect(containerStatus(failedStatus).state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(await collect(runtime.logs('default', 'failing', 'job', {}))).toBe('done\n');
    expect(containerStatus(await oomKilled).state?.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });

    // The pods leave the desired set: containers stopped (httpd ignores SIGTERM as pid 1: killed after the 1 s grace), sandboxes removed.
    const stopped = performance.now();
    runtime.sync([]);
    await eventually(async () => {
      const left = await harness.containerd.cri.listPodSandboxes();
      if (left.length > 0) throw new Error(`${left.length} sandboxes left`);
    }, 20_000);
    const removeMs = performance.now() - stopped;
    expect(await harness.containerd.cri.listContainers()).toEqual([]);
    console.info('cri runtime figures:', { 'sync → Running and Ready (ms)': Math.round(syncToRunningMs), 'sync([]) → sandboxes removed (ms)': Math.round(removeMs) });
  });

  it('gives a container its variables and configMap volume from the agent\'s objects; after an agent restart, the adopted container\'s volume is rewritten and follows updates; removal takes the volumes away', async () => {
    let greeting = 'hello';
    const changes = new Subject<PodObjectChange>();
    const objects: PodObjectSource = {
      ...NO_POD_OBJECTS,
      configMap: (namespace, name) => (namespace === 'default' && name === 'cfg' ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { greeting } } : undefined),
      changes$: changes,
    };
    const dataDir = join(harness.dir, 'adopting');
    const open = () =>
      createPodRuntime({ kind: 'cri', node: 'node-a', dataDir, cri: { endpoint: harness.containerd.endpoint, cgroupParent: harness.cgroupParent, pollMs: 100 }, objects, logger: testLogger });
    const pod = makePod(
      'follower',
      [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', 'trap "exit 0" TERM; while :; do echo "$G `cat /cfg/greeting`"; sleep 0.2; done'],
          env: [{ name: 'G', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } }],
          volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }],
        },
      ],
      { volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }], terminationGracePeriodSeconds: 1 },
    );
    const lastLine = (runtime: PodRuntime, wanted: string) =>
      eventually(async () => {
        const line = (await collect(runtime.logs('default', 'follower', 'app', { tailLines: 1 }))).trim();
        if (line !== wanted) throw new Error(`last line ${JSON.stringify(line)}`);
      }, 30_000);

    const first = open();
    const running = waitForStatus(first, pod, (u) => u.status.phase === 'Running', 60_000);
    first.sync([pod]);
    await running;
    await lastLine(first, 'hello hello');
    await first.close();

    greeting = 'bonjour';
    const second = open();
    second.sync([pod]);
    // The variable was made when the container started; the adopted pod's volume is rewritten.
    await lastLine(second, 'hello bonjour');
    greeting = 'hallo';
    changes.next({ kind: 'ConfigMap', namespace: 'default', name: 'cfg' });
    await lastLine(second, 'hello hallo');

    second.sync([]);
    await eventually(async () => {
      const left = await harness.containerd.cri.listPodSandboxes();
      if (left.length > 0) throw new Error(`${left.length} sandboxes left`);
      const volumes = readdirSync(join(dataDir, 'volumes')).filter((entry) => entry !== '.key');
      if (volumes.length > 0) throw new Error(`volumes left: ${volumes.join(', ')}`);
    }, 20_000);
    await second.close();
  });

  it('passes the security context to containerd as kubelet does: runAsUser over the pod\'s, runAsGroup, fsGroup and supplementalGroups, no_new_privs, seccomp, read-only root, dropped capabilities; runAsNonRoot against the image\'s (root) user', async () => {
    const report = 'echo "$(id -u) $(id -g) $(id -G)"; grep -E "^(NoNewPrivs|Seccomp|CapEff):" /proc/self/status | tr -s "\\t" " "; touch /written 2>/dev/null && echo rw || echo ro';
    const secure = makePod(
      'secure',
      [
        {
          name: 'app',
          image: BUSYBOX_IMAGE,
          command: ['sh', '-c', report],
          securityContext: { runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
        },
      ],
      { restartPolicy: 'Never', securityContext: { runAsUser: 999, runAsGroup: 1000, fsGroup: 2000, supplementalGroups: [3000] } },
    );
    const nonRoot = makePod('nonroot', [{ name: 'app', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'echo started'], securityContext: { runAsNonRoot: true } }], { restartPolicy: 'Never' });
    const done = waitForStatus(runtime, secure, (u) => u.status.phase === 'Succeeded' || u.status.phase === 'Failed', 60_000);
    const refused = waitForStatus(runtime, nonRoot, (u) => containerStatus(u).state?.waiting?.reason === 'CreateContainerConfigError', 60_000);
    runtime.sync([secure, nonRoot]);
    expect((await done).status.phase).toBe('Succeeded');
    expect(await collect(runtime.logs('default', 'secure', 'app', {}))).toBe('1000 1000 1000 2000 3000\nCapEff: 0000000000000000\nNoNewPrivs: 1\nSeccomp: 2\nro\n');
    expect(containerStatus(await refused).state?.waiting?.message).toBe(`container has runAsNonRoot and image will run as root (pod: "nonroot_default(${nonRoot.metadata.uid})", container: app)`);
    runtime.sync([]);
    await eventually(async () => {
      const left = await harness.containerd.cri.listPodSandboxes();
      if (left.length > 0) throw new Error(`${left.length} sandboxes left`);
    }, 20_000);
  });
});
