/**
 * The PATCH conflict-retry loop (`handlers/write.ts`), on both logs, with two apiservers
 * writing: concurrent patches that do not pin a resourceVersion conflict in the fold
 * (recorded as rejected writes) and are retried on the current object, so all of them
 * succeed and none is lost; a patch that pins a stale resourceVersion is a 409 Conflict and
 * is not retried.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

const MERGE = 'application/merge-patch+json';

describeOnBothLogs('PATCH conflicts', (adapter) => {
  const temp = tempDir('patch-conflicts-');
  let log: EventLog;
  let first: TestApiServer;
  let second: TestApiServer;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    first = await startTestApiServer(log, temp.dir);
    second = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await log?.close();
    temp.remove();
  });

  it('retries concurrent patches on the current object: every one answers 200, no label is lost, the losers were rejected by the fold first', async () => {
    const base = '/api/v1/namespaces/default/pods';
    const name = `contended-${adapter}`;
    expect((await first.client.request('POST', base, { body: podManifest(name) })).status).toBe(201);
    // Five at once (CONFLICT_RETRIES is 5: in each round one of them wins).
    const writers = Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? first : second));
    const answers = await Promise.all(
      writers.map((api, i) => api.client.request('PATCH', `${base}/${name}`, { body: { metadata: { labels: { [`writer-${i}`]: 'yes' } } }, contentType: MERGE })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const final = (await first.client.request('GET', `${base}/${name}`)).body;
    expect(Object.keys(final.metadata.labels).sort()).toEqual(['writer-0', 'writer-1', 'writer-2', 'writer-3', 'writer-4']);

    const verdicts = [...first.projection.store.history.getRange({ start: [`Pod/default/${name}`], end: [`Pod/default/${name}`, 9] })]
      .map(({ value }) => value)
      .filter((entry) => entry.eventType === 'ObjectUpdated')
      .map((entry) => (entry.verdict.type === 'rejected' ? entry.verdict.reason : 'accepted'));
    expect(verdicts.filter((verdict) => verdict === 'accepted')).toHaveLength(5);
    expect(verdicts.filter((verdict) => verdict !== 'accepted').length).toBeGreaterThan(0);
    expect(new Set(verdicts.filter((verdict) => verdict !== 'accepted'))).toEqual(new Set(['Conflict']));
  });

  it('answers 409 Conflict, without retrying, to a patch pinning a stale resourceVersion', async () => {
    const base = '/api/v1/namespaces/default/pods';
    const name = `pinned-${adapter}`;
    const created = (await first.client.request('POST', base, { body: podManifest(name) })).body;
    expect((await second.client.request('PATCH', `${base}/${name}`, { body: { metadata: { labels: { step: '1' } } }, contentType: MERGE })).status).toBe(200);
    const stale = await first.client.request('PATCH', `${base}/${name}`, {
      body: { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { step: '2' } } },
      contentType: MERGE,
    });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
    expect(stale.body.message).toContain('the object has been modified; please apply your changes to the latest version and try again');
    expect((await first.client.request('GET', `${base}/${name}`)).body.metadata.labels).toEqual({ step: '1' });
  });
});
