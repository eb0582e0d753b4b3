/**
 * The CRI client against a real containerd (Debian `containerd` 1.6 + runc + CNI plugins,
 * installed by test/system-deps.sh), started by the test inside a network namespace the
 * test creates, so the CNI bridge and every packet stay there. Images are built locally
 * from busybox-static and imported with ctr (no registry is reachable). Needs root, as CI
 * runs it. No mocks.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../testing.ts';
import { type PodSandboxConfig, createCriClient } from './client.ts';
import type { Containerd } from './containerd.ts';
import { CriError } from './errors.ts';
import { BUSYBOX_IMAGE as BUSYBOX, type TestContainerd, startTestContainerd } from './testing.ts';

const MiB = 1024 * 1024;

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('CRI client on a real containerd', () => {
  const figures: Record<string, number> = {};
  let harness: TestContainerd;
  let containerd: Containerd;
  let dir: string;
  let bridgeName: string;
  let subnetOctet: number;
  let cgroupParent: string;

  beforeAll(async () => {
    harness = await startTestContainerd();
    ({ containerd, dir, bridgeName, subnetOctet, cgroupParent } = harness);
    figures['containerd start → CRI answers (ms)'] = harness.figures.startMs;
    figures['import of both images (ms)'] = harness.figures.importMs;
  });

  afterAll(async () => {
    console.info('CRI figures:', Object.fromEntries(Object.entries(figures).map(([name, ms]) => [name, Math.round(ms)])));
    await harness?.close();
  });

  it('reports containerd and the v1 API, and finds imported images', async () => {
    const version = await containerd.cri.version();
    expect(version).toMatchObject({ runtimeName: 'containerd', runtimeApiVersion: 'v1' });
    expect(version.runtimeVersion).toMatch(/^1\.6\./);

    const busybox = await containerd.cri.imageStatus(BUSYBOX);
    expect(busybox?.repoTags).toContain(BUSYBOX);
    expect(busybox?.id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(busybox?.sizeBytes).toBeGreaterThan(MiB);
    expect(await containerd.cri.imageStatus('docker.io/local/absent:1')).toBeUndefined();
  });

  it('maps gRPC failures to kubelet errors: NOT_FOUND terminal, UNAVAILABLE retriable', async () => {
    const missing = await rejection(containerd.cri.containerStatus('no-such-container'));
    expect(missing).toBeInstanceOf(CriError);
    expect(missing).toMatchObject({ code: 'NOT_FOUND', method: 'containerStatus', retriable: false });

    const badSandbox = await rejection(containerd.cri.createContainer('no-such-sandbox', { metadata: { name: 'c' }, image: { image: BUSYBOX } }, { metadata: { name: 'p', uid: 'u', namespace: 'default' } }));
    expect(badSandbox).toMatchObject({ code: 'NOT_FOUND', retriable: false });

    // A pull from a registry address where nothing listens (loopback of containerd's netns).
    const pull = await rejection(containerd.cri.pullImage('127.0.0.1:1/nothing:1'));
    expect(pull).toBeInstanceOf(CriError);
    expect(pull).toMatchObject({ method: 'pullImage' });
    expect((pull as CriError).message).toMatch(/connection refused/);

    const nowhere = createCriClient({ endpoint: join(dir, 'nobody-listens.sock'), callTimeoutMs: 2_000 });
    try {
      const unavailable = await rejection(nowhere.version());
      expect(unavailable).toMatchObject({ code: 'UNAVAILABLE', retriable: true });
    } finally {
      nowhere.close();
    }
  });

  it('runs a sandbox with a CNI address and a busybox container: logs, memory limit, exit code, stop, removal', async () => {
    const cri = containerd.cri;
    const uid = randomUUID();
    const logDirectory = join(dir, 'pods', uid);
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name: 'web', namespace: 'default', uid, attempt: 0 },
      hostname: 'web',
      logDirectory,
      labels: { 'io.kubernetes.pod.uid': uid },
      // As kubelet without shareProcessNamespace: each container has its own pid namespace.
      linux: { cgroupParent, securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    let started = performance.now();
    const sandboxId = await cri.runPodSandbox(sandboxConfig);
    figures['runPodSandbox (ms)'] = performance.now() - started;

    const sandbox = await cri.podSandboxStatus(sandboxId);
    expect(sandbox).toMatchObject({ id: sandboxId, name: 'web', namespace: 'default', uid, state: 'ready' });
    expect(sandbox.ip).toMatch(new RegExp(`^10\\.244\\.${subnetOctet}\\.\\d+$`));
    expect(sandbox.ip).not.toBe(`10.244.${subnetOctet}.1`); // the bridge's gateway address
    expect(existsSync(join(dir, 'cni-ipam', `logplane-${bridgeName}`, sandbox.ip!))).toBe(true);

    // Prints to both streams, serves HTTP in the background, and exits 7 once /tmp/stop exists.
    const script = 'echo "hello from $POD_NAME"; echo to-stderr >&2; httpd -p 8080 -h /www; while [ ! -e /tmp/stop ]; do sleep 0.05; done; echo bye; exit 7';
    started = performance.now();
    const containerId = await cri.createContainer(
      sandboxId,
      {
        metadata: { name: 'app', attempt: 0 },
        image: { image: BUSYBOX },
        command: ['sh', '-c'],
        args: [script],
        envs: [{ key: 'POD_NAME', value: 'web' }],
        logPath: 'app/0.log',
        labels: { 'io.kubernetes.container.name': 'app' },
        linux: { resources: { memoryLimitInBytes: 64 * MiB, cpuShares: 256 }, securityContext: { namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
      },
      sandboxConfig,
    );
    await cri.startContainer(containerId);
    figures['createContainer + startContainer (ms)'] = performance.now() - started;

    const running = await cri.containerStatus(containerId);
    expect(running).toMatchObject({ id: containerId, name: 'app', attempt: 0, image: BUSYBOX, logPath: join(logDirectory, 'app/0.log') });
    expect(running.state.type).toBe('running');
    expect(running.imageRef).toMatch(/sha256:/);
    expect(await cri.listContainers({ podSandboxId: sandboxId })).toEqual([expect.objectContaining({ id: containerId, podSandboxId: sandboxId, name: 'app', state: 'running' })]);

    // The container's memory cgroup (cgroupfs driver: <cgroupParent>/<id>) holds its limit and its processes.
    const memoryCgroup = join('/sys/fs/cgroup/memory', cgroupParent, containerId);
    expect(readFileSync(join(memoryCgroup, 'memory.limit_in_bytes'), 'utf8').trim()).toBe(String(64 * MiB));
    expect(readFileSync(join(memoryCgroup, 'cgroup.procs'), 'utf8').trim()).not.toBe('');
    expect(readFileSync(join('/sys/fs/cgroup/cpu', cgroupParent, containerId, 'cpu.shares'), 'utf8').trim()).toBe('256');

    // The log, in the CRI format, lines of both streams.
    const log = await eventually(async () => {
      const text = readFileSync(running.logPath, 'utf8');
      if (!text.includes('to-stderr')) throw new Error(`log so far: ${text}`);
      return text;
    });
    expect(log).toMatch(/^\S+ stdout F hello from web$/m);
    expect(log).toMatch(/^\S+ stderr F to-stderr$/m);

    // The pod answers on its CNI address, reached from containerd's network namespace.
    const page = await eventually(() => harness.inNetns('busybox', 'wget', '-q', '-O', '-', `http://${sandbox.ip}:8080/`));
    expect(page).toBe('busybox says hi\n');

    const exec = await cri.execSync(containerId, ['sh', '-c', 'echo "$POD_NAME in $(hostname)"; exit 3'], 10);
    expect(exec).toMatchObject({ exitCode: 3 });
    expect(exec.stdout.toString()).toBe('web in web\n');

    const stats = await cri.containerStats(containerId);
    expect(stats.id).toBe(containerId);
    expect(stats.memoryWorkingSetBytes).toBeGreaterThan(0);
    expect(stats.memoryWorkingSetBytes).toBeLessThanOrEqual(64 * MiB);

    // The container ends by itself: Exited with its exit code.
    await cri.execSync(containerId, ['touch', '/tmp/stop'], 10);
    const exited = await eventually(async () => {
      const status = await cri.containerStatus(containerId);
      if (status.state.type !== 'exited') throw new Error(`still ${status.state.type}`);
      return status.state;
    });
    expect(exited).toMatchObject({ type: 'exited', exitCode: 7, reason: 'Error' });
    if (exited.type === 'exited') expect(exited.finishedAt).toBeGreaterThanOrEqual(exited.startedAt);
    expect(readFileSync(running.logPath, 'utf8')).toMatch(/^\S+ stdout F bye$/m);

    // A second container that ignores SIGTERM: stopContainer kills it (SIGKILL, 137) after the grace period.
    const sleeperId = await cri.createContainer(
      sandboxId,
      { metadata: { name: 'sleeper', attempt: 0 }, image: { image: BUSYBOX }, command: ['sh', '-c', 'trap "" TERM; echo trapped; exec sleep 3600'], logPath: 'sleeper/0.log' },
      sandboxConfig,
    );
    await cri.startContainer(sleeperId);
    // Stop only once the shell ignores SIGTERM (StartContainer returns before it ran a line).
    await eventually(async () => {
      if (!/ stdout F trapped$/m.test(readFileSync(join(logDirectory, 'sleeper/0.log'), 'utf8'))) throw new Error('not trapped yet');
    });
    started = performance.now();
    await cri.stopContainer(sleeperId, 1);
    figures['stopContainer, 1 s grace, SIGTERM ignored (ms)'] = performance.now() - started;
    expect((await cri.containerStatus(sleeperId)).state).toMatchObject({ type: 'exited', exitCode: 137 });
    await cri.removeContainer(sleeperId);
    expect(await rejection(cri.containerStatus(sleeperId))).toMatchObject({ code: 'NOT_FOUND', retriable: false });
    await cri.removeContainer(sleeperId); // idempotent

    // Stop and remove the sandbox: its containers, cgroups, network namespace and address are gone.
    started = performance.now();
    await cri.stopPodSandbox(sandboxId);
    expect((await cri.podSandboxStatus(sandboxId)).state).toBe('notready');
    await cri.removePodSandbox(sandboxId);
    figures['stopPodSandbox + removePodSandbox (ms)'] = performance.now() - started;
    expect(await cri.listContainers({ podSandboxId: sandboxId })).toEqual([]);
    expect((await cri.listPodSandboxes()).map((s) => s.id)).not.toContain(sandboxId);
    expect(await rejection(cri.podSandboxStatus(sandboxId))).toMatchObject({ code: 'NOT_FOUND' });
    expect(existsSync(memoryCgroup)).toBe(false);
    expect(existsSync(join(dir, 'cni-ipam', `logplane-${bridgeName}`, sandbox.ip!))).toBe(false);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(sandboxId);
    await cri.removePodSandbox(sandboxId); // idempotent
  });
});
