/**
 * `apiVersion` and `kind` of a create or update body, judged as kube-apiserver 1.32's
 * decoder judges them, on both logs: absent ones are taken from the URL (kube's
 * `gvkWithDefaults`: a built-in kind needs neither), another kind or a kind the body's
 * version does not have is 400 with the decoder's message, the URL's kind in another
 * served version is 400 "the API version in the data …"; a refusal appends nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { deploymentManifest, describeOnBothLogs, logEnd, openTestLog, podManifest, startTestApiServer, tempDir, type ApiClient, type TestApiServer } from './testing.ts';

const PODS = '/api/v1/namespaces/default/pods';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const SCHEME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

describeOnBothLogs('type of a body', (adapter) => {
  const temp = tempDir('type-meta-test-');
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    client = api.client;
    expect((await client.request('POST', PODS, { body: podManifest('typed') })).status).toBe(201);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  it('takes a missing kind and apiVersion from the URL, as kube does for its built-in kinds', async () => {
    const { apiVersion: _version, kind: _kind, ...untyped } = podManifest('untyped');
    const before = await appended();
    const created = await client.request('POST', PODS, { body: untyped });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'untyped' } });
    expect(await appended()).toBe(before + 1);
    const { apiVersion: _apps, ...kindOnly } = deploymentManifest('kind-only');
    expect((await client.request('POST', DEPLOYMENTS, { body: kindOnly })).body).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
    expect((await client.request('POST', PODS, { body: { ...podManifest('nulls'), apiVersion: null, kind: '' } })).status).toBe(201);
  });

  it.each([
    ['another kind of the same version', PODS, { ...podManifest('x'), kind: 'Service' }, 'Service in version "v1" cannot be handled as a Pod: converting (v1.Service) to (core.Pod): unknown conversion'],
    ['another group\'s kind', PODS, deploymentManifest('x'), 'Deployment in version "v1" cannot be handled as a Pod: converting (v1.Deployment) to (core.Pod): unknown conversion'],
    ['another kind of a group', DEPLOYMENTS, { ...deploymentManifest('x'), kind: 'ReplicaSet' }, 'ReplicaSet in version "v1" cannot be handled as a Deployment: converting (v1.ReplicaSet) to (apps.Deployment): unknown conversion'],
    ['a kind no version has', PODS, { ...podManifest('x'), kind: 'Pdo' }, `Pdo in version "v1" cannot be handled as a Pod: no kind "Pdo" is registered for version "v1" in scheme "${SCHEME}"`],
    ['the URL\'s kind in a group that has none', PODS, { ...podManifest('x'), apiVersion: 'apps/v1', kind: undefined }, `Pod in version "v1" cannot be handled as a Pod: no kind "Pod" is registered for version "apps/v1" in scheme "${SCHEME}"`],
    [
      'the URL\'s kind in another served version',
      '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
      { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'x' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 } },
      'the API version in the data (autoscaling/v1) does not match the expected API version (autoscaling/v2)',
    ],
    [
      'a kind that is not a string',
      PODS,
      { kind: 7, metadata: { name: 'x' } },
      'the object provided is unrecognized (must be of type Pod): couldn\'t get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"kind":7,"metadata":{"name":" ...)',
    ],
  ])('refuses a create with %s: 400 with the decoder\'s message, nothing appended', async (_case, path, body, message) => {
    const before = await appended();
    const response = await client.request('POST', path, { body });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message });
    expect(await appended()).toBe(before);
  });

  it('refuses an update with another kind the same way, appending nothing', async () => {
    const current = (await client.request('GET', `${PODS}/typed`)).body;
    const before = await appended();
    const response = await client.request('PUT', `${PODS}/typed`, { body: { ...current, kind: 'ConfigMap' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ reason: 'BadRequest', message: 'ConfigMap in version "v1" cannot be handled as a Pod: converting (v1.ConfigMap) to (core.Pod): unknown conversion' });
    expect(await appended()).toBe(before);
  });
});
