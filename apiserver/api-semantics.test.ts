/**
 * API semantics clients rely on, as kube-apiserver 1.32 has them, on both logs: the
 * `watch` parameter's bool conversion, too-old watch positions (an ERROR event with 410
 * Expired naming the oldest servable position), `sendInitialEvents`, 404 for unserved
 * paths on every verb, `dryRun=All` on every write (answered, nothing appended) and invalid
 * write options (422 `<Kind>Options.meta.k8s.io`), `fieldValidation` with duplicate and
 * unknown fields (kube's strict decoding texts and Warning headers), generateName.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { parseVector } from '../projections/index.ts';
import { deploymentManifest, describeOnBothLogs, logEnd, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

describeOnBothLogs('API semantics', (adapter) => {
  const temp = tempDir('api-semantics-');
  let log: EventLog;
  let api: TestApiServer;
  let counter = 0;

  const namespace = async (prefix: string): Promise<string> => {
    const name = `${prefix}-${++counter}-${adapter}`;
    expect((await api.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name } } })).status).toBe(201);
    return name;
  };

  /** Both topics' end offsets, summed: unchanged when a request appended nothing. */
  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it.each(['true', 'True', 'TRUE', '1', 't', 'yes', ''])('starts a watch for watch=%j, as apimachinery converts bools', async (value) => {
    const ns = await namespace('watch-bool');
    await api.client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('one') });
    const watch = await api.client.watch(`/api/v1/namespaces/${ns}/pods?watch=${value}&resourceVersion=0`);
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'one' } } });
    watch.close();
  });

  it('starts a watch for a bare ?watch, lists for watch=false|False|0, and reads one object for a named GET with watch=true', async () => {
    const ns = await namespace('watch-list');
    await api.client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('one') });
    const bare = await api.client.watch(`/api/v1/namespaces/${ns}/pods?watch&resourceVersion=0`);
    expect(await bare.next()).toMatchObject({ type: 'ADDED' });
    bare.close();
    for (const value of ['false', 'False', '0']) {
      const list = await api.client.request('GET', `/api/v1/namespaces/${ns}/pods?watch=${value}`);
      expect(list.body).toMatchObject({ kind: 'PodList', items: [{ metadata: { name: 'one' } }] });
    }
    const named = await api.client.request('GET', `/api/v1/namespaces/${ns}/pods/one?watch=true`);
    expect(named.body).toMatchObject({ kind: 'Pod', metadata: { name: 'one' } });
  });

  it('answers a too-old watch with one ERROR event naming the oldest servable position, which itself is servable', async () => {
    const small = await startTestApiServer(log, temp.dir, { watchWindow: 2 });
    try {
      const ns = await namespace('too-old');
      const base = `/api/v1/namespaces/${ns}/pods`;
      const stale: string = (await small.client.request('GET', base)).body.metadata.resourceVersion;
      for (const name of ['a', 'b', 'c']) expect((await small.client.request('POST', base, { body: podManifest(name) })).status).toBe(201);
      const expired = await small.client.watch(`${base}?watch=true&resourceVersion=${stale}`);
      expect(expired.status).toBe(200);
      const error = await expired.next();
      expect(error).toMatchObject({ type: 'ERROR', object: { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 } });
      const floor = /^too old resource version: ([\d.]+) \(([\d.]+)\)$/.exec(error.object.message);
      expect(floor?.[1]).toBe(stale);
      await expired.ended();
      // From the floor the watch is served: the last two pod creations (the window) follow.
      const fromFloor = await small.client.watch(`${base}?watch=true&resourceVersion=${floor![2]}`);
      expect((await fromFloor.take(2)).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'b'], ['ADDED', 'c']]);
      fromFloor.close();
      // One desired offset before the floor is too old again.
      const position = parseVector(floor![2]!, 1);
      const older = [position.desired[0]! - 1, position.observed[0]!].join('.');
      const tooOld = await small.client.watch(`${base}?watch=true&resourceVersion=${older}`);
      expect(await tooOld.next()).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
      tooOld.close();
      // sendInitialEvents (kube's watch-list) is never too old: the current state, then the end-of-initial-events bookmark.
      const initial = await small.client.watch(`${base}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${stale}`);
      const events = await initial.take(4);
      expect(events.slice(0, 3).map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', 'a'], ['ADDED', 'b'], ['ADDED', 'c']]);
      expect(events[3]).toMatchObject({ type: 'BOOKMARK', object: { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } } });
      initial.close();
    } finally {
      await small.close();
    }
  });

  it('answers a watch position the projection does not reach in time with an ERROR event carrying 504 Timeout', async () => {
    const impatient = await startTestApiServer(log, temp.dir, { readTimeoutMs: 200 });
    try {
      const watch = await impatient.client.watch('/api/v1/namespaces/default/pods?watch=true&resourceVersion=99999999.99999999');
      expect(watch.status).toBe(200);
      expect(await watch.next()).toMatchObject({ type: 'ERROR', object: { kind: 'Status', reason: 'Timeout', code: 504, message: expect.stringMatching(/^Too large resource version: 99999999\.99999999, current: /) } });
      await watch.ended();
    } finally {
      await impatient.close();
    }
  });

  it('ends a watch after timeoutSeconds, and takes timeoutSeconds=0 as not set (the server\'s bound)', async () => {
    const bounded = await startTestApiServer(log, temp.dir, { maxWatchSeconds: 1 });
    try {
      const started = Date.now();
      const zero = await bounded.client.watch('/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=0&resourceVersion=0');
      await zero.ended(10_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      const one = await api.client.watch('/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1&resourceVersion=0');
      await one.ended(10_000);
    } finally {
      await bounded.close();
    }
  });

  it('answers a watch from an object resourceVersion on a log of 3 partitions with the 410 ERROR event, so the client re-lists', async () => {
    const partitioned = await openTestLog(adapter, { dir: temp.dir, partitions: 3 });
    const server = await startTestApiServer(partitioned, temp.dir);
    try {
      const pod = (await server.client.request('POST', '/api/v1/namespaces/default/pods', { body: podManifest('p3') })).body;
      const rv: string = pod.metadata.resourceVersion;
      expect(rv).toMatch(/^\d+\.\d+$/);
      const watch = await server.client.watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`);
      expect(watch.status).toBe(200);
      const event = await watch.next();
      expect(event).toMatchObject({ type: 'ERROR', object: { reason: 'Expired', code: 410 } });
      expect(event.object.message).toMatch(new RegExp(`^too old resource version: ${rv.replace('.', '\\.')} \\(\\d+(\\.\\d+){5}\\)$`));
      await watch.ended();
      const list = await server.client.request('GET', '/api/v1/namespaces/default/pods');
      const relisted = await server.client.watch(`/api/v1/namespaces/default/pods?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
      await server.client.request('DELETE', '/api/v1/namespaces/default/pods/p3');
      expect(await relisted.next()).toMatchObject({ type: 'DELETED', object: { metadata: { name: 'p3' } } });
      relisted.close();
    } finally {
      await server.close();
      await partitioned.close();
    }
  });

  it('validates list options as kube does (422 ListOptions, 400 for a resourceVersion with continue) and serves Exact and continue at any age', async () => {
    const small = await startTestApiServer(log, temp.dir, { watchWindow: 1 });
    try {
      const ns = await namespace('list-options');
      const base = `/api/v1/namespaces/${ns}/pods`;
      for (const name of ['a', 'b']) await small.client.request('POST', base, { body: podManifest(name) });
      const page = await small.client.request('GET', `${base}?limit=1`);
      const rv: string = page.body.metadata.resourceVersion;
      const token: string = page.body.metadata.continue;
      const invalid: [string, string][] = [
        ['resourceVersionMatch=Exact', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
        ['resourceVersionMatch=Exact&resourceVersion=0', 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
        [`resourceVersionMatch=Newest&resourceVersion=${rv}`, 'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'],
        [`resourceVersionMatch=NotOlderThan&resourceVersion=${rv}&continue=${token}`, 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided'],
      ];
      for (const [query, detail] of invalid) {
        const response = await small.client.request('GET', `${base}?${query}`);
        expect({ query, status: response.status, message: response.body.message }).toEqual({ query, status: 422, message: `ListOptions.meta.k8s.io "" is invalid: ${detail}` });
      }
      const both = await small.client.request('GET', `${base}?resourceVersion=${rv}&continue=${token}`);
      expect(both).toMatchObject({ status: 400, body: { reason: 'BadRequest', message: 'specifying resource version is not allowed when using continue' } });
      // Many changes later (far beyond the watch window) the position is still listed exactly, and the continue token still works.
      for (const name of ['c', 'd', 'e']) await small.client.request('POST', base, { body: podManifest(name) });
      const exact = await small.client.request('GET', `${base}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      expect(exact.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['a', 'b']);
      const next = await small.client.request('GET', `${base}?limit=5&continue=${token}`);
      expect(next.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['b']);
    } finally {
      await small.close();
    }
  });

  it('answers 400 (not an ERROR event) for a watch resourceVersion that does not parse', async () => {
    const response = await api.client.request('GET', '/api/v1/namespaces/default/pods?watch=true&resourceVersion=abc');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });

  it.each(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])('answers %s to unserved resources with a 404 NotFound Status, appending nothing', async (method) => {
    const before = await appended();
    for (const path of ['/api/v1/namespaces/default/widgets', '/api/v1/namespaces/default/widgets/w', '/api/v1/widgets', '/apis/example.com/v1/namespaces/default/gadgets', '/api/v2/pods']) {
      const response = await api.client.request(method, path, method === 'GET' || method === 'DELETE' ? {} : { body: { apiVersion: 'v1', kind: 'Widget', metadata: { name: 'w' } } });
      expect({ path, status: response.status, body: response.body }).toEqual({
        path,
        status: 404,
        body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', details: {}, code: 404 },
      });
    }
    expect(await appended()).toBe(before);
  });

  it('answers dryRun=All on every write as if done, appending nothing', async () => {
    const ns = await namespace('dry-run');
    const pods = `/api/v1/namespaces/${ns}/pods`;
    await api.client.request('POST', pods, { body: podManifest('kept', { app: 'x' }) });
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    await api.client.request('POST', deployments, { body: deploymentManifest('web', 2) });
    const kept = (await api.client.request('GET', `${pods}/kept`)).body;
    const before = await appended();

    const created = await api.client.request('POST', `${pods}?dryRun=All`, { body: podManifest('ghost') });
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({ name: 'ghost', namespace: ns, uid: expect.stringMatching(/^[0-9a-f-]{36}$/), creationTimestamp: expect.any(String) });
    expect(created.body.metadata.resourceVersion).toBeUndefined();
    expect((await api.client.request('GET', `${pods}/ghost`)).status).toBe(404);

    const generated = await api.client.request('POST', `${pods}?dryRun=All`, { body: { ...podManifest('x'), metadata: { generateName: 'gen-' } } });
    expect(generated.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);

    const updated = await api.client.request('PUT', `${pods}/kept?dryRun=All`, { body: { ...kept, metadata: { ...kept.metadata, labels: { app: 'y' } } } });
    expect(updated).toMatchObject({ status: 200, body: { metadata: { labels: { app: 'y' } } } });
    const patched = await api.client.request('PATCH', `${pods}/kept?dryRun=All`, { body: { metadata: { labels: { app: 'z' } } }, contentType: 'application/merge-patch+json' });
    expect(patched).toMatchObject({ status: 200, body: { metadata: { labels: { app: 'z' } } } });
    const status = await api.client.request('PATCH', `${pods}/kept/status?dryRun=All`, { body: { status: { phase: 'Running' } }, contentType: 'application/merge-patch+json' });
    expect(status).toMatchObject({ status: 200, body: { status: { phase: 'Running' } } });
    const statusPut = await api.client.request('PUT', `${pods}/kept/status?dryRun=All`, { body: { ...kept, status: { phase: 'Failed' } } });
    expect(statusPut).toMatchObject({ status: 200, body: { status: { phase: 'Failed' } } });
    const scale = await api.client.request('PATCH', `${deployments}/web/scale?dryRun=All`, { body: { spec: { replicas: 7 } }, contentType: 'application/merge-patch+json' });
    expect(scale).toMatchObject({ status: 200, body: { kind: 'Scale', spec: { replicas: 7 } } });
    const scalePut = await api.client.request('PUT', `${deployments}/web/scale?dryRun=All`, { body: { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'web', namespace: ns }, spec: { replicas: 9 } } });
    expect(scalePut).toMatchObject({ status: 200, body: { spec: { replicas: 9 } } });
    const binding = await api.client.request('POST', `${pods}/kept/binding?dryRun=All`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'kept' }, target: { kind: 'Node', name: 'node-x' } } });
    expect(binding).toMatchObject({ status: 201, body: { kind: 'Status', status: 'Success' } });
    const deleted = await api.client.request('DELETE', `${pods}/kept?dryRun=All`);
    expect(deleted).toMatchObject({ status: 200, body: { kind: 'Status', status: 'Success', details: { name: 'kept', kind: 'pods', uid: kept.metadata.uid } } });
    const foreground = await api.client.request('DELETE', `${pods}/kept`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'], propagationPolicy: 'Foreground' } });
    expect(foreground).toMatchObject({ status: 202, body: { kind: 'Pod', metadata: { finalizers: ['foregroundDeletion'], deletionTimestamp: expect.any(String) } } });
    const orphaning = await api.client.request('DELETE', `${deployments}/web?dryRun=All&orphanDependents=True`);
    expect(orphaning).toMatchObject({ status: 202, body: { kind: 'Deployment', metadata: { finalizers: ['orphan'] } } });
    const collection = await api.client.request('DELETE', `${pods}?dryRun=All`);
    expect(collection).toMatchObject({ status: 200, body: { kind: 'PodList', items: [{ metadata: { name: 'kept' } }] } });

    expect(await appended()).toBe(before);
    expect((await api.client.request('GET', `${pods}/kept`)).body).toEqual(kept);
    expect((await api.client.request('GET', `${deployments}/web`)).body.spec.replicas).toBe(2);
  });

  it('answers invalid dryRun and fieldValidation values with kube\'s 422 for the options kind, appending nothing', async () => {
    const ns = await namespace('bad-options');
    const pods = `/api/v1/namespaces/${ns}/pods`;
    const pod = (await api.client.request('POST', pods, { body: podManifest('p') })).body;
    const before = await appended();
    const cases: [string, string, unknown, string][] = [
      ['POST', `${pods}?dryRun=foo`, podManifest('q'), 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"foo"}: supported values: "All"'],
      ['POST', `${pods}?dryRun=All&dryRun=Some`, podManifest('q'), 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "Some"}: supported values: "All"'],
      ['POST', `${pods}?fieldValidation=strict`, podManifest('q'), 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"'],
      ['PUT', `${pods}/p?dryRun=true`, pod, 'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: supported values: "All"'],
      ['PATCH', `${pods}/p?fieldValidation=No`, { metadata: { labels: { a: 'b' } } }, 'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "No": supported values: "", "Ignore", "Strict", "Warn"'],
      ['PUT', `${pods}/p/status?dryRun=1`, pod, 'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"1"}: supported values: "All"'],
      ['DELETE', `${pods}/p?dryRun=Everything`, undefined, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Everything"}: supported values: "All"'],
      ['DELETE', `${pods}?propagationPolicy=Later`, undefined, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan", "nil"'],
    ];
    for (const [method, path, body, message] of cases) {
      const response = await api.client.request(method, path, { ...(body === undefined ? {} : { body }), ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}) });
      expect({ method, path, status: response.status, reason: response.body.reason, message: response.body.message }).toEqual({ method, path, status: 422, reason: 'Invalid', message });
      expect(response.body.details).toMatchObject({ group: 'meta.k8s.io', name: '', causes: [expect.objectContaining({ field: message.split('is invalid: ')[1]!.split(':')[0] })] });
    }
    expect(await appended()).toBe(before);
  });

  const DUPLICATED = (name: string): string =>
    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"dup-first","name":"${name}","labels":{"a":"b"},"unknownMeta":"x"},` +
    `"spec":{"containers":[{"name":"main","image":"busybox:1.36","imagePullPolicy":"Always","imagePullPolicy":"Never","bogus":1,"command":["a"],"command":["b"]}]}}`;

  it('rejects duplicate and unknown fields under fieldValidation=Strict with kube\'s strict decoding error, appending nothing', async () => {
    const ns = await namespace('strict');
    const before = await appended();
    const response = await api.client.request('POST', `/api/v1/namespaces/${ns}/pods?fieldValidation=Strict`, { body: DUPLICATED('dup') });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      reason: 'BadRequest',
      message:
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", ' +
        'duplicate field "spec.containers[0].imagePullPolicy", unknown field "spec.containers[0].bogus", duplicate field "spec.containers[0].command"',
      details: { causes: [{ reason: 'FieldValueDuplicate', field: 'metadata.name', message: 'duplicate field "metadata.name"' }, expect.anything(), expect.anything(), expect.anything(), expect.anything()] },
    });
    expect(await appended()).toBe(before);
  });

  it.each([['Warn'], ['']])('creates with fieldValidation=%j (Warn, the default), sending kube\'s Warning headers; the last duplicate wins', async (mode) => {
    const ns = await namespace('warn');
    const response = await api.client.request('POST', `/api/v1/namespaces/${ns}/pods${mode === '' ? '' : `?fieldValidation=${mode}`}`, { body: DUPLICATED('dup-last') });
    expect(response.status).toBe(201);
    expect(response.body.metadata.name).toBe('dup-last');
    expect(response.body.spec.containers[0]).toMatchObject({ imagePullPolicy: 'Never', command: ['b'] });
    expect(response.headers.get('warning')).toBe(
      [
        'duplicate field "metadata.name"',
        'unknown field "metadata.unknownMeta"',
        'duplicate field "spec.containers[0].imagePullPolicy"',
        'unknown field "spec.containers[0].bogus"',
        'duplicate field "spec.containers[0].command"',
      ]
        .map((text) => `299 - ${JSON.stringify(text)}`)
        .join(', '),
    );
  });

  it('creates with fieldValidation=Ignore without warnings, and applies Strict to PUT bodies too', async () => {
    const ns = await namespace('ignore');
    const pods = `/api/v1/namespaces/${ns}/pods`;
    const ignored = await api.client.request('POST', `${pods}?fieldValidation=Ignore`, { body: DUPLICATED('quiet') });
    expect(ignored.status).toBe(201);
    expect(ignored.headers.get('warning')).toBeNull();
    const text = JSON.stringify({ ...ignored.body, metadata: { ...ignored.body.metadata, labels: { a: 'c' } } }).replace('"labels":', '"labels":{"x":"y"},"labels":');
    const before = await appended();
    const put = await api.client.request('PUT', `${pods}/quiet?fieldValidation=Strict`, { body: text });
    expect(put).toMatchObject({ status: 400, body: { message: 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.labels"' } });
    expect(await appended()).toBe(before);
  });

  const DUPLICATED_YAML = (name: string): string =>
    ['apiVersion: v1', 'kind: Pod', 'metadata:', '  name: first', `  name: ${name}`, '  unknownMeta: x', 'spec:', '  containers:', '  - name: main', '    image: busybox:1.36', '    image: busybox:1.37', '    bogus: 1', ''].join('\n');

  it("reports duplicate keys of a YAML body as go-yaml does: Strict's unmarshal errors, Warn's line warnings", async () => {
    const ns = await namespace('yaml-dup');
    const pods = `/api/v1/namespaces/${ns}/pods`;
    const before = await appended();
    const strict = await api.client.request('POST', `${pods}?fieldValidation=Strict`, { body: DUPLICATED_YAML('y1'), contentType: 'application/yaml' });
    expect(strict).toMatchObject({
      status: 400,
      body: {
        reason: 'BadRequest',
        message:
          'Pod in version "v1" cannot be handled as a Pod: strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 11: key "image" already set in map, ' +
          'unknown field "metadata.unknownMeta", unknown field "spec.containers[0].bogus"',
      },
    });
    expect(await appended()).toBe(before);
    const warned = await api.client.request('POST', pods, { body: DUPLICATED_YAML('y2'), contentType: 'application/yaml' });
    expect(warned.status).toBe(201);
    expect(warned.body.metadata.name).toBe('y2');
    expect(warned.body.spec.containers[0].image).toBe('busybox:1.37');
    expect(warned.headers.get('warning')).toBe(
      ['line 5: key "name" already set in map', 'line 11: key "image" already set in map', 'unknown field "metadata.unknownMeta"', 'unknown field "spec.containers[0].bogus"']
        .map((t) => `299 - ${JSON.stringify(t)}`)
        .join(', '),
    );
    const quiet = await api.client.request('POST', `${pods}?fieldValidation=Ignore`, { body: DUPLICATED_YAML('y3'), contentType: 'application/yaml' });
    expect(quiet.status).toBe(201);
    expect(quiet.headers.get('warning')).toBeNull();
  });

  it('reports duplicate fields of a merge patch as kube does for patches: duplicates first, then unknown fields', async () => {
    const ns = await namespace('patch-dup');
    const pods = `/api/v1/namespaces/${ns}/pods`;
    await api.client.request('POST', pods, { body: podManifest('p') });
    const patch = '{"metadata":{"labels":{"a":"1"},"labels":{"a":"2"}},"spec":{"zzz":1,"terminationGracePeriodSeconds":5,"terminationGracePeriodSeconds":6}}';
    const before = await appended();
    const strict = await api.client.request('PATCH', `${pods}/p?fieldValidation=Strict`, { body: patch, contentType: 'application/merge-patch+json' });
    expect(strict).toMatchObject({
      status: 400,
      body: { reason: 'BadRequest', message: 'strict decoding error: duplicate field "metadata.labels", duplicate field "spec.terminationGracePeriodSeconds", unknown field "spec.zzz"' },
    });
    expect(await appended()).toBe(before);
    const warned = await api.client.request('PATCH', `${pods}/p`, { body: patch, contentType: 'application/strategic-merge-patch+json' });
    expect(warned.status).toBe(200);
    expect(warned.body.metadata.labels).toEqual({ a: '2' });
    expect(warned.body.spec.terminationGracePeriodSeconds).toBe(6);
    expect(warned.headers.get('warning')).toBe(
      ['duplicate field "metadata.labels"', 'duplicate field "spec.terminationGracePeriodSeconds"', 'unknown field "spec.zzz"'].map((t) => `299 - ${JSON.stringify(t)}`).join(', '),
    );
  });

  it('answers 422 when neither name nor generateName is given', async () => {
    const ns = await namespace('noname');
    const response = await api.client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: { ...podManifest('x'), metadata: {} } });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ reason: 'Invalid', details: { causes: [{ field: 'metadata.name', message: 'Required value: name or generateName is required' }] } });
  });

  it('records who asked for a CertificateSigningRequest, whatever the body claims (kube\'s csr strategy)', async () => {
    const request = `-----BEGIN CERTIFICATE REQUEST-----\n${'A'.repeat(64)}\n-----END CERTIFICATE REQUEST-----\n`;
    const body = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: `csr-${adapter}` },
      spec: { request: Buffer.from(request).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'mallory', groups: ['system:masters'], uid: 'x', extra: { a: ['b'] } },
    };
    const response = await api.client.request('POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { body });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.spec).toMatchObject({ username: 'alice', uid: '1001', groups: ['system:masters', 'system:authenticated'] });
    expect(response.body.spec.extra).toBeUndefined();
  });
});
