/**
 * Custom objects in the fold (issue 16): a CRD serves a kind, the schemas its versions
 * register are kept under their fingerprints, and every custom object is read with the
 * schema it names, in log order: on the fold alone, and on both logs with 1 and 3
 * partitions, where a replay from offset 0 of a log holding objects under two schemas
 * gives the live state hash.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_ADAPTERS, startScenario, type Scenario } from '../reconcilers/testing.ts';
import { createCustomObjectCodec, customContentSchema, fingerprintOf, type StructuralSchema } from '../schemas/custom/index.ts';
import type { CustomResourceDefinition, EventBody, KubeObject } from '../schemas/index.ts';
import { replayToLive } from '../test/e2e/helpers.ts';
import { foldEvent, type FoldOutcome } from './fold.ts';
import { makeEvent, memoryFoldState, type MemoryFoldState } from './testing.ts';
import { keyOfBody } from './writer.ts';

const GROUP = 'stable.example.com';
const CRD_NAME = `crontabs.${GROUP}`;

const schemaV1: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string' },
        image: { type: 'string' },
        replicas: { type: 'integer' },
        env: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } } },
      },
    },
    status: { type: 'object', properties: { lastScheduleTime: { type: 'string', format: 'date-time' }, active: { type: 'integer' } } },
  },
};

/** v1 revised incompatibly, as operators do: `replicas` becomes a string, `suspend` is added. */
const schemaV1Revised: StructuralSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        cronSpec: { type: 'string' },
        image: { type: 'string' },
        replicas: { type: 'string' },
        suspend: { type: 'boolean' },
        env: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } } },
      },
    },
    status: { type: 'object', properties: { lastScheduleTime: { type: 'string', format: 'date-time' }, active: { type: 'integer' } } },
  },
};

const crd = (schema: StructuralSchema, extra: Partial<CustomResourceDefinition['metadata']> = {}): CustomResourceDefinition => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME, ...extra },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'crontabs', singular: 'crontab', kind: 'CronTab', listKind: 'CronTabList', shortNames: ['ct'] },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema as never }, subresources: { status: {} } }],
  },
});

const codecOf = (schema: StructuralSchema) => createCustomObjectCodec(customContentSchema({ group: GROUP, version: 'v1', kind: 'CronTab', schema }));

const registered = (schema: StructuralSchema): EventBody => {
  const content = customContentSchema({ group: GROUP, version: 'v1', kind: 'CronTab', schema });
  return { type: 'SchemaRegistered', resource: CRD_NAME, group: GROUP, version: 'v1', kind: 'CronTab', fingerprint: fingerprintOf(content), schema: JSON.stringify(content) };
};

const customObject = (schema: StructuralSchema, name: string, content: Record<string, unknown>, uid?: string) => {
  const codec = codecOf(schema);
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'CronTab',
    metadata: { name, namespace: 'default', ...(uid ? { uid } : {}) },
    schema: codec.fingerprint,
    content: codec.encode(content),
  };
};

const created = (schema: StructuralSchema, name: string, content: Record<string, unknown>): EventBody => ({ type: 'CustomObjectCreated', object: customObject(schema, name, content) });

const updated = (schema: StructuralSchema, name: string, content: Record<string, unknown>, subresource: 'status' | null = null): EventBody => ({
  type: 'CustomObjectUpdated',
  object: customObject(schema, name, content),
  expectedResourceVersion: null,
  subresource,
});

const deleted = (name: string): EventBody => ({
  type: 'CustomObjectDeleted',
  apiVersion: `${GROUP}/v1`,
  kind: 'CronTab',
  namespace: 'default',
  name,
  expectedResourceVersion: null,
  uid: null,
  propagationPolicy: null,
  gracePeriodSeconds: null,
});

const crdCreated = (schema = schemaV1): EventBody => ({ type: 'ObjectCreated', object: crd(schema) as KubeObject });

/** A fold state holding the namespace `default` (one partition: the fold judges namespaces there too). */
const withNamespace = (): MemoryFoldState => {
  const state = memoryFoldState();
  const body: EventBody = { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } };
  foldEvent(state, makeEvent(keyOfBody(body), body), 'desired', 1_000_000);
  return state;
};

describe('custom objects in the fold', () => {
  let offset = 0;
  const fold = (state: MemoryFoldState, body: EventBody): FoldOutcome => foldEvent(state, makeEvent(keyOfBody(body), body), 'desired', offset++);
  const stored = (state: MemoryFoldState, name: string): Record<string, unknown> | undefined =>
    state.getDesired(`CronTab.${GROUP}/default/${name}`)?.object as unknown as Record<string, unknown> | undefined;

  it('stores a custom object read with the schema it names, as clients see it', () => {
    const state = withNamespace();
    expect(fold(state, crdCreated()).verdict).toEqual({ type: 'accepted' });
    expect(fold(state, registered(schemaV1)).verdict).toEqual({ type: 'accepted' });
    const outcome = fold(state, created(schemaV1, 'nightly', { spec: { cronSpec: '0 3 * * *', image: 'backup:1', replicas: 2, env: [{ name: 'A', value: 'b' }] } }));
    expect(outcome).toEqual({ verdict: { type: 'accepted' }, change: { type: 'ADDED', key: `CronTab.${GROUP}/default/nightly` } });
    expect(stored(state, 'nightly')).toMatchObject({
      apiVersion: `${GROUP}/v1`,
      kind: 'CronTab',
      metadata: { name: 'nightly', namespace: 'default', generation: 1 },
      spec: { cronSpec: '0 3 * * *', image: 'backup:1', replicas: 2, env: [{ name: 'A', value: 'b' }] },
    });
  });

  it.each([
    ['no CRD serves the kind', [] as EventBody[], 'NotFound', /no CustomResourceDefinition serves CronTab/],
    ['the schema was never registered', [crdCreated()], 'Invalid', /no schema with this fingerprint is registered/],
  ])('rejects a create when %s', (_what, before, reason, message) => {
    const state = withNamespace();
    for (const body of before) fold(state, body);
    const outcome = fold(state, created(schemaV1, 'nightly', { spec: { image: 'x' } }));
    expect(outcome.verdict).toMatchObject({ type: 'rejected', reason });
    expect(outcome.verdict.type === 'rejected' && outcome.verdict.message).toMatch(message);
    expect(stored(state, 'nightly')).toBeUndefined();
  });

  it('refuses a schema whose fingerprint is not its own, and registers nothing', () => {
    const state = withNamespace();
    const body = registered(schemaV1) as Extract<EventBody, { type: 'SchemaRegistered' }>;
    const outcome = fold(state, { ...body, fingerprint: '0000000000000000' });
    expect(outcome.verdict).toMatchObject({ type: 'rejected', reason: 'Invalid' });
    expect(state.contents().allocations).toEqual({});
  });

  it('reads each object with its own writer schema after an incompatible revision, and refuses bytes that do not read', () => {
    const state = withNamespace();
    fold(state, crdCreated());
    fold(state, registered(schemaV1));
    fold(state, created(schemaV1, 'old', { spec: { replicas: 3 } }));
    fold(state, { type: 'ObjectUpdated', object: crd(schemaV1Revised) as KubeObject, expectedResourceVersion: null, subresource: null, quotaRelease: null });
    fold(state, registered(schemaV1Revised));
    expect(fold(state, created(schemaV1Revised, 'new', { spec: { replicas: 'three', suspend: true } })).verdict).toEqual({ type: 'accepted' });
    expect(stored(state, 'old')).toMatchObject({ spec: { replicas: 3 } });
    expect(stored(state, 'new')).toMatchObject({ spec: { replicas: 'three', suspend: true } });
    // Bytes that are not what the named schema wrote are a rejected event, not a crash.
    const garbage = { ...customObject(schemaV1, 'bad', {}), content: Buffer.from([0xff, 0xff, 0xff]) };
    const outcome = fold(state, { type: 'CustomObjectCreated', object: garbage });
    expect(outcome.verdict).toMatchObject({ type: 'rejected', reason: 'Invalid' });
  });

  it('writes the status subresource without touching spec or generation, and keeps status on a main-resource update', () => {
    const state = withNamespace();
    fold(state, crdCreated());
    fold(state, registered(schemaV1));
    fold(state, created(schemaV1, 'nightly', { spec: { image: 'a' } }));
    expect(fold(state, updated(schemaV1, 'nightly', { spec: { image: 'ignored' }, status: { active: 2 } }, 'status')).verdict).toEqual({ type: 'accepted' });
    expect(stored(state, 'nightly')).toMatchObject({ metadata: { generation: 1 }, spec: { image: 'a' }, status: { active: 2 } });
    expect(fold(state, updated(schemaV1, 'nightly', { spec: { image: 'b' }, status: { active: 99 } })).verdict).toEqual({ type: 'accepted' });
    expect(stored(state, 'nightly')).toMatchObject({ metadata: { generation: 2 }, spec: { image: 'b' }, status: { active: 2 } });
  });

  it('deletes custom objects, refuses creates while the CRD terminates, and forgets the kind once the CRD is gone', () => {
    const state = withNamespace();
    fold(state, crdCreated());
    fold(state, registered(schemaV1));
    fold(state, created(schemaV1, 'a', { spec: {} }));
    expect(fold(state, deleted('a'))).toEqual({ verdict: { type: 'accepted' }, change: { type: 'DELETED', key: `CronTab.${GROUP}/default/a` } });
    // A CRD held by a finalizer (the cleanup of its objects) is Terminating.
    fold(state, { type: 'ObjectUpdated', object: crd(schemaV1, { finalizers: ['customresourcecleanup.apiextensions.k8s.io'] }) as KubeObject, expectedResourceVersion: null, subresource: null, quotaRelease: null });
    fold(state, { type: 'ObjectDeleted', kind: 'CustomResourceDefinition', namespace: null, name: CRD_NAME, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    const refused = fold(state, created(schemaV1, 'b', { spec: {} }));
    expect(refused.verdict).toMatchObject({ type: 'rejected', reason: 'Forbidden', message: 'create not allowed while custom resource definition is terminating' });
    fold(state, { type: 'ObjectUpdated', object: crd(schemaV1, { finalizers: [] }) as KubeObject, expectedResourceVersion: null, subresource: null, quotaRelease: null });
    expect(state.getDesired(`CustomResourceDefinition.apiextensions.k8s.io//${CRD_NAME}`)).toBeUndefined();
    expect(Object.keys(state.contents().allocations).filter((key) => key.startsWith('customkind/'))).toEqual([]);
    expect(fold(state, created(schemaV1, 'c', { spec: {} })).verdict).toMatchObject({ type: 'rejected', reason: 'NotFound' });
  });
});

describe.each(LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions }))))(
  'custom objects under two schemas on the $adapter.name log, $partitions partition(s)',
  ({ adapter, partitions }) => {
    let scenario: Scenario | undefined;
    afterEach(async () => {
      await scenario?.close();
      scenario = undefined;
    });

    it('are folded in log order and a replay from offset 0 gives the live state hash', async () => {
      scenario = await startScenario({ adapter, partitions, controllers: [], nodes: [] });
      await scenario.apply(crdCreated(), registered(schemaV1));
      await scenario.apply(created(schemaV1, 'a', { spec: { replicas: 1 } }), created(schemaV1, 'b', { spec: { replicas: 2 } }));
      await scenario.apply(updated(schemaV1, 'a', { status: { active: 1 } }, 'status'));
      const revised = { type: 'ObjectUpdated', object: crd(schemaV1Revised) as KubeObject, expectedResourceVersion: null, subresource: null, quotaRelease: null } as EventBody;
      await scenario.apply(revised, registered(schemaV1Revised));
      await scenario.apply(created(schemaV1Revised, 'c', { spec: { replicas: 'three' } }), updated(schemaV1Revised, 'b', { spec: { replicas: 'two', suspend: true } }), deleted('a'));
      const view = scenario.projection.view();
      const objects = view.list('CronTab.stable.example.com' as never, 'default') as unknown as Record<string, unknown>[];
      expect(objects.map((object) => [(object.metadata as { name: string }).name, object.spec])).toEqual([
        ['b', { replicas: 'two', suspend: true }],
        ['c', { replicas: 'three' }],
      ]);
      const comparison = await replayToLive(scenario);
      expect(comparison.liveHash).toBeDefined();
      expect(comparison.replayHash).toBe(comparison.liveHash);
    });
  },
);
