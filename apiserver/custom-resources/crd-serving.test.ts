/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition served by the apiserver, on both logs:
 * created with kube's defaults (listKind, singular, conversion None) and warnings (CEL rules
 * are stored but not evaluated), refused with kube's 422 causes when invalid (nothing
 * appended), listed, and immutable where kube makes it so.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import { describeOnBothLogs, logEnd, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const crontabs = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: { plural: 'crontabs', kind: 'CronTab', shortNames: ['ct'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [{ name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' }],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [{ rule: 'self.replicas >= 0', message: 'replicas must not be negative' }],
                properties: { cronSpec: { type: 'string' }, replicas: { type: 'integer' }, image: { type: 'string' } },
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
  ...extra,
});

describeOnBothLogs('CustomResourceDefinitions', (adapter) => {
  const temp = tempDir('crd-serving-');
  let log: EventLog;
  let api: TestApiServer;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('creates one with kube\'s defaults, warning that CEL rules are not evaluated, and lists it', async () => {
    const created = await api.client.request('POST', CRDS, { body: crontabs() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      metadata: { name: 'crontabs.stable.example.com' },
      spec: { names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', listKind: 'CronTabList', shortNames: ['ct'] }, conversion: { strategy: 'None' } },
    });
    // The schema's x-kubernetes-* properties are kept as written (Avro names them `x_kubernetes_…`).
    const schema = created.body.spec.versions[0].schema.openAPIV3Schema;
    expect(schema.properties.spec['x-kubernetes-validations']).toEqual([{ rule: 'self.replicas >= 0', message: 'replicas must not be negative' }]);
    expect(schema.properties.status['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(created.headers.get('warning')).toMatch(/logplane does not evaluate CEL validation rules .*spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]/);
    const listed = await api.client.request('GET', CRDS);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((crd: { metadata: { name: string } }) => crd.metadata.name)).toEqual(['crontabs.stable.example.com']);
  });

  it.each([
    ['a name that is not <plural>.<group>', { metadata: { name: 'crontabs.other.example.com' } }, 'metadata.name', 'must be spec.names.plural+"."+spec.group'],
    [
      'two storage versions',
      {
        spec: {
          ...crontabs().spec,
          versions: [
            { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
            { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          ],
        },
      },
      'spec.versions',
      'must have exactly one version marked as storage version',
    ],
    [
      'a schema that is not structural',
      { spec: { ...crontabs().spec, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } } } }] } },
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].type',
      'must not be empty for specified object fields',
    ],
  ])('refuses %s with a 422 naming the field, appending nothing', async (_what, change, field, message) => {
    const before = await logEnd(log, 'desired');
    const refused = await api.client.request('POST', CRDS, { body: { ...crontabs(), ...change } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    expect(refused.body.details.causes).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.stringContaining(message) })]));
    expect(await logEnd(log, 'desired')).toBe(before);
  });

  it('refuses a schema kube accepts but logplane cannot type in the log, naming the field, appending nothing', async () => {
    const before = await logEnd(log, 'desired');
    const body = JSON.parse(JSON.stringify(crontabs()).replace('"image":{"type":"string"}', '"image":{"type":"object","additionalProperties":false}')) as unknown;
    const refused = await api.client.request('POST', CRDS, { body });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.details.causes).toEqual([
      expect.objectContaining({
        field: 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[image].additionalProperties',
        message: expect.stringContaining('logplane cannot store objects of this schema'),
      }),
    ]);
    expect(await logEnd(log, 'desired')).toBe(before);
  });

  it('refuses a property named __proto__ with a 400 naming it, before anything else reads the body', async () => {
    const body = JSON.stringify(crontabs()).replace('"cronSpec":{"type":"string"}', '"cronSpec":{"type":"string"},"__proto__":{"type":"string"}');
    const refused = await api.client.request('POST', CRDS, { body });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('the request body has a member named "__proto__"');
  });

  it('keeps spec.group immutable', async () => {
    const current = await api.client.request('GET', `${CRDS}/crontabs.stable.example.com`);
    const changed = { ...current.body, spec: { ...current.body.spec, group: 'changed.example.com' } };
    const refused = await api.client.request('PUT', `${CRDS}/crontabs.stable.example.com`, { body: changed });
    expect(refused.status).toBe(422);
    expect(refused.body.details.causes).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'spec.group', message: expect.stringContaining('field is immutable') })]));
  });
});
