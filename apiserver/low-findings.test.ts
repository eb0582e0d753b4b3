/**
 * The security audit's low findings in the apiserver, over HTTP on both logs: causation
 * headers only from controller identities and bounded; requests that used to be answered
 * 500 (scale to 2^53, a bad %-escape in a history path, `controller=__proto__`, `previous=true`
 * without a previous container, `at=1.2.3`, `audit?limit=abc`) are 4xx Statuses; the health
 * endpoints check the log and the projection, with kube's `?verbose` output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { createHistoryApi, type HistoryApi } from './history/routes.ts';
import {
  deploymentManifest,
  describeOnBothLogs,
  logEnd,
  openTestLog,
  podManifest,
  startTestApiServer,
  tempDir,
  type ApiClient,
  type TestApiServer,
} from './testing.ts';

const CONTROLLER_TOKEN = 'controller-token';
const CAUSE = '0b4e7c2a-5f1d-4d0e-9a35-6c1f3e2b7d90';

describeOnBothLogs('low findings', (adapter) => {
  const temp = tempDir('low-findings-test-');
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;
  let position = '';

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    let history: HistoryApi | undefined;
    api = await startTestApiServer(log, temp.dir, {
      extensions: [async (req, res, url, user) => (history ? history(req, res, url, user) : false)],
      podLogs: async () => (async function* () {
        yield 'hello\n';
      })(),
    });
    history = createHistoryApi({
      log,
      projection: api.projection,
      debugReconcile: async () => ({ commands: [], recorded: [], identical: true }),
      debugControllers: ['replicaset-controller'],
    });
    client = api.client;
    expect((await client.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } } })).status).toBe(201);
    expect((await client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest('logged') })).status).toBe(201);
    const bound = await client.request('POST', '/api/v1/namespaces/default/pods/logged/binding', {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'logged' }, target: { kind: 'Node', name: 'node-1' } },
    });
    expect(bound.status).toBe(201);
    expect((await client.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deploymentManifest('web') })).status).toBe(201);
    position = (await client.request('GET', '/logplane/v1/position')).body.resourceVersion;
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  /** A request that must be answered with a 4xx Status of `code` and append nothing. */
  const refused = async (code: number, method: string, path: string, options: Parameters<ApiClient['request']>[2] = {}) => {
    const before = await appended();
    const response = await client.request(method, path, options);
    expect(response.status, JSON.stringify(response.body)).toBe(code);
    expect(response.body).toMatchObject({ kind: 'Status', status: 'Failure', code });
    expect(await appended()).toBe(before);
    return response.body as { message: string; reason: string };
  };

  describe('causation headers', () => {
    it.each([
      ['X-Logplane-Causation-Id', CAUSE],
      ['X-Logplane-Correlation-Id', 'forged-request'],
      ['X-Logplane-Decided-At', '7.3'],
    ])('refuses %s from a user that is not a controller (400)', async (header, value) => {
      const body = await refused(400, 'POST', '/api/v1/namespaces/default/pods', { body: podManifest('forged'), headers: { [header]: value } });
      expect(body.message).toContain('only controller identities');
    });

    it.each([
      ['a correlation id of 10,000 bytes', { 'X-Logplane-Correlation-Id': 'c'.repeat(10_000) }],
      ['a correlation id with a control character', { 'X-Logplane-Correlation-Id': 'a\tb' }],
      ['a decided-at of 5,000 bytes', { 'X-Logplane-Decided-At': Array.from({ length: 2500 }, () => '1').join('.') }],
    ])('refuses %s even from a controller (400)', async (_title, headers) => {
      await refused(400, 'POST', '/api/v1/namespaces/default/pods', { body: podManifest('too-long'), token: CONTROLLER_TOKEN, headers });
    });

    it('records them from a controller', async () => {
      const created = await client.request('POST', '/api/v1/namespaces/default/pods', {
        body: podManifest('caused'),
        token: CONTROLLER_TOKEN,
        headers: { 'X-Logplane-Causation-Id': CAUSE, 'X-Logplane-Correlation-Id': 'request-42', 'X-Logplane-Decided-At': '7.3' },
      });
      expect(created.status).toBe(201);
      expect(api.projection.store.events.get(created.body.metadata.uid)).toMatchObject({ causationId: CAUSE, correlationId: 'request-42' });
    });
  });

  describe('client errors that were 500s', () => {
    it('answers a scale to 2^53 replicas with 422', async () => {
      const scale = `/apis/apps/v1/namespaces/default/deployments/web/scale`;
      const body = await refused(422, 'PUT', scale, { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 2 ** 53 } } });
      expect(body.message).toContain('must be less than or equal to 2147483647');
      await refused(422, 'PATCH', scale, { body: { spec: { replicas: 2 ** 53 } }, contentType: 'application/merge-patch+json' });
    });

    it('answers a bad %-escape in a history path with 400', async () => {
      await refused(400, 'GET', '/logplane/v1/history/Pod/default/%E0%A4%A');
      await refused(400, 'GET', '/logplane/v1/why/Pod/%/x');
    });

    it.each(['__proto__', 'constructor', 'toString', 'no-such-controller'])('answers debug reconcile with controller=%s with 400', async (controller) => {
      const body = await refused(400, 'GET', `/logplane/v1/debug/reconcile?controller=${controller}&key=Pod/default/logged&at=${position}`);
      expect(body.message).toContain('replicaset-controller');
    });

    it('answers at=1.2.3 and audit?limit=abc with 400', async () => {
      await refused(400, 'GET', '/logplane/v1/at?at=1.2.3');
      await refused(400, 'GET', '/logplane/v1/audit?limit=abc');
    });

    it('answers previous=true for a container that has not restarted with 400, as kubelet does', async () => {
      const body = await refused(400, 'GET', '/api/v1/namespaces/default/pods/logged/log?previous=true');
      expect(body.message).toBe('previous terminated container "main" in pod "logged" not found');
      const current = await client.request('GET', '/api/v1/namespaces/default/pods/logged/log');
      expect(current.status).toBe(200);
      expect(current.body).toBe('hello\n');
    });
  });

  describe('health', () => {
    it.each(['livez', 'healthz'])('/%s checks ping and the log', async (endpoint) => {
      const plain = await client.request('GET', `/${endpoint}`, { token: null });
      expect([plain.status, plain.body]).toEqual([200, 'ok']);
      const verbose = await client.request('GET', `/${endpoint}?verbose`, { token: null });
      expect(verbose.body).toBe(`[+]ping ok\n[+]log ok\n${endpoint} check passed\n`);
    });

    it('/readyz checks the log, that the projection is caught up, and shutdown; one check, exclude, unknown check', async () => {
      const verbose = await client.request('GET', '/readyz?verbose', { token: null });
      expect(verbose.status).toBe(200);
      expect(verbose.body).toBe('[+]ping ok\n[+]log ok\n[+]projection ok\n[+]shutdown ok\nreadyz check passed\n');
      expect((await client.request('GET', '/readyz/projection', { token: null })).body).toBe('ok');
      expect((await client.request('GET', '/readyz?verbose&exclude=projection', { token: null })).body).toContain('[+]projection excluded: ok');
      expect((await client.request('GET', '/readyz/nope', { token: null })).status).toBe(404);
    });

    it('/readyz fails when this apiserver\'s projection no longer follows the log', async () => {
      const behind = await startTestApiServer(log, temp.dir, { healthTimeoutMs: 300 });
      try {
        await behind.projection.close();
        expect((await client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest('moves-on') })).status).toBe(201);
        const ready = await behind.client.request('GET', '/readyz?verbose', { token: null });
        expect(ready.status).toBe(500);
        expect(ready.body).toContain('[+]log ok');
        expect(ready.body).toContain('[-]projection failed: reason withheld');
        expect(ready.body).toContain('readyz check failed');
        expect((await behind.client.request('GET', '/livez', { token: null })).status).toBe(200);
      } finally {
        await behind.server.close();
      }
    });

    it('/readyz and /livez fail when the log is unreachable', async () => {
      const other = await openTestLog(adapter, { dir: temp.dir });
      const cut = await startTestApiServer(other, temp.dir, { healthTimeoutMs: 300 });
      try {
        await other.close();
        const ready = await cut.client.request('GET', '/readyz', { token: null });
        expect(ready.status).toBe(500);
        expect(ready.body).toContain('[-]log failed: reason withheld');
        expect((await cut.client.request('GET', '/livez', { token: null })).status).toBe(500);
      } finally {
        await cut.close();
      }
    });
  });
});
