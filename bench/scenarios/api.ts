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
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiServer, parseTokenFile } from '../../apiserver/index.ts';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { createKafkaLog } from '../../log/kafka/index.ts';
import type { EventLog } from '../../log/port.ts';
import { createProjection } from '../../projections/index.ts';
import type { ApiLatencies, ApiLoad, ClientRole } from '../api-clients.ts';
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
const NAMESPACE = 'bench-api';
const TOKEN = 'bench-admin-token';
const SLO = 'Kubernetes SLO: mutating API call p99 ≤ 1 s';

type ChildMessage =
  | { type: 'done'; latencies: ApiLatencies }
  | { type: 'ready' }
  | { type: 'arrivals'; arrivals: Record<string, number> }
  | { type: 'failed'; error: string };

/** Forks a client process in `role`; `next()` resolves with its next message. */
const forkClient = (role: ClientRole) => {
  const child = fork(fileURLToPath(new URL('../api-clients.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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

/** Runs the watcher and the load generator, each in its own process; latencies and watch delivery. */
const runClients = async (load: ApiLoad): Promise<{ latencies: ApiLatencies; delivery: number[]; missing: number }> => {
  const watcher = forkClient({ role: 'watch', load });
  await watcher.next('ready');
  const { latencies } = await forkClient({ role: 'load', load }).next('done');
  const names = Object.keys(latencies.responded);
  // The watcher answers once every created pod's ADDED event arrived, or after 10 s.
  watcher.send({ type: 'stop', names, waitMs: 10_000 });
  const { arrivals } = await watcher.next('arrivals');
  const delivery = names.flatMap((name) => {
    const arrived = arrivals[name];
    return arrived === undefined ? [] : [Math.max(0, arrived - latencies.responded[name]!)];
  });
  return { latencies, delivery, missing: names.length - delivery.length };
};

const openLog = async (context: ScenarioContext, dir: string): Promise<EventLog> =>
  context.log === 'kafka'
    ? createKafkaLog({ brokers: [...context.brokers], cluster: `bench-${randomUUID().slice(0, 8)}`, partitions: 1, logLevel: 'error' })
    : // As `logplane up` opens it: appends resolve after the disk flush.
      createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'bench', partitions: 1 });

export const apiScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const perClient = context.quick ? 25 : 250;
  const lists = context.quick ? 3 : 20;
  return withTempDir('api', async (dir) => {
    const log = await openLog(context, dir);
    const projection = createProjection({ dir: join(dir, 'projection'), log });
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
      expectStatus(
        await client.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
        201,
        'creating the namespace',
      );
      const { latencies, delivery, missing } = await runClients({ url: server.url, token: TOKEN, namespace: NAMESPACE, clients: CLIENTS, perClient, lists });
      const { create: createLatencies, get: getLatencies, list: listLatencies } = latencies;
      const createTarget = context.log === 'kafka' ? 25 : 5;
      const figures: Figure[] = [
        plain('create p50, 1 client (no queueing)', round(quantile(latencies.sequentialCreate, 0.5), 2), 'ms'),
        plain('create p99, 1 client (no queueing)', round(quantile(latencies.sequentialCreate, 0.99), 2), 'ms'),
        plain('create p50', round(quantile(createLatencies, 0.5), 2), 'ms'),
        atMost('create p99', round(quantile(createLatencies, 0.99), 2), 'ms', createTarget, SLO),
        plain('create throughput', round(createLatencies.length / latencies.createSeconds), 'req/s'),
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
        setup: { clients: CLIENTS, creates: createLatencies.length, gets: getLatencies.length, lists: listLatencies.length },
        notes: [
          'apiserver + its projection over the log in this process, no controllers or agents; the 16 clients (node:http, keep-alive) run in a second process and the watch in a third (delivery measured on the shared system clock); HTTP on loopback, no TLS.',
          ...(context.log === 'embedded' ? ['Embedded log as `logplane up` opens it: an append resolves after the LMDB commit is flushed to disk.'] : []),
          ...(missing > 0 ? [`${missing} create(s) had no ADDED event on the watch within 10 s.`] : []),
        ],
      };
    } finally {
      await server.close();
      await projection.close();
      await log.close();
    }
  });
};
