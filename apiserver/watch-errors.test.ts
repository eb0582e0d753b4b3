/**
 * Where a watch may start, on both logs with one partition: from an object's
 * resourceVersion (with one partition it is a cluster position: the changes after that
 * object's version follow, not the object itself), and what a resourceVersion that does
 * not parse gets: 400 BadRequest carrying kube's field message
 * `resourceVersion: Invalid value: "<rv>": ...` for watches, lists and named GETs alike, and
 * nothing streamed; a GET at an object's or a list's resourceVersion reads the object. (kube-apiserver 1.32 answers these with the same message and code 500,
 * a known bug, kubernetes/kubernetes#101350 and #139485; 400 is what those issues ask for.)
 * Too-old positions (410 Expired) are api-semantics.test.ts's and apiserver.test.ts's,
 * cutting off a slow watcher slow-watch.test.ts's, and the object resourceVersion on 3
 * partitions (410) api-semantics.test.ts's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

describeOnBothLogs('watch start positions', (adapter) => {
  const temp = tempDir('watch-errors-');
  let log: EventLog;
  let api: TestApiServer;
  let counter = 0;

  const namespace = async (): Promise<string> => {
    const name = `watch-errors-${++counter}-${adapter}`;
    expect((await api.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status).toBe(201);
    return name;
  };

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it("watches from an object's resourceVersion: the changes after that version follow, not the object's own creation", async () => {
    const ns = await namespace();
    const base = `/api/v1/namespaces/${ns}/pods`;
    const a = (await api.client.request('POST', base, { body: podManifest('a') })).body;
    const b = (await api.client.request('POST', base, { body: podManifest('b') })).body;
    const patched = await api.client.request('PATCH', `${base}/a`, { body: { metadata: { labels: { moved: 'yes' } } }, contentType: 'application/merge-patch+json' });
    expect(patched.status).toBe(200);

    const fromA = await api.client.watch(`${base}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    expect(fromA.status).toBe(200);
    expect((await fromA.take(2)).map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion])).toEqual([
      ['ADDED', 'b', b.metadata.resourceVersion],
      ['MODIFIED', 'a', patched.body.metadata.resourceVersion],
    ]);
    fromA.close();

    const fromB = await api.client.watch(`${base}?watch=true&resourceVersion=${b.metadata.resourceVersion}`);
    expect(await fromB.next()).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'a', labels: { moved: 'yes' } } } });
    // Then live: a deletion after the watch started.
    expect((await api.client.request('DELETE', `${base}/b`)).status).toBe(200);
    expect(await fromB.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'b' } } });
    fromB.close();
  });

  it.each(['abc', '-1', '1.2.3', '1..2', '0x10', '1.', '9007199254740993x'])(
    'answers resourceVersion=%j with 400 and kube\'s field message, on a watch, a list and a named GET',
    async (rv) => {
      const ns = await namespace();
      const base = `/api/v1/namespaces/${ns}/pods`;
      expect((await api.client.request('POST', base, { body: podManifest('p') })).status).toBe(201);
      const query = `resourceVersion=${encodeURIComponent(rv)}`;
      for (const path of [`${base}?watch=true&${query}`, `${base}?${query}`, `${base}/p?${query}`]) {
        const response = await api.client.request('GET', path);
        expect({ path, status: response.status, reason: response.body.reason, kind: response.body.kind }).toEqual({ path, status: 400, reason: 'BadRequest', kind: 'Status' });
        expect(response.body.message.startsWith(`resourceVersion: Invalid value: "${rv}": `)).toBe(true);
      }
    },
  );

  it("reads a named object at '0', at its own resourceVersion and at a list's", async () => {
    const ns = await namespace();
    const base = `/api/v1/namespaces/${ns}/pods`;
    const created = await api.client.request('POST', base, { body: podManifest('p') });
    const list = await api.client.request('GET', base);
    for (const rv of ['0', created.body.metadata.resourceVersion, list.body.metadata.resourceVersion]) {
      const got = await api.client.request('GET', `${base}/p?resourceVersion=${encodeURIComponent(rv)}`);
      expect({ rv, status: got.status, name: got.body.metadata?.name }).toEqual({ rv, status: 200, name: 'p' });
    }
  });
});
