/**
 * Helpers for end-to-end tests of a whole cluster (`startCluster`): a cluster on either
 * log (Kafka on the test run's broker, a cluster name no other test uses), a small HTTP
 * client for its API, plain HTTP without keep-alive (so every request is a new connection
 * the service proxy balances), and waits that watch the projection or poll with a
 * deadline — never fixed sleeps.
 */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Subscription } from 'rxjs';
import { startCluster, type RunningCluster, type UpOptions } from '../../cli/up.ts';
import { createReplayer, formatVector, type AppliedChange, type Projection, type View } from '../../projections/index.ts';
import type { Pod } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';

export type LogAdapter = 'embedded' | 'kafka';

/** Both logs, for `describe.each`: the Kafka entry's title contains "kafka". */
export const LOG_ADAPTERS: readonly [LogAdapter][] = [['embedded'], ['kafka']];

/** A running cluster, its API client and its temporary directory. */
export interface TestCluster {
  readonly cluster: RunningCluster;
  readonly api: ApiClient;
  readonly dir: string;
  /** Stops the cluster (and its pods) and removes the directory. */
  stop(): Promise<void>;
}

/**
 * Starts a cluster over plain HTTP on a random port, on the `adapter` log. On Kafka the
 * cluster name is `<clusterPrefix>-<random>` with one partition per topic.
 */
export const startTestCluster = async (
  adapter: LogAdapter,
  clusterPrefix: string,
  options: Partial<Omit<UpOptions, 'dataDir' | 'kafka' | 'logger' | 'port' | 'host' | 'tls'>> = {},
): Promise<TestCluster> => {
  const dir = mkdtempSync(join(tmpdir(), `${clusterPrefix}-`));
  const cluster = await startCluster({
    dataDir: dir,
    nodes: 1,
    runtime: 'process',
    proxy: 'userspace',
    ...options,
    port: 0,
    host: '127.0.0.1',
    tls: false,
    logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
    ...(adapter === 'kafka'
      ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `${clusterPrefix}-${randomUUID().slice(0, 8)}`, partitions: 1 } }
      : {}),
  });
  return {
    cluster,
    api: createApiClient(cluster.url, cluster.token),
    dir,
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
}

/** JSON requests to the apiserver with the bearer token. */
export interface ApiClient {
  request(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** POSTs `object` to `path` and fails unless the answer is 201. */
  create(path: string, object: unknown): Promise<unknown>;
}

export const createApiClient = (url: string, token: string): ApiClient => {
  const client: ApiClient = {
    request: async (method, path, body) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, body: parsed };
    },
    create: async (path, object) => {
      const response = await client.request('POST', path, object);
      if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
      return response.body;
    },
  };
  return client;
};

/** What a plain HTTP request answered. */
export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

/** One HTTP request on a fresh connection (no keep-alive), failing after `timeoutMs`. */
export const httpRequest = (host: string, port: number, path: string, method = 'GET', timeoutMs = 2_000): Promise<HttpAnswer> =>
  new Promise((resolve, reject) => {
    const req = request({ host, port, path, method, agent: false, headers: { connection: 'close' }, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} http://${host}:${port}${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });

/**
 * Resolves with `predicate(view)` once it is truthy, checking now and after every
 * projection advance; rejects after `timeoutMs`, naming `what` and describing the last view.
 */
export const waitForView = <T>(
  projection: Projection,
  what: string,
  predicate: (view: View) => T | undefined | false | null,
  options: { timeoutMs?: number; describe?: (view: View) => unknown } = {},
): Promise<T> =>
  new Promise((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 30_000;
    let subscription: Subscription | undefined;
    let done = false;
    const finish = (settle: () => void): void => {
      done = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
      settle();
    };
    const check = (): void => {
      if (done) return;
      let value: T | undefined | false | null;
      try {
        value = predicate(projection.view());
      } catch (error) {
        finish(() => reject(error));
        return;
      }
      if (value) finish(() => resolve(value as T));
    };
    const timer = setTimeout(() => {
      const detail = options.describe ? `; last: ${JSON.stringify(options.describe(projection.view()))}` : '';
      finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`)));
    }, timeoutMs);
    subscription = projection.cursor$.subscribe(check);
    check();
  });

/** Calls `attempt` until it returns a truthy value, at most every `intervalMs`, until `timeoutMs`. */
export const pollUntil = async <T>(
  what: string,
  attempt: () => Promise<T | undefined | false | null>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> => {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError === undefined ? '' : `; last error: ${String(lastError)}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
};

/** Records every projection change whose key passes `filter`, with the wall time it was seen. */
export const recordChanges = (
  projection: Projection,
  filter: (change: AppliedChange) => boolean,
): { readonly changes: readonly { at: number; change: AppliedChange }[]; stop(): void } => {
  const changes: { at: number; change: AppliedChange }[] = [];
  const subscription = projection.changes$.subscribe((change) => {
    if (filter(change)) changes.push({ at: Date.now(), change });
  });
  return { changes, stop: () => subscription.unsubscribe() };
};

/** Pods of `namespace` carrying label `app=<app>` that are not being deleted. */
export const podsOfApp = (view: View, app: string, namespace = 'default'): Pod[] =>
  (view.list('Pod', namespace) as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === app && !pod.metadata.deletionTimestamp);

/** True when the pod's Ready condition is True. */
export const isPodReady = (pod: Pod | undefined): boolean =>
  pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** The pid of the pod's first container (process runtime: containerID `process://<pid>`). */
export const containerPid = (pod: Pod): number => {
  const id = pod.status?.containerStatuses?.[0]?.containerID ?? '';
  const match = /^process:\/\/(\d+)$/.exec(id);
  if (!match) throw new Error(`pod ${pod.metadata.name} has no process container id (${id || 'none'})`);
  return Number(match[1]);
};

/** True while a process with this pid exists and is not a zombie. */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
};

/** What {@link replayToLive} found: the replayed and the live state hash at one position. */
export interface ReplayComparison {
  /** Events the replay applied. */
  readonly events: number;
  readonly replayHash: string;
  /** The live projection's hash at the replay's final position; undefined if they never stood at one position. */
  readonly liveHash: string | undefined;
}

/**
 * Replays `cluster`'s log from offset 0 into a fresh projection and compares state hashes.
 * The cluster keeps running while it does, so the replay is caught up until both stand at
 * the same position (at most 20 rounds).
 */
export const replayToLive = async (cluster: Pick<RunningCluster, 'log' | 'projection'>): Promise<ReplayComparison> => {
  const replayDir = mkdtempSync(join(tmpdir(), 'e2e-replay-'));
  const replayer = createReplayer({ log: cluster.log, dir: replayDir });
  try {
    let events = await replayer.advanceTo(cluster.projection.cursor());
    let liveHash: string | undefined;
    for (let round = 0; round < 20 && liveHash === undefined; round++) {
      await cluster.projection.waitFor(replayer.cursor());
      const current = cluster.projection.cursor();
      if (formatVector(current) === formatVector(replayer.cursor())) liveHash = cluster.projection.stateHash();
      else events += await replayer.advanceTo(current);
    }
    return { events, replayHash: replayer.stateHash(), liveHash };
  } finally {
    await replayer.close();
    rmSync(replayDir, { recursive: true, force: true });
  }
};
