/**
 * The sweep of a killed bench's leftovers, on real processes: a child process makes its
 * directory with the real `withTempDir` and runs real sleeper pods with the real process
 * runtime, then is SIGKILLed; the sweep must stop exactly the recorded processes whose
 * identity still matches, and nothing of a live run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openPodRecords } from '../node-agent/kubelet/pod-records.ts';
import { type ProcessIdentity, isAlive, readProcStart, signalProcessGroup } from '../node-agent/kubelet/proc.ts';
import { makePod, testLogger } from '../node-agent/kubelet/testing.ts';
import { BENCH_DIR_PREFIX, OWNER_FILE, UNOWNED_AFTER_MS, recordedProcesses, sweepLeftovers } from './leftovers.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));

/** Processes and directories a test made, cleaned up (last made, first) whatever happened. */
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const killIfAlive = (identity: ProcessIdentity): void => {
  if (isAlive(identity)) signalProcessGroup(identity.pid, 'SIGKILL');
};

/** A test's own temporary directory, in which the sweep looks (never the real one's runs). */
const sweepRoot = (): string => {
  const root = mkdtempSync(join(tmpdir(), 'logplane-leftovers-test-'));
  cleanups.push(async () => {
    // After a failed test: a pod restarted by the runtime after the test recorded its pids
    // is only known to the records (the bench-like process is killed by then).
    await sweepLeftovers({ root, now: Date.now() + 2 * UNOWNED_AFTER_MS });
    rmSync(root, { recursive: true, force: true });
  });
  return root;
};

const until = async (condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> => {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** A `sleep` in a session of its own, as the spawner starts containers; killed after the test. */
const detachedSleep = async (): Promise<ProcessIdentity> => {
  const child = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  const procStart = readProcStart(child.pid!);
  if (procStart === null) throw new Error('the sleep is gone already');
  const identity = { pid: child.pid!, procStart };
  cleanups.push(() => killIfAlive(identity));
  return identity;
};

/** Writes a process-runtime pod record naming `processIdentity` as the container `main`, under `dataDir`. */
const recordPod = async (dataDir: string, processIdentity: ProcessIdentity): Promise<void> => {
  mkdirSync(dataDir, { recursive: true });
  const store = openPodRecords(dataDir, join(dataDir, 'pods'), testLogger);
  const record = { version: 1, run: { uid: 'u-1', namespace: 'default', name: 'p', containers: [] }, processes: { main: { restartCount: 0, ...processIdentity } } };
  await store.write('u-1', JSON.stringify(record));
  await store.close();
};

/**
 * A bench-like process: makes its directory with `withTempDir` (in `root`, through TMPDIR)
 * and runs `pods` sleeper pods in it with the process runtime, printing each status update.
 */
const startBenchLikeProcess = (root: string, pods: number): { child: ChildProcess; lines: unknown[] } => {
  const manifests = Array.from({ length: pods }, (_, i) => makePod(`sleeper-${i}`, [{ name: 'main', image: 'logplane/sleeper:1' }], { restartPolicy: 'Never' }));
  const script = `
    import { join } from 'node:path';
    import { pino } from 'pino';
    import { withTempDir } from ${JSON.stringify(join(repo, 'bench/support.ts'))};
    import { createPodRuntime } from ${JSON.stringify(join(repo, 'node-agent/kubelet/index.ts'))};
    setInterval(() => {}, 1 << 30);
    await withTempDir('leftovers-test', async (dir) => {
      process.stdout.write(JSON.stringify({ dir }) + '\\n');
      const runtime = createPodRuntime({ kind: 'process', node: 'node-a', dataDir: join(dir, 'cluster', 'nodes', 'node-a'), logger: pino({ level: 'silent' }), probeSecondMs: 100 });
      runtime.statuses$.subscribe((update) => process.stdout.write(JSON.stringify(update) + '\\n'));
      runtime.sync(${JSON.stringify(manifests)});
      await new Promise(() => {});
    });
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repo,
    env: { ...process.env, TMPDIR: root },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  });
  const lines: unknown[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop()!;
    lines.push(...complete.map((line) => JSON.parse(line) as unknown));
  });
  return { child, lines };
};

/** Pids of running containers in the status updates printed so far. */
const runningPids = (lines: readonly unknown[]): Set<number> => {
  const pids = new Set<number>();
  for (const line of lines) {
    const statuses = (line as { status?: { containerStatuses?: { containerID?: string; state?: { running?: unknown } }[] } }).status?.containerStatuses ?? [];
    for (const s of statuses) if (s.state?.running !== undefined && s.containerID?.startsWith('process://')) pids.add(Number(s.containerID.slice('process://'.length)));
  }
  return pids;
};

describe('sweepLeftovers', () => {
  it("leaves a live run's directory alone; once its owner is SIGKILLed, stops its pods and removes the directory", async () => {
    const root = sweepRoot();
    const { child, lines } = startBenchLikeProcess(root, 2);
    await until(() => runningPids(lines).size === 2, 'two running sleepers');
    const dir = (lines[0] as { dir: string }).dir;
    expect(dir.startsWith(join(root, BENCH_DIR_PREFIX))).toBe(true);
    expect(existsSync(join(dir, OWNER_FILE))).toBe(true);
    await until(() => recordedProcesses(dir).filter(isAlive).length === 2, 'both sleepers recorded');
    const sleepers = recordedProcesses(dir);
    for (const sleeper of sleepers) cleanups.push(() => killIfAlive(sleeper));
    expect(new Set(sleepers.map((s) => s.pid))).toEqual(runningPids(lines));

    // The owner is alive: a concurrent run, not touched.
    expect(await sweepLeftovers({ root })).toEqual({ directories: 0, processes: 0, kept: [] });
    expect(existsSync(dir)).toBe(true);
    expect(sleepers.every(isAlive)).toBe(true);

    child.kill('SIGKILL');
    await until(() => child.exitCode !== null || child.signalCode !== null, 'the bench-like process to exit');
    // What the sweep is for: the pods outlive their agent.
    expect(sleepers.every(isAlive)).toBe(true);

    expect(await sweepLeftovers({ root })).toEqual({ directories: 1, processes: 2, kept: [] });
    expect(sleepers.some(isAlive)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  it('does not kill a recorded pid that now names another process (a different start time), nor a recycled owner pid', async () => {
    const root = sweepRoot();
    const dir = join(root, `${BENCH_DIR_PREFIX}recycled-x`);
    mkdirSync(dir);
    // The owner's pid is this live process, but its start time is not this process's: the owner is gone.
    writeFileSync(join(dir, OWNER_FILE), JSON.stringify({ pid: process.pid, procStart: readProcStart(process.pid)! + 1 }));
    const stranger = await detachedSleep();
    const recorded = { pid: stranger.pid, procStart: stranger.procStart - 1 };
    await recordPod(join(dir, 'cluster', 'nodes', 'node-a'), recorded);
    expect(recordedProcesses(dir)).toEqual([recorded]);

    expect(await sweepLeftovers({ root })).toEqual({ directories: 1, processes: 0, kept: [] });
    expect(isAlive(stranger)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it(`sweeps a directory without an owner file only once it is ${UNOWNED_AFTER_MS / 60_000} min old`, async () => {
    const root = sweepRoot();
    const young = join(root, `${BENCH_DIR_PREFIX}young-x`);
    const old = join(root, `${BENCH_DIR_PREFIX}old-x`);
    const youngSleeper = await detachedSleep();
    const oldSleeper = await detachedSleep();
    for (const [dir, sleeper] of [[young, youngSleeper], [old, oldSleeper]] as const) {
      mkdirSync(dir);
      await recordPod(join(dir, 'cluster', 'nodes', 'node-a'), sleeper);
    }
    const longAgo = new Date(Date.now() - UNOWNED_AFTER_MS - 60_000);
    utimesSync(old, longAgo, longAgo);

    expect(await sweepLeftovers({ root })).toEqual({ directories: 1, processes: 1, kept: [] });
    expect(isAlive(oldSleeper)).toBe(false);
    expect(existsSync(old)).toBe(false);
    expect(isAlive(youngSleeper)).toBe(true);
    expect(existsSync(young)).toBe(true);
  });
});
