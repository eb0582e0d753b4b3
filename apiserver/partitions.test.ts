/**
 * With several partitions a list resourceVersion is a vector of offsets (DESIGN
 * invariant 3): watches resume from it across partitions and both topics without gap or
 * duplicate, and lists can be read exactly at it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { deploymentManifest, describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type ReceivedEvent, type TestApiServer } from './testing.ts';

describeOnBothLogs('apiserver with 3 partitions', (adapter) => {
  const temp = tempDir('apiserver-partitions-');
  let log: EventLog;
  let api: TestApiServer;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir, partitions: 3 });
    api = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('resumes a watch from a vector resourceVersion, then continues live, each change once', async () => {
    const { client } = api;
    const namespaces = ['p-one', 'p-two', 'p-three', 'p-four'];
    for (const name of namespaces) {
      expect((await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } })).status).toBe(201);
    }
    const list = await client.request('GET', '/api/v1/pods');
    const rv: string = list.body.metadata.resourceVersion;
    expect(rv.split('.')).toHaveLength(6);

    const expected = new Map<string, string[]>();
    const record = (key: string, type: string) => expected.set(key, [...(expected.get(key) ?? []), type]);
    for (const ns of namespaces) {
      for (const name of ['a', 'b']) {
        await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest(name) });
        record(`${ns}/${name}`, 'ADDED');
      }
      await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/a/status`, {
        body: { status: { phase: 'Running' } },
        contentType: 'application/merge-patch+json',
      });
      record(`${ns}/a`, 'MODIFIED');
      await client.request('DELETE', `/api/v1/namespaces/${ns}/pods/b`);
      record(`${ns}/b`, 'DELETED');
    }

    const exact = await client.request('GET', `/api/v1/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`);
    expect(exact.body.items).toEqual(list.body.items);

    const watch = await client.watch(`/api/v1/pods?watch=true&resourceVersion=${rv}`);
    const total = [...expected.values()].reduce((sum, types) => sum + types.length, 0);
    const replayed = await watch.take(total);
    const seen = new Map<string, string[]>();
    const byKey = (events: readonly ReceivedEvent[]) => {
      for (const event of events) {
        const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
        seen.set(key, [...(seen.get(key) ?? []), event.type]);
      }
    };
    byKey(replayed);
    expect(seen).toEqual(expected);
    const running = replayed.find((e) => e.type === 'MODIFIED' && e.object.metadata.namespace === 'p-two');
    expect(running?.object.status.phase).toBe('Running');

    for (const ns of namespaces) {
      await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('live') });
      record(`${ns}/live`, 'ADDED');
    }
    byKey(await watch.take(namespaces.length));
    expect(seen).toEqual(expected);
    watch.close();
  });

  it('replays changes of objects spread over all partitions, each once and in per-object order', async () => {
    const { client } = api;
    const rv: string = (await client.request('GET', '/apis/apps/v1/deployments')).body.metadata.resourceVersion;
    const names = Array.from({ length: 12 }, (_, i) => `spread-${i}`);
    for (const name of names) {
      await client.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deploymentManifest(name) });
      await client.request('PATCH', `/apis/apps/v1/namespaces/default/deployments/${name}/scale`, {
        body: { spec: { replicas: 3 } },
        contentType: 'application/merge-patch+json',
      });
    }
    const partitionsUsed = new Set(
      [...api.projection.store.events.getRange()].map((e) => e.value).filter((e) => e.key.startsWith('Deployment/default/spread-')).map((e) => e.partition),
    );
    expect(partitionsUsed.size).toBeGreaterThan(1);
    const watch = await client.watch(`/apis/apps/v1/deployments?watch=true&resourceVersion=${rv}`);
    const events = await watch.take(names.length * 2);
    watch.close();
    for (const name of names) {
      const mine = events.filter((e) => e.object.metadata.name === name);
      expect(mine.map((e) => [e.type, e.object.spec.replicas])).toEqual([['ADDED', 1], ['MODIFIED', 3]]);
    }
  });
});
