import { afterEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom, merge, scan, takeWhile, timeout } from 'rxjs';
import { createPodRuntime } from './index.ts';
import { simulatedExit } from './sim-runtime.ts';
import type { PodRuntime, PodRuntimeOptions } from './runtime.ts';
import { condition, containerStatus, makePod, testLogger, waitForStatus } from './testing.ts';

const runtimes: PodRuntime[] = [];

function simRuntime(extra: Partial<PodRuntimeOptions> = {}): PodRuntime {
  const runtime = createPodRuntime({
    kind: 'sim',
    node: 'node-a',
    dataDir: '',
    logger: testLogger,
    sim: { startDelayMs: 100 },
    crashLoop: { initialMs: 100, maxMs: 400 },
    ...extra,
  });
  runtimes.push(runtime);
  return runtime;
}

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close({ stopPods: true })));
});

const web = (name: string, node = 'node-a') => makePod(name, [{ name: 'web', image: 'nginx:1.27' }], {}, node);

describe('sim runtime', () => {
  it('brings pods to Running and ready after the start delay', async () => {
    const runtime = simRuntime();
    const pod = web('sim-1');
    const syncedAt = Date.now();
    runtime.sync([pod]);
    const pending = await waitForStatus(runtime, pod, () => true);
    expect(pending.status.phase).toBe('Pending');
    expect(containerStatus(pending).state?.waiting?.reason).toBe('ContainerCreating');
    const running = await waitForStatus(runtime, pod, (u) => u.status.phase === 'Running');
    expect(Date.now() - syncedAt).toBeGreaterThanOrEqual(95);
    expect(containerStatus(running)).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(condition(running, 'Ready')).toBe('True');
    expect(running.status.podIP).toMatch(/^127\.100\./);
  });

  it('restarts a container after an injected exit, with crash-loop backoff on the next one', async () => {
    const runtime = simRuntime();
    const pod = web('sim-crash');
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, (u) => containerStatus(u).ready);
    runtime.inject?.('default', 'sim-crash', { type: 'exit', exitCode: 2 });
    const restarted = await waitForStatus(runtime, pod, (u) => containerStatus(u).restartCount === 1 && containerStatus(u).ready);
    expect(containerStatus(restarted).lastState?.terminated).toMatchObject({ exitCode: 2, reason: 'Error' });
    runtime.inject?.('default', 'sim-crash', { type: 'exit', exitCode: 3 });
    const backoff = await waitForStatus(runtime, pod, (u) => containerStatus(u).state?.waiting?.reason === 'CrashLoopBackOff');
    expect(backoff.status.phase).toBe('Running');
    expect(condition(backoff, 'Ready')).toBe('False');
    await waitForStatus(runtime, pod, (u) => containerStatus(u).restartCount === 2 && containerStatus(u).ready);
  });

  it('fails a Never pod on an injected exit and flips readiness on request', async () => {
    const runtime = simRuntime();
    const never = makePod('sim-never', [{ name: 'job', image: 'busybox' }], { restartPolicy: 'Never' });
    const flaky = web('sim-flaky');
    runtime.sync([never, flaky]);
    await waitForStatus(runtime, never, (u) => u.status.phase === 'Running');
    runtime.inject?.('default', 'sim-never', { type: 'exit', exitCode: 1, container: 'job' });
    const failed = await waitForStatus(runtime, never, (u) => u.status.phase === 'Failed');
    expect(containerStatus(failed).state?.terminated?.exitCode).toBe(1);

    await waitForStatus(runtime, flaky, (u) => containerStatus(u).ready);
    runtime.inject?.('default', 'sim-flaky', { type: 'readiness', ready: false });
    await waitForStatus(runtime, flaky, (u) => !containerStatus(u).ready && condition(u, 'Ready') === 'False');
    runtime.inject?.('default', 'sim-flaky', { type: 'readiness', ready: true });
    await waitForStatus(runtime, flaky, (u) => containerStatus(u).ready);
  });

  it('terminates pods that leave the desired set', async () => {
    const runtime = simRuntime();
    const pod = web('sim-gone');
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, (u) => containerStatus(u).ready);
    // The sim container exits at once on SIGTERM: the final status is emitted inside sync().
    const done = waitForStatus(runtime, pod, (u) => containerStatus(u).state?.terminated != null);
    runtime.sync([]);
    expect((await done).status.phase).toBe('Succeeded');
  });

  it('runs 10,000 pods on 1,000 simulated nodes in one process', async () => {
    const nodes = 1000;
    const podsPerNode = 10;
    const started = Date.now();
    const fleet = Array.from({ length: nodes }, (_, i) => {
      const node = `sim-${i}`;
      const runtime = simRuntime({ node, podCIDR: `127.${100 + Math.floor(i / 256)}.${i % 256}.0/24` });
      const pods = Array.from({ length: podsPerNode }, (_, j) => web(`p-${i}-${j}`, node));
      return { runtime, pods };
    });
    const readyCount$ = merge(...fleet.map(({ runtime }) => runtime.statuses$)).pipe(
      filter((u) => u.status.phase === 'Running' && containerStatus(u).ready),
      scan((count) => count + 1, 0),
      takeWhile((count) => count < nodes * podsPerNode, true),
      filter((count) => count === nodes * podsPerNode),
      timeout(30_000),
    );
    const allReady = firstValueFrom(readyCount$);
    for (const { runtime, pods } of fleet) runtime.sync(pods);
    expect(await allReady).toBe(nodes * podsPerNode);
    testLogger.info({ elapsed: Date.now() - started, pods: nodes * podsPerNode }, 'sim fleet ready');
  });
});

describe('sim runtime: the built-in crasher exits by itself', () => {
  it('runs a Never pod of logplane/crasher to Succeeded (EXIT_CODE 0) or Failed (--exit-code 3) after EXIT_AFTER_MS', async () => {
    const runtime = simRuntime();
    const env = (code: string) => [{ name: 'EXIT_CODE', value: code }, { name: 'EXIT_AFTER_MS', value: '150' }];
    const ok = makePod('sim-job-ok', [{ name: 'main', image: 'logplane/crasher', env: env('0') }], { restartPolicy: 'Never' });
    const bad = makePod('sim-job-bad', [{ name: 'main', image: 'logplane/crasher:1', env: env('0'), args: ['--exit-code', '3'] }], { restartPolicy: 'Never' });
    runtime.sync([ok, bad]);
    await waitForStatus(runtime, ok, (u) => u.status.phase === 'Running');
    const succeeded = await waitForStatus(runtime, ok, (u) => u.status.phase === 'Succeeded');
    expect(containerStatus(succeeded).state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    const failed = await waitForStatus(runtime, bad, (u) => u.status.phase === 'Failed');
    expect(containerStatus(failed).state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });

  it.each([
    { image: 'nginx:1.27', args: [], env: {}, exit: undefined },
    { image: 'logplane/crasher', args: [], env: {}, exit: { exitCode: 1, afterMs: 0 } },
    { image: 'docker.io/logplane/crasher:latest', args: ['--after-ms=20'], env: { EXIT_CODE: '0' }, exit: { exitCode: 0, afterMs: 20 } },
    { image: 'logplane/crasher', args: ['--exit-code', '7'], env: { EXIT_CODE: '0' }, exit: { exitCode: 7, afterMs: 0 } },
    { image: 'logplane/crasher', args: [], env: { EXIT_CODE: 'x' }, exit: { exitCode: 2, afterMs: 0 } },
  ])('$image $args $env exits with $exit', ({ image, args, env, exit }) => {
    const pod = makePod('p', [{ name: 'main', image, args, env: Object.entries(env).map(([name, value]) => ({ name, value })) }]);
    expect(simulatedExit(pod, 'main')).toEqual(exit);
  });
});
