import { afterEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { EventBody, KubeObject, OwnerReference, Pod, PropagationPolicy, ReplicaSet } from '../../schemas/index.ts';
import { createDeploymentController } from '../deployment/index.ts';
import { createReplicaSetController } from '../replicaset/index.ts';
import { createTestCluster, deploymentObject, nodeObject, replicaSetObject, settle, type TestCluster } from '../testing.ts';
import { createGarbageCollector, decideGarbage, FINALIZER, garbageInitialKeys, garbageKeysFor } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const NOW = Date.UTC(2030, 0, 1);
const D_KEY = 'Deployment/default/web';
const controllers = [createDeploymentController(), createReplicaSetController(), createGarbageCollector()];

const deleteBody = (object: KubeObject, propagationPolicy: PropagationPolicy | null): EventBody => ({
  type: 'ObjectDeleted',
  kind: object.kind,
  namespace: object.metadata.namespace ?? null,
  name: object.metadata.name,
  expectedResourceVersion: null,
  uid: object.metadata.uid ?? null,
  propagationPolicy,
  gracePeriodSeconds: null,
});

/** A cluster running Deployment web (3 replicas) to completion. */
const running = (partitions = 1) => {
  const cluster = createTestCluster(partitions);
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  cluster.create(deploymentObject({ name: 'web', replicas: 3 }));
  settle(cluster, controllers, { now: NOW, node: 'n1' });
  expect(cluster.view().list('Pod')).toHaveLength(3);
  return cluster;
};

const counts = (view: View) => ({
  deployments: view.list('Deployment').length,
  replicaSets: view.list('ReplicaSet').length,
  pods: view.list('Pod').length,
});

describe('garbage collector cascade', () => {
  it.each<{ policy: PropagationPolicy | null }>([{ policy: 'Background' }, { policy: null }])(
    'Background ($policy): the Deployment goes at once, then its ReplicaSets, then their pods',
    ({ policy }) => {
      const cluster = running();
      cluster.apply(deleteBody(cluster.view().get(D_KEY) as KubeObject, policy));
      expect(counts(cluster.view())).toEqual({ deployments: 0, replicaSets: 1, pods: 3 });
      settle(cluster, controllers, { now: NOW, node: 'n1' });
      expect(counts(cluster.view())).toEqual({ deployments: 0, replicaSets: 0, pods: 0 });
    },
  );

  it('Foreground: the Deployment stays until its ReplicaSets and pods are gone', () => {
    const cluster = running();
    cluster.apply(deleteBody(cluster.view().get(D_KEY) as KubeObject, 'Foreground'));
    expect(cluster.view().get(D_KEY)?.metadata.finalizers).toEqual([FINALIZER.Foreground]);
    let ownerOutlivedDependents = true;
    settle(cluster, controllers, {
      now: NOW,
      node: 'n1',
      check: (view) => {
        const c = counts(view);
        if (c.deployments === 0 && (c.replicaSets > 0 || c.pods > 0)) ownerOutlivedDependents = false;
        if (c.replicaSets === 0 && c.pods > 0) ownerOutlivedDependents = false;
      },
    });
    expect(ownerOutlivedDependents).toBe(true);
    expect(counts(cluster.view())).toEqual({ deployments: 0, replicaSets: 0, pods: 0 });
  });

  it('Orphan: ReplicaSets and pods stay, without the reference to the deleted Deployment', () => {
    const cluster = running();
    const rsBefore = cluster.view().list('ReplicaSet')[0] as ReplicaSet;
    cluster.apply(deleteBody(cluster.view().get(D_KEY) as KubeObject, 'Orphan'));
    settle(cluster, controllers, { now: NOW, node: 'n1' });
    const view = cluster.view();
    expect(counts(view)).toEqual({ deployments: 0, replicaSets: 1, pods: 3 });
    const rs = view.list('ReplicaSet')[0] as ReplicaSet;
    expect(rs.metadata.uid).toBe(rsBefore.metadata.uid);
    expect(rs.metadata.ownerReferences).toBeUndefined();
    for (const pod of view.list('Pod') as Pod[]) expect(pod.metadata.ownerReferences?.[0]?.uid).toBe(rs.metadata.uid);
  });

  it('orphans in two rounds: references first, the finalizer once the view shows none left', () => {
    const cluster = running();
    cluster.apply(deleteBody(cluster.view().get(D_KEY) as KubeObject, 'Orphan'));
    const first = decideGarbage(D_KEY, cluster.view(), NOW);
    expect(first.commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    expect(first.requeueAfterMs).toBe(0);
    cluster.apply(...first.commands);
    const second = decideGarbage(D_KEY, cluster.view(), NOW);
    expect(second.commands).toHaveLength(1);
    cluster.apply(...second.commands);
    expect(cluster.view().get(D_KEY)).toBeUndefined();
  });

  it('drops only the dangling reference of a dependent that still has a live owner', () => {
    const cluster = createTestCluster();
    clusters.push(cluster);
    const alive = cluster.create(replicaSetObject({ name: 'alive', replicas: 0 }));
    const doomed = cluster.create(replicaSetObject({ name: 'doomed', replicas: 0 }));
    const ref = (owner: ReplicaSet): OwnerReference => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.metadata.name, uid: owner.metadata.uid ?? '' });
    cluster.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'shared', namespace: 'default', ownerReferences: [ref(alive), ref(doomed)] }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    cluster.apply(deleteBody(doomed, 'Background'));
    settle(cluster, [createGarbageCollector()], { now: NOW });
    expect(cluster.view().get('Pod/default/shared')?.metadata.ownerReferences).toEqual([ref(alive)]);
  });

  it('does not wait for dependents that do not block owner deletion', () => {
    const cluster = createTestCluster();
    clusters.push(cluster);
    const owner = cluster.create(replicaSetObject({ name: 'owner', replicas: 0 }));
    cluster.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'loose', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'owner', uid: owner.metadata.uid ?? '', blockOwnerDeletion: false }] },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    cluster.apply(deleteBody(owner, 'Foreground'));
    const decision = decideGarbage('ReplicaSet/default/owner', cluster.view(), NOW);
    expect(decision.commands.map((c) => c.type)).toEqual(['ObjectDeleted', 'ObjectUpdated']);
  });

  it('with several partitions, waits before treating a young dependent\'s missing owner as deleted', () => {
    const cluster = createTestCluster(3);
    clusters.push(cluster);
    cluster.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'early', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'unseen', uid: 'not-yet-applied' }] },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    const pod = cluster.view().get('Pod/default/early') as Pod;
    const created = Date.parse(pod.metadata.creationTimestamp ?? '');
    expect(decideGarbage('Pod/default/early', cluster.view(), created + 1_000)).toEqual({ commands: [], requeueAfterMs: 4_000 });
    expect(decideGarbage('Pod/default/early', cluster.view(), created + 5_000).commands.map((c) => c.type)).toEqual(['ObjectDeleted']);
  });

  it('finds the keys of a change: dependents of a deleted owner, owners awaiting the collector', () => {
    const cluster = running();
    const view = cluster.view();
    const d = view.get(D_KEY) as KubeObject;
    const rs = view.list('ReplicaSet')[0] as ReplicaSet;
    const rsKey = `ReplicaSet/default/${rs.metadata.name}`;
    const base = { eventId: 'e', partition: 0, offset: 0, topic: 'desired' } as const;
    cluster.apply(deleteBody(d, 'Background'));
    expect(garbageKeysFor({ ...base, type: 'DELETED', key: D_KEY, object: d }, cluster.view())).toEqual([rsKey]);
    expect(garbageKeysFor({ ...base, type: 'MODIFIED', key: rsKey, object: rs }, cluster.view())).toEqual([rsKey]);
    expect(garbageKeysFor({ ...base, type: 'MODIFIED', key: rsKey, object: rs, topic: 'observed' }, cluster.view())).toEqual([]);
    expect(garbageInitialKeys(cluster.view())).toEqual([rsKey]);
  });
});
