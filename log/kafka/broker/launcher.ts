/**
 * Starts and stops the local single-node Kafka broker (KRaft, broker + controller in one
 * JVM on 127.0.0.1) that dev, CI and tests share. The jars come from Maven once and are
 * cached; see `jars.ts`. Running brokers are recorded in `.kafka-local/state.json`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { newClusterId, renderLog4j2Properties, renderServerProperties } from './config.ts';
import { LocalKafkaError, tail } from './errors.ts';
import { findJava } from './java.ts';
import { ensureKafkaJars } from './jars.ts';
import { DEFAULT_DATA_DIR, KAFKA_VERSION, STATE_FILE } from './paths.ts';
import { waitUntilAnswers } from './probe.ts';
import { commandLineOf, isPidAlive, run, sleep } from './process-util.ts';
import { readState, removeState, writeState, type BrokerState } from './state.ts';

export { ensureKafkaJars } from './jars.ts';
export { KAFKA_VERSION } from './paths.ts';
export type { BrokerState } from './state.ts';

/** JVM flags of the broker: small heap, G1, headless. */
export const JVM_OPTS: readonly string[] = ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true'];

/** Options of {@link startLocalBroker}. */
export interface StartOptions {
  /** Data dir (config, logs, partitions); default `.kafka-local/data` in the repo root. */
  readonly dataDir?: string;
  /** Client port on 127.0.0.1; default a free port. */
  readonly port?: number;
  /** Broker `group.min.session.timeout.ms`; default 1000 so failover tests are fast. */
  readonly minSessionTimeoutMs?: number;
  /** Run the JVM in its own process group and let this process exit (the CLI's `start`). */
  readonly detached?: boolean;
  /** How long to wait for the broker to answer; default 120 s. */
  readonly readyTimeoutMs?: number;
  /** State file to record the broker in; default `.kafka-local/state.json`, `null` for none. */
  readonly stateFile?: string | null;
}

/** A started local broker. */
export interface LocalBroker {
  /** Bootstrap address, `127.0.0.1:PORT`. */
  readonly brokers: string;
  readonly pid: number;
  readonly state: BrokerState;
  /** SIGTERM, then SIGKILL after `timeoutMs` (default 20 s); removes the state file. */
  stop(timeoutMs?: number): Promise<void>;
}

/** Picks a free TCP port on 127.0.0.1 by binding port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolvePort(address.port);
        else reject(new Error('could not read the bound port'));
      });
    });
  });
}

/** True if nothing listens on 127.0.0.1:`port` (checked by binding it). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

function readTail(file: string, lines = 40): string {
  try {
    return tail(readFileSync(file, 'utf8'), lines);
  } catch {
    return '(no output)';
  }
}

/** The cluster id in `<logDirs>/meta.properties`, if the dir was formatted before. */
export function readClusterId(logDirs: string): string | undefined {
  try {
    const m = /^cluster\.id=(.+)$/m.exec(readFileSync(join(logDirs, 'meta.properties'), 'utf8'));
    return m?.[1]?.trim();
  } catch {
    return undefined;
  }
}

/** Moves `file` to `file.1` (one generation), so each start's log begins empty. */
function rotate(file: string): void {
  if (existsSync(file)) renameSync(file, `${file}.1`);
}

/**
 * Starts a single-node KRaft broker and resolves once kafkajs gets answers from it.
 * Fetches the jars on first use, formats the data dir (keeping an already formatted one),
 * and records the broker in the state file. Throws a {@link LocalKafkaError}: `JAVA_MISSING`,
 * `MAVEN_*`, `FORMAT_FAILED`, `BROKER_EXITED` or `BROKER_NOT_READY` (with log tails).
 */
export async function startLocalBroker(options: StartOptions = {}): Promise<LocalBroker> {
  const java = await findJava();
  const { libsDir } = await ensureKafkaJars();
  const classpath = join(libsDir, '*');
  const dataDir = resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const stateFile = options.stateFile === undefined ? STATE_FILE : options.stateFile;
  mkdirSync(dataDir, { recursive: true });

  if (options.port !== undefined && options.port !== 0 && !(await portIsFree(options.port))) {
    throw new LocalKafkaError('PORT_IN_USE',
      `Port ${options.port} on 127.0.0.1 is already in use; pick another --port or leave it out to get a free one.`,
      { context: { port: options.port } });
  }
  const port = options.port || (await freePort());
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();

  const logDirs = join(dataDir, 'kraft');
  const propsFile = join(dataDir, 'server.properties');
  const log4jFile = join(dataDir, 'log4j2.properties');
  const logFile = join(dataDir, 'broker.log');
  const outFile = join(dataDir, 'broker.out');
  writeFileSync(propsFile, renderServerProperties({
    port,
    controllerPort,
    logDirs,
    minSessionTimeoutMs: options.minSessionTimeoutMs ?? 1_000,
  }));
  writeFileSync(log4jFile, renderLog4j2Properties(logFile));
  rotate(logFile);
  rotate(outFile);

  const logProps = [`-Dlog4j2.configurationFile=${log4jFile}`, `-Dkafka.logs.dir=${dataDir}`];
  // An already formatted data dir keeps its cluster id and topics (-g ignores it, but the
  // id passed must still match the one in meta.properties).
  const clusterId = readClusterId(logDirs) ?? newClusterId();
  const format = await run(java, [...logProps, '-cp', classpath, 'kafka.tools.StorageTool',
    'format', '-t', clusterId, '-c', propsFile, '-g']);
  if (format.code !== 0) {
    throw new LocalKafkaError('FORMAT_FAILED',
      `Formatting the Kafka data dir ${dataDir} failed (exit ${String(format.code)}):\n${tail(format.output)}\n` +
      `If the data dir is from another Kafka version or broken, delete it and start again.`,
      { context: { dataDir, propsFile } });
  }

  const out = openSync(outFile, 'a');
  let child: ChildProcess;
  try {
    // No shell: the JVM expands the classpath wildcard itself.
    child = spawn(java, [...JVM_OPTS, ...logProps, '-cp', classpath, 'kafka.Kafka', propsFile], {
      cwd: dataDir,
      detached: options.detached ?? false,
      stdio: ['ignore', out, out],
    });
  } finally {
    closeSync(out);
  }
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((r) => child.once('exit', (code, signal) => { exited = { code, signal }; r(); }));
  const spawnError = await new Promise<Error | undefined>((r) => {
    child.once('error', r);
    child.once('spawn', () => r(undefined));
  });
  if (spawnError || child.pid === undefined) {
    throw new LocalKafkaError('JAVA_MISSING', `Could not start '${java}': ${spawnError?.message ?? 'no pid'}`, { context: { java } });
  }
  const pid = child.pid;
  const brokers = `127.0.0.1:${port}`;
  const state: BrokerState = {
    brokers, pid, port, controllerPort, clusterId, dataDir, logFile,
    kafkaVersion: KAFKA_VERSION, startedAt: new Date().toISOString(),
  };

  const stop = async (timeoutMs = 20_000): Promise<void> => {
    if (exited === undefined) {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([
        exitPromise.then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (!done) {
        child.kill('SIGKILL');
        await exitPromise;
      }
    }
    if (stateFile) removeState(pid, stateFile);
  };

  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const ready = await waitUntilAnswers([brokers], {
    timeoutMs: readyTimeoutMs,
    shouldAbort: () => exited !== undefined,
    expectedClusterId: clusterId,
  });
  if (!ready) {
    const logs = `--- ${logFile} (tail) ---\n${readTail(logFile)}\n--- ${outFile} (tail) ---\n${readTail(outFile)}`;
    if (exited !== undefined) {
      throw new LocalKafkaError('BROKER_EXITED',
        `The Kafka broker exited during start-up (code ${String(exited.code)}, signal ${String(exited.signal)}).\n${logs}`,
        { retriable: true, context: { ...state } });
    }
    await stop(5_000);
    throw new LocalKafkaError('BROKER_NOT_READY',
      `The Kafka broker at ${brokers} did not answer within ${readyTimeoutMs} ms; it was stopped.\n${logs}`,
      { retriable: true, context: { ...state } });
  }

  if (stateFile) writeState(state, stateFile);
  if (options.detached) child.unref();
  return { brokers, pid, state, stop };
}

/**
 * Stops a broker by pid (one started by another process): SIGTERM, then SIGKILL after
 * `timeoutMs`. Resolves true if it was running.
 */
export async function stopBrokerProcess(pid: number, timeoutMs = 20_000): Promise<boolean> {
  if (!isPidAlive(pid)) return false;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return false;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isPidAlive(pid)) return true;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
  while (isPidAlive(pid)) await sleep(50);
  return true;
}

/**
 * The broker recorded in the state file, if its process lives and it answers within
 * `timeoutMs`; otherwise undefined.
 */
export async function findLiveBroker(options: { stateFile?: string; timeoutMs?: number } = {}): Promise<BrokerState | undefined> {
  const state = readState(options.stateFile ?? STATE_FILE);
  if (!state || !isPidAlive(state.pid)) return undefined;
  const ok = await waitUntilAnswers([state.brokers], {
    timeoutMs: options.timeoutMs ?? 5_000,
    shouldAbort: () => !isPidAlive(state.pid),
    ...(state.clusterId ? { expectedClusterId: state.clusterId } : {}),
  });
  return ok ? state : undefined;
}

/**
 * Stops the broker recorded in the state file (if any) and removes the file.
 * Resolves the state it stopped, or undefined if none was running.
 */
export async function stopLocalBroker(options: { stateFile?: string; timeoutMs?: number } = {}): Promise<BrokerState | undefined> {
  const stateFile = options.stateFile ?? STATE_FILE;
  const state = readState(stateFile);
  if (!state) return undefined;
  // Never signal a pid that was reused by some other program since the state was written.
  const wasRunning = isRecordedBroker(state) && (await stopBrokerProcess(state.pid, options.timeoutMs));
  removeState(state.pid, stateFile);
  return wasRunning ? state : undefined;
}

/** True if the state's pid is still a `kafka.Kafka` JVM on the state's data dir. */
export function isRecordedBroker(state: BrokerState): boolean {
  const cmd = commandLineOf(state.pid);
  return cmd !== undefined && cmd.includes('kafka.Kafka') && (state.dataDir === undefined || cmd.includes(state.dataDir));
}

/** Result of {@link ensureLocalBroker}. */
export interface EnsuredBroker {
  readonly brokers: string;
  readonly pid: number;
  /** True if this call started the broker (and so owns stopping it). */
  readonly started: boolean;
  /** Present when `started`: stops the broker this call started. */
  readonly stop?: (timeoutMs?: number) => Promise<void>;
}

/**
 * Reuses the live broker from the state file, or starts one. A recorded broker whose
 * process lives but does not answer is stopped and replaced. A lock file keeps two
 * processes (say `npm run kafka:start` and a test run) from starting two brokers on the
 * same data dir.
 */
export async function ensureLocalBroker(options: StartOptions = {}): Promise<EnsuredBroker> {
  const stateFile = options.stateFile ?? STATE_FILE;
  const lockFile = `${stateFile}.lock`;
  await acquireLock(lockFile, (options.readyTimeoutMs ?? 120_000) + 60_000);
  try {
    const live = await findLiveBroker({ stateFile });
    if (live) return { brokers: live.brokers, pid: live.pid, started: false };
    const stale = readState(stateFile);
    if (stale) await stopLocalBroker({ stateFile, timeoutMs: 10_000 });
    const broker = await startWithRetry({ ...options, stateFile });
    return { brokers: broker.brokers, pid: broker.pid, started: true, stop: broker.stop };
  } finally {
    releaseLock(lockFile);
  }
}

/**
 * A free port picked by binding port 0 can be taken by someone else before the JVM binds
 * it; then the broker exits at once. Retry such a start (only with auto-picked ports).
 */
async function startWithRetry(options: StartOptions, attempts = 3): Promise<LocalBroker> {
  for (let i = 1; ; i++) {
    try {
      return await startLocalBroker(options);
    } catch (err) {
      const portRace = err instanceof LocalKafkaError && err.code === 'BROKER_EXITED' && /Address already in use/.test(err.message);
      if (!portRace || options.port !== undefined || i >= attempts) throw err;
    }
  }
}

async function acquireLock(lockFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  mkdirSync(dirname(lockFile), { recursive: true });
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let text = '';
    try {
      text = readFileSync(lockFile, 'utf8').trim();
    } catch {
      continue; // released meanwhile
    }
    const holder = Number(text);
    // An empty file is a holder between create and write: wait, never steal it.
    if (text !== '' && (!Number.isInteger(holder) || holder <= 0 || !isPidAlive(holder))) {
      releaseLock(lockFile); // the holder died: take over
      continue;
    }
    if (Date.now() > deadline) {
      throw new LocalKafkaError('BROKER_NOT_READY',
        `Another process (pid ${holder}) has been starting the local Kafka broker for too long (lock ${lockFile}).`,
        { retriable: true, context: { lockFile, holder } });
    }
    await sleep(200);
  }
}

function releaseLock(lockFile: string): void {
  try {
    const holder = readFileSync(lockFile, 'utf8').trim();
    if (holder === String(process.pid) || !isPidAlive(Number(holder))) rmSync(lockFile, { force: true });
  } catch {
    /* no lock */
  }
}
