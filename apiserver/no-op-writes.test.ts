/**
 * Writes that change nothing append nothing, as kube-apiserver's storage skips them: an
 * identical PUT, empty merge, strategic and JSON patches, a patch setting a field to its
 * current value, the same status or replica count. Each answers 200 with the stored
 * object, resourceVersion unchanged, managedFields timestamps untouched. A real change
 * still appends one event, and PUTs with a stale resourceVersion get 409 each without
 * appending (the security audit counted 184 rejections for 100 of them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { deploymentManifest, describeOnBothLogs, logEnd, openTestLog, podManifest, startTestApiServer, tempDir, type ApiClient, type TestApiServer } from './testing.ts';

const POD = '/api/v1/namespaces/default/pods/quiet';
const DEPLOYMENT = '/apis/apps/v1/namespaces/default/deployments/steady';

describeOnBothLogs('no-op writes', (adapter) => {
  const temp = tempDir('no-op-writes-test-');
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    client = api.client;
    expect((await client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest('quiet', { app: 'quiet' }) })).status).toBe(201);
    expect((await client.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deploymentManifest('steady', 2) })).status).toBe(201);
    const status = { replicas: 2, readyReplicas: 1, conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'one of two' }] };
    const current = (await client.request('GET', DEPLOYMENT)).body;
    expect((await client.request('PUT', `${DEPLOYMENT}/status`, { body: { ...current, status } })).status).toBe(200);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  /** Sends a write that changes nothing: 200, the stored object as it was, nothing appended. */
  const unchanged = async (method: string, path: string, body: unknown, contentType?: string) => {
    const target = path.replace(/\/(status|scale)$/, '');
    const before = (await client.request('GET', target)).body;
    const events = await appended();
    const response = await client.request(method, path, { body, ...(contentType ? { contentType } : {}) });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await appended()).toBe(events);
    expect((await client.request('GET', target)).body).toEqual(before);
    return response.body;
  };

  describe('main resource', () => {
    it('an identical PUT answers the stored object and appends nothing', async () => {
      const current = (await client.request('GET', POD)).body;
      expect(await unchanged('PUT', POD, current)).toEqual(current);
    });

    it('a PUT of the manifest without the fields the server keeps (uid, creationTimestamp, generation) appends nothing', async () => {
      const { metadata, spec } = (await client.request('GET', POD)).body;
      const { uid: _uid, creationTimestamp: _created, generation: _generation, managedFields: _managed, ...rest } = metadata;
      await unchanged('PUT', POD, { apiVersion: 'v1', kind: 'Pod', metadata: rest, spec });
    });

    it.each([
      ['merge', {}, 'application/merge-patch+json'],
      ['strategic', {}, 'application/strategic-merge-patch+json'],
      ['JSON', [], 'application/json-patch+json'],
      ['merge (a label to its value)', { metadata: { labels: { app: 'quiet' } } }, 'application/merge-patch+json'],
      ['strategic (an image to its value)', { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } }, 'application/strategic-merge-patch+json'],
      ['JSON (replace and test with the current value)', [{ op: 'test', path: '/metadata/labels/app', value: 'quiet' }, { op: 'replace', path: '/spec/containers/0/image', value: 'busybox:1.36' }], 'application/json-patch+json'],
    ])('a %s patch that changes nothing appends nothing', async (_name, patch, contentType) => {
      await unchanged('PATCH', POD, patch, contentType);
    });

    it('a write by another field manager that changes nothing adds no managedFields entry and bumps no time', async () => {
      const current = (await client.request('GET', POD)).body;
      const managers = current.metadata.managedFields;
      const answered = await unchanged('PATCH', `${POD}?fieldManager=someone-else`, { metadata: { labels: { app: 'quiet' } } }, 'application/merge-patch+json');
      expect(answered.metadata.managedFields).toEqual(managers);
      await unchanged('PUT', `${POD}?fieldManager=someone-else`, current);
    });

    it('a PUT whose managedFields differ only in their timestamps appends nothing (kube ignores managedFields timestamps)', async () => {
      const current = (await client.request('GET', POD)).body;
      const managedFields = current.metadata.managedFields.map((entry: { time: string }) => ({ ...entry, time: '2001-02-03T04:05:06Z' }));
      await unchanged('PUT', POD, { ...current, metadata: { ...current.metadata, managedFields } });
    });

    it('server-side apply of the live values appends nothing', async () => {
      const config = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'quiet', labels: { app: 'quiet' } } };
      // The first apply takes ownership of the label (a change of managedFields), the second changes nothing.
      expect((await client.request('PATCH', `${POD}?fieldManager=applier`, { body: config, contentType: 'application/apply-patch+yaml' })).status).toBe(200);
      await unchanged('PATCH', `${POD}?fieldManager=applier`, config, 'application/apply-patch+yaml');
    });

    it('a real change still appends one event and gets a new resourceVersion', async () => {
      const before = (await client.request('GET', POD)).body;
      const events = await appended();
      const response = await client.request('PATCH', POD, { body: { metadata: { labels: { tier: 'changed' } } }, contentType: 'application/merge-patch+json' });
      expect(response.status).toBe(200);
      expect(response.body.metadata.resourceVersion).not.toBe(before.metadata.resourceVersion);
      expect(await appended()).toBe(events + 1);
    });
  });

  describe('subresources', () => {
    it('the same status by PUT or patch appends nothing', async () => {
      const current = (await client.request('GET', `${DEPLOYMENT}/status`)).body;
      expect(current.status.readyReplicas).toBe(1);
      await unchanged('PUT', `${DEPLOYMENT}/status`, current);
      await unchanged('PATCH', `${DEPLOYMENT}/status`, { status: { readyReplicas: 1 } }, 'application/merge-patch+json');
      await unchanged('PATCH', `${DEPLOYMENT}/status`, [], 'application/json-patch+json');
    });

    it('a new status still appends one event', async () => {
      const events = await appended();
      const response = await client.request('PATCH', `${DEPLOYMENT}/status`, { body: { status: { readyReplicas: 2 } }, contentType: 'application/merge-patch+json' });
      expect(response.status).toBe(200);
      expect(response.body.status.readyReplicas).toBe(2);
      expect(await appended()).toBe(events + 1);
    });

    it('the same replica count through /scale appends nothing', async () => {
      const scale = (await client.request('GET', `${DEPLOYMENT}/scale`)).body;
      expect(scale.spec.replicas).toBe(2);
      const events = await appended();
      const put = await client.request('PUT', `${DEPLOYMENT}/scale`, { body: scale });
      expect(put.status).toBe(200);
      expect(put.body.metadata.resourceVersion).toBe(scale.metadata.resourceVersion);
      const patched = await client.request('PATCH', `${DEPLOYMENT}/scale`, { body: { spec: { replicas: 2 } }, contentType: 'application/merge-patch+json' });
      expect(patched.status).toBe(200);
      expect(patched.body.metadata.resourceVersion).toBe(scale.metadata.resourceVersion);
      expect(await appended()).toBe(events);
    });
  });

  describe('stale resourceVersions', () => {
    it('N PUTs with a stale resourceVersion get 409 each and append nothing', async () => {
      const stale = (await client.request('GET', POD)).body;
      expect((await client.request('PATCH', POD, { body: { metadata: { labels: { round: 'one' } } }, contentType: 'application/merge-patch+json' })).status).toBe(200);
      const events = await appended();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => client.request('PUT', POD, { body: { ...stale, metadata: { ...stale.metadata, labels: { round: `stale-${i}` } } } })),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(409);
        expect(answer.body).toMatchObject({ kind: 'Status', reason: 'Conflict', message: 'Operation cannot be fulfilled on pods "quiet": the object has been modified; please apply your changes to the latest version and try again' });
      }
      expect(await appended()).toBe(events);
    });

    it('a PUT that would change nothing but carries a stale resourceVersion is a Conflict, as in kube', async () => {
      const current = (await client.request('GET', POD)).body;
      const events = await appended();
      const response = await client.request('PUT', POD, { body: { ...current, metadata: { ...current.metadata, resourceVersion: '1' } } });
      expect(response.status).toBe(409);
      expect(await appended()).toBe(events);
    });
  });
});
