/**
 * peers: logplane's apiserver beside etcd, the store under kube-apiserver, measured in the
 * same run on the same machine from the same client process (`peer-clients.ts`, forked):
 * create vs put, get vs range, list of 500 vs range of 500, watch delivery vs etcd watch,
 * at 1 and 16 clients, with the same Pod objects (etcd stores them as JSON). Each figure
 * is logplane's p50/p99 beside etcd's and their ratio (logplane ÷ etcd), so the distance to
 * the floor kube-apiserver stands on is read off one table. etcd is Debian's etcd-server
 * (`bash bench/setup.sh` installs it), started here on loopback with its own data directory
 * (`etcd.ts`). Not like for like: etcd answers a put after its raft commit and fsync, logplane
 * a create after the append, the fold's verdict and its projection; etcd speaks gRPC over one
 * HTTP/2 channel, logplane HTTP/1.1 with JSON and authentication.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiServer, parseTokenFile } from '../../apiserver/index.ts';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { createKafkaLog } from '../../log/kafka/index.ts';
import type { EventLog } from '../../log/port.ts';
import { createProjection } from '../../projections/index.ts';
import { startLocalEtcd } from '../etcd.ts';
import { benchKafkaCluster } from '../kafka-clusters.ts';
import type { PeerLatencies, PeerLoad } from '../peer-clients.ts';
import { createBenchClient, expectStatus, plain, quantile, quietLogger, round, type Figure, type ScenarioContext, type ScenarioResult, withTempDir } from '../support.ts';

const TOKEN = 'bench-peers-token';
const NAMESPACE = 'bench-peers';
const CLIENT_COUNTS = [1, 16] as const;
const OPS = ['create', 'get', 'list', 'watch'] as const;
const ETCD_NAMES: Readonly<Record<(typeof OPS)[number], string>> = { create: 'put', get: 'range of one key', list: 'range of 500', watch: 'watch' };

const runClients = (load: PeerLoad): Promise<PeerLatencies> =>
  new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('../peer-clients.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message: { type: 'done'; latencies: PeerLatencies } | { type: 'failed'; error: string }) =>
      message.type === 'done' ? resolve(message.latencies) : reject(new Error(`peer clients failed: ${message.error}`)),
    );
    child.once('exit', (code) => reject(new Error(`peer clients exited with code ${code} before answering`)));
    child.send(load);
  });

const openLog = (context: ScenarioContext, dir: string): Promise<EventLog> =>
  context.log === 'kafka'
    ? createKafkaLog({ brokers: [...context.brokers], cluster: benchKafkaCluster('bench-peers'), partitions: 1, logLevel: 'error' })
    : createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'bench', partitions: 1 });

export const peersScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const perClient = context.quick ? 100 : 400;
  const lists = context.quick ? 10 : 40;
  return withTempDir('logplane-bench-peers-', async (dir) => {
    const etcd = await startLocalEtcd();
    const log = await openLog(context, dir);
    const projection = createProjection({ dir: join(dir, 'projection'), log });
    const server = await createApiServer({ log, projection, tokens: parseTokenFile(`${TOKEN},admin,1,"system:masters"`), host: '127.0.0.1', port: 0, logger: quietLogger() });
    try {
      await server.ensureDefaultNamespaces();
      const client = createBenchClient(server.url, TOKEN);
      expectStatus(await client.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }), 201, 'namespace');
      context.progress(`peers: logplane at ${server.url}, etcd ${etcd.version} at ${etcd.endpoint}`);
      const { samples } = await runClients({ url: server.url, token: TOKEN, namespace: NAMESPACE, etcd: etcd.endpoint, clientCounts: CLIENT_COUNTS, perClient, lists });
      const figures: Figure[] = [];
      for (const clients of CLIENT_COUNTS) {
        for (const op of OPS) {
          const ours = samples[`logplane ${op} ${clients}`] ?? [];
          const theirs = samples[`etcd ${op} ${clients}`] ?? [];
          for (const q of [0.5, 0.99] as const) {
            const label = q === 0.5 ? 'p50' : 'p99';
            const a = quantile(ours, q);
            const b = quantile(theirs, q);
            figures.push(plain(`${op} ${label}, ${clients} client${clients === 1 ? '' : 's'}: logplane`, round(a, 2), 'ms'));
            figures.push(plain(`${op} ${label}, ${clients} client${clients === 1 ? '' : 's'}: etcd ${ETCD_NAMES[op]}`, round(b, 2), 'ms'));
            figures.push(plain(`${op} ${label}, ${clients} client${clients === 1 ? '' : 's'}: logplane ÷ etcd`, round(a / Math.max(b, 1e-3), 1), '×'));
          }
        }
      }
      return {
        scenario: 'peers',
        log: context.log,
        figures,
        setup: { etcd: etcd.version, createsPerClient: perClient, listsPerClient: lists, clients: CLIENT_COUNTS.join(' and ') },
        notes: [
          'same client process, same Pod objects (etcd stores their JSON at /registry/pods/NS/NAME), same machine, same run',
          'etcd acknowledges a put after raft commit + fsync; logplane a create after the append, the fold and its projection',
          'watch: from the moment a create (put) is sent to the arrival of its event on a watch opened before, in the same client process (write and notification together)',
        ],
      };
    } finally {
      await server.close();
      await projection.close();
      await log.close();
      await etcd.stop();
    }
  });
};
