/**
 * preStop hooks, on real processes of the process runtime (exec, sleep, httpGet) and the
 * handler runner's verdicts on its own (httpGet against a real local server).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container } from '../../schemas/index.ts';
import type { KubeletEvent } from './events.ts';
import { runHook } from './hooks.ts';
import { createPodRuntime } from './index.ts';
import type { PodStatusUpdate } from './pod-driver.ts';
import type { ProbeTarget } from './probes.ts';
import type { PodRuntime } from './runtime.ts';
import { containerStatus, makePod, pidOf, sharedDir, tempDir, testLogger, waitForStatus } from './testing.ts';

const runtimes: PodRuntime[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ stopPods: true })));
  for (const server of servers.splice(0)) server.close();
});

const processRuntime = (): PodRuntime => {
  const runtime = createPodRuntime({ kind: 'process', node: 'node-a', dataDir: tempDir(), logger: testLogger, crashLoop: { initialMs: 200, maxMs: 2000 }, probeSecondMs: 100 });
  runtimes.push(runtime);
  return runtime;
};

/** A sleeper that logs the SIGTERM it gets to `signalLog`, ready once its handler is installed. */
const sleeper = (dir: string, signalLog: string, extra: Partial<Container> = {}, env: Record<string, string> = {}): Container => {
  const readyFile = join(dir, `ready-${Math.random().toString(36).slice(2)}`);
  return {
    name: 'sleep',
    image: 'logplane/sleeper',
    env: [{ name: 'READY_FILE', value: readyFile }, { name: 'SIGNAL_LOG', value: signalLog }, ...Object.entries(env).map(([name, value]) => ({ name, value }))],
    readinessProbe: { exec: { command: ['test', '-f', readyFile] }, periodSeconds: 1, failureThreshold: 1 },
    ...extra,
  };
};

const isReady = (update: PodStatusUpdate): boolean => containerStatus(update).ready;
const terminated = (update: PodStatusUpdate): boolean => containerStatus(update).state?.terminated != null;

describe('preStop hooks in the process runtime', () => {
  it('runs an exec preStop hook in the container’s environment before SIGTERM', async () => {
    const dir = sharedDir();
    const signalLog = join(dir, 'signals');
    const runtime = processRuntime();
    const hook = { preStop: { exec: { command: ['/bin/sh', '-c', 'echo "preStop $POD_NAME" >>"$SIGNAL_LOG"'] } } };
    const pod = makePod('hooked', [sleeper(dir, signalLog, { lifecycle: hook })]);
    runtime.sync([pod]);
    const pid = pidOf(containerStatus(await waitForStatus(runtime, pod, isReady)));
    runtime.sync([]);
    const done = await waitForStatus(runtime, pod, terminated);
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const lines = readFileSync(signalLog, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('preStop hooked');
    expect(lines[1]).toMatch(new RegExp(`^SIGTERM ${pid} `));
  });

  it('sends SIGTERM only once a sleep preStop hook is over', async () => {
    const dir = sharedDir();
    const signalLog = join(dir, 'signals');
    const runtime = processRuntime();
    const pod = makePod('sleepy', [sleeper(dir, signalLog, { lifecycle: { preStop: { sleep: { seconds: 1 } } } })]);
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    const deletedAt = Date.now();
    runtime.sync([]);
    await waitForStatus(runtime, pod, terminated);
    const signalledAt = Date.parse(readFileSync(signalLog, 'utf8').trim().split(' ')[2] ?? '');
    expect(signalledAt - deletedAt).toBeGreaterThanOrEqual(950);
  });

  it('records FailedPreStopHook with kubelet’s message when the hook fails, and still stops the container', async () => {
    const dir = sharedDir();
    const signalLog = join(dir, 'signals');
    const runtime = processRuntime();
    const events: KubeletEvent[] = [];
    const subscription = runtime.events$.subscribe((event) => events.push(event));
    const pod = makePod('failing', [sleeper(dir, signalLog, { lifecycle: { preStop: { exec: { command: ['/bin/false'] } } } })]);
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    runtime.sync([]);
    await waitForStatus(runtime, pod, terminated);
    subscription.unsubscribe();
    expect(readFileSync(signalLog, 'utf8')).toMatch(/^SIGTERM /);
    const failed = events.filter((e) => e.reason === 'FailedPreStopHook');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: 'Warning', container: 'sleep', name: 'failing' });
    expect(failed[0]!.message).toBe(`Exec lifecycle hook ([/bin/false]) for Container "sleep" in Pod "failing_default(${pod.metadata.uid})" failed - error: exec /bin/false: exit code 1, message: ""`);
  });

  it('SIGKILLs the container when the hook outlasts the grace period, never sending SIGTERM', async () => {
    const dir = sharedDir();
    const signalLog = join(dir, 'signals');
    const runtime = processRuntime();
    const hook = { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 60'] } } };
    const pod = makePod('stuck', [sleeper(dir, signalLog, { lifecycle: hook })], { terminationGracePeriodSeconds: 1 });
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    const deletedAt = Date.now();
    runtime.sync([]);
    const done = await waitForStatus(runtime, pod, terminated);
    expect(Date.now() - deletedAt).toBeLessThan(15_000); // the grace period, not the hook's 60 s
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 137, signal: 9 });
    expect(() => readFileSync(signalLog, 'utf8')).toThrow(); // no SIGTERM ever reached it
  });
});

describe('postStart hooks in the process runtime', () => {
  it('reports the container started only once its postStart hook is done', async () => {
    const dir = sharedDir();
    const hookLog = join(dir, 'hook');
    const runtime = processRuntime();
    const hook = { postStart: { exec: { command: ['/bin/sh', '-c', 'sleep 0.3; echo "postStart $POD_NAME" >>"$SIGNAL_LOG"'] } } };
    const pod = makePod('poststart', [sleeper(dir, hookLog, { lifecycle: hook })]);
    const seen: { running: boolean; hookDone: boolean; waiting?: string }[] = [];
    const subscription = runtime.statuses$.subscribe((update) => {
      if (update.uid !== pod.metadata.uid) return;
      const state = containerStatus(update).state;
      const waiting = state?.waiting?.reason;
      seen.push({ running: state?.running != null, hookDone: existsSync(hookLog), ...(waiting ? { waiting } : {}) });
    });
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, isReady);
    subscription.unsubscribe();
    expect(readFileSync(hookLog, 'utf8')).toBe('postStart poststart\n');
    expect(seen[0]).toEqual({ running: false, hookDone: false, waiting: 'ContainerCreating' });
    // Never reported running before the hook had run.
    expect(seen.filter((s) => s.running).every((s) => s.hookDone)).toBe(true);
    expect(seen.some((s) => s.running)).toBe(true);
  });

  it('kills and restarts the container when its postStart hook fails: FailedPostStartHook, Killing "FailedPostStartHook"', async () => {
    const dir = sharedDir();
    const runtime = processRuntime();
    const events: KubeletEvent[] = [];
    const subscription = runtime.events$.subscribe((event) => events.push(event));
    const pod = makePod('badhook', [sleeper(dir, join(dir, 'signals'), { lifecycle: { postStart: { exec: { command: ['/bin/false'] } } } })], { terminationGracePeriodSeconds: 1 });
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, (u) => containerStatus(u).restartCount >= 1);
    subscription.unsubscribe();
    const reasons = events.filter((e) => e.name === 'badhook').map((e) => [e.reason, e.reason === 'Killing' ? e.message : '']);
    expect(reasons).toContainEqual(['FailedPostStartHook', '']);
    expect(reasons).toContainEqual(['Killing', 'FailedPostStartHook']);
    const failed = events.find((e) => e.reason === 'FailedPostStartHook');
    expect(failed?.message).toMatch(/^Exec lifecycle hook \(\[\/bin\/false\]\) for Container "sleep" in Pod "badhook_default\(/);
  });

  it('stops waiting for a postStart hook when the container exits meanwhile, as kubelet aborts it', async () => {
    const runtime = processRuntime();
    const container: Container = { name: 'quick', image: 'logplane/sleeper', command: ['/bin/sh', '-c', 'sleep 0.3; exit 3'], lifecycle: { postStart: { exec: { command: ['/bin/sh', '-c', 'sleep 60'] } } } };
    const pod = makePod('quick', [container], { restartPolicy: 'Never' });
    const startedAt = Date.now();
    runtime.sync([pod]);
    const done = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Failed');
    expect(Date.now() - startedAt).toBeLessThan(15_000); // not the hook's 60 s
    expect(containerStatus(done).state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });
});

describe('the handler runner', () => {
  const serve = async (status: number): Promise<{ target: ProbeTarget; requests: { url: string; headers: IncomingHttpHeaders; raw: string[] }[] }> => {
    const requests: { url: string; headers: IncomingHttpHeaders; raw: string[] }[] = [];
    const server = createServer((req, res) => {
      requests.push({ url: req.url ?? '', headers: req.headers, raw: req.rawHeaders });
      res.writeHead(status).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return { target: { podIP: '127.0.0.1', env: {}, cwd: '/', ports: [{ name: 'http', containerPort: port }] }, requests };
  };
  const subject = { container: 'web', pod: 'p_default(u)' };

  it('httpGet: any HTTP response is a success (a 500 too), with the hook’s path and headers', async () => {
    const { target, requests } = await serve(500);
    const outcome = await runHook({ httpGet: { path: '/shutdown', port: 'http', httpHeaders: [{ name: 'X-Reason', value: 'prestop' }] } }, subject, target, 5_000, new AbortController().signal);
    expect(outcome).toEqual({ type: 'success' });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ url: '/shutdown', headers: { 'x-reason': 'prestop' } });
  });

  it('httpGet: a header named __proto__ is sent as a header, not written into a prototype', async () => {
    const { target, requests } = await serve(200);
    const outcome = await runHook({ httpGet: { path: '/', port: 'http', httpHeaders: [{ name: '__proto__', value: 'x' }] } }, subject, target, 5_000, new AbortController().signal);
    expect(outcome).toEqual({ type: 'success' });
    const raw = requests[0]?.raw ?? [];
    expect(raw[raw.indexOf('__proto__') + 1]).toBe('x');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('httpGet: a refused connection fails with kubelet’s message', async () => {
    const { target } = await serve(200);
    const closed = { ...target, ports: [{ name: 'http', containerPort: 1 }] };
    const outcome = await runHook({ httpGet: { path: '/x', port: 'http' } }, subject, closed, 5_000, new AbortController().signal);
    expect(outcome.type).toBe('failure');
    expect(outcome.type === 'failure' && outcome.message).toMatch(/^HTTP lifecycle hook \(\/x\) for Container "web" in Pod "p_default\(u\)" failed - error: Get "http:\/\/127\.0\.0\.1:1\/x": connect ECONNREFUSED/);
  });

  it('tcpSocket cannot run as a hook, as in kubelet', async () => {
    const outcome = await runHook({ tcpSocket: { port: 80 } }, subject, { podIP: '127.0.0.1', env: {}, cwd: '/', ports: [] }, 1_000, new AbortController().signal);
    expect(outcome.type).toBe('failure');
    expect(outcome.type === 'failure' && outcome.message).toMatch(/^Cannot run handler: invalid handler/);
  });

  it('sleep ends early when aborted (the container was killed)', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const running = runHook({ sleep: { seconds: 30 } }, subject, { podIP: '127.0.0.1', env: {}, cwd: '/', ports: [] }, 30_000, abort.signal);
    abort.abort();
    expect(await running).toEqual({ type: 'success' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
