/**
 * The load generator of the api scenario, run as child processes (forked by
 * `scenarios/api.ts`) so that the clients' HTTP work does not share the apiserver's event
 * loop. Two roles, chosen by the first message:
 *
 * - `load`: runs the phases with 16 clients and answers with `ApiLatencies`, including the
 *   wall-clock time each concurrent create's response arrived;
 * - `watch`: a watcher in a process of its own (as a controller watching is a client of its
 *   own), answering `ready` once the watch is open and, on `stop`, the wall-clock time each
 *   pod's first ADDED event arrived.
 *
 * Watch delivery is the gap between the two (0 when the event came first): both processes
 * use `performance.timeOrigin + performance.now()`, the same system clock at µs resolution.
 */
import { request as httpRequest } from 'node:http';
import { startProcessTrace, traceDir } from './api-trace.ts';
import { createBenchClient, expectStatus } from './support.ts';

export interface ApiLoad {
  readonly url: string;
  readonly token: string;
  readonly namespace: string;
  readonly clients: number;
  readonly perClient: number;
  readonly lists: number;
  /** Only the create phases (warm-up, one client, paced, then the concurrent clients): no gets, lists or paging. */
  readonly createsOnly?: boolean;
  /** Requests per second of all clients together in the paced create phase. */
  readonly pacedRate: number;
  /** Creates per client in the paced phase. */
  readonly pacedPerClient: number;
  /** The paced phase creates its pods here, so that the lists and the watch of `namespace` see the same pods as before it existed. */
  readonly pacedNamespace: string;
}

export interface ApiLatencies {
  /** Creates by one client, one after another: the path's latency without queueing. */
  readonly sequentialCreate: number[];
  /**
   * The clients together at a fixed rate (`pacedRate`), each still one request at a time:
   * the latency of a create when the apiserver is not saturated (from sending it to its
   * response, as the other phases).
   */
  readonly pacedCreate: number[];
  readonly create: number[];
  readonly get: number[];
  readonly list: number[];
  /** One client reading the whole collection in pages of 500, as kubectl does: ms per full list, and the pods seen. */
  readonly pagedList: number[];
  readonly pagedListItems: number;
  /** Pod name → wall-clock ms at which its concurrent create's response arrived. */
  readonly responded: Record<string, number>;
  readonly createSeconds: number;
  /** Wall-clock ms (see `wallClock`) at which the concurrent creates began and ended. */
  readonly createWindow: { readonly from: number; readonly to: number };
}

/** The first message a child receives: its role. */
export type ClientRole = { readonly role: 'load'; readonly load: ApiLoad } | { readonly role: 'watch'; readonly load: ApiLoad };

/** Milliseconds on the system clock, comparable across processes on this machine. */
const wallClock = (): number => performance.timeOrigin + performance.now();

const podManifest = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels: { app: 'bench-api' } },
  spec: { containers: [{ name: 'main', image: 'logplane/sleeper:1' }] },
});

/** A watch on the namespace's pods: wall-clock arrival time of each pod's first ADDED event. */
const openWatch = (load: ApiLoad): Promise<{ arrivals: Map<string, number>; close: () => void }> =>
  new Promise((resolve, reject) => {
    const base = new URL(load.url);
    const arrivals = new Map<string, number>();
    const req = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        path: `/api/v1/namespaces/${load.namespace}/pods?watch=true`,
        headers: { Authorization: `Bearer ${load.token}`, Accept: 'application/json' },
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`watch: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = wallClock();
          buffer += chunk;
          for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
            const line = buffer.slice(0, newline).trim();
            buffer = buffer.slice(newline + 1);
            if (line === '') continue;
            const event = JSON.parse(line) as { type: string; object: { metadata?: { name?: string } } };
            const name = event.object.metadata?.name;
            if (event.type === 'ADDED' && name && !arrivals.has(name)) arrivals.set(name, now);
          }
        });
        res.on('error', () => undefined); // destroyed at the end of the run
        resolve({ arrivals, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });

/** Diagnostics of this process when BENCH_API_TRACE is set (api-trace.ts). */
const trace = traceDir() ? startProcessTrace() : undefined;

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

  const pacedCreate: number[] = [];
  const pacedStart = performance.now() + 20;
  await Promise.all(
    Array.from({ length: load.clients }, async (_, c) => {
      for (let i = 0; i < load.pacedPerClient; i++) {
        // Client c's i-th create is due at slot i * clients + c of the shared schedule.
        const due = pacedStart + ((i * load.clients + c) * 1000) / load.pacedRate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const started = performance.now();
        const pod = podManifest(load.pacedNamespace, `paced-${c}-${i}`);
        expectStatus(await client.request('POST', `/api/v1/namespaces/${load.pacedNamespace}/pods`, pod), 201, 'paced create');
        pacedCreate.push(performance.now() - started);
      }
    }),
  );

  const responded: Record<string, number> = {};
  trace?.mark();
  const createFrom = wallClock();
  const createStart = performance.now();
  const create = await concurrently(load.perClient, async (c, i) => {
    const name = `pod-${c}-${i}`;
    const response = await client.request('POST', podsPath, podManifest(load.namespace, name));
    responded[name] = wallClock();
    expectStatus(response, 201, `creating pod ${name}`);
  });
  const createSeconds = (performance.now() - createStart) / 1000;
  const createWindow = { from: createFrom, to: wallClock() };
  trace?.mark();
  if (load.createsOnly) {
    return { sequentialCreate, pacedCreate, create, get: [], list: [], pagedList: [], pagedListItems: 0, responded, createSeconds, createWindow };
  }
  const get = await concurrently(load.perClient, async (c, i) => {
    const name = `pod-${(c * 7 + i) % load.clients}-${(i * 13) % load.perClient}`;
    expectStatus(await client.request('GET', `${podsPath}/${name}`), 200, `getting pod ${name}`);
  });
  const list = await concurrently(load.lists, async () => {
    expectStatus(await client.request('GET', `${podsPath}?limit=500`), 200, 'listing pods');
  });
  const pagedList: number[] = [];
  let pagedListItems = 0;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    let items = 0;
    let token: string | undefined;
    do {
      const response = await client.request('GET', `${podsPath}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expectStatus(response, 200, 'paging through pods');
      items += (response.body.items as unknown[]).length;
      token = response.body.metadata.continue as string | undefined;
    } while (token);
    pagedList.push(performance.now() - started);
    pagedListItems = items;
  }
  return { sequentialCreate, pacedCreate, create, get, list, pagedList, pagedListItems, responded, createSeconds, createWindow };
};

const fail = (error: unknown): void => {
  process.send?.({ type: 'failed', error: error instanceof Error ? error.message : String(error) }, () => process.exit(1));
};

process.once('message', (message: ClientRole) => {
  switch (message.role) {
    case 'load':
      run(message.load).then((latencies) => process.send?.({ type: 'done', latencies, trace: trace?.stop() }, () => process.exit(0)), fail);
      return;
    case 'watch':
      openWatch(message.load).then((watch) => {
        process.once('message', (stop: { names: string[]; waitMs: number }) => {
          const deadline = performance.now() + stop.waitMs;
          const answer = (): void => {
            if (stop.names.some((name) => !watch.arrivals.has(name)) && performance.now() < deadline) {
              setTimeout(answer, 20);
              return;
            }
            watch.close();
            process.send?.({ type: 'arrivals', arrivals: Object.fromEntries(watch.arrivals), trace: trace?.stop() }, () => process.exit(0));
          };
          answer();
        });
        process.send?.({ type: 'ready' });
      }, fail);
      return;
    default:
      message satisfies never;
  }
});
