/**
 * The load generator of the peers scenario (`scenarios/peers.ts`), forked as a child
 * process: the same client process, the same objects and the same concurrency against
 * logplane's apiserver (HTTP, as kubectl and client-go talk to it) and against etcd (gRPC,
 * as kube-apiserver talks to it). Per store and per client count (1, 16):
 *
 * - create vs put: POST of a Pod vs a put of the same Pod's JSON at `/registry/pods/NS/NAME`;
 * - get vs range: GET of a random existing Pod vs a range of its one key;
 * - list vs range: the first page of 500 Pods (`limit=500`) vs a range of 500 keys of the prefix;
 * - watch delivery: one watch opened before the creates (a pod watch vs an etcd prefix
 *   watch); per created object, from the moment its create was sent to its event's arrival
 *   (write and notification together: logplane sends the event in the commit that answers
 *   the create, so from the answer it would be 0).
 */
import { request as httpRequest } from 'node:http';
import { Etcd3 } from 'etcd3';
import { createBenchClient, expectStatus } from './support.ts';

export interface PeerLoad {
  readonly url: string;
  readonly token: string;
  readonly namespace: string;
  readonly etcd: string;
  readonly clientCounts: readonly number[];
  /** Creates and gets per client at each count. */
  readonly perClient: number;
  /** Lists per client at each count. */
  readonly lists: number;
}

export interface PeerLatencies {
  /** `${store} ${op} ${clients}` → ms samples; store is logplane or etcd, op create|get|list|watch. */
  readonly samples: Record<string, number[]>;
}

const wallClock = (): number => performance.timeOrigin + performance.now();

const pod = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app: 'bench-peers' } },
  spec: { containers: [{ name: 'main', image: 'logplane/sleeper:1' }] },
});

/** Arrival times of the first ADDED event per pod name on a watch of the namespace's pods. */
const logplaneWatch = (load: PeerLoad): Promise<{ arrivals: Map<string, number>; close: () => void }> =>
  new Promise((resolve, reject) => {
    const base = new URL(load.url);
    const arrivals = new Map<string, number>();
    const req = httpRequest(
      { host: base.hostname, port: base.port, path: `/api/v1/namespaces/${load.namespace}/pods?watch=true`, headers: { Authorization: `Bearer ${load.token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch: HTTP ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = wallClock();
          buffer += chunk;
          for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line === '') continue;
            const event = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
            const name = event.object.metadata?.name;
            if (event.type === 'ADDED' && name && !arrivals.has(name)) arrivals.set(name, now);
          }
        });
        res.on('error', () => undefined);
        resolve({ arrivals, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });

const concurrently = async (clients: number, perClient: number, request: (c: number, i: number) => Promise<void>): Promise<number[]> => {
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        const started = performance.now();
        await request(c, i);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies;
};

const run = async (load: PeerLoad): Promise<PeerLatencies> => {
  const samples: Record<string, number[]> = {};
  const client = createBenchClient(load.url, load.token);
  const etcd = new Etcd3({ hosts: load.etcd });
  const podsPath = `/api/v1/namespaces/${load.namespace}/pods`;
  const etcdPrefix = `/registry/pods/${load.namespace}/`;
  try {
    // Warm-up of both paths, outside the measured phases.
    for (let i = 0; i < 50; i++) {
      expectStatus(await client.request('POST', podsPath, pod(load.namespace, `warmup-${i}`)), 201, 'warm-up create');
      await etcd.put(`${etcdPrefix}warmup-${i}`).value(JSON.stringify(pod(load.namespace, `warmup-${i}`)));
    }
    for (const clients of load.clientCounts) {
      // logplane: create (with a watch open), get, list.
      const watch = await logplaneWatch(load);
      const responded = new Map<string, number>();
      const sent = new Map<string, number>();
      samples[`logplane create ${clients}`] = await concurrently(clients, load.perClient, async (c, i) => {
        const name = `p${clients}-${c}-${i}`;
        sent.set(name, wallClock());
        expectStatus(await client.request('POST', podsPath, pod(load.namespace, name)), 201, 'create');
        responded.set(name, wallClock());
      });
      const deadline = Date.now() + 10_000;
      while (![...responded.keys()].every((name) => watch.arrivals.has(name)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      watch.close();
      samples[`logplane watch ${clients}`] = [...responded].flatMap(([name, at]) => {
        const arrived = watch.arrivals.get(name);
        return arrived === undefined ? [] : [arrived - (sent.get(name) ?? at)];
      });
      const names = [...responded.keys()];
      samples[`logplane get ${clients}`] = await concurrently(clients, load.perClient, async () => {
        const name = names[Math.floor(Math.random() * names.length)]!;
        expectStatus(await client.request('GET', `${podsPath}/${name}`), 200, 'get');
      });
      samples[`logplane list ${clients}`] = await concurrently(clients, load.lists, async () => {
        expectStatus(await client.request('GET', `${podsPath}?limit=500`), 200, 'list');
      });

      // etcd: the same objects, serialized as the apiserver would store them (JSON here).
      const etcdArrivals = new Map<string, number>();
      const watcher = await etcd.watch().prefix(etcdPrefix).create();
      watcher.on('put', (kv) => {
        const key = kv.key.toString();
        if (!etcdArrivals.has(key)) etcdArrivals.set(key, wallClock());
      });
      const etcdResponded = new Map<string, number>();
      const etcdSent = new Map<string, number>();
      samples[`etcd create ${clients}`] = await concurrently(clients, load.perClient, async (c, i) => {
        const name = `p${clients}-${c}-${i}`;
        etcdSent.set(`${etcdPrefix}${name}`, wallClock());
        await etcd.put(`${etcdPrefix}${name}`).value(JSON.stringify(pod(load.namespace, name)));
        etcdResponded.set(`${etcdPrefix}${name}`, wallClock());
      });
      const etcdDeadline = Date.now() + 10_000;
      while (![...etcdResponded.keys()].every((key) => etcdArrivals.has(key)) && Date.now() < etcdDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await watcher.cancel();
      samples[`etcd watch ${clients}`] = [...etcdResponded].flatMap(([key, at]) => {
        const arrived = etcdArrivals.get(key);
        return arrived === undefined ? [] : [arrived - (etcdSent.get(key) ?? at)];
      });
      const keys = [...etcdResponded.keys()];
      samples[`etcd get ${clients}`] = await concurrently(clients, load.perClient, async () => {
        const value = await etcd.get(keys[Math.floor(Math.random() * keys.length)]!).buffer();
        if (!value) throw new Error('etcd get: missing key');
      });
      samples[`etcd list ${clients}`] = await concurrently(clients, load.lists, async () => {
        const { kvs } = await etcd.getAll().prefix(etcdPrefix).limit(500).exec();
        if (kvs.length === 0) throw new Error('etcd range: no keys');
      });
    }
    return { samples };
  } finally {
    etcd.close();
  }
};

process.once('message', (load: PeerLoad) => {
  run(load).then(
    (latencies) => process.send!({ type: 'done', latencies }, () => process.exit(0)),
    (error: unknown) => process.send!({ type: 'failed', error: error instanceof Error ? error.stack ?? error.message : String(error) }, () => process.exit(1)),
  );
});
