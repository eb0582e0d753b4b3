/**
 * Starts and stops the local Kafka cluster (KRaft, each node a broker + controller in one
 * JVM on 127.0.0.1) that dev, CI and tests share: one broker by default, or several with a
 * quorum of as many controllers. The jars come from Maven once and are cached; see
 * `jars.ts`. Running clusters are recorded in `.kafka-local/state.json`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { newClusterId, renderLog4j2Properties, renderServerProperties, type Voter } from './config.ts';
import { LocalKafkaError, tail } from './errors.ts';
import { findJava } from './java.ts';
import { ensureKafkaJars } from './jars.ts';
import { KAFKA_VERSION, STATE_FILE, defaultDataDir } from './paths.ts';
import { waitUntilAnswers } from './probe.ts';
import { commandLineOf, isPidAlive, run, sleep } from './process-util.ts';
import { readState, removeState, writeState, type BrokerNodeState, type BrokerState } from './state.ts';

export { ensureKafkaJars } from './jars.ts';
export { KAFKA_VERSION } from './paths.ts';
export type { BrokerNodeState, BrokerState } from './state.ts';

/** JVM flags of the broker: small heap, G1, headless. */
export const JVM_OPTS: readonly string[] = ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true'];

/** Options of {@link startLocalBroker}. */
export interface StartOptions {
  /** Brokers in the cluster, each a KRaft broker + controller (a quorum of that many voters); default 1. */
  readonly brokers?: number;
  /** Data dir (config, logs, partitions); default `data` (one broker) or `data-<n>` beside the state file (`.kafka-local/`). */
  readonly dataDir?: string;
  /** Client port of the first broker on 127.0.0.1 (the others take the next ones); default free ports. */
  readonly port?: number;
  /** Broker `group.min.session.timeout.ms`; default 1000 so failover tests are fast. */
  readonly minSessionTimeoutMs?: number;
  /** Broker `broker.session.timeout.ms` of a cluster of several brokers: how soon a dead broker is fenced (default 6000). */
  readonly brokerSessionTimeoutMs?: number;
  /** Run the JVMs in their own process groups and let this process exit (the CLI's `start`). */
  readonly detached?: boolean;
  /** How long to wait for the cluster to answer; default 120 s. */
  readonly readyTimeoutMs?: number;
  /** State file to record the cluster in; default `.kafka-local/state.json`, `null` for none. */
  readonly stateFile?: string | null;
}

/** One broker of a started cluster, for tests that fail brokers on purpose. */
export interface LocalBrokerNode {
  readonly nodeId: number;
  /** `127.0.0.1:PORT` of this broker. */
  readonly address: string;
  /** pid of the current JVM (a restart changes it). */
  readonly pid: number;
  /** False once the JVM has exited. */
  alive(): boolean;
  /** Sends `signal` (default SIGKILL) to the JVM and resolves once it has exited. */
  kill(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /**
   * Starts the exited broker again on the same ports and log dir and resolves once the
   * cluster lists every broker again; updates the state file's pids.
   */
  restart(timeoutMs?: number): Promise<void>;
}

/** A started local cluster (one broker or several). */
export interface LocalBroker {
  /** Bootstrap addresses, `127.0.0.1:PORT[,...]`, one per broker. */
  readonly brokers: string;
  /** pid of the first broker's JVM. */
  readonly pid: number;
  /** What the state file records (current pids). */
  readonly state: BrokerState;
  /** Every broker, by node id. */
  readonly nodes: readonly LocalBrokerNode[];
  /** SIGTERM to every broker at once, then SIGKILL after `timeoutMs` (default 20 s); removes the state file. */
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

/** How a node's JVM ended. */
interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The files and ports of one node, fixed for the lifetime of a started cluster. */
interface NodeSpec {
  readonly nodeId: number;
  readonly port: number;
  readonly controllerPort: number;
  readonly dir: string;
  readonly propsFile: string;
  readonly logFile: string;
  readonly outFile: string;
  readonly logProps: readonly string[];
}

/** Distinct free ports, none of them in `taken`. */
async function freePorts(count: number, taken: ReadonlySet<number>): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = await freePort();
    if (!taken.has(port)) ports.add(port);
  }
  return [...ports];
}

/** The log tails of every node, for error messages. */
function nodeLogs(specs: readonly NodeSpec[]): string {
  return specs.map((spec) =>
    `--- node ${spec.nodeId}: ${spec.logFile} (tail) ---\n${readTail(spec.logFile)}\n--- node ${spec.nodeId}: ${spec.outFile} (tail) ---\n${readTail(spec.outFile)}`,
  ).join('\n');
}

/**
 * Starts a local KRaft cluster of `options.brokers` nodes (default 1) and resolves once
 * kafkajs gets answers from it with every broker registered. Fetches the jars on first
 * use, formats each node's log dir (keeping already formatted ones), and records the
 * cluster in the state file. A single broker keeps its files in the data dir itself
 * (`kraft/`, `server.properties`, `broker.log`); each node of a larger cluster in
 * `node-<id>/` below it. Throws a {@link LocalKafkaError}: `JAVA_MISSING`, `MAVEN_*`,
 * `PORT_IN_USE`, `FORMAT_FAILED`, `BROKER_EXITED` or `BROKER_NOT_READY` (with log tails).
 */
export async function startLocalBroker(options: StartOptions = {}): Promise<LocalBroker> {
  const count = options.brokers ?? 1;
  if (!Number.isInteger(count) || count < 1) {
    throw new LocalKafkaError('CLUSTER_MISMATCH', `A cluster needs a whole number of brokers ≥ 1, got ${String(count)}.`, { context: { brokers: count } });
  }
  const java = await findJava();
  const { libsDir } = await ensureKafkaJars();
  const classpath = join(libsDir, '*');
  const stateFile = options.stateFile === undefined ? STATE_FILE : options.stateFile;
  const dataDir = resolve(options.dataDir ?? defaultDataDir(count, stateFile ?? STATE_FILE));
  mkdirSync(dataDir, { recursive: true });

  const requested = options.port ? Array.from({ length: count }, (_, i) => options.port! + i) : [];
  for (const port of requested) {
    if (port > 65_535 || !(await portIsFree(port))) {
      throw new LocalKafkaError('PORT_IN_USE',
        `Port ${port} on 127.0.0.1 is already in use${count > 1 ? ` (a cluster of ${count} uses ${requested[0]}..${requested.at(-1)})` : ''}; ` +
        `pick another --port or leave it out to get free ones.`,
        { context: { port } });
    }
  }
  const clientPorts = requested.length > 0 ? requested : await freePorts(count, new Set());
  const controllerPorts = await freePorts(count, new Set(clientPorts));
  const voters: Voter[] = controllerPorts.map((controllerPort, i) => ({ nodeId: i + 1, controllerPort }));

  const specs: NodeSpec[] = voters.map(({ nodeId, controllerPort }, i) => {
    const dir = count === 1 ? dataDir : join(dataDir, `node-${nodeId}`);
    const log4jFile = join(dir, 'log4j2.properties');
    return {
      nodeId,
      port: clientPorts[i]!,
      controllerPort,
      dir,
      propsFile: join(dir, 'server.properties'),
      logFile: join(dir, 'broker.log'),
      outFile: join(dir, 'broker.out'),
      logProps: [`-Dlog4j2.configurationFile=${log4jFile}`, `-Dkafka.logs.dir=${dir}`],
    };
  });
  for (const spec of specs) {
    mkdirSync(spec.dir, { recursive: true });
    writeFileSync(spec.propsFile, renderServerProperties({
      port: spec.port,
      controllerPort: spec.controllerPort,
      logDirs: join(spec.dir, 'kraft'),
      minSessionTimeoutMs: options.minSessionTimeoutMs ?? 1_000,
      nodeId: spec.nodeId,
      voters,
      ...(options.brokerSessionTimeoutMs === undefined ? {} : { brokerSessionTimeoutMs: options.brokerSessionTimeoutMs }),
    }));
    writeFileSync(join(spec.dir, 'log4j2.properties'), renderLog4j2Properties(spec.logFile));
    rotate(spec.logFile);
    rotate(spec.outFile);
  }

  // Already formatted log dirs keep their cluster id and topics (-g ignores them, but the
  // id passed must still match the one in meta.properties).
  const clusterId = specs.map((spec) => readClusterId(join(spec.dir, 'kraft'))).find((id) => id !== undefined) ?? newClusterId();
  // `--cluster-id=<id>` in one argument: a base64url id may begin with '-', which the
  // tool's parser would read as an option after a separate `-t`.
  const formats = await Promise.all(specs.map((spec) =>
    run(java, [...spec.logProps, '-cp', classpath, 'kafka.tools.StorageTool', 'format', `--cluster-id=${clusterId}`, '-c', spec.propsFile, '-g'])));
  formats.forEach((format, i) => {
    if (format.code !== 0) {
      throw new LocalKafkaError('FORMAT_FAILED',
        `Formatting the Kafka data dir ${specs[i]!.dir} failed (exit ${String(format.code)}):\n${tail(format.output)}\n` +
        `If the data dir is from another Kafka version, another cluster size, or broken, delete it and start again.`,
        { context: { dataDir: specs[i]!.dir, propsFile: specs[i]!.propsFile } });
    }
  });

  const handles = new Map<number, NodeHandle>();
  const stopAll = async (timeoutMs = 20_000): Promise<void> => {
    await Promise.all([...handles.values()].map((handle) => handle.terminate(timeoutMs)));
    if (stateFile) removeState(state().pid, stateFile);
  };
  const brokers = specs.map((spec) => `127.0.0.1:${spec.port}`).join(',');
  const startedAt = new Date().toISOString();
  const state = (): BrokerState => {
    const nodes: BrokerNodeState[] = specs.map((spec) => ({
      nodeId: spec.nodeId,
      pid: handles.get(spec.nodeId)?.pid ?? -1,
      port: spec.port,
      controllerPort: spec.controllerPort,
      dataDir: spec.dir,
      logFile: spec.logFile,
    }));
    const first = nodes[0]!;
    return {
      brokers, pid: first.pid, port: first.port, controllerPort: first.controllerPort, clusterId, dataDir,
      logFile: first.logFile, kafkaVersion: KAFKA_VERSION, startedAt, nodes,
    };
  };
  const launch = async (spec: NodeSpec): Promise<NodeHandle> => {
    const handle = await spawnNode(java, classpath, spec, options.detached ?? false);
    handles.set(spec.nodeId, handle);
    return handle;
  };
  try {
    for (const spec of specs) await launch(spec);
  } catch (err) {
    await stopAll(5_000);
    throw err;
  }

  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const anyExited = () => [...handles.values()].some((handle) => handle.exited !== undefined);
  const whole = (timeoutMs: number, shouldAbort: () => boolean) =>
    waitUntilAnswers(brokers.split(','), { timeoutMs, shouldAbort, expectedClusterId: clusterId, expectedBrokers: count });
  if (!(await whole(readyTimeoutMs, anyExited))) {
    const logs = nodeLogs(specs);
    const dead = [...handles.values()].find((handle) => handle.exited !== undefined);
    await stopAll(5_000);
    if (dead) {
      throw new LocalKafkaError('BROKER_EXITED',
        `Kafka broker ${dead.nodeId} exited during start-up (code ${String(dead.exited!.code)}, signal ${String(dead.exited!.signal)}).\n${logs}`,
        { retriable: true, context: { ...state() } });
    }
    throw new LocalKafkaError('BROKER_NOT_READY',
      `The Kafka cluster at ${brokers} did not answer with ${count} broker(s) within ${readyTimeoutMs} ms; it was stopped.\n${logs}`,
      { retriable: true, context: { ...state() } });
  }

  if (stateFile) writeState(state(), stateFile);
  if (options.detached) for (const handle of handles.values()) handle.child.unref();

  const nodes: LocalBrokerNode[] = specs.map((spec) => ({
    nodeId: spec.nodeId,
    address: `127.0.0.1:${spec.port}`,
    get pid() {
      return handles.get(spec.nodeId)!.pid;
    },
    alive: () => handles.get(spec.nodeId)!.exited === undefined,
    kill: (signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL') => handles.get(spec.nodeId)!.signal(signal),
    restart: async (timeoutMs = readyTimeoutMs) => {
      if (handles.get(spec.nodeId)!.exited === undefined) {
        throw new LocalKafkaError('CLUSTER_MISMATCH', `Broker ${spec.nodeId} is still running; kill it before restarting it.`, { context: { nodeId: spec.nodeId } });
      }
      rotate(spec.logFile);
      rotate(spec.outFile);
      const handle = await launch(spec);
      if (options.detached) handle.child.unref();
      if (stateFile) writeState(state(), stateFile);
      if (!(await whole(timeoutMs, () => handle.exited !== undefined))) {
        throw new LocalKafkaError(handle.exited ? 'BROKER_EXITED' : 'BROKER_NOT_READY',
          `Kafka broker ${spec.nodeId} did not rejoin the cluster at ${brokers} within ${timeoutMs} ms.\n${nodeLogs([spec])}`,
          { retriable: true, context: { nodeId: spec.nodeId } });
      }
    },
  }));
  return { brokers, pid: state().pid, get state() { return state(); }, nodes, stop: stopAll };
}

/** One running (or exited) node JVM. */
interface NodeHandle {
  readonly nodeId: number;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Set once the JVM has exited. */
  readonly exited: Exit | undefined;
  /** Sends `signal` and resolves once the JVM has exited. */
  signal(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the JVM has exited. */
  terminate(timeoutMs: number): Promise<void>;
}

/** Spawns one node's JVM (no shell: the JVM expands the classpath wildcard itself). */
async function spawnNode(java: string, classpath: string, spec: NodeSpec, detached: boolean): Promise<NodeHandle> {
  const out = openSync(spec.outFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(java, [...JVM_OPTS, ...spec.logProps, '-cp', classpath, 'kafka.Kafka', spec.propsFile], {
      cwd: spec.dir,
      detached,
      stdio: ['ignore', out, out],
    });
  } finally {
    closeSync(out);
  }
  let exited: Exit | undefined;
  const exitPromise = new Promise<void>((r) => child.once('exit', (code, signal) => { exited = { code, signal }; r(); }));
  const spawnError = await new Promise<Error | undefined>((r) => {
    child.once('error', r);
    child.once('spawn', () => r(undefined));
  });
  if (spawnError || child.pid === undefined) {
    throw new LocalKafkaError('JAVA_MISSING', `Could not start '${java}': ${spawnError?.message ?? 'no pid'}`, { context: { java } });
  }
  const pid = child.pid;
  const terminate = async (timeoutMs: number): Promise<void> => {
    if (exited !== undefined) return;
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
  };
  return {
    nodeId: spec.nodeId,
    pid,
    child,
    get exited() {
      return exited;
    },
    signal: async (signal) => {
      if (exited !== undefined) return;
      child.kill(signal);
      await exitPromise;
    },
    terminate,
  };
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
 * The cluster recorded in the state file, if every broker's process lives and the cluster
 * answers with all of them within `timeoutMs`; otherwise undefined.
 */
export async function findLiveBroker(options: { stateFile?: string; timeoutMs?: number } = {}): Promise<BrokerState | undefined> {
  const state = readState(options.stateFile ?? STATE_FILE);
  const allAlive = () => state !== undefined && state.nodes.every((node) => isPidAlive(node.pid));
  if (!state || !allAlive()) return undefined;
  const ok = await waitUntilAnswers(state.brokers.split(','), {
    timeoutMs: options.timeoutMs ?? 5_000,
    shouldAbort: () => !allAlive(),
    expectedBrokers: state.nodes.length,
    ...(state.clusterId ? { expectedClusterId: state.clusterId } : {}),
  });
  return ok ? state : undefined;
}

/**
 * Stops every broker of the cluster recorded in the state file (if any, all at once) and
 * removes the file. Resolves the state it stopped, or undefined if none was running.
 */
export async function stopLocalBroker(options: { stateFile?: string; timeoutMs?: number } = {}): Promise<BrokerState | undefined> {
  const stateFile = options.stateFile ?? STATE_FILE;
  const state = readState(stateFile);
  if (!state) return undefined;
  // Never signal a pid that was reused by some other program since the state was written.
  const stopped = await Promise.all(state.nodes.map((node) =>
    isRecordedNode(node) ? stopBrokerProcess(node.pid, options.timeoutMs) : Promise.resolve(false)));
  removeState(state.pid, stateFile);
  return stopped.some(Boolean) ? state : undefined;
}

/** True if the state's first pid is still a `kafka.Kafka` JVM on the state's data dir. */
export function isRecordedBroker(state: BrokerState): boolean {
  return isRecordedNode(state.nodes[0] ?? state);
}

/** True if the node's pid is still a `kafka.Kafka` JVM on the node's data dir. */
export function isRecordedNode(node: Pick<BrokerNodeState, 'pid' | 'dataDir'>): boolean {
  const cmd = commandLineOf(node.pid);
  return cmd !== undefined && cmd.includes('kafka.Kafka') && (node.dataDir === undefined || cmd.includes(node.dataDir));
}

/** Result of {@link ensureLocalBroker}. */
export interface EnsuredBroker {
  /** Bootstrap addresses, `127.0.0.1:PORT[,...]`. */
  readonly brokers: string;
  /** pid of the first broker. */
  readonly pid: number;
  /** How many brokers the cluster has. */
  readonly brokerCount: number;
  /** True if this call started the cluster (and so owns stopping it). */
  readonly started: boolean;
  /** Present when `started`: stops the cluster this call started. */
  readonly stop?: (timeoutMs?: number) => Promise<void>;
}

/**
 * Reuses the live cluster from the state file, or starts one. A recorded cluster with a
 * broker that died or does not answer is stopped and started again (on its data dir).
 * With `options.brokers` set, a live cluster of another size is an error
 * (`CLUSTER_MISMATCH`: stop it first); without it, any live cluster is reused and a new
 * one has a single broker. A lock file keeps two processes (say `npm run kafka:start` and
 * a test run) from starting two clusters on the same data dir.
 */
export async function ensureLocalBroker(options: StartOptions = {}): Promise<EnsuredBroker> {
  const stateFile = options.stateFile ?? STATE_FILE;
  const lockFile = `${stateFile}.lock`;
  await acquireLock(lockFile, (options.readyTimeoutMs ?? 120_000) + 60_000);
  try {
    const live = await findLiveBroker({ stateFile });
    if (live && options.brokers !== undefined && live.nodes.length !== options.brokers) {
      throw new LocalKafkaError('CLUSTER_MISMATCH',
        `A local Kafka cluster of ${live.nodes.length} broker(s) is running at ${live.brokers} (${stateFile}); ` +
        `stop it first (npm run kafka:stop) to start one of ${options.brokers}.`,
        { context: { running: live.nodes.length, wanted: options.brokers, stateFile } });
    }
    if (live) return { brokers: live.brokers, pid: live.pid, brokerCount: live.nodes.length, started: false };
    const stale = readState(stateFile);
    if (stale) await stopLocalBroker({ stateFile, timeoutMs: 10_000 });
    const restartSize = options.brokers ?? stale?.nodes.length;
    const broker = await startWithRetry({
      ...options,
      ...(restartSize === undefined ? {} : { brokers: restartSize }),
      ...(options.dataDir === undefined && stale && stale.nodes.length === restartSize ? { dataDir: stale.dataDir } : {}),
      stateFile,
    });
    return { brokers: broker.brokers, pid: broker.pid, brokerCount: broker.nodes.length, started: true, stop: broker.stop };
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
