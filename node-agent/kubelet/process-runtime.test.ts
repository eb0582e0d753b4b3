import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeletNotFoundError, createPodRuntime } from './index.ts';
import type { PodStatusUpdate } from './pod-driver.ts';
import type { Container, Pod } from '../../schemas/index.ts';
import { readPodRecords } from './pod-records.ts';
import { isAlive, readProcStart } from './proc.ts';
import type { PodRuntime, PodRuntimeOptions } from './runtime.ts';
import { condition, containerStatus, eventually, makePod, pidOf, sharedDir, tempDir, testLogger, waitForStatus } from './testing.ts';

const runtimes: PodRuntime[] = [];

function processRuntime(dataDir = tempDir(), extra: Partial<PodRuntimeOptions> = {}): PodRuntime {
  const runtime = createPodRuntime({
    kind: 'process',
    node: 'node-a',
    dataDir,
    logger: testLogger,
    crashLoop: { initialMs: 200, maxMs: 2000 },
    probeSecondMs: 100,
    adoptedCheckMs: 100,
    ...extra,
  });
  runtimes.push(runtime);
  return runtime;
}

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ stopPods: true })));
});

/** An echo container whose readiness means "listening". */
const echo = (extra: Partial<Container> = {}): Container => ({
  name: 'web',
  image: 'logplane/echo',
  ports: [{ name: 'http', containerPort: 8080 }],
  readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
  ...extra,
});

/** A sleeper container that is ready once its SIGTERM handler is installed. */
const sleeper = (dir: string, env: Record<string, string> = {}): Container => {
  const readyFile = join(dir, `ready-${Math.random().toString(36).slice(2)}`);
  return {
    name: 'sleep',
    image: 'logplane/sleeper',
    env: [{ name: 'READY_FILE', value: readyFile }, ...Object.entries(env).map(([name, value]) => ({ name, value }))],
    readinessProbe: { exec: { command: ['test', '-f', readyFile] }, periodSeconds: 1, failureThreshold: 1 },
  };
};

const isReady = (update: PodStatusUpdate) => containerStatus(update).ready;

async function collect(iterable: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of iterable) text += chunk;
  return text;
}

/** Pids of live processes whose environment has POD_UID=uid (duplicates would show here). */
function pidsOfPod(uid: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`POD_UID=${uid}`) && readProcStart(Number(pid)) !== null;
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function get(url: string, init?: RequestInit): Promise<string> {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.text();
}

describe('process runtime', () => {
  it('runs the echo image on its own pod IP, answering with the pod name', async () => {
    const runtime = processRuntime();
    const a = makePod('echo-a', [echo()]);
    const b = makePod('echo-b', [echo({ readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } })]);
    runtime.sync([a, b]);
    const readyA = await waitForStatus(runtime, a, isReady);
    const readyB = await waitForStatus(runtime, b, isReady);
    expect(readyA.status.podIP).toMatch(/^127\.100\.\d+\.\d+$/);
    expect(readyA.status.podIP).not.toBe(readyB.status.podIP);
    expect(readyA.status).toMatchObject({ phase: 'Running', hostIP: '127.0.0.1', podIPs: [{ ip: readyA.status.podIP }] });
    expect(condition(readyA, 'Ready')).toBe('True');
    expect(condition(readyA, 'ContainersReady')).toBe('True');
    expect(condition(readyA, 'PodScheduled')).toBe('True');
    expect(condition(readyA, 'Initialized')).toBe('True');
    expect(containerStatus(readyA)).toMatchObject({ name: 'web', started: true, restartCount: 0, state: { running: {} }, imageID: 'logplane-builtin://logplane/echo' });
    expect(await get(`http://${readyA.status.podIP}:8080/`)).toBe('echo-a\n');
    expect(await get(`http://${readyB.status.podIP}:8080/`)).toBe('echo-b\n');
  });

  it('restarts a SIGKILLed container: restartCount 1, lastState 137, answers again', async () => {
    const runtime = processRuntime();
    const pod = makePod('echo-kill', [echo()]);
    runtime.sync([pod]);
    const ready = await waitForStatus(runtime, pod, isReady);
    const pid = pidOf(containerStatus(ready));
    process.kill(pid, 'SIGKILL');
    const restarted = await waitForStatus(runtime, pod, (u) => containerStatus(u).restartCount === 1 && containerStatus(u).ready);
    const status = containerStatus(restarted);
    expect(pidOf(status)).not.toBe(pid);
    expect(status.lastState?.terminated).toMatchObject({ exitCode: 137, signal: 9, reason: 'Error', containerID: `process://${pid}` });
    expect(restarted.status.podIP).toBe(ready.status.podIP);
    expect(await eventually(() => get(`http://${restarted.status.podIP}:8080/`))).toBe('echo-kill\n');
  });

  it('puts a crashing container (restartPolicy Always) in CrashLoopBackOff with growing delays', async () => {
    const runtime = processRuntime();
    const pod = makePod('crashy', [{ name: 'crash', image: 'logplane/crasher', env: [{ name: 'EXIT_CODE', value: '3' }, { name: 'EXIT_AFTER_MS', value: '20' }] }]);
    const startedAt = new Map<number, number>();
    const backoffMessages: string[] = [];
    const subscription = runtime.statuses$.subscribe((update) => {
      const status = containerStatus(update);
      if (status.state?.running != null && !startedAt.has(status.restartCount)) startedAt.set(status.restartCount, Date.now());
      if (status.state?.waiting?.reason === 'CrashLoopBackOff') backoffMessages.push(status.state.waiting.message ?? '');
    });
    runtime.sync([pod]);
    const fifth = await waitForStatus(runtime, pod, (u) => containerStatus(u).restartCount === 5 && containerStatus(u).state?.running != null);
    subscription.unsubscribe();
    const gaps = [1, 2, 3, 4, 5].map((n) => (startedAt.get(n) as number) - (startedAt.get(n - 1) as number));
    // Restarts: immediately, then after 200, 400, 800, 1600 ms (plus the time each instance runs).
    expect(gaps[1]).toBeGreaterThanOrEqual(200);
    expect(gaps[2]).toBeGreaterThanOrEqual(400);
    expect(gaps[3]).toBeGreaterThanOrEqual(800);
    expect(gaps[4]).toBeGreaterThanOrEqual(1600);
    for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1] as number);
    expect(backoffMessages[0]).toMatch(/^back-off 200ms restarting failed container=crash pod=crashy_default\(/);
    expect(backoffMessages).toContain(backoffMessages.find((m) => m.startsWith('back-off 1.6s')));
    expect(fifth.status.phase).toBe('Running');
    expect(containerStatus(fifth).lastState?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  it('fails a pod with restartPolicy Never and reports the exit code', async () => {
    const runtime = processRuntime();
    const pod = makePod('crash-once', [{ name: 'crash', image: 'logplane/crasher', args: ['--exit-code', '7'] }], { restartPolicy: 'Never' });
    runtime.sync([pod]);
    const failed = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Failed');
    expect(containerStatus(failed)).toMatchObject({ restartCount: 0, ready: false, started: false, state: { terminated: { exitCode: 7, reason: 'Error' } } });
    expect(condition(failed, 'Ready')).toBe('False');
    expect(failed.status.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('PodCompleted');
  });

  it('runs the init containers to completion, in order, before the app container', async () => {
    const runtime = processRuntime();
    const step = (name: string): Container => ({ name, image: 'logplane/crasher', env: [{ name: 'EXIT_CODE', value: '0' }, { name: 'EXIT_AFTER_MS', value: '200' }] });
    const pod = makePod('inits', [echo()], { initContainers: [step('first'), step('second')] });
    const seen: string[] = [];
    const subscription = runtime.statuses$.subscribe((update) => {
      if (update.uid !== pod.metadata.uid) return;
      const states = [...(update.status.initContainerStatuses ?? []), ...(update.status.containerStatuses ?? [])].map((c) => `${c.name}:${c.state?.running ? 'running' : (c.state?.terminated?.reason ?? c.state?.waiting?.reason)}`);
      if (seen.at(-1) !== states.join(' ')) seen.push(states.join(' '));
    });
    runtime.sync([pod]);
    const ready = await waitForStatus(runtime, pod, isReady);
    subscription.unsubscribe();
    expect(ready.status.phase).toBe('Running');
    expect(ready.status.initContainerStatuses?.map((c) => [c.name, c.state?.terminated?.exitCode, c.state?.terminated?.reason])).toEqual([['first', 0, 'Completed'], ['second', 0, 'Completed']]);
    expect(condition(ready, 'Initialized')).toBe('True');
    // Never two at once, never the app before both init containers completed.
    expect(seen).toContain('first:running second:PodInitializing web:PodInitializing');
    expect(seen).toContain('first:Completed second:running web:PodInitializing');
    expect(seen.some((line) => line.includes('web:running') && !line.startsWith('first:Completed second:Completed'))).toBe(false);
  });

  it('fails a restartPolicy Never pod whose init container fails; its app container never starts', async () => {
    const runtime = processRuntime();
    const pod = makePod('init-fails', [echo()], { restartPolicy: 'Never', initContainers: [{ name: 'check', image: 'logplane/crasher', args: ['--exit-code', '3'] }] });
    runtime.sync([pod]);
    const failed = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Failed');
    expect(failed.status.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(containerStatus(failed).state).toEqual({ waiting: { reason: 'PodInitializing' } });
    expect(failed.status.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [check]' });
  });

  it('keeps a sidecar running beside the app container, and stops it once a Never pod\'s app container is done', async () => {
    const runtime = processRuntime();
    const pod = makePod('with-sidecar', [{ name: 'task', image: 'logplane/crasher', env: [{ name: 'EXIT_CODE', value: '0' }, { name: 'EXIT_AFTER_MS', value: '1500' }] }], {
      restartPolicy: 'Never',
      initContainers: [{ ...echo({ name: 'proxy' }), restartPolicy: 'Always' }],
    });
    runtime.sync([pod]);
    const both = await waitForStatus(runtime, pod, (u) => containerStatus(u).state?.running != null && u.status.initContainerStatuses?.[0]?.state?.running != null);
    expect(both.status.phase).toBe('Running');
    const done = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Succeeded');
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(done.status.initContainerStatuses?.[0]?.state?.terminated).toBeDefined();
  });

  it('completes a pod with restartPolicy OnFailure whose container exits 0', async () => {
    const runtime = processRuntime();
    const pod = makePod('job', [{ name: 'task', image: 'logplane/crasher', env: [{ name: 'EXIT_CODE', value: '0' }] }], { restartPolicy: 'OnFailure' });
    runtime.sync([pod]);
    const done = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Succeeded');
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('follows the readiness probe: ready false while /healthz fails, true again when it passes', async () => {
    const runtime = processRuntime();
    const pod = makePod('echo-ready', [echo()]);
    runtime.sync([pod]);
    const ready = await waitForStatus(runtime, pod, isReady);
    const base = `http://${ready.status.podIP}:8080`;
    await get(`${base}/fail-readiness`, { method: 'POST' });
    const unready = await waitForStatus(runtime, pod, (u) => !containerStatus(u).ready);
    expect(unready.status.phase).toBe('Running');
    expect(condition(unready, 'Ready')).toBe('False');
    expect(unready.status.conditions?.find((c) => c.type === 'ContainersReady')?.message).toBe('containers with unready status: [web]');
    await get(`${base}/pass-readiness`, { method: 'POST' });
    const readyAgain = await waitForStatus(runtime, pod, (u) => containerStatus(u).ready);
    expect(condition(readyAgain, 'Ready')).toBe('True');
    expect(containerStatus(readyAgain).restartCount).toBe(0);
  });

  it('readiness also follows the READINESS_FAIL_FILE of the echo image', async () => {
    const dir = sharedDir();
    const failFile = join(dir, 'fail');
    const runtime = processRuntime();
    const pod = makePod('echo-file', [echo({ env: [{ name: 'READINESS_FAIL_FILE', value: failFile }] })]);
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    writeFileSync(failFile, '');
    await waitForStatus(runtime, pod, (u) => !containerStatus(u).ready);
  });

  it('kills and restarts a container whose liveness probe fails', async () => {
    const runtime = processRuntime();
    // The startup probe holds the liveness probe back until the server listens: on a loaded
    // machine `node` can take longer to start than the liveness probe's two failures.
    const live = makePod('echo-live', [
      echo({
        startupProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1, failureThreshold: 60 },
        livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1, failureThreshold: 2 },
      }),
    ]);
    const recorded: string[] = [];
    const subscription = runtime.events$.subscribe((event) => recorded.push(`${event.reason}: ${event.message}`));
    runtime.sync([live]);
    const ready = await waitForStatus(runtime, live, isReady);
    expect(containerStatus(ready).restartCount).toBe(0);
    await get(`http://${ready.status.podIP}:8080/fail-readiness`, { method: 'POST' });
    const restarted = await waitForStatus(runtime, live, (u) => containerStatus(u).restartCount === 1 && containerStatus(u).ready);
    expect(containerStatus(restarted).lastState?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    subscription.unsubscribe();
    // kubelet's Events: each failed liveness attempt, then the kill, then the second start.
    const killing = recorded.indexOf('Killing: Container web failed liveness probe, will be restarted');
    expect(killing).toBeGreaterThan(0);
    expect(recorded.slice(0, killing).filter((line) => line.startsWith('Unhealthy: Liveness probe failed: ')).length).toBeGreaterThanOrEqual(2);
    expect(recorded.filter((line) => line === 'Started: Started container web')).toHaveLength(2);
  });

  it('gates readiness and liveness on the startup probe', async () => {
    const dir = sharedDir();
    const startedFile = join(dir, 'started');
    const runtime = processRuntime();
    const pod = makePod('slow-start', [
      { ...sleeper(dir), startupProbe: { exec: { command: ['test', '-f', startedFile] }, periodSeconds: 1, failureThreshold: 1000 } },
    ]);
    runtime.sync([pod]);
    const running = await waitForStatus(runtime, pod, (u) => containerStatus(u).state?.running != null);
    expect(containerStatus(running)).toMatchObject({ started: false, ready: false });
    writeFileSync(startedFile, '');
    const ready = await waitForStatus(runtime, pod, (u) => containerStatus(u).ready);
    expect(containerStatus(ready).started).toBe(true);
  });

  it('terminates a pod that leaves the desired set with SIGTERM, reporting the terminated status', async () => {
    const dir = sharedDir();
    const signalLog = join(dir, 'signals');
    const runtime = processRuntime();
    const pod = makePod('sleepy', [sleeper(dir, { SIGNAL_LOG: signalLog })]);
    runtime.sync([pod]);
    const ready = await waitForStatus(runtime, pod, isReady);
    const pid = pidOf(containerStatus(ready));
    runtime.sync([]);
    const done = await waitForStatus(runtime, pod, (u) => containerStatus(u).state?.terminated != null);
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(done.status.phase).toBe('Succeeded');
    expect(readFileSync(signalLog, 'utf8')).toMatch(new RegExp(`^SIGTERM ${pid} `));
    expect(readProcStart(pid)).toBeNull();
  });

  it('SIGKILLs a container that ignores SIGTERM after the grace period (1 s)', async () => {
    const dir = sharedDir();
    const signalLog = join(dir, 'signals');
    const runtime = processRuntime();
    const pod = makePod('stubborn', [sleeper(dir, { SIGNAL_LOG: signalLog, IGNORE_SIGTERM: '1' })], { terminationGracePeriodSeconds: 1 });
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    const deletedAt = Date.now();
    runtime.sync([]);
    const done = await waitForStatus(runtime, pod, (u) => containerStatus(u).state?.terminated != null);
    const elapsed = Date.now() - deletedAt;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(15_000); // killed after its 1 s grace, not the 30 s default
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 137, signal: 9, reason: 'Error' });
    expect(done.status.phase).toBe('Failed');
    expect(readFileSync(signalLog, 'utf8')).toMatch(/^SIGTERM /);
  });

  it('honours deletionTimestamp with deletionGracePeriodSeconds over the spec grace period', async () => {
    const dir = sharedDir();
    const runtime = processRuntime();
    const pod = makePod('deleted', [sleeper(dir, { IGNORE_SIGTERM: '1' })], { terminationGracePeriodSeconds: 30 });
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    const deletedAt = Date.now();
    runtime.sync([{ ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 0 } }]);
    const done = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Failed');
    expect(Date.now() - deletedAt).toBeLessThan(15_000); // at once, not after the 30 s default grace
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 137 });
  });

  it('after an agent restart adopts live processes of desired pods and terminates the others', async () => {
    // A wait may span a stop's grace, an exit noticed by polling and a restart back-off.
    const ADOPTION_WAIT_MS = 30_000;
    const dataDir = tempDir();
    const dir = sharedDir();
    const keptLog = join(dir, 'kept-signals');
    const droppedLog = join(dir, 'dropped-signals');
    const first = processRuntime(dataDir);
    const kept = makePod('kept', [sleeper(dir, { SIGNAL_LOG: keptLog })]);
    const dropped = makePod('dropped', [sleeper(dir, { SIGNAL_LOG: droppedLog })]);
    // Every wait subscribes before what it waits for can happen: statuses are not replayed.
    const bothReady = Promise.all([waitForStatus(first, kept, isReady, ADOPTION_WAIT_MS), waitForStatus(first, dropped, isReady, ADOPTION_WAIT_MS)]);
    first.sync([kept, dropped]);
    const [keptReady, droppedReady] = await bothReady;
    const keptPid = pidOf(containerStatus(keptReady));
    const droppedPid = pidOf(containerStatus(droppedReady));
    await first.close({ stopPods: false });
    expect(readProcStart(keptPid)).not.toBeNull();
    expect(readProcStart(droppedPid)).not.toBeNull();

    const second = processRuntime(dataDir);
    const adoption = waitForStatus(second, kept, (u) => containerStatus(u).ready, ADOPTION_WAIT_MS);
    const termination = waitForStatus(second, dropped, (u) => containerStatus(u).state?.terminated != null, ADOPTION_WAIT_MS);
    second.sync([kept]);
    const adopted = await adoption;
    expect(pidOf(containerStatus(adopted))).toBe(keptPid);
    expect(containerStatus(adopted).restartCount).toBe(0);
    expect(adopted.status.podIP).toBe(keptReady.status.podIP);
    expect(pidsOfPod(kept.metadata.uid as string)).toEqual([keptPid]);
    const droppedDone = await termination;
    expect(droppedDone.status.phase).toBe('Failed');
    expect(readFileSync(droppedLog, 'utf8')).toMatch(new RegExp(`^SIGTERM ${droppedPid} `));
    expect(readProcStart(droppedPid)).toBeNull();
    expect(existsSync(keptLog)).toBe(false);

    // The adopted process is not a child: its exit is still noticed, and the container restarts.
    process.kill(keptPid, 'SIGKILL');
    const restarted = await waitForStatus(second, kept, (u) => containerStatus(u).restartCount === 1 && containerStatus(u).ready, ADOPTION_WAIT_MS);
    expect(containerStatus(restarted).lastState?.terminated).toMatchObject({ exitCode: 137, reason: 'ContainerStatusUnknown' });
    expect(pidsOfPod(kept.metadata.uid as string)).toEqual([pidOf(containerStatus(restarted))]);
  });

  it('adopts the processes of an agent that was SIGKILLed (no clean shutdown)', async () => {
    const dataDir = tempDir();
    const dir = sharedDir();
    const pod = makePod('survivor', [sleeper(dir)]);
    const agent = spawn(process.execPath, ['--import', 'tsx', new URL('./fixtures/agent-process.ts', import.meta.url).pathname, dataDir, JSON.stringify([pod])], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const ready = await new Promise<PodStatusUpdate>((resolve, reject) => {
      createInterface({ input: agent.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        const update = JSON.parse(line) as PodStatusUpdate;
        if (containerStatus(update).ready) resolve(update);
      });
      agent.once('exit', (code) => reject(new Error(`agent exited with ${code}`)));
    });
    const pid = pidOf(containerStatus(ready));
    const agentGone = new Promise((resolve) => agent.once('exit', resolve));
    agent.kill('SIGKILL');
    await agentGone;
    expect(readProcStart(pid)).not.toBeNull();

    const runtime = processRuntime(dataDir);
    runtime.sync([pod]);
    const adopted = await waitForStatus(runtime, pod, (u) => containerStatus(u).ready);
    expect(pidOf(containerStatus(adopted))).toBe(pid);
    expect(adopted.status.podIP).toBe(ready.status.podIP);
    expect(pidsOfPod(pod.metadata.uid as string)).toEqual([pid]);
  });

  it('reports a started container only once its record (pid and /proc start time) is on disk, and removes the record with the pod', async () => {
    const dataDir = tempDir();
    const dir = sharedDir();
    const runtime = processRuntime(dataDir);
    const pods = Array.from({ length: 5 }, (_, i) => makePod(`recorded-${i}`, [sleeper(dir)]));
    const recorded = new Map<string, { pid: number; procStart: number } | undefined>();
    // Read at the moment each status is reported (synchronously, in the subscriber).
    const subscription = runtime.statuses$.subscribe((update) => {
      const status = containerStatus(update);
      if (status.state?.running == null || recorded.has(update.uid)) return;
      const record = readPodRecords(dataDir).get(update.uid) as { processes: Record<string, { pid: number; procStart: number }> };
      expect(record.processes['sleep']?.pid).toBe(pidOf(status));
      recorded.set(update.uid, record.processes['sleep']);
    });
    runtime.sync(pods);
    await Promise.all(pods.map((pod) => waitForStatus(runtime, pod, (u) => containerStatus(u).state?.running != null)));
    subscription.unsubscribe();
    expect(recorded.size).toBe(5);
    for (const process of recorded.values()) expect(process?.procStart).toBe(readProcStart(process?.pid ?? -1));
    runtime.sync([]);
    await eventually(async () => {
      if (readPodRecords(dataDir).size > 0) throw new Error('pod records left');
      if (readdirSync(join(dataDir, 'logs')).length > 0) throw new Error('pod directories left');
    });
  });

  it('never signals a recycled pid: a recorded pid whose /proc start time differs is left alone', async () => {
    const dataDir = tempDir();
    const bystander = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = bystander.pid as number;
    const procStart = readProcStart(pid) as number;
    const uid = 'recycled-uid';
    mkdirSync(join(dataDir, 'pods', uid), { recursive: true });
    const record = {
      version: 1,
      run: {
        uid,
        namespace: 'default',
        name: 'ghost',
        restartPolicy: 'Always',
        graceMs: 30_000,
        podIP: '127.100.9.9',
        hostIP: '127.0.0.1',
        startTime: Date.now() - 60_000,
        containers: [
          {
            name: 'main',
            image: 'logplane/sleeper',
            probes: { startup: false, liveness: false, readiness: false },
            restartCount: 0,
            containerID: `process://${pid}`,
            phase: { type: 'running', startedAt: Date.now() - 60_000, started: true, ready: true, killing: null },
            last: null,
            backoffMs: null,
          },
        ],
      },
      processes: { main: { restartCount: 0, pid, procStart: procStart - 1 } },
    };
    writeFileSync(join(dataDir, 'pods', uid, 'record.json'), JSON.stringify(record));
    try {
      const runtime = processRuntime(dataDir);
      const ghost: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ghost', namespace: 'default', uid }, spec: { containers: [] } };
      const done = waitForStatus(runtime, ghost, (u) => containerStatus(u).state?.terminated != null);
      runtime.sync([]);
      expect(containerStatus(await done).state?.terminated).toMatchObject({ reason: 'ContainerStatusUnknown' });
      expect(isAlive({ pid, procStart })).toBe(true);
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('refuses an image that is not built in when the container has no command', async () => {
    const runtime = processRuntime();
    const pod = makePod('nginx', [{ name: 'web', image: 'nginx:1.27' }]);
    runtime.sync([pod]);
    const refused = await waitForStatus(runtime, pod, (u) => containerStatus(u).state?.waiting?.reason === 'ErrImageNeverPull');
    expect(containerStatus(refused).state?.waiting?.message).toMatch(/^image nginx:1\.27 is not a built-in logplane image and the container has no command/);
    expect(refused.status.phase).toBe('Pending');
    expect(condition(refused, 'Ready')).toBe('False');
  });

  it('runs the command of a container with any image, and reports StartError for a missing executable', async () => {
    const runtime = processRuntime();
    const shell = makePod('shell', [{ name: 'sh', image: 'busybox', command: ['sh', '-c'], args: ['echo "hello from $(POD_NAME) at $POD_IP"'] }], { restartPolicy: 'Never' });
    const missing = makePod('missing', [{ name: 'x', image: 'busybox', command: ['/no/such/binary'] }], { restartPolicy: 'Never' });
    runtime.sync([shell, missing]);
    const done = await waitForStatus(runtime, shell, (u) => u.status.phase === 'Succeeded');
    const lines: string[] = [];
    for await (const chunk of runtime.logs('default', 'shell', 'sh', {})) lines.push(chunk);
    expect(lines.join('')).toBe(`hello from shell at ${done.status.podIP}\n`);
    const failed = await waitForStatus(runtime, missing, (u) => u.status.phase === 'Failed');
    expect(containerStatus(failed).state?.terminated).toMatchObject({ exitCode: 128, reason: 'StartError' });
    expect(containerStatus(failed).state?.terminated?.message).toMatch(/ENOENT/);
  });

  it('takes a failed container\'s termination message from the end of its log with FallbackToLogsOnError, as kubelet does, and none otherwise', async () => {
    const runtime = processRuntime();
    // 100 numbered lines then a failure: the message is the last 80 lines, of which the last 2,048 bytes.
    const pad = 'x'.repeat(40);
    const script = `i=1; while [ $i -le 100 ]; do echo "line $i ${pad}"; i=$((i+1)); done; exit 3`;
    const fallback = makePod('fallback', [{ name: 'job', image: 'busybox', command: ['sh', '-c', script], terminationMessagePolicy: 'FallbackToLogsOnError' }], { restartPolicy: 'Never' });
    const plain = makePod('plain', [{ name: 'job', image: 'busybox', command: ['sh', '-c', script] }], { restartPolicy: 'Never' });
    const succeeded = makePod('succeeded', [{ name: 'job', image: 'busybox', command: ['sh', '-c', 'echo fine'], terminationMessagePolicy: 'FallbackToLogsOnError' }], { restartPolicy: 'Never' });
    runtime.sync([fallback, plain, succeeded]);
    const failed = await waitForStatus(runtime, fallback, (u) => u.status.phase === 'Failed');
    const expected = Array.from({ length: 80 }, (_, i) => `line ${i + 21} ${pad}\n`).join('');
    expect(expected.length).toBeGreaterThan(2048);
    expect(containerStatus(failed).state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: expected.slice(-2048) });
    const withoutPolicy = await waitForStatus(runtime, plain, (u) => u.status.phase === 'Failed');
    expect(containerStatus(withoutPolicy).state?.terminated?.message).toBeUndefined();
    const done = await waitForStatus(runtime, succeeded, (u) => u.status.phase === 'Succeeded');
    expect(containerStatus(done).state?.terminated?.message).toBeUndefined();
  });

  it("runs a container in its own directory of the pod's log directory (removed with the pod) unless it sets workingDir, and makes no other directory per pod", async () => {
    const dataDir = tempDir();
    const runtime = processRuntime(dataDir);
    const here = makePod('here', [{ name: 'pwd', image: 'busybox', command: ['sh', '-c', 'pwd; echo "$HOME"; echo scratch > scratch.txt'] }], { restartPolicy: 'Never' });
    const there = makePod('there', [{ name: 'pwd', image: 'busybox', command: ['sh', '-c', 'pwd'], workingDir: '/tmp' }], { restartPolicy: 'Never' });
    runtime.sync([here, there]);
    await Promise.all([here, there].map((pod) => waitForStatus(runtime, pod, (u) => u.status.phase === 'Succeeded')));
    const podDir = join(dataDir, 'logs', `default_here_${here.metadata.uid}`);
    const workDir = join(podDir, '_work');
    expect(await collect(runtime.logs('default', 'here', 'pwd', {}))).toBe(`${workDir}\n${workDir}\n`);
    expect(readFileSync(join(workDir, 'scratch.txt'), 'utf8')).toBe('scratch\n');
    expect(await collect(runtime.logs('default', 'there', 'pwd', {}))).toBe('/tmp\n');
    expect(readdirSync(dataDir).sort()).toEqual(['logs', 'pod-records.jsonl', 'volumes']);
    expect(readdirSync(podDir).sort()).toEqual(['_work', 'pwd']);
    runtime.sync([]);
    await eventually(async () => {
      if (existsSync(podDir)) throw new Error('pod directory left');
    });
  });

  describe('pod user', () => {
    /** The default pod user: `nobody` (65534 on Debian) for an agent running as root, as CI runs the suite. */
    const nobody = { uid: 65534, gid: 65534 };
    /** What a container reports about who it is and what it can reach (one `key=value` per line). */
    const whoami = [
      'echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"',
      'echo "capeff=$(sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status)"',
      'echo "cwd=$(stat -c "%u:%g %a" .)"',
      'echo "home=$HOME"',
      'cat ../../../pod-records.jsonl >/dev/null 2>&1 && echo records=readable || echo records=unreadable',
      'cat ../../../tokens.csv >/dev/null 2>&1 && echo tokens=readable || echo tokens=unreadable',
      'touch ../pwned 2>/dev/null && echo logdir=writable || echo logdir=readonly',
      'ln -sf /etc/passwd ../who/0.log 2>/dev/null && echo logfile=replaced || echo logfile=kept',
      'echo x > mine && echo cwd=writable',
    ].join('; ');
    const report = (text: string): Record<string, string> => {
      const seen: Record<string, string> = {};
      for (const line of text.trim().split('\n')) {
        const [key = '', value = ''] = line.split(/=(.*)/s);
        seen[key] = seen[key] === undefined ? value : `${seen[key]} ${value}`;
      }
      return seen;
    };

    it('runs pod processes and exec probes as nobody, not as root: no capabilities or groups, the agent\'s files and log directory out of reach', async () => {
      const dataDir = tempDir();
      writeFileSync(join(dataDir, 'tokens.csv'), 'secret-token,admin,admin\n', { mode: 0o600 });
      // As an older agent left it: the runtime tightens it.
      chmodSync(dataDir, 0o755);
      const runtime = processRuntime(dataDir);
      const pod = makePod('who', [
        {
          name: 'who',
          image: 'busybox',
          command: ['sh', '-c', `${whoami}; exec sleep 600`],
          // Ready only if the probe itself runs as the pod user.
          readinessProbe: { exec: { command: ['sh', '-c', `test "$(id -u):$(id -g)" = "${nobody.uid}:${nobody.gid}"`] }, periodSeconds: 1, failureThreshold: 1 },
        },
      ]);
      runtime.sync([pod]);
      const ready = await waitForStatus(runtime, pod, isReady);
      const pid = pidOf(containerStatus(ready));
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      expect(status).toMatch(new RegExp(`^Uid:\\s+${nobody.uid}\\s+${nobody.uid}\\s+${nobody.uid}\\s+${nobody.uid}$`, 'm'));
      expect(status).toMatch(new RegExp(`^Gid:\\s+${nobody.gid}\\s+${nobody.gid}\\s+${nobody.gid}\\s+${nobody.gid}$`, 'm'));
      const seen = report(await eventually(async () => {
        const text = await collect(runtime.logs('default', 'who', 'who', {}));
        if (!text.includes('cwd=writable')) throw new Error(`not done yet: ${text}`);
        return text;
      }));
      expect(seen).toEqual({
        uid: `${nobody.uid} gid=${nobody.gid} groups=${nobody.gid}`,
        capeff: '0000000000000000',
        cwd: `${nobody.uid}:${nobody.gid} 700 writable`,
        home: join(dataDir, 'logs', `default_who_${pod.metadata.uid}`, '_work'),
        records: 'unreadable',
        tokens: 'unreadable',
        logdir: 'readonly',
        logfile: 'kept',
      });
      expect(statSync(join(dataDir, 'logs', `default_who_${pod.metadata.uid}`, 'who', '0.log'))).toMatchObject({ uid: 0, mode: 0o100640 });
      // Traversable (pods reach their volumes through it), not listable; logs/ stays the agent's.
      expect(statSync(dataDir).mode & 0o777).toBe(0o711);
      expect(statSync(join(dataDir, 'logs')).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, 'pod-records.jsonl')).mode & 0o777).toBe(0o600);
    });

    it('runs pods as the configured podUser', async () => {
      const runtime = processRuntime(tempDir(), { podUser: { uid: 4321, gid: 4322 } });
      const pod = makePod('who', [{ name: 'who', image: 'busybox', command: ['sh', '-c', whoami] }], { restartPolicy: 'Never' });
      runtime.sync([pod]);
      await waitForStatus(runtime, pod, (u) => u.status.phase === 'Succeeded');
      const seen = report(await collect(runtime.logs('default', 'who', 'who', {})));
      expect(seen).toMatchObject({ uid: '4321 gid=4322 groups=4322', capeff: '0000000000000000', cwd: '4321:4322 700 writable', records: 'unreadable', tokens: 'unreadable', logdir: 'readonly' });
    });
  });

  describe('securityContext', () => {
    /** A container's identity, one `key=value` per line. */
    const identity = [
      'echo "uid=$(id -u)"',
      'echo "gid=$(id -g)"',
      'echo "groups=$(id -G)"',
      'echo "nonewprivs=$(sed -n "s/^NoNewPrivs:[[:space:]]*//p" /proc/self/status)"',
      'echo "cwd=$(stat -c "%u:%g %a" .)"',
      'echo "$HOSTNAME" > "mine-$(id -u)" && echo written=yes || echo written=no',
    ].join('; ');
    const fields = (text: string) => Object.fromEntries(text.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2)));
    const finished = (runtime: PodRuntime, pod: Pod) => waitForStatus(runtime, pod, (u) => u.status.phase === 'Succeeded' || u.status.phase === 'Failed');

    it('runs a pod with runAsUser 65532 as uid 65532 (its working directory its own)', async () => {
      const runtime = processRuntime();
      const pod = makePod('as-65532', [{ name: 'who', image: 'busybox', command: ['sh', '-c', identity] }], { restartPolicy: 'Never', securityContext: { runAsUser: 65532 } });
      runtime.sync([pod]);
      expect((await finished(runtime, pod)).status.phase).toBe('Succeeded');
      expect(fields(await collect(runtime.logs('default', 'as-65532', 'who', {})))).toEqual({ uid: '65532', gid: '65532', groups: '65532', nonewprivs: '0', cwd: '65532:65532 700', written: 'yes' });
    });

    it('gives each container its own runAsUser over the pod\'s, the pod\'s runAsGroup, fsGroup and supplementalGroups, no_new_privs; exec probes run the same', async () => {
      const runtime = processRuntime();
      const pod = makePod(
        'groups',
        [
          { name: 'pod-level', image: 'busybox', command: ['sh', '-c', `${identity}; exec sleep 600`] },
          {
            name: 'own-user',
            image: 'busybox',
            command: ['sh', '-c', `${identity}; exec sleep 600`],
            securityContext: { runAsUser: 65533, allowPrivilegeEscalation: false },
            // Ready only if the probe runs as the container does.
            readinessProbe: { exec: { command: ['sh', '-c', 'test "$(id -u) $(id -G)" = "65533 65531 2000 3000" && grep -q "^NoNewPrivs:[[:space:]]*1" /proc/self/status'] }, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
        { securityContext: { runAsUser: 65532, runAsGroup: 65531, fsGroup: 2000, supplementalGroups: [3000] } },
      );
      runtime.sync([pod]);
      const ready = await waitForStatus(runtime, pod, (u) => containerStatus(u, 'own-user').ready && containerStatus(u, 'pod-level').state?.running !== undefined);
      const status = readFileSync(`/proc/${pidOf(containerStatus(ready, 'own-user'))}/status`, 'utf8');
      expect(status).toMatch(/^Uid:\s+65533\s+65533\s+65533\s+65533$/m);
      expect(status).toMatch(/^Groups:\s+2000 3000\s*$/m);
      const logsOf = (container: string) =>
        eventually(async () => {
          const text = await collect(runtime.logs('default', 'groups', container, {}));
          if (!text.includes('written=')) throw new Error(`not done yet: ${text}`);
          return fields(text);
        });
      // The pod's working directory: the pod-level user's, group fsGroup, 2770, so both can write it.
      expect(await logsOf('pod-level')).toEqual({ uid: '65532', gid: '65531', groups: '65531 2000 3000', nonewprivs: '0', cwd: '65532:2000 2770', written: 'yes' });
      expect(await logsOf('own-user')).toEqual({ uid: '65533', gid: '65531', groups: '65531 2000 3000', nonewprivs: '1', cwd: '65532:2000 2770', written: 'yes' });
    });

    it('does not start a runAsNonRoot container that would run as root: CreateContainerConfigError with kubelet\'s message', async () => {
      const runtime = processRuntime();
      const asRoot = makePod('nonroot-uid0', [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo started'], securityContext: { runAsUser: 0 } }], { securityContext: { runAsNonRoot: true } });
      runtime.sync([asRoot]);
      const refused = await waitForStatus(runtime, asRoot, (u) => containerStatus(u).state?.waiting?.reason === 'CreateContainerConfigError');
      expect(refused.status.phase).toBe('Pending');
      expect(containerStatus(refused)).toMatchObject({
        state: { waiting: { reason: 'CreateContainerConfigError', message: `container's runAsUser breaks non-root policy (pod: "nonroot-uid0_default(${asRoot.metadata.uid})", container: c)` } },
        restartCount: 0,
      });
      expect(containerStatus(refused).containerID).toBeUndefined();
      expect(() => runtime.logs('default', 'nonroot-uid0', 'c', {})).toThrow(KubeletNotFoundError);

      // The pod user standing in for the image's user: root here, so "image will run as root".
      const rootRuntime = processRuntime(tempDir(), { podUser: { uid: 0, gid: 0 } });
      const image = makePod('nonroot-image', [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo started'], securityContext: { runAsNonRoot: true } }]);
      rootRuntime.sync([image]);
      const refusedImage = await waitForStatus(rootRuntime, image, (u) => containerStatus(u).state?.waiting?.reason === 'CreateContainerConfigError');
      expect(containerStatus(refusedImage).state?.waiting?.message).toBe(`container has runAsNonRoot and image will run as root (pod: "nonroot-image_default(${image.metadata.uid})", container: c)`);
    });

    it('blocks a privileged pod and refuses runAsUser 0 where privileged containers are not allowed; runs them where they are (privileged grants nothing more)', async () => {
      const strict = processRuntime(tempDir(), { allowPrivileged: false });
      const privileged = makePod('priv', [
        { name: 'priv', image: 'busybox', command: ['sh', '-c', 'echo started'], securityContext: { privileged: true } },
        { name: 'plain', image: 'busybox', command: ['sh', '-c', 'echo started'] },
      ], { restartPolicy: 'Never' });
      const root = makePod('root', [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'id -u'], securityContext: { runAsUser: 0 } }], { restartPolicy: 'Never' });
      strict.sync([privileged, root]);
      const blocked = await waitForStatus(strict, privileged, (u) => containerStatus(u, 'priv').state?.waiting?.reason === 'Blocked' && containerStatus(u, 'plain').state?.waiting?.reason === 'Blocked');
      expect(blocked.status.phase).toBe('Pending');
      expect(containerStatus(blocked, 'plain').state?.waiting?.message).toBe(`pod with UID "${privileged.metadata.uid}" specified privileged container, but is disallowed`);
      const refusedRoot = await waitForStatus(strict, root, (u) => containerStatus(u).state?.waiting?.reason === 'CreateContainerConfigError');
      expect(containerStatus(refusedRoot).state?.waiting?.message).toMatch(/asks to run as root \(runAsUser 0\).*--allow-privileged=false/);

      const allowing = processRuntime();
      const privileged2 = makePod('priv', [{ name: 'priv', image: 'busybox', command: ['sh', '-c', 'echo "$(id -u) $(sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status)"'], securityContext: { privileged: true } }], { restartPolicy: 'Never' });
      const root2 = makePod('root', [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'id -u'], securityContext: { runAsUser: 0 } }], { restartPolicy: 'Never' });
      allowing.sync([privileged2, root2]);
      expect((await finished(allowing, privileged2)).status.phase).toBe('Succeeded');
      expect((await finished(allowing, root2)).status.phase).toBe('Succeeded');
      expect(await collect(allowing.logs('default', 'priv', 'priv', {}))).toBe('65534 0000000000000000\n');
      expect(await collect(allowing.logs('default', 'root', 'c', {}))).toBe('0\n');
    });
  });

  it('serves logs: current, previous, tailLines, follow', async () => {
    const runtime = processRuntime();
    const crashy = makePod('logs-crash', [{ name: 'c', image: 'logplane/crasher', env: [{ name: 'EXIT_AFTER_MS', value: '10' }] }]);
    const web = makePod('logs-echo', [echo()]);
    runtime.sync([crashy, web]);
    await waitForStatus(runtime, crashy, (u) => containerStatus(u).restartCount >= 1 && containerStatus(u).state?.waiting?.reason === 'CrashLoopBackOff');
    const current = await collect(runtime.logs('default', 'logs-crash', 'c', {}));
    expect(current).toBe('crasher: pod logs-crash will exit with code 1 after 10 ms\ncrasher: exiting with code 1\n');
    expect(await collect(runtime.logs('default', 'logs-crash', 'c', { previous: true }))).toBe(current);
    expect(await collect(runtime.logs('default', 'logs-crash', 'c', { tailLines: 1 }))).toBe('crasher: exiting with code 1\n');
    expect(() => runtime.logs('default', 'nope', 'c', {})).toThrow(KubeletNotFoundError);
    expect(() => runtime.logs('default', 'logs-echo', 'web', { previous: true })).toThrow(/previous terminated container "web" in pod "logs-echo" not found/);

    const ready = await waitForStatus(runtime, web, isReady);
    const follow = runtime.logs('default', 'logs-echo', 'web', { follow: true })[Symbol.asyncIterator]();
    await get(`http://${ready.status.podIP}:8080/some/path`);
    let followed = '';
    while (!followed.includes('GET /some/path')) {
      const next = await follow.next();
      if (next.done === true) break;
      followed += next.value;
    }
    expect(followed).toContain('GET /some/path');
    runtime.sync([crashy]);
    for (let next = await follow.next(); next.done !== true; next = await follow.next()) followed += next.value;
    expect(followed).toContain('echo: SIGTERM received, shutting down');
  });
});
