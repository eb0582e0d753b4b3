/**
 * The serving limits over real sockets (the security audit: "slow request bodies never time
 * out, no connection cap"): a client that never finishes its headers or its body is answered
 * 408 and disconnected within the timeout, while a watch outlives it; connections beyond
 * the cap are closed and logged; requests beyond the in-flight limits get kube's 429 with
 * Retry-After, long-running requests (watches) and system:masters excepted. The limits do
 * not depend on the log, so this runs on the embedded one.
 */
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

const USER_TOKEN = 'controller-token';

/** A raw connection to the server, with what it received and whether the server closed it. */
const rawConnection = async (port: number) => {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    received: () => received,
    /** Resolves when the server closes the connection; rejects after `timeoutMs`. */
    closedWithin: (timeoutMs: number) =>
      Promise.race([closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the server kept the connection open for ${timeoutMs} ms`)), timeoutMs))]),
    /** Resolves once something has been received. */
    receivedSomething: (timeoutMs: number) =>
      new Promise<void>((resolve, reject) => {
        if (received !== '') return resolve();
        const timer = setTimeout(() => reject(new Error(`nothing received in ${timeoutMs} ms`)), timeoutMs);
        socket.once('data', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
};

/** Waits until `condition` holds, re-checking on every event-loop turn. */
const waitUntil = async (condition: () => boolean, timeoutMs: number, what: string): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
  }
};

describe('serving limits', () => {
  const temp = tempDir('serving-limits-test-');
  let log: EventLog;

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
  });

  afterAll(async () => {
    await log?.close();
    temp.remove();
  });

  describe('request timeouts', () => {
    let api: TestApiServer;
    beforeAll(async () => {
      api = await startTestApiServer(log, temp.dir, { limits: { requestHeaderTimeoutMs: 500, requestTimeoutMs: 1000 }, bookmarkIntervalMs: 200 });
    });
    afterAll(async () => api?.close());

    it('answers 408 and closes a connection whose headers never end', async () => {
      const connection = await rawConnection(api.server.port);
      connection.socket.write('GET /api/v1/pods HTTP/1.1\r\nHost: logplane\r\nAuthorization: Bearer admin-token\r\n');
      await connection.closedWithin(5000);
      expect(connection.received()).toMatch(/^HTTP\/1\.1 408/);
    });

    it('answers 408 and closes a connection whose body never ends', async () => {
      const connection = await rawConnection(api.server.port);
      connection.socket.write(
        'POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: logplane\r\nAuthorization: Bearer admin-token\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":',
      );
      await connection.closedWithin(5000);
      expect(connection.received()).not.toMatch(/^HTTP\/1\.1 2/);
    });

    it('keeps a watch streaming long after the request timeout', async () => {
      const watch = await api.client.watch('/api/v1/namespaces/default/pods?watch=true&allowWatchBookmarks=true');
      expect(watch.status).toBe(200);
      const started = Date.now();
      // Bookmarks every 200 ms; the request timeout (1 s) and its checks (every second) pass several times.
      while (Date.now() - started < 3500) expect((await watch.next(2000)).type).toBe('BOOKMARK');
      watch.close();
    });

    it('serves ordinary requests that arrive in time', async () => {
      expect((await api.client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest('in-time') })).status).toBe(201);
    });
  });

  describe('connection limit', () => {
    let api: TestApiServer;
    const lines: string[] = [];
    beforeAll(async () => {
      const sink = new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      api = await startTestApiServer(log, temp.dir, { limits: { maxConnections: 3 }, logger: pino({ level: 'warn' }, sink) });
    });
    afterAll(async () => api?.close());

    it('closes connections beyond --max-connections at once, says so in the log, and serves again when one closes', async () => {
      const open = await Promise.all([0, 1, 2].map(() => rawConnection(api.server.port)));
      // The server has accepted all three before the fourth arrives.
      for (const connection of open) {
        connection.socket.write('GET /version HTTP/1.1\r\nHost: logplane\r\nAuthorization: Bearer admin-token\r\n\r\n');
        await connection.receivedSomething(5000);
      }
      const extra = await rawConnection(api.server.port);
      extra.socket.write('GET /version HTTP/1.1\r\nHost: logplane\r\nAuthorization: Bearer admin-token\r\n\r\n');
      await extra.closedWithin(5000);
      expect(extra.received()).toBe('');
      await waitUntil(() => lines.some((line) => line.includes('--max-connections')), 5000, 'the log line');
      expect(JSON.parse(lines.find((line) => line.includes('--max-connections'))!)).toMatchObject({ level: 40, maxConnections: 3 });
      open[0]!.socket.destroy();
      await open[0]!.closedWithin(5000);
      const again = await rawConnection(api.server.port);
      again.socket.write('GET /version HTTP/1.1\r\nHost: logplane\r\nAuthorization: Bearer admin-token\r\nConnection: close\r\n\r\n');
      await again.closedWithin(5000);
      expect(again.received()).toMatch(/^HTTP\/1\.1 200/);
      for (const connection of open) connection.socket.destroy();
    });
  });

  describe('in-flight limits', () => {
    let api: TestApiServer;
    beforeAll(async () => {
      api = await startTestApiServer(log, temp.dir, {
        limits: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 2, requestTimeoutMs: 0, requestHeaderTimeoutMs: 0 },
        readTimeoutMs: 60_000,
      });
    });
    afterAll(async () => api?.close());

    /** A create whose body never ends: it holds a mutating slot until the socket is destroyed. */
    const slowCreate = async () => {
      const connection = await rawConnection(api.server.port);
      connection.socket.write(
        `POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: logplane\r\nAuthorization: Bearer ${USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      );
      return connection;
    };

    /** Retries `send` until it is answered 429 (the slow requests reach the handler asynchronously). */
    const until429 = async <T extends { status: number }>(send: () => Promise<T>): Promise<T> => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const response = await send();
        if (response.status === 429) return response;
      }
      throw new Error('never answered 429');
    };

    it('answers mutating requests beyond --max-mutating-requests-inflight with 429, Retry-After and a TooManyRequests Status', async () => {
      const slow = [await slowCreate(), await slowCreate()];
      let name = 0;
      const create = () => api.client.request('POST', '/api/v1/namespaces/default/pods', { token: USER_TOKEN, body: podManifest(`over-${name++}`) });
      const refused = await until429(create);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'TooManyRequests',
        code: 429,
        message: 'Too many requests, please try again later.',
        details: { retryAfterSeconds: 1 },
      });
      const metrics = (await api.client.request('GET', '/metrics')).body as string;
      expect(metrics).toContain('apiserver_current_inflight_requests{request_kind="mutating"} 2');
      // Reads have their own limit; system:masters is exempt, as in kube.
      expect((await api.client.request('GET', '/api/v1/namespaces/default/pods', { token: USER_TOKEN })).status).toBe(200);
      expect((await api.client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest('by-admin') })).status).toBe(201);
      for (const connection of slow) connection.socket.destroy();
      await Promise.all(slow.map((connection) => connection.closedWithin(5000)));
      // The slots are released with the requests.
      let created = 0;
      for (let attempt = 0; attempt < 200 && created === 0; attempt++) {
        if ((await create()).status === 201) created++;
      }
      expect(created).toBe(1);
    });

    it('answers reads beyond --max-requests-inflight with 429, and does not count watches', async () => {
      const watches = await Promise.all([0, 1, 2].map(() => api.client.watch('/api/v1/namespaces/default/pods?watch=true', { token: USER_TOKEN })));
      expect(watches.map((w) => w.status)).toEqual([200, 200, 200]);
      expect((await api.client.request('GET', '/api/v1/namespaces/default/pods', { token: USER_TOKEN })).status).toBe(200);
      // A list at a position the log has not reached waits (readTimeoutMs) and holds the one read slot.
      const holder = new AbortController();
      const held = fetch(`${api.server.url}/api/v1/namespaces/default/pods?resourceVersion=999999999.999999999`, {
        headers: { Authorization: `Bearer ${USER_TOKEN}` },
        signal: holder.signal,
      }).catch(() => undefined);
      const refused = await until429(() => api.client.request('GET', '/api/v1/namespaces/default/pods', { token: USER_TOKEN }));
      expect(refused.body).toMatchObject({ reason: 'TooManyRequests', code: 429 });
      const watch = await api.client.watch('/api/v1/namespaces/default/pods?watch=true', { token: USER_TOKEN });
      expect(watch.status).toBe(200);
      holder.abort();
      await held;
      for (const w of [...watches, watch]) w.close();
    });
  });
});
