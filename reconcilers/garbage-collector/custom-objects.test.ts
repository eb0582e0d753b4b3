/**
 * The garbage collector with custom objects (a CRD's kind) on a real projection: a custom
 * owner's built-in and custom dependents go with it (Background, Foreground with the owner
 * held until they are gone, Orphan with the references stripped by custom-object writes),
 * a built-in owner's custom dependent goes with it, and the initial keys find a custom
 * dependent whose owner is missing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import { createCustomObjectCodec, customContentSchema, type StructuralSchema } from '../../schemas/custom/index.ts';
import type { ConfigMap, CustomResourceDefinition, EventBody, KubeObject, OwnerReference, PropagationPolicy } from '../../schemas/index.ts';
import { deletionOf } from '../object-writes.ts';
import { createTestCluster, settle, type TestCluster } from '../testing.ts';
import { createGarbageCollector, FINALIZER, garbageInitialKeys } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const NOW = Date.UTC(2030, 0, 1);
const SCHEMA: StructuralSchema = { type: 'object', properties: { spec: { type: 'object', properties: { schedule: { type: 'string' } } } } };
const CODEC = createCustomObjectCodec(customContentSchema({ group: 'stable.example.com', version: 'v1', kind: 'CronTab', schema: SCHEMA }));
const controllers = [createGarbageCollector()];

const CRD: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: { plural: 'crontabs', kind: 'CronTab' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA as never } }],
  },
};

const cronTabKey = (name: string): string => `CronTab.stable.example.com/default/${name}`;
const configMapKey = (name: string): string => `ConfigMap/default/${name}`;

const referenceTo = (owner: KubeObject, blockOwnerDeletion = true): OwnerReference => ({
  apiVersion: owner.apiVersion ?? '',
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid ?? '',
  blockOwnerDeletion,
});

/** A cluster serving CronTab, with a schema registered for it. */
const withCrd = (): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(CRD as KubeObject);
  cluster.apply({ type: 'SchemaRegistered', resource: CRD.metadata.name ?? '', group: 'stable.example.com', version: 'v1', kind: 'CronTab', fingerprint: CODEC.fingerprint, schema: JSON.stringify(CODEC.schema) });
  return cluster;
};

const createCronTab = (cluster: TestCluster, name: string, owners: readonly OwnerReference[] = []): KubeObject => {
  const metadata = { name, namespace: 'default', ...(owners.length > 0 ? { ownerReferences: [...owners] } : {}) };
  const [record] = cluster.apply({ type: 'CustomObjectCreated', object: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata, schema: CODEC.fingerprint, content: CODEC.encode({ spec: { schedule: '* * * * */5' } }) } });
  expect(record?.verdict).toEqual({ type: 'accepted' });
  return cluster.view().get(cronTabKey(name)) as KubeObject;
};

const createConfigMap = (cluster: TestCluster, name: string, owners: readonly OwnerReference[]): KubeObject =>
  cluster.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ownerReferences: [...owners] }, data: { a: '1' } } as ConfigMap);

/** CronTab parent owning CronTab child and ConfigMap settings. */
const family = (): TestCluster => {
  const cluster = withCrd();
  const parent = createCronTab(cluster, 'parent');
  createCronTab(cluster, 'child', [referenceTo(parent)]);
  createConfigMap(cluster, 'settings', [referenceTo(parent)]);
  return cluster;
};

const present = (view: View): string[] => [cronTabKey('parent'), cronTabKey('child'), configMapKey('settings')].filter((key) => view.get(key) !== undefined);

const deleteParent = (cluster: TestCluster, policy: PropagationPolicy): void => {
  const [record] = cluster.apply(deletionOf(cluster.view().get(cronTabKey('parent')) as KubeObject, policy));
  expect(record?.verdict).toEqual({ type: 'accepted' });
};

describe('garbage collection of custom objects', () => {
  it('Background: the custom owner goes at once, then its custom and built-in dependents', () => {
    const cluster = family();
    deleteParent(cluster, 'Background');
    expect(present(cluster.view())).toEqual([cronTabKey('child'), configMapKey('settings')]);
    settle(cluster, controllers, { now: NOW });
    expect(present(cluster.view())).toEqual([]);
  });

  it('Foreground: the custom owner waits with foregroundDeletion until its dependents are gone', () => {
    const cluster = family();
    deleteParent(cluster, 'Foreground');
    expect(cluster.view().get(cronTabKey('parent'))?.metadata.finalizers).toEqual([FINALIZER.Foreground]);
    const deletedWhileOwnerPresent: string[] = [];
    const watch = cluster.projection.changes$.subscribe((change) => {
      if (change.type === 'DELETED' && cluster.view().get(cronTabKey('parent'))) deletedWhileOwnerPresent.push(change.key);
    });
    try {
      settle(cluster, controllers, { now: NOW });
    } finally {
      watch.unsubscribe();
    }
    expect(deletedWhileOwnerPresent.sort()).toEqual([configMapKey('settings'), cronTabKey('child')]);
    expect(present(cluster.view())).toEqual([]);
  });

  it('Orphan: the dependents lose their reference (a CustomObjectUpdated for the custom one) and stay', () => {
    const cluster = family();
    deleteParent(cluster, 'Orphan');
    const writes: EventBody['type'][] = [];
    const decided = controllers[0]!.decide(cronTabKey('parent'), cluster.view(), { now: NOW });
    for (const command of decided.commands) writes.push(command.type);
    expect(writes.sort()).toEqual(['CustomObjectUpdated', 'ObjectUpdated', 'SchemaRegistered']);
    settle(cluster, controllers, { now: NOW });
    const view = cluster.view();
    expect(present(view)).toEqual([cronTabKey('child'), configMapKey('settings')]);
    expect(view.get(cronTabKey('child'))?.metadata.ownerReferences).toBeUndefined();
    expect(view.get(configMapKey('settings'))?.metadata.ownerReferences).toBeUndefined();
    expect((view.get(cronTabKey('child')) as unknown as { spec: unknown }).spec).toEqual({ schedule: '* * * * */5' });
  });

  it("a built-in owner's custom dependent goes with it; a custom dependent of two owners only loses the gone one's reference", () => {
    const cluster = withCrd();
    const owner = cluster.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'default' } } as ConfigMap);
    const other = cluster.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other', namespace: 'default' } } as ConfigMap);
    createCronTab(cluster, 'only-child', [referenceTo(owner)]);
    createCronTab(cluster, 'shared', [referenceTo(owner), referenceTo(other)]);
    cluster.apply(deletionOf(owner, 'Background'));
    expect(garbageInitialKeys(cluster.view()).sort()).toEqual([cronTabKey('only-child'), cronTabKey('shared')]);
    settle(cluster, controllers, { now: NOW });
    const view = cluster.view();
    expect(view.get(cronTabKey('only-child'))).toBeUndefined();
    expect(view.get(cronTabKey('shared'))?.metadata.ownerReferences?.map((ref) => ref.name)).toEqual(['other']);
  });
});
