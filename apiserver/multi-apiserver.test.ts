/**
 * Several apiservers on one log (each with its own projection) agree: the fold judges
 * concurrent writes in log order, so of two updates carrying the same resourceVersion
 * exactly one succeeds and the other gets 409, and both servers then serve the same object;
 * and pods created through both at once never exceed their namespace's ResourceQuota.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { deploymentManifest, describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

describeOnBothLogs('two apiservers', (adapter) => {
  it.each([1, 3])('with %i partition(s): concurrent conflicting writes through both, exactly one wins, both agree', async (partitions) => {
    const temp = tempDir('apiserver-multi-');
    const cluster = `multi-${randomUUID().slice(0, 8)}`;
    const logs: EventLog[] = [];
    const servers: TestApiServer[] = [];
    try {
      // Kafka: each apiserver has its own client on the same topics. Embedded: one process, one log.
      logs.push(await openTestLog(adapter, { dir: temp.dir, cluster, partitions }));
      logs.push(adapter === 'kafka' ? await openTestLog(adapter, { dir: temp.dir, cluster, partitions }) : logs[0]!);
      servers.push(await startTestApiServer(logs[0]!, temp.dir));
      servers.push(await startTestApiServer(logs[1]!, temp.dir));
      const [a, b] = servers.map((s) => s.client) as [TestApiServer['client'], TestApiServer['client']];
      const path = '/apis/apps/v1/namespaces/default/deployments';

      const creates = await Promise.all([a, b].map((client) => client.request('POST', path, { body: deploymentManifest('shared', 1) })));
      expect(creates.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(creates.find((r) => r.status === 409)!.body.reason).toBe('AlreadyExists');

      for (let round = 1; round <= 5; round++) {
        const current = (await a.request('GET', `${path}/shared`)).body;
        expect((await b.request('GET', `${path}/shared`)).body).toEqual(current);
        const updates = await Promise.all(
          [a, b].map((client, i) =>
            client.request('PUT', `${path}/shared`, { body: { ...current, spec: { ...current.spec, replicas: round * 10 + i } } }),
          ),
        );
        expect(updates.map((r) => r.status).sort()).toEqual([200, 409]);
        const winner = updates.find((r) => r.status === 200)!.body;
        expect(updates.find((r) => r.status === 409)!.body).toMatchObject({ kind: 'Status', reason: 'Conflict' });
        const reads = await Promise.all([a, b].map((client) => client.request('GET', `${path}/shared`)));
        expect(reads.map((r) => r.body)).toEqual([winner, winner]);
      }
      expect(servers[0]!.projection.stateHash()).toBe(servers[1]!.projection.stateHash());
    } finally {
      for (const server of servers) await server.close();
      for (const log of new Set(logs)) await log.close();
      temp.remove();
    }
  });

  it.each([1, 3])('with %i partition(s): pods created through both at once never exceed their namespace\'s ResourceQuota; both agree', async (partitions) => {
    const temp = tempDir('apiserver-multi-quota-');
    const cluster = `multi-quota-${randomUUID().slice(0, 8)}`;
    const logs: EventLog[] = [];
    const servers: TestApiServer[] = [];
    try {
      logs.push(await openTestLog(adapter, { dir: temp.dir, cluster, partitions }));
      logs.push(adapter === 'kafka' ? await openTestLog(adapter, { dir: temp.dir, cluster, partitions }) : logs[0]!);
      servers.push(await startTestApiServer(logs[0]!, temp.dir));
      servers.push(await startTestApiServer(logs[1]!, temp.dir));
      const [a, b] = servers.map((s) => s.client) as [TestApiServer['client'], TestApiServer['client']];
      expect((await a.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } } })).status).toBe(201);
      const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods', namespace: 'team' }, spec: { hard: { pods: '5' } } };
      expect((await b.request('POST', '/api/v1/namespaces/team/resourcequotas', { body: quota })).status).toBe(201);
      // Twelve creates at once, six through each apiserver: five fit. The quota lies in the pods'
      // partition before them, so the fold judges each create against it in log order, whatever
      // the apiserver it came through had folded when it appended.
      const creates = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? a : b).request('POST', '/api/v1/namespaces/team/pods', { body: { ...podManifest(`p${i}`), metadata: { name: `p${i}`, namespace: 'team' } } }),
        ),
      );
      expect(creates.filter((r) => r.status === 201)).toHaveLength(5);
      for (const refused of creates.filter((r) => r.status !== 201)) {
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', message: expect.stringMatching(/exceeded quota: pods, requested: pods=1, used: pods=5, limited: pods=5/) });
      }
      const lists = await Promise.all([a, b].map((client) => client.request('GET', '/api/v1/namespaces/team/pods')));
      const names = lists.map((list) => (list.body.items as { metadata: { name: string } }[]).map((item) => item.metadata.name).sort());
      expect(names[0]).toHaveLength(5);
      expect(names[1]).toEqual(names[0]);
      expect(servers[0]!.projection.stateHash()).toBe(servers[1]!.projection.stateHash());
    } finally {
      for (const server of servers) await server.close();
      for (const log of new Set(logs)) await log.close();
      temp.remove();
    }
  });

  it('a create right after its namespace was created through the other apiserver succeeds (a refusal is only answered from a caught-up view)', async () => {
    const temp = tempDir('apiserver-multi-ns-');
    const cluster = `multi-ns-${randomUUID().slice(0, 8)}`;
    const logs: EventLog[] = [];
    const servers: TestApiServer[] = [];
    try {
      logs.push(await openTestLog(adapter, { dir: temp.dir, cluster, partitions: 3 }));
      logs.push(adapter === 'kafka' ? await openTestLog(adapter, { dir: temp.dir, cluster, partitions: 3 }) : logs[0]!);
      servers.push(await startTestApiServer(logs[0]!, temp.dir));
      servers.push(await startTestApiServer(logs[1]!, temp.dir));
      const [a, b] = servers.map((s) => s.client) as [TestApiServer['client'], TestApiServer['client']];
      for (let round = 0; round < 10; round++) {
        const ns = `fresh-${round}`;
        expect((await b.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
        const created = await a.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deploymentManifest('web', 1) });
        expect(created.status).toBe(201);
        // ...and a name taken through the other apiserver is refused here, without a second object.
        const again = await a.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deploymentManifest('web', 1) });
        expect(again.status).toBe(409);
        expect(again.body.reason).toBe('AlreadyExists');
      }
      const missing = await a.request('POST', '/apis/apps/v1/namespaces/never-made/deployments', { body: deploymentManifest('web', 1) });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toContain('"never-made" not found');
    } finally {
      for (const server of servers) await server.close();
      for (const log of new Set(logs)) await log.close();
      temp.remove();
    }
  });
});
