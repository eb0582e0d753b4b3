/**
 * Shared pieces of the benchmark scenarios: result rows, percentiles, a temporary
 * directory per run, the quiet logger, a small HTTP client for the apiserver, and
 * waiting on a condition without sleeping in a loop.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino, type Logger } from 'pino';
import { BENCH_DIR_PREFIX, writeOwner } from './leftovers.ts';

/** Which log a scenario runs on. */
export type LogKind = 'embedded' | 'kafka';

/** How a figure compares with its target. */
export type Verdict = 'met' | 'not met' | '—';

/** One measured figure, printed as one table row. */
export interface Figure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The target of issue 7, as text ("≥ 2,000 pods/s"), if there is one. */
  readonly target?: string;
  /** Whether the target is met; absent when there is no target. */
  readonly met?: boolean;
  /** The outside reference point (Kubernetes, Nomad), if any. */
  readonly anchor?: string;
}

/** What one scenario run on one log reports. */
export interface ScenarioResult {
  readonly scenario: string;
  readonly log: LogKind;
  readonly figures: readonly Figure[];
  /** Sizes and settings actually used (so a reader knows what the figures mean). */
  readonly setup: Readonly<Record<string, string | number | boolean>>;
  readonly notes: readonly string[];
}

/** Settings every scenario gets. */
export interface ScenarioContext {
  readonly log: LogKind;
  readonly quick: boolean;
  readonly brokers: readonly string[];
  /** Progress lines go here (stderr), never into the tables or the JSON. */
  readonly progress: (line: string) => void;
}

export type Scenario = (context: ScenarioContext) => Promise<ScenarioResult>;

/** The logger the control plane gets during a benchmark: errors only. */
export const quietLogger = (): Logger => pino({ level: process.env.BENCH_LOG_LEVEL ?? 'error' });

/** The q-quantile (0..1) of `samples` by nearest rank; NaN when empty. */
export const quantile = (samples: readonly number[], q: number): number => {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
};

/** Rounds to `digits` decimals. */
export const round = (value: number, digits = 0): number => {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

/** A figure with an upper-bound target ("≤"). */
export const atMost = (name: string, value: number, unit: string, limit: number, anchor?: string): Figure => ({
  name,
  value,
  unit,
  target: `≤ ${limit.toLocaleString('en-US')} ${unit}`,
  met: value <= limit,
  ...(anchor ? { anchor } : {}),
});

/** A figure with a lower-bound target ("≥"). */
export const atLeast = (name: string, value: number, unit: string, limit: number, anchor?: string): Figure => ({
  name,
  value,
  unit,
  target: `≥ ${limit.toLocaleString('en-US')} ${unit}`,
  met: value >= limit,
  ...(anchor ? { anchor } : {}),
});

/** A figure without a target. */
export const plain = (name: string, value: number, unit: string, anchor?: string): Figure => ({
  name,
  value,
  unit,
  ...(anchor ? { anchor } : {}),
});

/**
 * Runs `body` with a fresh temporary directory, removed afterwards. The directory names this
 * process as its owner, so that the next run removes it (and stops the pods recorded in it)
 * if this process dies first (leftovers.ts).
 */
export const withTempDir = async <T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> => {
  const dir = await mkdtemp(join(tmpdir(), `${BENCH_DIR_PREFIX}${prefix}-`));
  try {
    writeOwner(dir);
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** Resolves once `condition()` holds, checking every `everyMs`; rejects after `timeoutMs` naming `what`. */
export const until = async (condition: () => boolean, timeoutMs: number, what: string, everyMs = 20): Promise<void> => {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`benchmark timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
};

/** A response of the apiserver, parsed. */
export interface ApiResponse {
  readonly status: number;
  readonly body: any;
}

/** A minimal JSON client of one apiserver, authenticated with `token`. */
export interface BenchClient {
  request(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** A GET whose body is only counted (bytes, and whether it ends as a JSON object does), not parsed: for replies too large for one string. */
  download(path: string): Promise<{ status: number; bytes: number; complete: boolean }>;
}

/**
 * A client on `node:http` with keep-alive connections (one per request in flight, as
 * client-go keeps them), so that what a figure measures is the apiserver, not the heavier
 * WHATWG `fetch` machinery of the load generator sharing one event loop with 16 clients.
 */
export const createBenchClient = (url: string, token: string): BenchClient => {
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
  const base = new URL(url);
  return {
    request: (method, path, body) =>
      new Promise<ApiResponse>((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const headers: Record<string, string | number> = { Accept: 'application/json', Authorization: `Bearer ${token}` };
        if (payload !== undefined) {
          // A PATCH is a JSON merge patch (RFC 7386), as `kubectl patch --type merge` sends it.
          headers['Content-Type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
          headers['Content-Length'] = Buffer.byteLength(payload);
        }
        const req = httpRequest({ agent, host: base.hostname, port: base.port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
            } catch (error) {
              reject(new Error(`${method} ${path}: HTTP ${res.statusCode} with a body that is not JSON: ${String(error)}`));
            }
          });
        });
        req.on('error', reject);
        req.end(payload);
      }),
    download: (path) =>
      new Promise((resolve, reject) => {
        const headers = { Accept: 'application/json', Authorization: `Bearer ${token}` };
        const req = httpRequest({ agent, host: base.hostname, port: base.port, method: 'GET', path, headers }, (res) => {
          let bytes = 0;
          let last: Buffer = Buffer.alloc(0);
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            last = chunk;
          });
          res.on('error', reject);
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, complete: last.toString('utf8').trimEnd().endsWith('}') }));
        });
        req.on('error', reject);
        req.end();
      }),
  };
};

/** Throws with the status and message when `response` is not `expected`. */
export const expectStatus = (response: ApiResponse, expected: number, what: string): void => {
  if (response.status !== expected) {
    const message = typeof response.body === 'object' && response.body ? response.body.message : String(response.body);
    throw new Error(`${what}: HTTP ${response.status} (expected ${expected}): ${message}`);
  }
};

/** Runs a full, synchronous V8 garbage collection (`--expose-gc` turned on at run time). */
export const collectGarbage = (): void => {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
};

/** Resident memory of this process in MiB (and the total in MB): total, anonymous and file-backed (from /proc), and the V8 heap. */
export const memoryBreakdown = (): { rss: number; rssMB: number; anon: number; file: number; heapUsed: number; heapTotal: number; external: number } => {
  const mib = (bytes: number): number => round(bytes / 2 ** 20);
  const usage = process.memoryUsage();
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // not Linux: only the total is known
  }
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return {
    rss: mib(usage.rss),
    /** The same in MB (10^6 bytes), the unit of issue 7's target. */
    rssMB: round(usage.rss / 1e6),
    anon: mib(kib('RssAnon')),
    file: mib(kib('RssFile') + kib('RssShmem')),
    heapUsed: mib(usage.heapUsed),
    heapTotal: mib(usage.heapTotal),
    external: mib(usage.external),
  };
};

/**
 * The V8 heap per space, "new 32/5, old 185/98 MiB" (committed/used): whether the committed
 * heap is live objects or room the old generation grew into during a burst.
 */
export const heapSpaces = (): string =>
  getHeapSpaceStatistics()
    .filter((space) => space.space_size >= 2 ** 20)
    .map((space) => `${space.space_name.replace(/_space$/, '').replace(/_/g, ' ')} ${round(space.space_size / 2 ** 20)}/${round(space.space_used_size / 2 ** 20)}`)
    .join(', ');

/** Resident MiB per mapped file of this process (from /proc/self/smaps), largest first. */
export const residentFiles = (): [string, number][] => {
  let smaps = '';
  try {
    smaps = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return [];
  }
  const byFile = new Map<string, number>();
  let current = '';
  for (const line of smaps.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      current = header[1] ?? '';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && current.startsWith('/')) byFile.set(current, (byFile.get(current) ?? 0) + Number(rss[1]) * 1024);
  }
  return [...byFile.entries()].map(([file, bytes]): [string, number] => [file, round(bytes / 2 ** 20)]).sort((a, b) => b[1] - a[1]);
};
