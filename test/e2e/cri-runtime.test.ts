/**
 * `logplane up --runtime cri` against a real containerd, driven as a user would: the real
 * `logplane` command and the real kubectl. The test starts its own containerd (its own
 * root, socket and CNI bridge, inside a network namespace it creates; see
 * node-agent/kubelet/cri/testing.ts) with a busybox image built locally and imported; no
 * registry is contacted. Pods bound to the node run as containers in CNI sandboxes and
 * their status (Running, restarts, exit codes) and logs come back through the apiserver.
 * Needs root, as CI runs it. Traffic goes only to the apiserver on 127.0.0.1 and to pod
 * addresses inside the test's network namespace.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { type TestContainerd, startTestContainerd } from '../../node-agent/kubelet/cri/testing.ts';
import { type Daemon, LOGPLANE_BIN, cleanup, freePort, kubectl, ok, run, startDaemon, startLogplane, tempDir, waitFor } from './process.ts';

/** The locally imported busybox image, named as a user would (no registry host). */
const IMAGE = 'local/busybox:1';

describe('logplane up --runtime cri on a real containerd', { timeout: 240_000 }, () => {
  let harness: TestContainerd;
  const dataDir = tempDir('logplane-cri-e2e-');
  let up: Daemon;
  let kubeconfig = '';
  const kube = (...args: string[]) => kubectl(kubeconfig, join(dataDir, 'kube-cache'), args);
  const getPod = async (name: string): Promise<Pod> => JSON.parse(ok(await kube('get', 'pod', name, '-o', 'json'))) as Pod;
  const waitForPod = (name: string, what: string, predicate: (pod: Pod) => boolean, timeoutMs = 60_000): Promise<Pod> => {
    let last: Pod | undefined;
    return waitFor(
      `pod ${name}: ${what}`,
      async () => {
        last = await getPod(name);
        return predicate(last) ? last : undefined;
      },
      { timeoutMs, describe: () => JSON.stringify(last?.status) },
    );
  };
  /** This cluster's sandboxes in containerd, by pod name. */
  const sandboxesOf = async (name: string) => harness.containerd.cri.listPodSandboxes({ labelSelector: { 'io.kubernetes.pod.name': name } });
  const startUp = async (): Promise<Daemon> => {
    const port = await freePort();
    const daemon = startLogplane(
      'logplane up --runtime cri',
      ['up', '--data', dataDir, '--port', String(port), '--nodes', '1', '--proxy', 'none', '--runtime', 'cri',
        '--cri-endpoint', harness.containerd.endpoint, '--cri-cgroup-parent', harness.cgroupParent],
      { dataDir },
    );
    const [, path] = await daemon.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
    kubeconfig = path!;
    return daemon;
  };

  beforeAll(async () => {
    harness = await startTestContainerd();
    up = await startUp();
  });

  afterAll(async () => {
    try {
      if (up?.running()) await up.stop();
    } finally {
      await cleanup();
      await harness?.close();
    }
  });

  it('fails to start, naming the endpoint, when no CRI runtime answers there', async () => {
    const other = tempDir('logplane-cri-none-');
    const result = await run(process.execPath, [LOGPLANE_BIN, 'up', '--data', other, '--port', String(await freePort()), '--nodes', '1', '--proxy', 'none', '--runtime', 'cri', '--cri-endpoint', join(other, 'none.sock')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: cannot reach the CRI runtime at ${join(other, 'none.sock')}: there is no socket`);
  });

  it('runs `kubectl run` of a local image as a container: Running with a CNI address, serving, with its logs', async () => {
    expect(up.output().stdout).toContain('1 cri node(s)');
    ok(await kube('run', 'web', `--image=${IMAGE}`, '--command', '--', 'sh', '-c', 'echo "hello from $(hostname)"; exec httpd -f -p 8080 -h /www'));
    const pod = await waitForPod('web', 'Running and Ready', (p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true);
    expect(pod.status?.podIP).toMatch(new RegExp(`^10\\.244\\.${harness.subnetOctet}\\.\\d+$`));
    const container = pod.status?.containerStatuses?.[0];
    expect(container).toMatchObject({ name: 'web', ready: true, restartCount: 0, image: IMAGE, started: true });
    expect(container?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(container?.state?.running?.startedAt).toBeDefined();
    // The container is the one containerd runs, in the sandbox of this pod.
    const [sandbox] = await sandboxesOf('web');
    const containers = await harness.containerd.cri.listContainers({ podSandboxId: sandbox!.id });
    expect(containers.map((c) => `containerd://${c.id}`)).toEqual([container?.containerID]);
    expect(await waitFor('httpd answers in the pod network', () => harness.inNetns('busybox', 'wget', '-q', '-O', '-', `http://${pod.status?.podIP}:8080/`))).toBe('busybox says hi\n');
    expect(await waitFor('the log line', async () => ok(await kube('logs', 'web')) || undefined)).toBe('hello from web\n');
  });

  it('follows a container\'s output with `kubectl logs -f` until the container ends', async () => {
    ok(await kube('run', 'ticker', `--image=${IMAGE}`, '--restart=Never', '--command', '--', 'sh', '-c', 'for i in 1 2 3 4 5; do echo "tick $i"; sleep 0.3; done'));
    await waitForPod('ticker', 'Running', (p) => p.status?.phase === 'Running');
    const follow = startDaemon('kubectl logs -f ticker', 'kubectl', ['--cache-dir', join(dataDir, 'kube-cache'), 'logs', '-f', 'ticker'], { env: { KUBECONFIG: kubeconfig } });
    await follow.waitForOutput(/tick 1\n/, 30_000);
    const ended = await follow.exited;
    expect(ended.code).toBe(0);
    expect(follow.output().stdout).toBe('tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n');
    await waitForPod('ticker', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
  });

  it('restarts a crashing container and reports its exit code; `kubectl logs --previous` shows the crashed instance', async () => {
    ok(await kube('run', 'crash', `--image=${IMAGE}`, '--command', '--', 'sh', '-c', 'echo "attempt $(cat /proc/sys/kernel/random/uuid)"; exit 3'));
    const pod = await waitForPod('crash', 'restarted after exit 3', (p) => {
      const c = p.status?.containerStatuses?.[0];
      return (c?.restartCount ?? 0) >= 1 && c?.lastState?.terminated?.exitCode === 3;
    });
    const container = pod.status?.containerStatuses?.[0];
    expect(container?.lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(container?.lastState?.terminated?.containerID).toMatch(/^containerd:\/\//);
    const previous = ok(await kube('logs', 'crash', '--previous'));
    expect(previous).toMatch(/^attempt [0-9a-f-]{36}\n$/);
    // The backoff after the second exit: CrashLoopBackOff, as kubelet reports it.
    await waitForPod('crash', 'CrashLoopBackOff', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff');
  });

  it('ends restartPolicy Never pods Succeeded (exit 0) or Failed (exit 7) with their exit codes', async () => {
    ok(await kube('run', 'done', `--image=${IMAGE}`, '--restart=Never', '--command', '--', 'sh', '-c', 'echo finished'));
    ok(await kube('run', 'fail', `--image=${IMAGE}`, '--restart=Never', '--command', '--', 'sh', '-c', 'exit 7'));
    const done = await waitForPod('done', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    expect(done.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(ok(await kube('logs', 'done'))).toBe('finished\n');
    const failed = await waitForPod('fail', 'Failed', (p) => p.status?.phase === 'Failed');
    expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 7, reason: 'Error' });
  });

  it('reports an image that is not there and may not be pulled as ErrImageNeverPull, the pod Pending', async () => {
    ok(await kube('run', 'absent', '--image=local/absent:1', '--image-pull-policy=Never', '--restart=Never'));
    const pod = await waitForPod('absent', 'ErrImageNeverPull', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ErrImageNeverPull');
    expect(pod.status?.phase).toBe('Pending');
    expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.message).toMatch(/image "local\/absent:1" is not present with pull policy Never/);
    ok(await kube('delete', 'pod', 'absent', '--wait=true'));
  });

  it('runs a Deployment of the image, and removes a deleted pod\'s sandbox', async () => {
    // sh as pid 1 ignores SIGTERM unless it traps it: with the trap, stopping takes a second, not the 30 s grace.
    ok(await kube('create', 'deployment', 'sleepers', `--image=${IMAGE}`, '--replicas=2', '--', 'sh', '-c', 'trap "exit 0" TERM; while :; do sleep 1; done'));
    const running = await waitFor('2 running sleepers', async () => {
      const pods = (JSON.parse(ok(await kube('get', 'pods', '-l', 'app=sleepers', '-o', 'json'))) as { items: Pod[] }).items;
      return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running') && pods;
    });
    expect(new Set(running.map((p) => p.status?.podIP)).size).toBe(2);

    expect(await sandboxesOf('web')).toHaveLength(1);
    ok(await kube('delete', 'pod', 'web', '--grace-period=1', '--wait=true'));
    await waitFor('the sandbox of web removed', async () => (await sandboxesOf('web')).length === 0);
  });

  it('runs a preStop exec hook in the container through ExecSync before a liveness kill\'s SIGTERM', async () => {
    const manifest = join(dataDir, 'prestop.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'hooked' },
        spec: {
          containers: [
            {
              name: 'main',
              image: IMAGE,
              command: ['sh', '-c', 'echo started; trap "echo got TERM; exit 0" TERM; while :; do sleep 0.2; done'],
              // Fails from its first attempt after 2 s: the kubelet kills the container, running preStop first.
              livenessProbe: { exec: { command: ['false'] }, initialDelaySeconds: 2, periodSeconds: 1, failureThreshold: 1 },
              // The hook writes to the container's own stdout (pid 1's), so it lands in the container's log.
              lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo preStop ran >/proc/1/fd/1'] } } },
            },
          ],
        },
      }),
    );
    ok(await kube('apply', '-f', manifest));
    await waitForPod('hooked', 'restarted after the liveness kill', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    expect(ok(await kube('logs', 'hooked', '--previous'))).toBe('started\npreStop ran\ngot TERM\n');
    ok(await kube('delete', 'pod', 'hooked', '--grace-period=1', '--wait=true'));
  });

  it('runs a postStart exec hook in the container through ExecSync; a failing one gets the container killed and restarted', async () => {
    const manifest = join(dataDir, 'poststart.json');
    const pod = (name: string, hook: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'main', image: IMAGE, command: ['sh', '-c', 'trap "exit 0" TERM; while :; do sleep 0.2; done'], lifecycle: { postStart: { exec: { command: ['sh', '-c', hook] } } } },
        ],
      },
    });
    writeFileSync(manifest, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('poststart', 'echo postStart ran >/proc/1/fd/1'), pod('badstart', 'exit 5')] }));
    ok(await kube('apply', '-f', manifest));
    await waitForPod('poststart', 'Running', (p) => p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.state?.running != null);
    expect(await waitFor('the hook\'s line in the log', async () => ok(await kube('logs', 'poststart')) || undefined)).toBe('postStart ran\n');
    await waitForPod('badstart', 'restarted after its postStart hook failed', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1);
    const events = ok(await kube('get', 'events', '--field-selector', 'involvedObject.name=badstart', '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}'));
    expect(events.split('\n')).toContain('FailedPostStartHook');
    ok(await kube('delete', 'pod', 'poststart', 'badstart', '--grace-period=1', '--wait=true'));
  });

  it('kubectl top pods shows a container burning a core at >= 800m and one holding 110 MiB at >= 100Mi, from CRI ContainerStats', async () => {
    ok(await kube('run', 'burner', `--image=${IMAGE}`, '--command', '--', 'sh', '-c', 'trap "exit 0" TERM; while :; do :; done'));
    ok(await kube('run', 'holder', `--image=${IMAGE}`, '--command', '--', 'sh', '-c', 'x=$(head -c 115343360 /dev/zero | tr "\\0" a); trap "exit 0" TERM; while :; do sleep 1; done'));
    await waitForPod('burner', 'Running', (p) => p.status?.phase === 'Running');
    await waitForPod('holder', 'Running', (p) => p.status?.phase === 'Running');
    // The machine running the tests may be busy: the pods' cgroup parent gets the highest CPU
    // weight for this test, so that the burner really burns a core.
    const shares = join('/sys/fs/cgroup/cpu', harness.cgroupParent, 'cpu.shares');
    const sharesBefore = readFileSync(shares, 'utf8').trim();
    writeFileSync(shares, '262144');
    try {
      let last = '';
      // Sampled every 15 s (the default resolution): figures after the second sample.
      await waitFor(
        'the burner at >= 800m and the holder at >= 100Mi',
        async () => {
          const result = await kube('top', 'pods', '--no-headers');
          last = `${result.stdout}${result.stderr}`;
          const rows = new Map(result.stdout.trim().split('\n').map((line) => line.trim().split(/\s+/)).map(([name = '', cpu = '', memory = ''] ) => [name, { cpu, memory }]));
          const burner = rows.get('burner');
          const holder = rows.get('holder');
          const millicores = burner ? Number(/^(\d+)m$/.exec(burner.cpu)?.[1] ?? Number(burner.cpu) * 1000) : 0;
          const mebibytes = holder ? Number(/^(\d+)Mi$/.exec(holder.memory)?.[1] ?? 0) : 0;
          return millicores >= 800 && mebibytes >= 100;
        },
        { timeoutMs: 90_000, intervalMs: 2_000, describe: () => last },
      );
    } finally {
      writeFileSync(shares, sharesBefore);
    }
    expect(ok(await kube('top', 'nodes', '--no-headers'))).toMatch(/^\S+\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/);
    ok(await kube('delete', 'pod', 'burner', 'holder', '--grace-period=1', '--wait=true'));
  });

  it('after a crash of `logplane up`, a new run adopts the sandboxes and containers (exits included), removes an unrecorded sandbox; Ctrl-C stops every container', async () => {
    const sleepersOf = async () => (JSON.parse(ok(await kube('get', 'pods', '-l', 'app=sleepers', '-o', 'json'))) as { items: Pod[] }).items;
    const sleepers = await sleepersOf();
    const before = new Map(sleepers.map((p) => [p.metadata.name, p.status?.containerStatuses?.[0]?.containerID]));
    const crashRestarts = (await getPod('crash')).status?.containerStatuses?.[0]?.restartCount ?? 0;
    // Pods deleted by earlier tests are gone from the API before their sandboxes are removed:
    // wait until every sandbox belongs to a pod that exists, so no removal is still under way.
    const podUids = new Set((JSON.parse(ok(await kube('get', 'pods', '-o', 'json'))) as { items: Pod[] }).items.map((p) => p.metadata.uid));
    await waitFor('only the sandboxes of existing pods', async () => (await harness.containerd.cri.listPodSandboxes()).every((s) => podUids.has(s.uid)));
    const sandboxesBefore = (await harness.containerd.cri.listPodSandboxes()).map((s) => s.id).sort();
    up.kill();
    await up.exited;
    // The killed run's containers are still there: nothing stopped them.
    expect((await harness.containerd.cri.listPodSandboxes()).map((s) => s.id).sort()).toEqual(sandboxesBefore);
    // A sandbox of this agent that it never recorded (as if its run died between RunPodSandbox and the record).
    const agentLabel = createHash('sha256').update(join(dataDir, 'nodes', 'node-1')).digest('hex').slice(0, 16);
    const orphan = await harness.containerd.cri.runPodSandbox({
      metadata: { name: 'orphan', namespace: 'default', uid: 'orphan-uid', attempt: 0 },
      labels: { 'logplane.io/agent': agentLabel },
      logDirectory: join(dataDir, 'orphan-logs'),
      linux: { cgroupParent: join(harness.cgroupParent, 'podorphan-uid') },
    });
    // One sleeper's container exits while no agent runs.
    const [stoppedPod, keptPod] = sleepers;
    await harness.containerd.cri.stopContainer(before.get(stoppedPod!.metadata.name)!.slice('containerd://'.length), 0);

    up = await startUp();
    await waitFor('the unrecorded sandbox removed', async () => !(await harness.containerd.cri.listPodSandboxes()).some((s) => s.id === orphan));
    // The exit that happened meanwhile is reported (with the runtime's exit code) and the container restarts in the same sandbox.
    const restarted = await waitForPod(stoppedPod!.metadata.name, 'restarted after its exit', (p) => p.status?.containerStatuses?.[0]?.restartCount === 1 && p.status.containerStatuses[0].state?.running != null);
    expect(restarted.status?.containerStatuses?.[0]?.lastState?.terminated).toMatchObject({ exitCode: 137, containerID: before.get(stoppedPod!.metadata.name) });
    // The crash loop goes on where it was, under the new run.
    await waitForPod('crash', 'restarted by the new run', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) > crashRestarts);
    const kept = await getPod(keptPod!.metadata.name);
    expect(kept.status?.containerStatuses?.[0]).toMatchObject({ restartCount: 0, containerID: before.get(keptPod!.metadata.name), state: { running: expect.anything() } });
    // Every sandbox is the old one: adopted, not recreated.
    expect((await harness.containerd.cri.listPodSandboxes()).map((s) => s.id).sort()).toEqual(sandboxesBefore);

    const stopped = await up.stop();
    expect(stopped.code).toBe(0);
    expect(await harness.containerd.cri.listPodSandboxes()).toEqual([]);
    expect(await harness.containerd.cri.listContainers()).toEqual([]);
  });
});
