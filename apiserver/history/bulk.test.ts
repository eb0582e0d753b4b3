/**
 * `GET /logplane/v1/history?namespace=NS` over HTTP on both logs: every object of the
 * namespace (deleted ones too) with the versions the per-object history lists, none of
 * another namespace's; pages of at most `limit` versions chained by `continue`, which reads
 * the moment of the first page (later writes are not in it); authorized as the other
 * history routes (a non-resource path); bad parameters are 400 Statuses naming them. Its
 * timeline view (`view=timeline`) lists the same objects, pages and versions as runs of one
 * state, deletions and rejected writes, each naming its event by an address that is a moment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import { describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type ApiClient, type TestApiServer } from '../testing.ts';
import { MAX_HISTORY_LIMIT } from './bulk.ts';
import { createHistoryApi, type HistoryApi } from './routes.ts';
import type { ObjectTimelineList, TimelineMark } from './timeline.ts';

interface Listed {
  metadata: { resourceVersion: string; continue?: string };
  items: { key: string; versions: { position: string; eventType: string; verdict: { type: string }; change: string | null; object: { metadata: { labels?: Record<string, string> } } | null; diff?: unknown; managers?: unknown }[] }[];
}

describeOnBothLogs('the bulk history of a namespace', (adapter) => {
  const temp = tempDir('bulk-history-test-');
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;

  const list = async (query: string, token?: string) => {
    const response = await client.request('GET', `/logplane/v1/history${query}`, token === undefined ? {} : { token });
    return { status: response.status, body: response.body as Listed & { message: string; reason: string; kind: string } };
  };
  /** Every page of a listing, following `continue`. */
  const listAll = async (query: string): Promise<Listed[]> => {
    const pages: Listed[] = [];
    let next: string | undefined;
    do {
      const { status, body } = await list(`${query}${next === undefined ? '' : `&continue=${encodeURIComponent(next)}`}`);
      expect(status, JSON.stringify(body)).toBe(200);
      pages.push(body);
      next = body.metadata.continue;
    } while (next !== undefined && pages.length < 100);
    return pages;
  };
  /** The pages' versions joined per object key, in the order listed. */
  const joined = (pages: readonly Listed[]): Map<string, Listed['items'][number]['versions']> => {
    const byKey = new Map<string, Listed['items'][number]['versions']>();
    for (const page of pages) for (const item of page.items) byKey.set(item.key, [...(byKey.get(item.key) ?? []), ...item.versions]);
    return byKey;
  };

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    let history: HistoryApi | undefined;
    api = await startTestApiServer(log, temp.dir, { extensions: [async (req, res, url, user) => (history ? history(req, res, url, user) : false)] });
    history = createHistoryApi({ log, projection: api.projection });
    client = api.client;
    expect((await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } } })).status).toBe(201);
    for (const name of ['a', 'b', 'c']) {
      expect((await client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest(name) })).status).toBe(201);
    }
    expect((await client.request('POST', '/api/v1/namespaces/other/pods', { body: podManifest('elsewhere') })).status).toBe(201);
    // Namespaces whose names start with "default": their keys sort next to default's ('-' before '/', 'x' after it).
    for (const name of ['default-a', 'defaultx']) {
      expect((await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } })).status).toBe(201);
      expect((await client.request('POST', `/api/v1/namespaces/${name}/pods`, { body: podManifest('neighbour') })).status).toBe(201);
    }
    // Pod b gets three more versions; pod c is deleted: its history is still listed.
    for (const step of ['1', '2', '3']) {
      const patched = await client.request('PATCH', '/api/v1/namespaces/default/pods/b', {
        body: { metadata: { labels: { step } } },
        contentType: 'application/merge-patch+json',
      });
      expect(patched.status).toBe(200);
    }
    expect((await client.request('DELETE', '/api/v1/namespaces/default/pods/c?gracePeriodSeconds=0')).status).toBe(200);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it("lists every object of the namespace, deleted ones too, with the versions its own history lists (without diffs and field managers), and nothing of another namespace", async () => {
    const [page] = await listAll('?namespace=default');
    expect(page!.metadata.continue).toBeUndefined();
    const keys = page!.items.map((i) => i.key);
    expect(keys).toEqual(expect.arrayContaining(['Pod/default/a', 'Pod/default/b', 'Pod/default/c']));
    expect(keys.every((key) => key.split('/')[1] === 'default')).toBe(true);
    expect(keys).toEqual([...keys].sort());
    for (const key of ['Pod/default/a', 'Pod/default/b', 'Pod/default/c']) {
      const single = (await client.request('GET', `/logplane/v1/history/${key}`)).body as Listed['items'][number];
      const listed = page!.items.find((i) => i.key === key)!.versions;
      expect(listed).toEqual(single.versions.map(({ diff: _diff, managers: _managers, ...version }) => version));
      expect(listed.every((v) => !('diff' in v) && !('managers' in v))).toBe(true);
    }
    expect(page!.items.find((i) => i.key === 'Pod/default/b')!.versions.at(-1)!.object!.metadata.labels).toEqual({ step: '3' });
    expect(page!.items.find((i) => i.key === 'Pod/default/c')!.versions.at(-1)!.change).toBe('DELETED');
    const other = (await listAll('?namespace=other'))[0]!;
    expect(other.items.map((i) => i.key)).toEqual(['Pod/other/elsewhere']);
    for (const name of ['default-a', 'defaultx']) {
      expect((await listAll(`?namespace=${name}`))[0]!.items.map((i) => i.key).filter((key) => key.startsWith('Pod/'))).toEqual([`Pod/${name}/neighbour`]);
    }
    // Without a namespace: every object, cluster-scoped ones too.
    const everything = joined(await listAll('?limit=10000'));
    expect([...everything.keys()]).toEqual(expect.arrayContaining(['Namespace//other', 'Pod/default/b', 'Pod/other/elsewhere']));
  });

  it('pages by versions: at most limit a page, an object split across pages, the same versions as one reply', async () => {
    const whole = joined(await listAll('?namespace=default'));
    const total = [...whole.values()].reduce((sum, versions) => sum + versions.length, 0);
    for (const limit of [1, 2, 3]) {
      const pages = await listAll(`?namespace=default&limit=${limit}`);
      expect(pages.length).toBe(Math.ceil(total / limit));
      for (const page of pages) expect(page.items.reduce((sum, item) => sum + item.versions.length, 0)).toBeLessThanOrEqual(limit);
      expect(new Set(pages.map((p) => p.metadata.resourceVersion)).size).toBe(1);
      expect(joined(pages)).toEqual(whole);
    }
  });

  it('continues at the moment of its first page: a write after it is not in the later pages', async () => {
    const first = await list('?namespace=default&limit=1');
    expect(first.status).toBe(200);
    const patched = await client.request('PATCH', '/api/v1/namespaces/default/pods/b', {
      body: { metadata: { labels: { step: 'later' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(200);
    const rest = await listAll(`?namespace=default&limit=1&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
    const versionsOfB = joined([first.body, ...rest]).get('Pod/default/b')!;
    expect(versionsOfB.some((v) => v.object?.metadata.labels?.['step'] === 'later')).toBe(false);
    expect(rest.every((page) => page.metadata.resourceVersion === first.body.metadata.resourceVersion)).toBe(true);
    // A fresh listing reads the new moment.
    const fresh = joined(await listAll('?namespace=default')).get('Pod/default/b')!;
    expect(fresh.at(-1)!.object!.metadata.labels).toEqual({ step: 'later' });
  });

  it('is authorized as the other history routes (RBAC on the non-resource path): 401 without a token, 403 without a rule, 200 with one', async () => {
    const rbac = await startTestApiServer(log, temp.dir, {
      authorizationModes: ['RBAC'],
      extensions: [async (req, res, url, user) => guarded(req, res, url, user)],
    });
    const guarded = createHistoryApi({ log, projection: rbac.projection });
    try {
      await rbac.server.ensureBootstrapPolicy();
      const get = (token: string | null) => rbac.client.request('GET', '/logplane/v1/history?namespace=default', { token });
      expect((await get(null)).status).toBe(401);
      const forbidden = await get('controller-token');
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toMatchObject({ kind: 'Status', reason: 'Forbidden' });
      expect(forbidden.body.message).toContain('cannot get path "/logplane/v1/history"');
      const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'history-reader' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/logplane/v1/history'] }] };
      const binding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'history-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'history-reader' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'system:controller:replicaset-controller' }],
      };
      expect((await rbac.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role })).status).toBe(201);
      expect((await rbac.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status).toBe(201);
      const allowed = await get('controller-token');
      expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
      expect((allowed.body as Listed).items.map((i) => i.key)).toContain('Pod/default/a');
    } finally {
      await rbac.close();
    }
  });

  describe('its timeline view', () => {
    const timeline = async (query: string): Promise<ObjectTimelineList[]> => {
      const pages: ObjectTimelineList[] = [];
      let next: string | undefined;
      do {
        const response = await client.request('GET', `/logplane/v1/history?view=timeline${query}${next === undefined ? '' : `&continue=${encodeURIComponent(next)}`}`);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        const page = response.body as ObjectTimelineList;
        expect(page.kind).toBe('ObjectTimelineList');
        pages.push(page);
        next = page.metadata.continue;
      } while (next !== undefined && pages.length < 100);
      return pages;
    };
    /** Versions a mark stands for: a run's count, one for any other mark. */
    const versionsOf = (marks: readonly TimelineMark[]): number => marks.reduce((n, mark) => n + (mark.type === 'span' ? mark.versions : 1), 0);

    it('lists the objects the bulk history lists, each version folded into a run of one state or a mark, with the labels and actors the filters read', async () => {
      const whole = joined(await listAll('?namespace=default'));
      const [page] = await timeline('&namespace=default');
      expect(page!.metadata.continue).toBeUndefined();
      expect(page!.items.map((i) => i.key)).toEqual([...whole.keys()]);
      for (const item of page!.items) {
        const drawn = whole.get(item.key)!.filter((v) => v.verdict.type === 'rejected' || v.change !== null);
        expect(versionsOf(item.marks), item.key).toBe(drawn.length);
      }
      const b = page!.items.find((i) => i.key === 'Pod/default/b')!;
      // Created and relabelled while unscheduled: one Pending run (kubectl's STATUS), toned as in progress.
      expect(b.marks.filter((m) => m.type === 'span').map((m) => m.type === 'span' && [m.state, m.tone])).toEqual([['Pending', 'progress']]);
      expect(b.labels).toContainEqual({ step: '3' });
      expect(b.actors).toEqual(['alice']);
      expect(JSON.stringify(page)).not.toContain('"spec"');
      const c = page!.items.find((i) => i.key === 'Pod/default/c')!;
      expect(c.marks.at(-1)).toMatchObject({ type: 'deleted', eventType: 'ObjectDeleted' });
      // A mark names its event by the one position format (the bulk history's position of the
      // same version), and it is a moment: the object as that event left it.
      const created = c.marks[0]!;
      expect(created.at).toMatch(/^\d+(\.\d+)+$/);
      expect(created.at).toBe(whole.get('Pod/default/c')![0]!.position);
      const at = await client.request('GET', `/logplane/v1/at?at=${encodeURIComponent(created.at)}&kind=Pod&namespace=default&name=c`);
      expect(at.status, JSON.stringify(at.body)).toBe(200);
      expect((at.body as { objects: { metadata: { name: string } }[] }).objects.map((o) => o.metadata.name)).toEqual(['c']);
    });

    it('pages as the bulk history does: by versions read, an object continued on the next page, the same versions in all', async () => {
      const [one] = await timeline('&namespace=default');
      const total = one!.items.reduce((n, item) => n + versionsOf(item.marks), 0);
      for (const limit of [1, 2]) {
        const pages = await timeline(`&namespace=default&limit=${limit}`);
        expect(pages.length).toBeGreaterThan(1);
        expect(new Set(pages.map((p) => p.metadata.resourceVersion)).size).toBe(1);
        expect(pages.reduce((n, page) => n + page.items.reduce((m, item) => m + versionsOf(item.marks), 0), 0)).toBe(total);
      }
    });

    it('answers an unknown view with a 400 Status naming it, and a request without a token with 401', async () => {
      const bad = await client.request('GET', '/logplane/v1/history?namespace=default&view=objects');
      expect(bad.status).toBe(400);
      expect((bad.body as { message: string }).message).toMatch(/^view: Unsupported value: "objects"/);
      expect((await client.request('GET', '/logplane/v1/history?view=timeline&namespace=default', { token: null })).status).toBe(401);
      const limit = await client.request('GET', `/logplane/v1/history?view=timeline&namespace=default&limit=${MAX_HISTORY_LIMIT + 1}`);
      expect(limit.status).toBe(400);
      expect((limit.body as { message: string }).message).toMatch(/^limit: /);
    });
  });

  it.each([
    ['limit', '?namespace=default&limit=0'],
    ['limit', '?namespace=default&limit=abc'],
    ['limit', '?namespace=default&limit=1.5'],
    ['limit', `?namespace=default&limit=${MAX_HISTORY_LIMIT + 1}`],
    ['namespace', '?namespace=Not_A_Namespace'],
    ['namespace', `?namespace=${'n'.repeat(64)}`],
    ['continue', '?namespace=default&continue=not-a-token'],
    ['continue', '?namespace=default&continue=%7B%7D'],
    ['continue', `?namespace=default&continue=${Buffer.from(JSON.stringify({ rv: '1.2.3.4.5', ns: 'default', key: 'Pod/default/a', skip: 0 })).toString('base64url')}`],
    ['continue', `?namespace=default&continue=${Buffer.from(JSON.stringify({ rv: '1.1', ns: 'default', key: 'Pod/default/a', skip: -1 })).toString('base64url')}`],
  ])('answers a bad %s with a 400 Status naming it (%s)', async (parameter, query) => {
    const { status, body } = await list(query);
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(body.message).toMatch(new RegExp(`^${parameter}: `));
  });

  it("refuses a continue token of another namespace's listing", async () => {
    const first = await list('?namespace=default&limit=1');
    const { status, body } = await list(`?namespace=other&continue=${encodeURIComponent(first.body.metadata.continue!)}`);
    expect(status).toBe(400);
    expect(body.message).toContain('continue: Invalid value: the token continues the listing of namespace "default"');
  });
});
