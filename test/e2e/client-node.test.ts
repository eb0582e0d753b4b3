/**
 * The official JavaScript client, `@kubernetes/client-node` 1.x (a real client nobody here
 * wrote), against a logplane apiserver on both logs: typed APIs of core/v1 and batch/v1,
 * the generic KubernetesObjectApi for a grouped kind (rbac), and its Watch across
 * create, update and delete.
 */
import { BatchV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, Watch, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateSelfSignedCertificate } from '../../apiserver/index.ts';
import { ADMIN_TOKEN, describeOnBothLogs, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../../apiserver/testing.ts';
import type { EventLog } from '../../log/port.ts';

describeOnBothLogs('@kubernetes/client-node', (adapter) => {
  const temp = tempDir('client-node-');
  let log: EventLog;
  let api: TestApiServer;
  const kc = new KubeConfig();

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    const tls = generateSelfSignedCertificate();
    api = await startTestApiServer(log, temp.dir, { tls });
    kc.loadFromOptions({
      clusters: [{ name: 'logplane', server: api.server.url, caData: Buffer.from(tls.cert).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'admin', token: ADMIN_TOKEN }],
      contexts: [{ name: 'logplane', cluster: 'logplane', user: 'admin' }],
      currentContext: 'logplane',
    });
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'js' } } });
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('creates, reads, replaces and lists config maps and secrets with the typed core/v1 API', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({ namespace: 'js', body: { metadata: { name: 'settings' }, data: { mode: 'fast' } } });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    const read = await core.readNamespacedConfigMap({ namespace: 'js', name: 'settings' });
    expect(read.data).toEqual({ mode: 'fast' });
    const replaced = await core.replaceNamespacedConfigMap({ namespace: 'js', name: 'settings', body: { ...read, data: { mode: 'safe' } } });
    expect(replaced.data).toEqual({ mode: 'safe' });
    await core.createNamespacedSecret({ namespace: 'js', body: { metadata: { name: 'token' }, stringData: { token: 'abc' } } });
    const secret = await core.readNamespacedSecret({ namespace: 'js', name: 'token' });
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(secret.data?.['token'] ?? '', 'base64').toString()).toBe('abc');
    const list = await core.listNamespacedConfigMap({ namespace: 'js' });
    expect(list.items.map((item) => item.metadata?.name)).toEqual(['settings']);
  });

  it('creates a Job with the typed batch/v1 API and reads back its defaults', async () => {
    const batch = kc.makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({
      namespace: 'js',
      body: { metadata: { name: 'once' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36', resources: { requests: { cpu: '0.25' } } }] } } } },
    });
    const job = await batch.readNamespacedJob({ namespace: 'js', name: 'once' });
    expect(job.spec).toMatchObject({ backoffLimit: 6, completions: 1, parallelism: 1, completionMode: 'NonIndexed' });
    expect(job.spec?.template.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '250m' });
  });

  it('creates and lists a grouped kind with the generic KubernetesObjectApi', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    await objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'reader', namespace: 'js' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    } as never);
    const read = (await objects.read({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader', namespace: 'js' } })) as unknown as { rules: unknown[] };
    expect(read.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }]);
    const list = await objects.list('rbac.authorization.k8s.io/v1', 'Role', 'js');
    expect(list.items.map((item) => item.metadata?.name)).toEqual(['reader']);
  });

  it('watches config maps across create, update and delete', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const events: string[] = [];
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const request = await new Watch(kc).watch(
      '/api/v1/namespaces/js/configmaps',
      { fieldSelector: 'metadata.name=watched' },
      (type: string, object: V1ConfigMap) => {
        events.push(`${type} ${object.data?.['v'] ?? ''}`);
        if (type === 'DELETED') done();
      },
      () => done(),
    );
    await core.createNamespacedConfigMap({ namespace: 'js', body: { metadata: { name: 'watched' }, data: { v: '1' } } });
    await core.patchNamespacedConfigMap({ namespace: 'js', name: 'watched', body: [{ op: 'replace', path: '/data/v', value: '2' }] });
    await core.deleteNamespacedConfigMap({ namespace: 'js', name: 'watched' });
    await finished;
    request.abort();
    expect(events).toEqual(['ADDED 1', 'MODIFIED 2', 'DELETED 2']);
  });
});
