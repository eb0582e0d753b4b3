/**
 * `POST /logplane/v1/replay?into=DIR` (the security audit: it wrote an LMDB directory
 * anywhere the server could, for any user, with no concurrency limit): only members of
 * system:masters may replay, `into` is a new or empty directory below the server's data
 * directory (no `..`, no absolute path elsewhere, no symlink leading out), and one replay
 * runs at a time (429 with Retry-After for the others).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import { ADMIN_TOKEN, describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';
import { createHistoryApi, type HistoryApi } from './routes.ts';

describeOnBothLogs('replay guard', (adapter) => {
  const temp = tempDir('replay-guard-test-');
  const dataDir = join(temp.dir, 'data');
  const outside = join(temp.dir, 'outside');
  let log: EventLog;
  let api: TestApiServer;
  let gate: Promise<void> = Promise.resolve();
  let reads = 0;

  beforeAll(async () => {
    mkdirSync(dataDir);
    mkdirSync(outside);
    symlinkSync(outside, join(dataDir, 'link-out'));
    log = await openTestLog(adapter, { dir: temp.dir });
    let history: HistoryApi | undefined;
    api = await startTestApiServer(log, mkdtempSync(join(temp.dir, 'server-')), {
      extensions: [async (req, res, url, user) => (history ? history(req, res, url, user) : false)],
    });
    // The history API reads the log through a gate, so a test can hold a replay mid-way.
    const gated: EventLog = {
      ...log,
      read: async (...args: Parameters<EventLog['read']>) => {
        reads++;
        await gate;
        return log.read(...args);
      },
    };
    history = createHistoryApi({ log: gated, projection: api.projection, dataDir });
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) => api.client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest(`p-${i}`) })),
    );
    expect(created.map((r) => r.status)).toEqual(created.map(() => 201));
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const replay = (into?: string, token = ADMIN_TOKEN) =>
    api.client.request('POST', `/logplane/v1/replay${into === undefined ? '' : `?into=${encodeURIComponent(into)}`}`, { token });

  /** The result line of a replay's NDJSON answer. */
  const resultOf = (body: unknown): { type: string; stateHash: string } =>
    JSON.parse(String(body).trim().split('\n').at(-1)!) as { type: string; stateHash: string };

  it('refuses users outside system:masters with 403 and writes nothing', async () => {
    const response = await replay(join(dataDir, 'by-user'), 'controller-token');
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(response.body.message).toContain('system:controller:replicaset-controller');
    expect(existsSync(join(dataDir, 'by-user'))).toBe(false);
    expect((await replay(undefined, 'node-token')).status).toBe(403);
  });

  it.each([
    ['an absolute path outside the data directory', () => join(outside, 'replay')],
    ['a path that climbs out with ..', () => join(dataDir, '..', 'outside', 'climb')],
    ['a relative path with ..', () => 'sub/../../outside/relative'],
    ['a symlink in the data directory that leads out', () => 'link-out/through-link'],
    ['the data directory itself', () => dataDir],
  ])('refuses %s with 400 and writes nothing', async (_title, into) => {
    const response = await replay(into());
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(readdirSync(outside)).toEqual([]);
  });

  it('replays into a new directory below the data directory, given absolute or relative', async () => {
    const absolute = await replay(join(dataDir, 'replays', 'one'));
    expect(absolute.status).toBe(200);
    expect(resultOf(absolute.body).type).toBe('result');
    expect(readdirSync(join(dataDir, 'replays', 'one')).length).toBeGreaterThan(0);
    const relative = await replay('two');
    expect(relative.status).toBe(200);
    expect(resultOf(relative.body).stateHash).toBe(resultOf(absolute.body).stateHash);
    expect(existsSync(join(dataDir, 'two'))).toBe(true);
    // Not into a directory that holds something.
    expect((await replay('two')).status).toBe(400);
  });

  it('runs one replay at a time: the others get 429 with Retry-After, and the next one runs once it has finished', async () => {
    let open: () => void = () => undefined;
    gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const readsBefore = reads;
    const first = replay();
    // The first replay is running once it reads the log.
    for (const deadline = Date.now() + 10_000; reads === readsBefore; ) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise<void>((resolve) => setTimeout(resolve, 5));
    }
    const busy = await Promise.all([replay(), replay('while-busy')]);
    for (const answer of busy) {
      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.body).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    }
    expect(existsSync(join(dataDir, 'while-busy'))).toBe(false);
    open();
    expect((await first).status).toBe(200);
    expect((await replay()).status).toBe(200);
  });
});
