/**
 * The load generator of the api scenario, run as a child process (forked by
 * `scenarios/api.ts`) so that the clients' HTTP work does not share the apiserver's event
 * loop. It receives an `ApiLoad` message, runs the phases and answers with `ApiLatencies`.
 *
 * Watch delivery is timed here too, on this process's clock: from a create's response
 * arriving to that pod's ADDED event arriving on the watch (0 when the event came first).
 */
import { createBenchClient, expectStatus } from './support.ts';

export interface ApiLoad {
  readonly url: string;
  readonly token: string;
  readonly namespace: string;
  readonly clients: number;
  readonly perClient: number;
  readonly lists: number;
}

export interface ApiLatencies {
  /** Creates by one client, one after another: the path's latency without queueing. */
  readonly sequentialCreate: number[];
  readonly create: number[];
  readonly get: number[];
  readonly list: number[];
  readonly watchDelivery: number[];
  /** Creates whose ADDED event never arrived on the watch. */
  readonly missingWatchEvents: number;
  readonly createSeconds: number;
}

const podManifest = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app: 'bench-api' } },
  spec: { containers: [{ name: 'main', image: 'logplane/sleeper:1' }] },
});

/** A watch on the namespace's pods: arrival time of each pod's first ADDED event. */
const openWatch = async (load: ApiLoad): Promise<{ arrivals: Map<string, number>; close: () => void }> => {
  const controller = new AbortController();
  const response = await fetch(`${load.url}/api/v1/namespaces/${load.namespace}/pods?watch=true`, {
    headers: { Authorization: `Bearer ${load.token}`, Accept: 'application/json' },
    signal: controller.signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`watch: HTTP ${response.status}`);
  const arrivals = new Map<string, number>();
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const now = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (line === '') continue;
          const event = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
          const name = event.object.metadata?.name;
          if (event.type === 'ADDED' && name && !arrivals.has(name)) arrivals.set(name, now);
        }
      }
    } catch {
      // aborted at the end of the run
    }
  })();
  return { arrivals, close: () => controller.abort() };
};

const run = async (load: ApiLoad): Promise<ApiLatencies> => {
  const client = createBenchClient(load.url, load.token);
  const concurrently = async (perClient: number, request: (c: number, i: number) => Promise<void>): Promise<number[]> => {
    const latencies: number[] = [];
    await Promise.all(
      Array.from({ length: load.clients }, async (_, c) => {
        for (let i = 0; i < perClient; i++) {
          const started = performance.now();
          await request(c, i);
          latencies.push(performance.now() - started);
        }
      }),
    );
    return latencies;
  };
  const podsPath = `/api/v1/namespaces/${load.namespace}/pods`;
  // Warm up the HTTP path and the JIT of both processes outside the measured window.
  for (let i = 0; i < 50; i++) expectStatus(await client.request('POST', podsPath, podManifest(load.namespace, `warmup-${i}`)), 201, 'warm-up create');

  const sequentialCreate: number[] = [];
  for (let i = 0; i < load.perClient; i++) {
    const started = performance.now();
    expectStatus(await client.request('POST', podsPath, podManifest(load.namespace, `single-${i}`)), 201, 'sequential create');
    sequentialCreate.push(performance.now() - started);
  }

  const watch = await openWatch(load);
  const responded = new Map<string, number>();
  const createStart = performance.now();
  const create = await concurrently(load.perClient, async (c, i) => {
    const name = `pod-${c}-${i}`;
    const response = await client.request('POST', podsPath, podManifest(load.namespace, name));
    responded.set(name, performance.now());
    expectStatus(response, 201, `creating pod ${name}`);
  });
  const createSeconds = (performance.now() - createStart) / 1000;
  const get = await concurrently(load.perClient, async (c, i) => {
    const name = `pod-${(c * 7 + i) % load.clients}-${(i * 13) % load.perClient}`;
    expectStatus(await client.request('GET', `${podsPath}/${name}`), 200, `getting pod ${name}`);
  });
  const list = await concurrently(load.lists, async () => {
    expectStatus(await client.request('GET', `${podsPath}?limit=500`), 200, 'listing pods');
  });
  const deadline = performance.now() + 10_000;
  while ([...responded.keys()].some((name) => !watch.arrivals.has(name)) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  watch.close();
  const watchDelivery = [...responded.entries()].flatMap(([name, at]) => {
    const arrived = watch.arrivals.get(name);
    return arrived === undefined ? [] : [Math.max(0, arrived - at)];
  });
  return { sequentialCreate, create, get, list, watchDelivery, missingWatchEvents: responded.size - watchDelivery.length, createSeconds };
};

process.once('message', (load: ApiLoad) => {
  run(load).then(
    (latencies) => process.send?.({ type: 'done', latencies }, () => process.exit(0)),
    (error: unknown) => process.send?.({ type: 'failed', error: error instanceof Error ? error.message : String(error) }, () => process.exit(1)),
  );
});
