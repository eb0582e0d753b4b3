/**
 * Test helpers for the apiserver: a log of either adapter (the Kafka one on the real
 * broker of the test run), an apiserver with its own projection, a small HTTP client and
 * a watch-stream reader that waits for events (never sleeps).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { createKafkaLog } from '../log/kafka/index.ts';
import type { EventLog } from '../log/port.ts';
import { createProjection, type Projection } from '../projections/index.ts';
import { assertNever } from '../schemas/index.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';
import { parseTokenFile } from './auth.ts';
import { createApiServer, type ApiServer, type ApiServerOptions } from './server.ts';

export type LogAdapter = 'embedded' | 'kafka';

/** Runs `body` once per log adapter; the suite titles name the adapter ("… on the kafka log"). */
export const describeOnBothLogs = (title: string, body: (adapter: LogAdapter) => void): void => {
  describe.each([['embedded' as LogAdapter], ['kafka' as LogAdapter]])(`${title} on the %s log`, body);
};

export const ADMIN_TOKEN = 'admin-token';
export const TOKENS = parseTokenFile(
  [
    `${ADMIN_TOKEN},alice,1001,"system:masters"`,
    'controller-token,system:controller:replicaset-controller,2001,"system:controllers"',
    'node-token,system:node:node-1,3001,"system:nodes"',
  ].join('\n'),
);

/** A fresh log of `adapter` for a cluster name no other test uses. */
export const openTestLog = async (
  adapter: LogAdapter,
  options: { dir: string; cluster?: string; partitions?: number },
): Promise<EventLog> => {
  const cluster = options.cluster ?? `apiserver-${randomUUID().slice(0, 8)}`;
  const partitions = options.partitions ?? 1;
  switch (adapter) {
    case 'embedded':
      return createEmbeddedLog({ dir: join(options.dir, 'log'), cluster, partitions, durability: 'committed' });
    case 'kafka':
      return createKafkaLog({ brokers: kafkaBrokers(), cluster, partitions, logLevel: 'error' });
    default:
      return assertNever(adapter, 'adapter');
  }
};

export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  readonly token?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A small HTTP client for one apiserver. */
export interface ApiClient {
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Opens a watch; the reader yields events as they arrive. */
  watch(path: string, options?: { token?: string; headers?: Readonly<Record<string, string>> }): Promise<WatchReader>;
}

export const createApiClient = (url: string): ApiClient => ({
  request: async (method, path, options = {}) => {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    const token = options.token === undefined ? ADMIN_TOKEN : options.token;
    if (token !== null) headers['Authorization'] = `Bearer ${token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      headers['Content-Type'] = options.contentType ?? 'application/json';
    }
    const response = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as any, headers: response.headers };
  },
  watch: async (path, options = {}) => {
    const controller = new AbortController();
    const response = await fetch(`${url}${path}`, {
      headers: { Authorization: `Bearer ${options.token ?? ADMIN_TOKEN}`, Accept: 'application/json', ...options.headers },
      signal: controller.signal,
    });
    return createWatchReader(response, controller);
  },
});

/** One watch event as read from the stream. */
export interface ReceivedEvent {
  readonly type: string;
  readonly object: any;
}

/** Reads a watch stream event by event. */
export interface WatchReader {
  readonly status: number;
  /** The next event; rejects when none arrives within `timeoutMs`. */
  next(timeoutMs?: number): Promise<ReceivedEvent>;
  /** The next `count` events. */
  take(count: number, timeoutMs?: number): Promise<ReceivedEvent[]>;
  /** Resolves when the server ends the stream; rejects after `timeoutMs`. */
  ended(timeoutMs?: number): Promise<void>;
  /** The error body when the server refused the watch. */
  readonly errorBody: Promise<unknown>;
  close(): void;
}

const createWatchReader = (response: Response, controller: AbortController): WatchReader => {
  const queue: ReceivedEvent[] = [];
  const waiters: (() => void)[] = [];
  let done = false;
  let failure: unknown;
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const ok = response.status === 200;
  const errorBody = ok ? Promise.resolve(undefined) : response.json();
  if (ok && response.body) {
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let newline: number;
          while ((newline = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, newline).trim();
            buffer = buffer.slice(newline + 1);
            if (line !== '') queue.push(JSON.parse(line) as ReceivedEvent);
          }
          wake();
        }
      } catch (error) {
        if (!controller.signal.aborted) failure = error;
      } finally {
        done = true;
        wake();
      }
    })();
  } else {
    done = true;
  }
  const waitFor = async (condition: () => boolean, timeoutMs: number, what: string): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (failure) throw failure;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  const next = async (timeoutMs = 15_000): Promise<ReceivedEvent> => {
    await waitFor(() => queue.length > 0 || done, timeoutMs, 'a watch event');
    const event = queue.shift();
    if (!event) throw new Error('the watch stream ended');
    return event;
  };
  return {
    status: response.status,
    next,
    take: async (count, timeoutMs) => {
      const events: ReceivedEvent[] = [];
      for (let i = 0; i < count; i++) events.push(await next(timeoutMs));
      return events;
    },
    ended: (timeoutMs = 15_000) => waitFor(() => done, timeoutMs, 'the end of the watch stream'),
    errorBody,
    close: () => controller.abort(),
  };
};

/** An apiserver with its own projection over a shared log. */
export interface TestApiServer {
  readonly server: ApiServer;
  readonly projection: Projection;
  readonly client: ApiClient;
  close(): Promise<void>;
}

/** Starts an apiserver (own projection dir under `dir`) on `log`, with the default namespaces. */
export const startTestApiServer = async (
  log: EventLog,
  dir: string,
  options: Partial<Omit<ApiServerOptions, 'log' | 'projection'>> = {},
): Promise<TestApiServer> => {
  const projection = createProjection({ dir: mkdtempSync(join(dir, 'projection-')), log });
  const server = await createApiServer({
    log,
    projection,
    tokens: TOKENS,
    logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
    ...options,
  });
  await server.ensureDefaultNamespaces();
  return {
    server,
    projection,
    client: createApiClient(server.url),
    close: async () => {
      await server.close();
      await projection.close();
    },
  };
};

/** A temporary directory removed by the returned cleanup. */
export const tempDir = (prefix: string): { dir: string; remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
};

/** Sum of the end offsets of a topic: grows by one per appended event. */
export const logEnd = async (log: EventLog, topic: 'desired' | 'observed'): Promise<number> =>
  (await log.endOffsets(topic)).reduce((sum, offset) => sum + offset, 0);

/** A minimal valid pod manifest. */
export const podManifest = (name: string, labels: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36', ...extra }] },
});

/** A minimal valid deployment manifest. */
export const deploymentManifest = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
  },
});
