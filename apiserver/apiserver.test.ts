/**
 * Scenario tests of the apiserver over both logs (the Kafka runs use the real broker):
 * discovery and authentication, CRUD, selectors, watch (resume, selectors, 410), 409
 * Conflict, validation errors that append nothing, subresources, tables and metrics.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
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

describeOnBothLogs('apiserver', (adapter) => {
  const temp = tempDir('apiserver-test-');
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    client = api.client;
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  /** Creates a namespace for one test, so tests do not see each other's objects. */
  const namespace = async (name: string): Promise<string> => {
    const created = await client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    expect(created.status).toBe(201);
    return name;
  };

  /** Asserts that `action` got a Status error and that it appended nothing. */
  const rejectsWithoutAppending = async (
    action: () => Promise<{ status: number; body: any }>,
  ): Promise<{ status: number; body: any }> => {
    const desired = await logEnd(log, 'desired');
    const observed = await logEnd(log, 'observed');
    const response = await action();
    expect(response.body.kind).toBe('Status');
    expect(response.body.status).toBe('Failure');
    expect(response.body.code).toBe(response.status);
    expect(await logEnd(log, 'desired')).toBe(desired);
    expect(await logEnd(log, 'observed')).toBe(observed);
    return response;
  };

  it('serves health checks anonymously and 401s everything else without a valid token', async () => {
    for (const path of ['/healthz', '/readyz', '/livez']) {
      const response = await client.request('GET', path, { token: null });
      expect(response.status).toBe(200);
      expect(response.body).toBe('ok');
    }
    for (const token of [null, 'wrong-token']) {
      const response = await client.request('GET', '/api/v1/pods', { token });
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
  });

  it('serves legacy discovery for every group and version of the served kinds and the review groups, with short names and subresources', async () => {
    const version = await client.request('GET', '/version');
    expect(version.body).toMatchObject({ major: '1', minor: '32' });
    expect((await client.request('GET', '/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const groups = await client.request('GET', '/apis');
    expect(groups.headers.get('content-type')).toBe('application/json');
    expect(groups.body.groups.map((g: { name: string }) => g.name)).toEqual([
      'apps', 'events.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io', 'autoscaling', 'batch', 'certificates.k8s.io', 'networking.k8s.io', 'policy', 'rbac.authorization.k8s.io',
      'storage.k8s.io', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'scheduling.k8s.io', 'coordination.k8s.io', 'node.k8s.io', 'discovery.k8s.io', 'metrics.k8s.io',
    ]);
    const core = await client.request('GET', '/api/v1');
    const byName = new Map(core.body.resources.map((r: { name: string }) => [r.name, r]));
    expect(byName.get('pods')).toMatchObject({ kind: 'Pod', namespaced: true, shortNames: ['po'], verbs: expect.arrayContaining(['watch', 'patch']) });
    expect(byName.get('nodes')).toMatchObject({ namespaced: false, shortNames: ['no'] });
    for (const sub of ['pods/status', 'pods/binding', 'pods/log', 'namespaces/status']) expect(byName.has(sub)).toBe(true);
    const authorization = await client.request('GET', '/apis/authorization.k8s.io/v1');
    expect(authorization.body.resources.map((r: { name: string; verbs: string[] }) => `${r.name} ${r.verbs}`)).toEqual([
      'localsubjectaccessreviews create', 'selfsubjectaccessreviews create', 'selfsubjectrulesreviews create', 'subjectaccessreviews create',
    ]);
    const apps = await client.request('GET', '/apis/apps/v1');
    const scale = apps.body.resources.find((r: { name: string }) => r.name === 'deployments/scale');
    expect(scale).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(apps.body.resources.find((r: { name: string }) => r.name === 'replicasets').shortNames).toEqual(['rs']);
    const openapi = await client.request('GET', '/openapi/v3');
    expect(Object.keys(openapi.body.paths)).toEqual([
      'api/v1', 'apis/apps/v1', 'apis/events.k8s.io/v1', 'apis/autoscaling/v2', 'apis/autoscaling/v1', 'apis/batch/v1', 'apis/certificates.k8s.io/v1', 'apis/networking.k8s.io/v1',
      'apis/policy/v1', 'apis/rbac.authorization.k8s.io/v1', 'apis/storage.k8s.io/v1', 'apis/admissionregistration.k8s.io/v1',
      'apis/apiextensions.k8s.io/v1', 'apis/scheduling.k8s.io/v1', 'apis/coordination.k8s.io/v1', 'apis/node.k8s.io/v1', 'apis/discovery.k8s.io/v1',
    ]);
  });

  it('creates, reads, updates, patches and deletes a pod, recording the user as actor', async () => {
    const ns = await namespace('crud');
    const created = await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('web-1', { app: 'web' }) });
    expect(created.status).toBe(201);
    const pod = created.body;
    expect(pod.metadata).toMatchObject({ name: 'web-1', namespace: ns, generation: 1 });
    expect(pod.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(pod.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(pod.spec).toMatchObject({ restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
    expect(pod.status.phase).toBe('Pending');
    expect(api.projection.store.events.get(pod.metadata.uid)?.actor).toEqual({ type: 'user', name: 'alice' });

    const read = await client.request('GET', `/api/v1/namespaces/${ns}/pods/web-1`);
    expect(read.body).toEqual(pod);

    const replaced = structuredClone(pod);
    replaced.spec.containers[0].image = 'busybox:1.37';
    const updated = await client.request('PUT', `/api/v1/namespaces/${ns}/pods/web-1`, { body: replaced });
    expect(updated.status).toBe(200);
    expect(updated.body.spec.containers[0].image).toBe('busybox:1.37');
    expect(updated.body.metadata.resourceVersion).not.toBe(pod.metadata.resourceVersion);
    expect(updated.body.metadata.generation).toBe(2);

    const stale = await rejectsWithoutAppending(() => client.request('PUT', `/api/v1/namespaces/${ns}/pods/web-1`, { body: replaced }));
    expect(stale.status).toBe(409);
    expect((await client.request('GET', `/api/v1/namespaces/${ns}/pods/web-1`)).body).toEqual(updated.body);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods "web-1": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'web-1', kind: 'pods' },
    });

    const merged = await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/web-1`, {
      body: { metadata: { labels: { tier: 'front' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(merged.status).toBe(200);
    expect(merged.body.metadata.labels).toEqual({ app: 'web', tier: 'front' });

    const strategic = await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/web-1`, {
      body: { spec: { containers: [{ name: 'main', image: 'busybox:1.38' }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(strategic.status).toBe(200);
    expect(strategic.body.spec.containers).toHaveLength(1);
    expect(strategic.body.spec.containers[0]).toMatchObject({ name: 'main', image: 'busybox:1.38', imagePullPolicy: 'IfNotPresent' });

    const jsonPatched = await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/web-1`, {
      body: [{ op: 'remove', path: '/metadata/labels/tier' }],
      contentType: 'application/json-patch+json',
    });
    expect(jsonPatched.body.metadata.labels).toEqual({ app: 'web' });

    const deleted = await client.request('DELETE', `/api/v1/namespaces/${ns}/pods/web-1`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'web-1', kind: 'pods', uid: pod.metadata.uid } });
    const gone = await client.request('GET', `/api/v1/namespaces/${ns}/pods/web-1`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'pods "web-1" not found', code: 404 });
  });

  it('answers AlreadyExists, a missing namespace and unknown objects like kube-apiserver', async () => {
    const ns = await namespace('exists');
    expect((await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('twice') })).status).toBe(201);
    const again = await rejectsWithoutAppending(() => client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('twice') }));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ reason: 'AlreadyExists', message: 'pods "twice" already exists' });
    const noNamespace = await rejectsWithoutAppending(() => client.request('POST', '/api/v1/namespaces/nowhere/pods', { body: podManifest('lost') }));
    expect(noNamespace.status).toBe(404);
    expect(noNamespace.body).toMatchObject({ reason: 'NotFound', message: 'namespaces "nowhere" not found' });
    const missing = await client.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/none`);
    expect(missing.body).toMatchObject({ reason: 'NotFound', message: 'deployments.apps "none" not found', details: { group: 'apps', kind: 'deployments' } });
    const unknownPath = await client.request('GET', '/api/v1/namespaces/x/widgets');
    expect(unknownPath.status).toBe(404);
    const deleteMissing = await rejectsWithoutAppending(() => client.request('DELETE', `/api/v1/namespaces/${ns}/pods/none`));
    expect(deleteMissing.body).toMatchObject({ reason: 'NotFound', message: 'pods "none" not found' });
    const current = (await client.request('GET', `/api/v1/namespaces/${ns}/pods/twice`)).body;
    const wrongUid = await rejectsWithoutAppending(() =>
      client.request('DELETE', `/api/v1/namespaces/${ns}/pods/twice`, { body: { preconditions: { uid: 'another-uid' } } }),
    );
    expect(wrongUid.body.message).toContain(`Precondition failed: UID in precondition: another-uid, UID in object meta: ${current.metadata.uid}`);
  });

  it('rejects invalid objects with a Status naming the field, appending nothing', async () => {
    const ns = await namespace('invalid');
    const path = `/api/v1/namespaces/${ns}/pods`;
    const noContainers = await rejectsWithoutAppending(() =>
      client.request('POST', path, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'empty' }, spec: { containers: [] } } }),
    );
    expect(noContainers.status).toBe(422);
    expect(noContainers.body).toMatchObject({ reason: 'Invalid', message: 'Pod "empty" is invalid: spec.containers: Required value' });
    expect(noContainers.body.details.causes).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }]);

    const badName = await rejectsWithoutAppending(() => client.request('POST', path, { body: podManifest('Bad_Name') }));
    expect(badName.status).toBe(422);
    expect(badName.body.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });

    const badPort = await rejectsWithoutAppending(() => client.request('POST', path, { body: podManifest('port', {}, { ports: [{ containerPort: 70000 }] }) }));
    expect(badPort.status).toBe(422);
    expect(badPort.body.details.causes[0]).toMatchObject({
      field: 'spec.containers[0].ports[0].containerPort',
      message: 'Invalid value: 70000: must be between 1 and 65535, inclusive',
    });

    const badQuantity = await rejectsWithoutAppending(() =>
      client.request('POST', path, { body: podManifest('qty', {}, { resources: { requests: { cpu: 'lots' } } }) }),
    );
    expect(badQuantity.body.details.causes[0].field).toBe('spec.containers[0].resources.requests[cpu]');

    const wrongType = await rejectsWithoutAppending(() =>
      client.request('POST', path, { body: podManifest('typed', {}, { ports: [{ containerPort: '80' }] }) }),
    );
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.details.causes[0].field).toBe('spec.containers[0].ports[0].containerPort');

    const strict = await rejectsWithoutAppending(() =>
      client.request('POST', `${path}?fieldValidation=Strict`, { body: { ...podManifest('strict'), spec: { ...podManifest('strict').spec, foo: 1 } } }),
    );
    expect(strict.status).toBe(400);
    expect(strict.body).toMatchObject({ reason: 'BadRequest' });
    expect(strict.body.message).toContain('unknown field "spec.foo"');

    const otherNamespace = await rejectsWithoutAppending(() =>
      client.request('POST', path, { body: { ...podManifest('elsewhere'), metadata: { name: 'elsewhere', namespace: 'default' } } }),
    );
    expect(otherNamespace.status).toBe(400);

    const badDeployment = await rejectsWithoutAppending(() =>
      client.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, {
        body: { ...deploymentManifest('mismatch'), spec: { ...deploymentManifest('mismatch').spec, selector: { matchLabels: { app: 'other' } }, replicas: -1 } },
      }),
    );
    expect(badDeployment.status).toBe(422);
    expect(badDeployment.body.message).toMatch(/^Deployment\.apps "mismatch" is invalid: \[/);
    expect(badDeployment.body.details.causes.map((c: { field: string }) => c.field)).toEqual(['spec.replicas', 'spec.template.metadata.labels']);

    const badService = await rejectsWithoutAppending(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [] } } }),
    );
    expect(badService.body.details.causes[0]).toMatchObject({ field: 'spec.ports', reason: 'FieldValueRequired' });

    const warned = await client.request('POST', path, { body: { ...podManifest('warned'), spec: { ...podManifest('warned').spec, foo: 1 } } });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toBe('299 - "unknown field \\"spec.foo\\""');
    expect(warned.body.spec.foo).toBeUndefined();
  });

  it('records controller actors, causation and correlation ids from the request', async () => {
    const ns = await namespace('causation');
    const cause = '0b4e7c2a-5f1d-4d0e-9a35-6c1f3e2b7d90';
    const created = await client.request('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: podManifest('caused'),
      token: 'controller-token',
      headers: { 'X-Logplane-Causation-Id': cause, 'X-Logplane-Correlation-Id': 'request-42', 'X-Logplane-Decided-At': '7.3' },
    });
    expect(created.status).toBe(201);
    expect(api.projection.store.events.get(created.body.metadata.uid)).toMatchObject({
      actor: { type: 'controller', name: 'replicaset-controller' },
      causationId: cause,
      correlationId: 'request-42',
    });
    const plain = await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('uncaused') });
    expect(api.projection.store.events.get(plain.body.metadata.uid)).toMatchObject({ causationId: null, correlationId: plain.body.metadata.uid });
    const bad = await rejectsWithoutAppending(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('bad-cause'), headers: { 'X-Logplane-Causation-Id': 'not-a-uuid' } }),
    );
    expect(bad.status).toBe(400);
  });

  it('generates names from generateName', async () => {
    const ns = await namespace('generated');
    const created = await client.request('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'worker-' }, spec: podManifest('x').spec },
    });
    expect(created.status).toBe(201);
    expect(created.body.metadata.name).toMatch(/^worker-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(created.body.metadata.generateName).toBe('worker-');
  });

  it('lists with label and field selectors, in one namespace and across all', async () => {
    const ns = await namespace('select');
    const pods: [string, Record<string, string>][] = [
      ['a', { app: 'web', tier: 'front' }],
      ['b', { app: 'web' }],
      ['c', { app: 'db', tier: 'back' }],
      ['d', {}],
    ];
    for (const [name, labels] of pods) {
      expect((await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest(name, labels) })).status).toBe(201);
    }
    await client.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'select-node' } } });
    const bound = await client.request('POST', `/api/v1/namespaces/${ns}/pods/c/binding`, {
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'c' }, target: { kind: 'Node', name: 'select-node' } },
    });
    expect(bound.status).toBe(201);
    expect(bound.body).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });

    const names = async (query: string, path = `/api/v1/namespaces/${ns}/pods`): Promise<string[]> => {
      const response = await client.request('GET', `${path}?${query}`);
      expect(response.status).toBe(200);
      expect(response.body.kind).toBe('PodList');
      expect(response.body.metadata.resourceVersion).toMatch(/^\d+\.\d+$/);
      return response.body.items.map((p: { metadata: { name: string } }) => p.metadata.name);
    };
    const label = (selector: string) => names(`labelSelector=${encodeURIComponent(selector)}`);
    const field = (selector: string) => names(`fieldSelector=${encodeURIComponent(selector)}`);
    expect(await label('app=web')).toEqual(['a', 'b']);
    expect(await label('app!=web')).toEqual(['c', 'd']);
    expect(await label('app in (web,db)')).toEqual(['a', 'b', 'c']);
    expect(await label('app notin (web)')).toEqual(['c', 'd']);
    expect(await label('tier')).toEqual(['a', 'c']);
    expect(await label('!tier')).toEqual(['b', 'd']);
    expect(await label('app=web,tier=front')).toEqual(['a']);
    expect(await field('metadata.name=b')).toEqual(['b']);
    expect(await field('spec.nodeName=select-node')).toEqual(['c']);
    expect(await field('spec.nodeName=')).toEqual(['a', 'b', 'd']);
    expect(await field('status.phase=Pending')).toEqual(['a', 'b', 'c', 'd']);
    expect(await field(`metadata.namespace=${ns},metadata.name!=a`)).toEqual(['b', 'c', 'd']);
    expect(await names(`fieldSelector=${encodeURIComponent(`metadata.namespace=${ns}`)}`, '/api/v1/pods')).toEqual(['a', 'b', 'c', 'd']);
    const bad = await client.request('GET', `/api/v1/namespaces/${ns}/pods?fieldSelector=spec.foo%3Dx`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('field label not supported');

    const page1 = await client.request('GET', `/api/v1/namespaces/${ns}/pods?limit=3`);
    expect(page1.body.items).toHaveLength(3);
    const page2 = await client.request('GET', `/api/v1/namespaces/${ns}/pods?limit=3&continue=${page1.body.metadata.continue}`);
    expect(page2.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['d']);
    expect(page2.body.metadata.continue).toBeUndefined();

    // Pages with a selector hold every match once, in key order, from the position of the
    // first page: a match created between pages is not part of the list being paged.
    const web1 = await client.request('GET', `/api/v1/namespaces/${ns}/pods?limit=1&labelSelector=app%3Dweb`);
    expect(web1.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['a']);
    expect(web1.body.metadata.continue).toBeDefined();
    expect((await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('b2', { app: 'web' }) })).status).toBe(201);
    const web2 = await client.request('GET', `/api/v1/namespaces/${ns}/pods?limit=1&labelSelector=app%3Dweb&continue=${web1.body.metadata.continue}`);
    expect(web2.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['b']);
    expect(web2.body.metadata.continue).toBeUndefined();
    expect(web2.body.metadata.resourceVersion).toBe(web1.body.metadata.resourceVersion);
    expect(await label('app=web')).toEqual(['a', 'b', 'b2']);
    expect((await client.request('DELETE', `/api/v1/namespaces/${ns}/pods/b2`)).status).toBe(200);

    const again = await rejectsWithoutAppending(() =>
      client.request('POST', `/api/v1/namespaces/${ns}/pods/c/binding`, {
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'c' }, target: { kind: 'Node', name: 'select-node' } },
      }),
    );
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('is already assigned to node "select-node"');

    const removed = await client.request('DELETE', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3Dweb`);
    expect(removed.status).toBe(200);
    expect(removed.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['a', 'b']);
    expect(await names('')).toEqual(['c', 'd']);
  });

  it('watches from a list resourceVersion without gap or duplicate, then live', async () => {
    const ns = await namespace('watch-resume');
    const base = `/api/v1/namespaces/${ns}/pods`;
    await client.request('POST', base, { body: podManifest('before') });
    const list = await client.request('GET', base);
    const rv = list.body.metadata.resourceVersion;
    await client.request('POST', base, { body: podManifest('one') });
    await client.request('PATCH', `${base}/one`, { body: { metadata: { labels: { step: '2' } } }, contentType: 'application/merge-patch+json' });
    await client.request('DELETE', `${base}/before`);

    const watch = await client.watch(`${base}?watch=true&resourceVersion=${rv}`);
    expect(watch.status).toBe(200);
    const replayed = await watch.take(3);
    expect(replayed.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'one'],
      ['MODIFIED', 'one'],
      ['DELETED', 'before'],
    ]);
    expect(replayed[0]!.object.metadata.labels).toEqual({});
    expect(replayed[1]!.object.metadata.labels).toEqual({ step: '2' });

    await client.request('POST', base, { body: podManifest('two') });
    const live = await watch.next();
    expect([live.type, live.object.metadata.name]).toEqual(['ADDED', 'two']);
    expect(live.object.metadata.resourceVersion).toMatch(/^\d+\.\d+$/);
    watch.close();

    const fromZero = await client.watch(`${base}?watch=1&resourceVersion=0`);
    const initial = await fromZero.take(2);
    expect(initial.map((e) => [e.type, e.object.metadata.name]).sort()).toEqual([['ADDED', 'one'], ['ADDED', 'two']]);
    await client.request('DELETE', `${base}/two`);
    expect(await fromZero.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'two' } } });
    fromZero.close();
  });

  it('filters watches by selectors, turning objects that stop matching into DELETED', async () => {
    const ns = await namespace('watch-select');
    const base = `/api/v1/namespaces/${ns}/pods`;
    await client.request('POST', base, { body: podManifest('in', { app: 'web' }) });
    await client.request('POST', base, { body: podManifest('out', { app: 'db' }) });
    const watch = await client.watch(`${base}?watch=true&labelSelector=app%3Dweb`);
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'in' } } });
    await client.request('PATCH', `${base}/out`, { body: { metadata: { labels: { app: 'web' } } }, contentType: 'application/merge-patch+json' });
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'out' } } });
    await client.request('PATCH', `${base}/in`, { body: { metadata: { labels: { app: 'db' } } }, contentType: 'application/merge-patch+json' });
    expect(await watch.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'in', labels: { app: 'db' } } } });
    await client.request('PATCH', `${base}/in`, { body: { metadata: { labels: { other: 'x' } } }, contentType: 'application/merge-patch+json' });
    await client.request('DELETE', `${base}/out`);
    expect(await watch.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'out' } } });
    watch.close();

    const one = await client.watch(`${base}?watch=true&fieldSelector=metadata.name%3Din&resourceVersion=0`);
    expect(await one.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'in' } } });
    await client.request('POST', base, { body: podManifest('noise') });
    await client.request('DELETE', `${base}/in`);
    expect(await one.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'in' } } });
    one.close();
  });

  it('sends bookmarks when allowed and ends a watch at timeoutSeconds', async () => {
    const fast = await startTestApiServer(log, temp.dir, { bookmarkIntervalMs: 50 });
    try {
      const ns = 'default';
      const watch = await fast.client.watch(`/api/v1/namespaces/${ns}/services?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`);
      const bookmark = await watch.next();
      expect(bookmark.type).toBe('BOOKMARK');
      expect(bookmark.object.metadata.resourceVersion).toMatch(/^\d+\.\d+$/);
      await watch.ended(10_000);
    } finally {
      await fast.close();
    }
  });

  it('answers a watch position older than the watch window with an ERROR event carrying 410 Expired', async () => {
    const small = await startTestApiServer(log, temp.dir, { watchWindow: 3 });
    try {
      const ns = await namespace('expired');
      const base = `/api/v1/namespaces/${ns}/pods`;
      const rv = (await small.client.request('GET', base)).body.metadata.resourceVersion;
      for (const name of ['e1', 'e2', 'e3', 'e4']) await small.client.request('POST', base, { body: podManifest(name) });
      const watch = await small.client.watch(`${base}?watch=true&resourceVersion=${rv}`);
      // As kube's watch cache: a 200 stream with one ERROR event, then the end.
      expect(watch.status).toBe(200);
      expect(await watch.next()).toMatchObject({ type: 'ERROR', object: { kind: 'Status', reason: 'Expired', code: 410, message: expect.stringMatching(/^too old resource version: /) } });
      await watch.ended();
      const recent = (await small.client.request('GET', base)).body.metadata.resourceVersion;
      const ok = await small.client.watch(`${base}?watch=true&resourceVersion=${recent}`);
      expect(ok.status).toBe(200);
      ok.close();
    } finally {
      await small.close();
    }
  });

  it('writes status to the observed topic and keeps it out of main-resource updates', async () => {
    const ns = await namespace('status');
    // Bound to node-1, whose identity writes its status (NodeRestriction: a node writes only its own pods' status).
    const manifest = podManifest('s');
    const pod = (await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: { ...manifest, spec: { ...manifest.spec, nodeName: 'node-1' } } })).body;
    const desired = await logEnd(log, 'desired');
    const observed = await logEnd(log, 'observed');
    const status = await client.request('PUT', `/api/v1/namespaces/${ns}/pods/s/status`, {
      body: { ...pod, status: { phase: 'Running', podIP: '127.100.0.7' } },
      headers: { Authorization: 'Bearer node-token' },
      token: 'node-token',
    });
    expect(status.status).toBe(200);
    expect(status.body.status).toMatchObject({ phase: 'Running', podIP: '127.100.0.7' });
    expect(await logEnd(log, 'observed')).toBe(observed + 1);
    expect(await logEnd(log, 'desired')).toBe(desired);
    const record = [...api.projection.store.events.getRange()].map((e) => e.value).find((e) => e.topic === 'observed' && e.key === `Pod/${ns}/s`);
    expect(record?.actor).toEqual({ type: 'node', name: 'node-1' });

    const current = (await client.request('GET', `/api/v1/namespaces/${ns}/pods/s`)).body;
    const relabelled = await client.request('PUT', `/api/v1/namespaces/${ns}/pods/s`, {
      body: { ...current, metadata: { ...current.metadata, labels: { x: 'y' } }, status: { phase: 'Failed' } },
    });
    expect(relabelled.body.status.phase).toBe('Running');
    const patched = await client.request('PATCH', `/api/v1/namespaces/${ns}/pods/s/status`, {
      body: { status: { phase: 'Succeeded' } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.body.status.phase).toBe('Succeeded');
    expect(patched.body.metadata.labels).toEqual({ x: 'y' });
  });

  it('scales deployments through the scale subresource', async () => {
    const ns = await namespace('scale');
    const deployment = (await client.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deploymentManifest('web', 2) })).body;
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/web/scale`;
    const scale = await client.request('GET', path);
    expect(scale.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 0, selector: 'app=web' } });
    const patched = await client.request('PATCH', path, { body: { spec: { replicas: 5 } }, contentType: 'application/merge-patch+json' });
    expect(patched.body.spec.replicas).toBe(5);
    expect((await client.request('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).body.spec.replicas).toBe(5);
    const stale = await rejectsWithoutAppending(() => client.request('PUT', path, { body: { ...scale.body, spec: { replicas: 1 } } }));
    expect(stale.status).toBe(409);
    const negative = await rejectsWithoutAppending(() => client.request('PATCH', path, { body: { spec: { replicas: -1 } }, contentType: 'application/merge-patch+json' }));
    expect(negative.status).toBe(422);
  });

  it('deletes a pod bound to a node gracefully, answering with the object', async () => {
    const ns = await namespace('graceful');
    await client.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'graceful-node' } } });
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: { ...podManifest('g'), spec: { ...podManifest('g').spec, nodeName: 'graceful-node' } } });
    const deleted = await client.request('DELETE', `/api/v1/namespaces/${ns}/pods/g`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 20 },
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body.kind).toBe('Pod');
    expect(deleted.body.metadata.deletionTimestamp).toBeDefined();
    expect(deleted.body.metadata.deletionGracePeriodSeconds).toBe(20);
    const now = await client.request('DELETE', `/api/v1/namespaces/${ns}/pods/g?gracePeriodSeconds=0`);
    expect(now.body).toMatchObject({ kind: 'Status', status: 'Success' });
  });

  it('prints Tables for get and list, and for watch events', async () => {
    const ns = await namespace('tables');
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('t1', { app: 't' }) });
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    const table = await client.request('GET', `/api/v1/namespaces/${ns}/pods`, { headers: { Accept: accept } });
    expect(table.body.kind).toBe('Table');
    expect(table.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    expect(table.body.rows[0].cells.slice(0, 4)).toEqual(['t1', '0/1', 'Pending', '0']);
    expect(table.body.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 't1', namespace: ns, labels: { app: 't' } } });
    const one = await client.request('GET', `/api/v1/namespaces/${ns}/pods/t1`, { headers: { Accept: accept } });
    expect(one.body.rows).toHaveLength(1);
    const nodes = await client.request('GET', '/api/v1/nodes', { headers: { Accept: accept } });
    expect(nodes.body.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 5)).toEqual(['Name', 'Status', 'Roles', 'Age', 'Version']);
    const watch = await client.watch(`/api/v1/namespaces/${ns}/pods?watch=true`, { headers: { Accept: accept } });
    const event = await watch.next();
    expect(event.object.kind).toBe('Table');
    expect(event.object.rows[0].cells[0]).toBe('t1');
    watch.close();
  });

  it('serves pod logs only through a hook', async () => {
    const ns = await namespace('logs');
    await client.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'log-node' } } });
    await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: { ...podManifest('l'), spec: { ...podManifest('l').spec, nodeName: 'log-node' } } });
    const none = await client.request('GET', `/api/v1/namespaces/${ns}/pods/l/log`);
    expect(none.status).toBe(404);
    expect(none.body.kind).toBe('Status');
    const withLogs = await startTestApiServer(log, temp.dir, {
      podLogs: async (request) => {
        const lines = [`hello from ${request.pod.metadata.name}/${request.container}\n`, `tail=${request.tailLines}\n`];
        return (async function* () {
          yield* lines;
        })();
      },
    });
    try {
      const text = await withLogs.client.request('GET', `/api/v1/namespaces/${ns}/pods/l/log?tailLines=5`);
      expect(text.status).toBe(200);
      expect(text.body).toBe('hello from l/main\ntail=5\n');
      // limitBytes cuts the stream whichever hook serves it, mid-chunk too.
      expect((await withLogs.client.request('GET', `/api/v1/namespaces/${ns}/pods/l/log?limitBytes=14`)).body).toBe('hello from l/m');
      expect((await withLogs.client.request('GET', `/api/v1/namespaces/${ns}/pods/l/log?limitBytes=19`)).body).toBe('hello from l/main\nt');
      // kube's ValidatePodLogOptions.
      for (const [query, message] of [
        ['limitBytes=0', 'limitBytes: Invalid value: 0: must be greater than 0'],
        ['sinceSeconds=0', 'sinceSeconds: Invalid value: 0: must be greater than 0'],
        ['sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z', 'at most one of `sinceTime` or `sinceSeconds` may be specified'],
        ['tailLines=-1', 'tailLines: Invalid value: "-1": must be a non-negative integer'],
      ] as const) {
        const refused = await withLogs.client.request('GET', `/api/v1/namespaces/${ns}/pods/l/log?${query}`);
        expect(refused.status).toBe(400);
        expect(refused.body.message).toBe(message);
      }
    } finally {
      await withLogs.close();
    }
  });

  it('mounts extensions behind authentication', async () => {
    const extended = await startTestApiServer(log, temp.dir, {
      extensions: [
        async (_req, res, url) => {
          if (!url.pathname.startsWith('/extra/')) return false;
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.end(`extra ${url.pathname}`);
          return true;
        },
      ],
    });
    try {
      expect((await extended.client.request('GET', '/extra/thing')).body).toBe('extra /extra/thing');
      expect((await extended.client.request('GET', '/extra/thing', { token: null })).status).toBe(401);
      expect((await extended.client.request('GET', '/api/v1/namespaces/default')).body.metadata.name).toBe('default');
    } finally {
      await extended.close();
    }
  });

  it('exports request, watch and projection-lag metrics', async () => {
    const watch = await client.watch('/api/v1/namespaces/default/pods?watch=true');
    const metrics = await client.request('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('apiserver_request_duration_seconds_bucket{le="0.005",verb="create",resource="pods",subresource="",code="201"}');
    expect(metrics.body).toMatch(/apiserver_request_total\{verb="list",resource="pods",subresource="",code="200"\} \d+/);
    expect(metrics.body).toContain('apiserver_registered_watchers{resource="pods"} 1');
    expect(metrics.body).toMatch(/logplane_projection_lag_events\{topic="desired",partition="0"\} \d+/);
    watch.close();
    expect((await client.request('GET', '/metrics', { token: null })).status).toBe(401);
  });
});
