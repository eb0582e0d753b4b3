/**
 * The default namespaces as kube-apiserver keeps them, on both logs: default, kube-system
 * and kube-public may not be deleted (403, nothing appended), kube-node-lease may be and is
 * recreated once its deletion completes, and namespaces have no deletecollection (405, and
 * discovery does not offer it).
 */
import pino from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { startControllers, type RunningControllers } from '../reconcilers/controllers.ts';
import { describeOnBothLogs, logEnd, openTestLog, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

describeOnBothLogs('default namespaces', (adapter) => {
  const temp = tempDir('namespaces-');
  let log: EventLog;
  let api: TestApiServer;
  let controllers: RunningControllers;
  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    controllers = await startControllers({ log, projection: api.projection, logger: pino({ level: 'silent' }), only: ['namespace'] });
  });

  afterAll(async () => {
    await controllers?.stop();
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it.each(['default', 'kube-system', 'kube-public'])('refuses to delete %s with kube\'s 403, appending nothing', async (name) => {
    const before = await appended();
    const refused = await api.client.request('DELETE', `/api/v1/namespaces/${name}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      details: { name, kind: 'namespaces' },
    });
    expect(await appended()).toBe(before);
    expect((await api.client.request('GET', `/api/v1/namespaces/${name}`)).body).toMatchObject({ status: { phase: 'Active' } });
  });

  it('recreates kube-node-lease once its deletion completes', async () => {
    const before = (await api.client.request('GET', '/api/v1/namespaces/kube-node-lease')).body as { metadata: { uid: string } };
    expect((await api.client.request('DELETE', '/api/v1/namespaces/kube-node-lease')).status).toBe(200);
    await vi.waitFor(
      async () => {
        const again = await api.client.request('GET', '/api/v1/namespaces/kube-node-lease');
        expect(again.status).toBe(200);
        const body = again.body as { metadata: { uid: string }; status: { phase: string } };
        expect(body.metadata.uid).not.toBe(before.metadata.uid);
        expect(body.status.phase).toBe('Active');
      },
      { timeout: 20_000, interval: 100 },
    );
  });

  it('has no deletecollection for namespaces, in discovery or on the wire', async () => {
    const core = (await api.client.request('GET', '/api/v1')).body as { resources: { name: string; verbs: string[] }[] };
    expect(core.resources.find((r) => r.name === 'namespaces')?.verbs).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    expect(core.resources.find((r) => r.name === 'pods')?.verbs).toContain('deletecollection');
    const before = await appended();
    expect((await api.client.request('DELETE', '/api/v1/namespaces')).status).toBe(405);
    expect(await appended()).toBe(before);
  });
});
