import { afterEach, describe, expect, it } from 'vitest';
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../../projections/index.ts';
import type { EventBody, PersistentVolume, PersistentVolumeClaim, Pod } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, type TestCluster } from '../testing.ts';
import { createPvcProtectionController, decidePvcProtection, decidePvProtection, pvcProtectionKeysFor } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const CLAIM_KEY = 'PersistentVolumeClaim/default/data';

const claim = (name = 'data', extra: Partial<PersistentVolumeClaim['metadata']> = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', finalizers: [PVC_PROTECTION_FINALIZER], ...extra },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

const pod = (name: string, volumes: NonNullable<Pod['spec']['volumes']>, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'nginx' }], volumes, ...(nodeName ? { nodeName } : {}) },
});

const deleteBody = (kind: 'PersistentVolumeClaim' | 'PersistentVolume' | 'Pod', name: string, namespace: string | null = 'default'): EventBody => ({
  type: 'ObjectDeleted',
  kind,
  namespace,
  name,
  expectedResourceVersion: null,
  uid: null,
  propagationPolicy: null,
  gracePeriodSeconds: null,
});

const setup = (): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  return cluster;
};

/** Applies what `decide` says for `key` and returns the verdicts. */
const settle = (cluster: TestCluster, decision: { commands: readonly EventBody[] }) => cluster.apply(...decision.commands).map((record) => record.verdict.type);

describe('pvc-protection', () => {
  it('keeps a deleted claim while a bound pod uses it, and releases it (the fold deletes it) once that pod is gone', () => {
    const cluster = setup();
    cluster.create(claim());
    cluster.create(pod('user', [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }], 'n1'));
    cluster.apply(deleteBody('PersistentVolumeClaim', 'data'));
    expect(cluster.view().get(CLAIM_KEY)?.metadata.deletionTimestamp).toBeDefined();
    expect(decidePvcProtection(CLAIM_KEY, cluster.view())).toEqual({ commands: [] });
    cluster.podStatus('user', { phase: 'Succeeded' });
    const decision = decidePvcProtection(CLAIM_KEY, cluster.view());
    expect(decision.commands).toHaveLength(1);
    expect(settle(cluster, decision)).toEqual(['accepted']);
    expect(cluster.view().get(CLAIM_KEY)).toBeUndefined();
  });

  it.each<[string, Pod, boolean]>([
    ['a pod not bound to a node does not hold it', pod('p', [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }]), false],
    ['a pod naming another claim does not hold it', pod('p', [{ name: 'v', persistentVolumeClaim: { claimName: 'other' } }], 'n1'), false],
    ['a bound pod naming it holds it', pod('p', [{ name: 'v', persistentVolumeClaim: { claimName: 'data' } }], 'n1'), true],
    ['an ephemeral volume holds the claim only when the pod controls it', pod('data', [{ name: 'x', ephemeral: { volumeClaimTemplate: { spec: {} } } }], 'n1'), false],
  ])('%s', (_case, user, held) => {
    const cluster = setup();
    cluster.create(claim(user.metadata.name === 'data' ? 'data-x' : 'data'));
    cluster.create(user);
    const key = user.metadata.name === 'data' ? 'PersistentVolumeClaim/default/data-x' : CLAIM_KEY;
    cluster.apply(deleteBody('PersistentVolumeClaim', key.split('/')[2]!));
    expect(decidePvcProtection(key, cluster.view()).commands.length).toBe(held ? 0 : 1);
  });

  it('an ephemeral claim controlled by its pod is held by it', () => {
    const cluster = setup();
    const owner = cluster.create(pod('web', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }], 'n1'));
    cluster.create(claim('web-scratch', { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: owner.metadata.uid!, controller: true }] }));
    cluster.apply(deleteBody('PersistentVolumeClaim', 'web-scratch'));
    expect(decidePvcProtection('PersistentVolumeClaim/default/web-scratch', cluster.view())).toEqual({ commands: [] });
  });

  it('leaves claims not being deleted, or without its finalizer, alone; maps a pod change to the claims it names', () => {
    const cluster = setup();
    cluster.create(claim());
    expect(decidePvcProtection(CLAIM_KEY, cluster.view())).toEqual({ commands: [] });
    expect(createPvcProtectionController().initialKeys(cluster.view())).toEqual([]);
    cluster.create(claim('plain', { finalizers: ['example.com/keep'] }));
    cluster.apply(deleteBody('PersistentVolumeClaim', 'plain'));
    expect(decidePvcProtection('PersistentVolumeClaim/default/plain', cluster.view())).toEqual({ commands: [] });
    const user = pod('user', [{ name: 'a', persistentVolumeClaim: { claimName: 'data' } }, { name: 'b', ephemeral: { volumeClaimTemplate: { spec: {} } } }]);
    const change = { eventId: 'e', partition: 0, offset: 0, type: 'DELETED', key: 'Pod/default/user', object: user, topic: 'desired' } as const;
    expect(pvcProtectionKeysFor(change)).toEqual([CLAIM_KEY, 'PersistentVolumeClaim/default/user-b']);
  });
});

describe('pv-protection', () => {
  const volume = (name: string): PersistentVolume => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, finalizers: [PV_PROTECTION_FINALIZER] },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } },
  });

  it('keeps a deleted Bound volume, and releases it once it is not Bound', () => {
    const cluster = setup();
    const created = cluster.create(volume('pv1'));
    const withPhase = (object: PersistentVolume, phase: string): PersistentVolume => ({ ...object, status: { phase } });
    cluster.apply({ type: 'ObjectUpdated', object: withPhase(created, 'Bound'), expectedResourceVersion: null, subresource: 'status' });
    cluster.apply(deleteBody('PersistentVolume', 'pv1', null));
    expect(decidePvProtection('PersistentVolume//pv1', cluster.view())).toEqual({ commands: [] });
    const current = cluster.view().get('PersistentVolume//pv1') as PersistentVolume;
    cluster.apply({ type: 'ObjectUpdated', object: withPhase(current, 'Released'), expectedResourceVersion: null, subresource: 'status' });
    expect(settle(cluster, decidePvProtection('PersistentVolume//pv1', cluster.view()))).toEqual(['accepted']);
    expect(cluster.view().get('PersistentVolume//pv1')).toBeUndefined();
  });
});
