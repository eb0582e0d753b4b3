/**
 * api: an apiserver with its own projection over the log (as `logplane up` wires it, but
 * without controllers or agents, so only the API path is measured), plain HTTP on
 * loopback, the load from a second process; one client creating pods one after another
 * (the path's latency without queueing), then 16 concurrent clients:
 *
 * - create: POST of a Pod (append → projection applies it → the fold's verdict → 201);
 * - get: GET of a random existing Pod;
 * - list: GET of the namespace's Pods, first page of 500 (`limit=500`);
 * - watch delivery: one watch on the namespace, opened before the creates; for each pod,
 *   the time from its create response arriving at the client to its ADDED event arriving
 *   on the watch (0 when the event came first: both are released by the same commit).
 *
 * Where a concurrent create's time goes, measured in the apiserver's process: the append
 * (until the log acknowledged it) and the wait for this apiserver's projection to apply it;
 * the rest is HTTP, admission, the response and queueing for the event loop.
 *
 * On the embedded log the run uses the default durability of `logplane up` (`flushed`);
 * the create phases are then measured once more on a log opened with `committed`, and
 * reported as such (not the target figure: it is not what `logplane up` runs by default).
 *
 * Last, the machine's own HTTP limit (`http-limit.ts`): the same creates-only load (same
 * client process, clients, creates and bodies) against a bare `node:http` server in this
 * process that only parses each body and answers 201 with a response of the apiserver's size.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiServer, parseTokenFile } from '../../apiserver/index.ts';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { createKafkaLog } from '../../log/kafka/index.ts';
import type { EventLog } from '../../log/port.ts';
import { createProjection, type Projection } from '../../projections/index.ts';
import type { ApiLatencies, ApiLoad, ClientRole } from '../api-clients.ts';
import { benchKafkaCluster } from '../kafka-clusters.ts';
import { startServerTrace, traceDir, writeApiTrace, type ProcessTrace } from '../api-trace.ts';
import { startBareHttpServer } from '../http-limit.ts';
import {
  atMost,
  createBenchClient,
  expectStatus,
  plain,
  quantile,
  quietLogger,
  round,
  type BenchClient,
  type Figure,
  type ScenarioContext,
  type ScenarioResult,
  withTempDir,
} from '../support.ts';

const CLIENTS = 16;
/** Creates per second of the paced phase, all clients together: well below what one apiserver answers here. */
const PACED_RATE = 400;
const NAMESPACE = 'bench-api';
const PACED_NAMESPACE = 'bench-api-paced';
const TOKEN = 'bench-admin-token';
const SLO = 'Kubernetes SLO: mutating API call p99 ≤ 1 s';

type ChildMessage =
  | { type: 'done'; latencies: ApiLatencies; trace?: ProcessTrace }
  | { type: 'ready' }
  | { type: 'arrivals'; arrivals: Record<string, number>; trace?: ProcessTrace }
  | { type: 'failed'; error: string };

/** Forks a client process in `role`; `next()` resolves with its next message. */
const forkClient = (role: ClientRole) => {
  const child = fork(fileURLToPath(new URL('../api-clients.ts', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // The clients are the instrument: without this, V8's memory reducer compacts the mostly
    // idle watcher's heap on its own timer, 7.8, 8.4 and 9.1 s after it starts, which is
    // when the concurrent creates run; each pause (4–40 ms here) delays every event arriving
    // during it, and whether they fall inside the phase decided whether the Kafka p99 was
    // ~2 or ~20–30 ms (bench/FINDINGS.md, api).
    execArgv: [...process.execArgv, '--no-memory-reducer'],
  });
  const queue: ChildMessage[] = [];
  const waiting: { resolve: (message: ChildMessage) => void; reject: (error: Error) => void }[] = [];
  let ended: Error | undefined;
  child.on('message', (message: ChildMessage) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(message);
    else queue.push(message);
  });
  const end = (error: Error): void => {
    ended ??= error;
    for (const waiter of waiting.splice(0)) waiter.reject(error);
  };
  child.once('exit', (code) => end(new Error(`api ${role.role} client exited with code ${code} before answering`)));
  child.once('error', end);
  child.send(role);
  return {
    send: (message: unknown): void => void child.send(message as string),
    next: async <T extends ChildMessage['type']>(type: T): Promise<Extract<ChildMessage, { type: T }>> => {
      const message =
        queue.shift() ?? (await new Promise<ChildMessage>((resolve, reject) => (ended ? reject(ended) : waiting.push({ resolve, reject }))));
      if (message.type === 'failed') throw new Error(`api ${role.role} client failed: ${message.error}`);
      if (message.type !== type) throw new Error(`api ${role.role} client answered ${message.type}, expected ${type}`);
      return message as Extract<ChildMessage, { type: T }>;
    },
  };
};

/** What the clients report: latencies, watch arrivals, and their traces when tracing. */
interface ClientsResult {
  readonly latencies: ApiLatencies;
  readonly delivery: number[];
  readonly missing: number;
  readonly arrivals: Record<string, number>;
  readonly traces: { readonly load?: ProcessTrace; readonly watch?: ProcessTrace };
}

/** Runs the watcher and the load generator, each in its own process; latencies and watch delivery. */
const runClients = async (load: ApiLoad): Promise<ClientsResult> => {
  const watcher = forkClient({ role: 'watch', load });
  await watcher.next('ready');
  const { latencies, trace: loadTrace } = await forkClient({ role: 'load', load }).next('done');
  const names = Object.keys(latencies.responded);
  // The watcher answers once every created pod's ADDED event arrived, or after 10 s.
  watcher.send({ type: 'stop', names, waitMs: 10_000 });
  const { arrivals, trace: watchTrace } = await watcher.next('arrivals');
  const delivery = names.flatMap((name) => {
    const arrived = arrivals[name];
    return arrived === undefined ? [] : [Math.max(0, arrived - latencies.responded[name]!)];
  });
  return { latencies, delivery, missing: names.length - delivery.length, arrivals, traces: { load: loadTrace, watch: watchTrace } };
};

type Durability = 'flushed' | 'committed';

const openLog = async (context: ScenarioContext, dir: string, durability: Durability): Promise<EventLog> =>
  context.log === 'kafka'
    ? createKafkaLog({ brokers: [...context.brokers], cluster: benchKafkaCluster(), partitions: 1, logLevel: 'error' })
    : createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'bench', partitions: 1, durability });

/** One timed step of a create in the apiserver's process: when it ended (wall clock) and how long it took. */
interface StepSample {
  readonly at: number;
  readonly ms: number;
}

/** Server-side steps of the write path: appends of desired events, and waits for the projection to apply them. */
interface ServerSteps {
  readonly append: StepSample[];
  readonly applied: StepSample[];
}

const wallClock = (): number => performance.timeOrigin + performance.now();

/** `target` with one method replaced; every other member as it is (methods bound to `target`). */
const replacing = <T extends object, K extends keyof T>(target: T, key: K, replacement: T[K]): T =>
  new Proxy(target, {
    get: (object, property) => {
      if (property === key) return replacement;
      const value: unknown = Reflect.get(object, property);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });

/** The log and projection the apiserver gets, timing its appends and its waits for the projection. */
const timedWritePath = (log: EventLog, projection: Projection, steps: ServerSteps): { log: EventLog; projection: Projection } => ({
  log: replacing(log, 'append', async (topic, records) => {
    const started = performance.now();
    const positions = await log.append(topic, records);
    if (topic === 'desired') steps.append.push({ at: wallClock(), ms: performance.now() - started });
    return positions;
  }),
  projection: replacing(projection, 'waitForEvent', async (...args) => {
    const started = performance.now();
    const record = await projection.waitForEvent(...args);
    steps.applied.push({ at: wallClock(), ms: performance.now() - started });
    return record;
  }),
});

/** The samples of `steps` that ended inside the concurrent create phase. */
const inWindow = (samples: readonly StepSample[], window: ApiLatencies['createWindow']): number[] =>
  samples.filter(({ at }) => at >= window.from && at <= window.to).map(({ ms }) => ms);

interface RunResult {
  readonly latencies: ApiLatencies;
  readonly delivery: number[];
  readonly missing: number;
  readonly steps: ServerSteps;
}

/**
 * An apiserver with its own projection over a fresh log in `dir`, the namespace created,
 * and the clients run against it (with the watcher unless `createsOnly`).
 */
const runAgainstServer = async (
  context: ScenarioContext,
  dir: string,
  durability: Durability,
  load: Omit<ApiLoad, 'url' | 'token' | 'namespace' | 'pacedNamespace'>,
): Promise<RunResult> => {
  const rawLog = await openLog(context, dir, durability);
  const rawProjection = createProjection({ dir: join(dir, 'projection'), log: rawLog });
  const tracing = traceDir();
  const serverTrace = tracing ? startServerTrace(rawProjection.changes$, `Pod/${NAMESPACE}/`) : undefined;
  const steps: ServerSteps = { append: [], applied: [] };
  const { log, projection } = timedWritePath(rawLog, rawProjection, steps);
  const server = await createApiServer({
    log,
    projection,
    tokens: parseTokenFile(`${TOKEN},admin,1,"system:masters"`),
    host: '127.0.0.1',
    port: 0,
    logger: quietLogger(),
  });
  try {
    await server.ensureDefaultNamespaces();
    const client: BenchClient = createBenchClient(server.url, TOKEN);
    for (const name of [NAMESPACE, PACED_NAMESPACE]) {
      expectStatus(
        await client.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
        201,
        `creating namespace ${name}`,
      );
    }
    const fullLoad: ApiLoad = { url: server.url, token: TOKEN, namespace: NAMESPACE, pacedNamespace: PACED_NAMESPACE, ...load };
    const clients: ClientsResult = load.createsOnly
      ? await forkClient({ role: 'load', load: fullLoad })
          .next('done')
          .then(({ latencies, trace }) => ({ latencies, delivery: [], missing: 0, arrivals: {}, traces: { load: trace } }))
      : await runClients(fullLoad);
    if (tracing && serverTrace) {
      const file = writeApiTrace(tracing, {
        log: context.log,
        durability,
        window: clients.latencies.createWindow,
        clientResponded: clients.latencies.responded,
        arrivals: clients.arrivals,
        server: serverTrace.stop(),
        steps,
        ...clients.traces,
      });
      context.progress(`api trace: ${file}`);
    }
    return { latencies: clients.latencies, delivery: clients.delivery, missing: clients.missing, steps };
  } finally {
    serverTrace?.stop();
    await server.close();
    await rawProjection.close();
    await rawLog.close();
  }
};

/** The creates-only load against the bare `node:http` server of `http-limit.ts`: what this machine's HTTP stack does at all. */
const runAgainstBareServer = async (load: Omit<ApiLoad, 'url' | 'token' | 'namespace' | 'pacedNamespace'>): Promise<ApiLatencies> => {
  const server = await startBareHttpServer();
  try {
    const fullLoad: ApiLoad = { url: server.url, token: TOKEN, namespace: NAMESPACE, pacedNamespace: PACED_NAMESPACE, ...load, createsOnly: true };
    return (await forkClient({ role: 'load', load: fullLoad }).next('done')).latencies;
  } finally {
    await server.close();
  }
};

const createFigures = (label: string, load: Pick<ApiLoad, 'pacedRate'>, latencies: ApiLatencies, steps: ServerSteps): Figure[] => {
  const window = latencies.createWindow;
  const append = inWindow(steps.append, window);
  const applied = inWindow(steps.applied, window);
  return [
    plain(`create p50, 1 client (no queueing)${label}`, round(quantile(latencies.sequentialCreate, 0.5), 2), 'ms'),
    plain(`create p99, 1 client (no queueing)${label}`, round(quantile(latencies.sequentialCreate, 0.99), 2), 'ms'),
    plain(`create p50, 16 clients paced to ${load.pacedRate} req/s in all${label}`, round(quantile(latencies.pacedCreate, 0.5), 2), 'ms'),
    plain(`create p99, 16 clients paced to ${load.pacedRate} req/s in all${label}`, round(quantile(latencies.pacedCreate, 0.99), 2), 'ms'),
    plain(`create p50${label}`, round(quantile(latencies.create, 0.5), 2), 'ms'),
    plain(`create p99${label}`, round(quantile(latencies.create, 0.99), 2), 'ms'),
    plain(`create throughput${label}`, round(latencies.create.length / latencies.createSeconds), 'req/s'),
    plain(`in the apiserver: append p50${label}`, round(quantile(append, 0.5), 2), 'ms'),
    plain(`in the apiserver: append p99${label}`, round(quantile(append, 0.99), 2), 'ms'),
    plain(`in the apiserver: wait for its projection p50${label}`, round(quantile(applied, 0.5), 2), 'ms'),
    plain(`in the apiserver: wait for its projection p99${label}`, round(quantile(applied, 0.99), 2), 'ms'),
  ];
};

export const apiScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const perClient = context.quick ? 25 : 250;
  const lists = context.quick ? 3 : 20;
  const embedded = context.log === 'embedded';
  const createTarget = embedded ? 5 : 25;
  const pacing = { pacedRate: PACED_RATE, pacedPerClient: context.quick ? 10 : 100 };
  // As `logplane up` opens the embedded log: the default durability.
  const main = await withTempDir('api', (dir) => runAgainstServer(context, dir, 'flushed', { clients: CLIENTS, perClient, lists, ...pacing }));
  // The create phases once more on an embedded log opened with `committed`.
  const committed = embedded
    ? await withTempDir('api-committed', (dir) => runAgainstServer(context, dir, 'committed', { clients: CLIENTS, perClient, lists: 0, createsOnly: true, ...pacing }))
    : undefined;
  // After the apiserver's phases, so that it does not warm up their process.
  const bare = await runAgainstBareServer({ clients: CLIENTS, perClient, lists: 0, ...pacing });
  const limit = 'machine limit: bare node:http create-shaped request';
  const { latencies, delivery, missing } = main;
  const { get: getLatencies, list: listLatencies } = latencies;
  const label = embedded ? ' (durability flushed, default)' : '';
  const mainCreates = createFigures(label, pacing, latencies, main.steps).map((figure) =>
    figure.name === `create p99${label}` ? atMost(figure.name, figure.value, figure.unit, createTarget, SLO) : figure,
  );
  const figures: Figure[] = [
    ...mainCreates,
    plain(`${limit} p50 (${CLIENTS} clients)`, round(quantile(bare.create, 0.5), 2), 'ms'),
    plain(`${limit} p99 (${CLIENTS} clients)`, round(quantile(bare.create, 0.99), 2), 'ms'),
    plain(`${limit} throughput (${CLIENTS} clients)`, round(bare.create.length / bare.createSeconds), 'req/s'),
    ...(committed ? createFigures(' (durability committed)', pacing, committed.latencies, committed.steps) : []),
    plain('get p50', round(quantile(getLatencies, 0.5), 2), 'ms'),
    plain('get p99', round(quantile(getLatencies, 0.99), 2), 'ms'),
    plain('list (500 pods) p50', round(quantile(listLatencies, 0.5), 1), 'ms'),
    plain('list (500 pods) p99', round(quantile(listLatencies, 0.99), 1), 'ms'),
    plain(`whole list of ${latencies.pagedListItems} pods in pages of 500 (as kubectl), 1 client, p50`, round(quantile(latencies.pagedList, 0.5), 1), 'ms'),
    plain('watch delivery p50', round(quantile(delivery, 0.5), 2), 'ms'),
    atMost('watch delivery p99', round(quantile(delivery, 0.99), 2), 'ms', 10),
  ];
  return {
    scenario: 'api',
    log: context.log,
    figures,
    setup: { clients: CLIENTS, creates: latencies.create.length, gets: getLatencies.length, lists: listLatencies.length },
    notes: [
      'apiserver + its projection over the log in this process, no controllers or agents; the 16 clients (node:http, keep-alive) run in a second process and the watch in a third (delivery measured on the shared system clock); HTTP on loopback, no TLS.',
      `Each client sends its next request when the last one answered, so with 16 clients a create waits for the creates ahead of it: p50 ≈ 16 / throughput. The paced rows spread the same 16 clients' creates over a fixed schedule (${PACED_RATE} req/s in all, each client still one request at a time): the latency of a create when the apiserver is not saturated. "In the apiserver" splits a concurrent create: the append (until the log acknowledged it) and the wait for this apiserver's projection to apply it; the rest is HTTP, admission, the response and waiting for the event loop.`,
      `"Machine limit": the same ${CLIENTS} clients (same process, keep-alive agent, creates per client and Pod bodies, each client one request at a time) against a bare node:http server in this process that reads each body, JSON.parses it and answers 201 with the object echoed back with what the apiserver adds (≈ 470 bytes, as its response). It does no authentication, validation, log append or fold: the floor for any Node HTTP server answering these clients on this machine, measured in the same run after the apiserver's phases.`,
      ...(embedded
        ? [
            'Embedded log as `logplane up` opens it by default (durability flushed: an append resolves after the LMDB commit is flushed to disk). The "durability committed" rows repeat the create phases on a log opened with durability committed (`logplane up --durability committed`), which is not the default; gets, lists and watch are measured on the flushed log only.',
          ]
        : []),
      ...(missing > 0 ? [`${missing} create(s) had no ADDED event on the watch within 10 s.`] : []),
    ],
  };
};
