/**
 * generateName when every generated name is taken: with the apiserver's name suffix pinned
 * (`nameSuffix` always `bbbbb`, kube's first suffix of a zero random source), the second
 * create tries kube's 8 names and answers kube's generate-name conflict (409 AlreadyExists,
 * retry after 1 s), appending nothing. Everything else is real: the log, the projection, the
 * apiserver.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { describeOnBothLogs, logEnd, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

const draws = { count: 0 };
const pinnedSuffix = (): string => {
  draws.count++;
  return 'bbbbb';
};

describeOnBothLogs('generateName conflicts', (adapter) => {
  const temp = tempDir('generate-name-');
  let log: EventLog;
  let api: TestApiServer;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir, { nameSuffix: pinnedSuffix });
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('tries 8 generated names, then answers 409 "the server was not able to generate a unique name", appending nothing', async () => {
    const body = { ...podManifest('x'), metadata: { generateName: `gen-${adapter}-` } };
    const first = await api.client.request('POST', '/api/v1/namespaces/default/pods', { body });
    expect(first.status).toBe(201);
    expect(first.body.metadata.name).toBe(`gen-${adapter}-bbbbb`);
    const before = (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));
    draws.count = 0;
    const second = await api.client.request('POST', '/api/v1/namespaces/default/pods', { body });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({
      reason: 'AlreadyExists',
      message: `pods "gen-${adapter}-bbbbb" already exists, the server was not able to generate a unique name for the object`,
      details: { name: `gen-${adapter}-bbbbb`, kind: 'pods', retryAfterSeconds: 1 },
    });
    // One suffix per name, 8 names.
    expect(draws.count).toBe(8);
    expect((await logEnd(log, 'desired')) + (await logEnd(log, 'observed'))).toBe(before);
    // A name given explicitly that is taken stays a plain AlreadyExists.
    const named = await api.client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest(`gen-${adapter}-bbbbb`) });
    expect(named.body).toMatchObject({ reason: 'AlreadyExists', message: `pods "gen-${adapter}-bbbbb" already exists` });
  });
});
