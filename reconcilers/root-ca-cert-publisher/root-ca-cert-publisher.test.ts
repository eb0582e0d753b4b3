import { afterEach, describe, expect, it } from 'vitest';
import type { ConfigMap, EventBody } from '../../schemas/index.ts';
import { createTestCluster, namespaceObject, settle, type TestCluster } from '../testing.ts';
import { createRootCACertPublisher, decideRootCA, DESCRIPTION, DESCRIPTION_ANNOTATION, ROOT_CA_CONFIGMAP } from './index.ts';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const key = (namespace: string): string => `ConfigMap/${namespace}/${ROOT_CA_CONFIGMAP}`;
const deleteOf = (namespace: string, name: string, kind: 'ConfigMap' | 'Namespace' = 'ConfigMap'): EventBody => ({
  type: 'ObjectDeleted', kind, namespace: kind === 'Namespace' ? null : namespace, name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
});

let cluster: TestCluster;
afterEach(async () => cluster.close());

describe('root-ca-cert-publisher', () => {
  it('publishes kube-root-ca.crt with the CA and kube’s description in every active namespace', () => {
    cluster = createTestCluster();
    cluster.create(namespaceObject('team'));
    settle(cluster, [createRootCACertPublisher({ rootCA: CA })], { now: 0 });
    for (const namespace of ['default', 'team']) {
      const cm = cluster.view().get(key(namespace)) as ConfigMap;
      expect(cm.data).toEqual({ 'ca.crt': CA });
      expect(cm.metadata.annotations).toEqual({ [DESCRIPTION_ANNOTATION]: DESCRIPTION });
    }
  });

  it('recreates a deleted one, and restores edited data and a removed description, keeping other annotations', () => {
    cluster = createTestCluster();
    const publisher = createRootCACertPublisher({ rootCA: CA });
    settle(cluster, [publisher], { now: 0 });
    cluster.apply(deleteOf('default', ROOT_CA_CONFIGMAP));
    expect(cluster.view().get(key('default'))).toBeUndefined();
    settle(cluster, [publisher], { now: 0 });
    const recreated = cluster.view().get(key('default')) as ConfigMap;
    expect(recreated.data).toEqual({ 'ca.crt': CA });

    cluster.apply({
      type: 'ObjectUpdated',
      object: { ...recreated, metadata: { ...recreated.metadata, annotations: { team: 'a' } }, data: { 'ca.crt': 'forged', extra: 'x' } },
      expectedResourceVersion: null,
      subresource: null,
    });
    const decision = decideRootCA(key('default'), cluster.view(), CA);
    expect(decision.commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    settle(cluster, [publisher], { now: 0 });
    const restored = cluster.view().get(key('default')) as ConfigMap;
    expect(restored.data).toEqual({ 'ca.crt': CA });
    expect(restored.metadata.annotations).toEqual({ team: 'a', [DESCRIPTION_ANNOTATION]: DESCRIPTION });
    expect(restored.metadata.uid).toBe(recreated.metadata.uid);
  });

  it.each([
    ['a namespace that does not exist', (c: TestCluster) => void c],
    ['a terminating namespace', (c: TestCluster) => {
      c.create(namespaceObject('gone'));
      c.apply(deleteOf('', 'gone', 'Namespace'));
    }],
  ])('creates nothing in %s', (_title, prepare) => {
    cluster = createTestCluster();
    prepare(cluster);
    expect(decideRootCA(key('gone'), cluster.view(), CA).commands).toEqual([]);
  });

  it('maps namespace changes and its own ConfigMap’s changes to its key, and nothing else', () => {
    cluster = createTestCluster();
    const publisher = createRootCACertPublisher({ rootCA: CA });
    const ns = cluster.create(namespaceObject('team'));
    const change = (object: typeof ns | ConfigMap, type: 'ADDED' | 'MODIFIED' | 'DELETED' = 'ADDED') =>
      publisher.keysFor({ type, key: '', eventId: '', object, topic: 'desired', partition: 0, offset: 0 }, cluster.view());
    expect(change(ns)).toEqual([key('team')]);
    expect(change(ns, 'DELETED')).toEqual([]);
    const mine: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace: 'team' } };
    expect(change(mine, 'DELETED')).toEqual([key('team')]);
    expect(change({ ...mine, metadata: { name: 'other', namespace: 'team' } }, 'DELETED')).toEqual([]);
  });
});
