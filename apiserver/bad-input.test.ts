/**
 * Bad input over HTTP, on both logs: the security audit's patch requests (one of them used
 * to write Object.prototype and kill the whole `logplane up` process), bodies whose keys
 * would walk into a prototype, and a bounded fuzz of patch paths, patch bodies and query
 * parameters. Every answer is a 4xx Status or a success, never a 5xx; a refused request
 * appends nothing; the server keeps answering. The apiserver runs in this process, so a
 * polluted prototype would show here.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { describeOnBothLogs, logEnd, openTestLog, podManifest, startTestApiServer, tempDir, type ApiClient, type TestApiServer } from './testing.ts';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';

describeOnBothLogs('bad input', (adapter) => {
  const temp = tempDir('bad-input-test-');
  const ns = 'default';
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    client = api.client;
    expect((await client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest('target', { app: 'web' }) })).status).toBe(201);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  afterEach(async () => {
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect((await client.request('GET', `/api/v1/namespaces/${ns}/pods/target`)).status).toBe(200);
  });

  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  /** Sends a request that must be refused with `code` and append nothing. */
  const refused = async (code: number, method: string, path: string, body: unknown, contentType?: string) => {
    const before = await appended();
    const response = await client.request(method, path, { body, ...(contentType ? { contentType } : {}) });
    expect(response.status, JSON.stringify(response.body)).toBe(code);
    expect(response.body).toMatchObject({ kind: 'Status', status: 'Failure', code });
    expect(await appended()).toBe(before);
    return response.body as { message: string; reason: string };
  };

  const pod = `/api/v1/namespaces/${ns}/pods/target`;

  it.each([
    ['add /__proto__/polluted', [{ op: 'add', path: '/__proto__/polluted', value: 'yes' }]],
    ['add /metadata/__proto__/polluted', [{ op: 'add', path: '/metadata/__proto__/polluted', value: 'yes' }]],
    ['copy into /__proto__/polluted', [{ op: 'copy', from: '/metadata/name', path: '/__proto__/polluted' }]],
    ['replace /metadata/__proto__', [{ op: 'replace', path: '/metadata/__proto__', value: { polluted: 'yes' } }]],
    ['add /metadata/labels/constructor', [{ op: 'add', path: '/metadata/labels/constructor', value: 'x' }]],
    ['remove /metadata/labels/toString', [{ op: 'remove', path: '/metadata/labels/toString' }]],
    ['remove /metadata', [{ op: 'remove', path: '/metadata' }]],
    ['replace /metadata/uid', [{ op: 'replace', path: '/metadata/uid', value: '00000000-0000-0000-0000-000000000000' }]],
  ])('a JSON patch %s is answered 422 and appends nothing', async (_title, operations) => {
    await refused(422, 'PATCH', pod, operations, JSON_PATCH);
  });

  it('answers a merge patch that changes metadata.uid with 422 once, appending nothing (it used to append 5 rejections)', async () => {
    const body = await refused(422, 'PATCH', pod, { metadata: { uid: '00000000-0000-0000-0000-000000000000' } }, MERGE_PATCH);
    expect(body.message).toContain('metadata.uid');
    expect(body.message).toContain('field is immutable');
  });

  it.each([
    ['a merge patch', 'PATCH', pod, '{"__proto__":{"polluted":"yes"}}', MERGE_PATCH],
    ['a strategic merge patch', 'PATCH', pod, '{"metadata":{"labels":{"__proto__":{"polluted":"yes"}}}}', STRATEGIC_PATCH],
    ['a JSON patch value', 'PATCH', pod, '[{"op":"add","path":"/metadata/labels","value":{"__proto__":{"polluted":"yes"}}}]', JSON_PATCH],
    ['a create', 'POST', `/api/v1/namespaces/${ns}/pods`, '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"constructor":"x"}},"spec":{"containers":[{"name":"a","image":"b"}]}}', 'application/json'],
    ['a YAML create', 'POST', `/api/v1/namespaces/${ns}/pods`, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    __proto__: x\nspec:\n  containers: [{name: a, image: b}]\n', 'application/yaml'],
    ['an update', 'PUT', pod, '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"target","prototype":{}},"spec":{"containers":[{"name":"a","image":"b"}]}}', 'application/json'],
  ])('refuses %s whose body has a reserved member name with 400 naming the field', async (_title, method, path, body, contentType) => {
    const status = await refused(400, method, path, body, contentType);
    expect(status.message).toMatch(/(__proto__|constructor|prototype): Invalid value/);
  });

  it('refuses a body sent as text/plain with 415 instead of parsing it as JSON', async () => {
    const status = await refused(415, 'POST', `/api/v1/namespaces/${ns}/pods`, JSON.stringify(podManifest('plain')), 'text/plain');
    expect(status.message).toContain('application/json');
  });

  it('refuses a body nested deeper than the decoder limit with 400', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    await refused(400, 'PATCH', pod, `{"metadata":{"annotations":{"a":${deep}}}}`, MERGE_PATCH);
  });

  // --- the fuzz: bounded, seeded, so a failure is reproducible ---------------------------

  const token = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'metadata', 'labels', 'annotations', 'spec', 'containers', 'status', 'uid', 'name', '0', '1', '-', '01', '', '~', '~1', 'image');
  const pointer = fc.array(token, { minLength: 0, maxLength: 5 }).map((tokens) => (tokens.length === 0 ? '' : `/${tokens.join('/')}`));
  const value = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.constant(null), fc.dictionary(fc.constantFrom('a', 'b', '__proto__'), fc.string({ maxLength: 3 }), { maxKeys: 2 }));
  const operation = fc.oneof(
    fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value }),
    fc.record({ op: fc.constant('remove'), path: pointer }),
    fc.record({ op: fc.constantFrom('move', 'copy', 'frob'), path: pointer, from: pointer }),
  );

  /** Sends `request` and checks: no 5xx, and a refusal appended nothing. */
  const probe = async (method: string, path: string, body?: unknown, contentType?: string): Promise<void> => {
    const before = await appended();
    const response = await client.request(method, path, { ...(body !== undefined ? { body } : {}), ...(contentType ? { contentType } : {}) });
    expect(response.status, `${method} ${path} ${JSON.stringify(body)} -> ${JSON.stringify(response.body)}`).toBeLessThan(500);
    if (response.status >= 400) {
      expect(response.body).toMatchObject({ kind: 'Status', code: response.status });
      expect(await appended(), `${method} ${path} ${JSON.stringify(body)} appended on ${response.status}`).toBe(before);
    }
  };

  it('fuzzes JSON patch paths: never a 5xx, never an append on a refusal', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 3 }), (operations) => probe('PATCH', pod, operations, JSON_PATCH)),
      { numRuns: 60, seed: 1902 },
    );
  });

  it('fuzzes merge and strategic merge patch bodies: never a 5xx, never an append on a refusal', async () => {
    const patchBody = fc.dictionary(token, fc.oneof(value, fc.dictionary(token, value, { maxKeys: 3 })), { maxKeys: 3 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(MERGE_PATCH, STRATEGIC_PATCH), patchBody, (type, body) => probe('PATCH', pod, JSON.stringify(body), type)),
      { numRuns: 60, seed: 7386 },
    );
  });

  it('fuzzes query parameters of reads: never a 5xx', async () => {
    const param = fc.constantFrom('labelSelector', 'fieldSelector', 'limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'timeoutSeconds', 'at', 'fieldValidation', 'dryRun', 'propagationPolicy');
    const text = fc.oneof(
      fc.constantFrom('abc', '-1', '1.2.3', '9007199254740993', '%E0%A4%A', '__proto__', 'a=b,,', 'a in (', '!', 'metadata.name=', 'x'.repeat(300), '2999-01-01T00:00:00Z', 'NotOlderThan', ''),
      fc.string({ maxLength: 10 }),
    );
    const query = fc.array(fc.tuple(param, text), { minLength: 1, maxLength: 3 }).map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(`/api/v1/namespaces/${ns}/pods`, pod, '/api/v1/pods', '/api/v1/nodes'), query, (path, q) => probe('GET', `${path}?${q}`)),
      { numRuns: 80, seed: 4242 },
    );
  });
});
