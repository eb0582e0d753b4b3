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
import type { ApiLatencies, ApiLoad } from '../api-clients.ts';
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

/** Runs the load generator in a child process and waits for its latencies. */
const runClients = (load: ApiLoad): Promise<ApiLatencies> =>
  new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('../api-clients.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message: { type: 'done'; latencies: ApiLatencies } | { type: 'failed'; error: string }) => {
      if (message.type === 'done') resolve(message.latencies);
      else reject(new Error(`api clients failed: ${message.error}`));
    });
    child.once('exit', (code) => reject(new Error(`api clients exited with code ${code} before answering`)));
    child.once('error', reject);
    child.send(load);
  });

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
      const latencies = await runClients({ url: server.url, token: TOKEN, namespace: NAMESPACE, clients: CLIENTS, perClient, lists });
      const { create: createLatencies, get: getLatencies, list: listLatencies, watchDelivery: delivery, missingWatchEvents: missing } = latencies;
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
        plain('watch delivery p50', round(quantile(delivery, 0.5), 2), 'ms'),
        atMost('watch delivery p99', round(quantile(delivery, 0.99), 2), 'ms', 10),
      ];
      return {
        scenario: 'api',
        log: context.log,
        figures,
        setup: { clients: CLIENTS, creates: createLatencies.length, gets: getLatencies.length, lists: listLatencies.length },
        notes: [
          'apiserver + its projection over the log in this process, no controllers or agents; the 16 clients and the watch run in a second process; HTTP on loopback, no TLS.',
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
