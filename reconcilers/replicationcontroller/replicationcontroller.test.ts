import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, ObjectCreated, ObjectDeleted, ObjectUpdated, Pod, ReplicationController, ReplicationControllerStatus } from '../../schemas/index.ts';
import { createReplicaSetController, decideReplicated, podNameForSlot, replicatedKeysFor } from '../replicaset/index.ts';
import { createTestCluster, nodeObject, podKey, podTemplate, settle, type TestCluster } from '../testing.ts';
import { createReplicationController, REPLICATION_CONTROLLER } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const RC_KEY = 'ReplicationController/default/mysql';
const NOW = Date.UTC(2030, 0, 1);

/** An RC as the apiserver stores it: the selector defaulted from the template's labels. */
const rcObject = (replicas: number, labels: Record<string, string> = { app: 'mysql' }): ReplicationController => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name: 'mysql', namespace: 'default', labels },
  spec: { replicas, selector: { ...labels }, template: podTemplate('logplane/sleeper:1', { ...labels, tier: 'db' }) },
});

const setup = (replicas: number) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  const rc = cluster.create(rcObject(replicas));
  return { cluster, rc };
};

const decide = (cluster: TestCluster) => decideReplicated('ReplicationController', RC_KEY, cluster.view(), NOW);
const creates = (commands: readonly EventBody[]): Pod[] =>
  commands.filter((c): c is ObjectCreated => c.type === 'ObjectCreated').map((c) => c.object as Pod);
const deletes = (commands: readonly EventBody[]): string[] =>
  commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted').map((c) => c.name);
const statusOf = (commands: readonly EventBody[]): ReplicationControllerStatus | undefined =>
  (commands.find((c): c is ObjectUpdated => c.type === 'ObjectUpdated' && c.subresource === 'status')?.object as ReplicationController | undefined)?.status;
const scale = (cluster: TestCluster, replicas: number): void => {
  const rc = cluster.view().get(RC_KEY) as ReplicationController;
  cluster.apply({ type: 'ObjectUpdated', object: { ...rc, spec: { ...rc.spec, replicas } }, expectedResourceVersion: null, subresource: 'scale' });
};

describe('replicationcontroller decide', () => {
  it('creates the missing pods from the template, controlled by the RC, with deterministic names', () => {
    const { cluster, rc } = setup(2);
    const decision = decide(cluster);
    const pods = creates(decision.commands);
    expect(pods.map((p) => p.metadata.name)).toEqual([podNameForSlot(rc, 0), podNameForSlot(rc, 1)]);
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^mysql-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(pod.metadata.labels).toEqual({ app: 'mysql', tier: 'db' });
      expect(pod.metadata.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'ReplicationController', name: 'mysql', uid: rc.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
    }
    expect(statusOf(decision.commands)).toEqual({ replicas: 0, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 });
    expect(decide(cluster)).toEqual(decision);
    // The ReplicaSet decision does not act on an RC.
    expect(decideReplicated('ReplicaSet', RC_KEY, cluster.view(), NOW)).toEqual({ commands: [] });
  });

  it('settles with every replica ready and available, scales up and down, and replaces a deleted pod', () => {
    const { cluster } = setup(1);
    const controllers = [createReplicationController()];
    settle(cluster, controllers, { now: NOW, node: 'n1' });
    const rc = (): ReplicationController => cluster.view().get(RC_KEY) as ReplicationController;
    expect(rc().status).toEqual({ replicas: 1, fullyLabeledReplicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1 });
    scale(cluster, 2);
    settle(cluster, controllers, { now: NOW, node: 'n1' });
    expect(rc().status).toEqual({ replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2, observedGeneration: 2 });
    const victim = cluster.view().list('Pod')[0] as Pod;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: victim.metadata.name, expectedResourceVersion: null, uid: victim.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: null });
    settle(cluster, controllers, { now: NOW, node: 'n1' });
    const pods = cluster.view().list('Pod') as Pod[];
    expect(pods).toHaveLength(2);
    expect(pods.map((p) => p.metadata.uid)).not.toContain(victim.metadata.uid);
    scale(cluster, 1);
    const decision = decide(cluster);
    expect(deletes(decision.commands)).toHaveLength(1);
    settle(cluster, controllers, { now: NOW, node: 'n1' });
    expect(cluster.view().list('Pod')).toHaveLength(1);
    expect(rc().status?.replicas).toBe(1);
  });

  it('adopts an orphan pod matching its equality selector, and leaves a pod with other labels alone', () => {
    const { cluster, rc } = setup(2);
    const orphan = (name: string, labels: Record<string, string>): Pod =>
      cluster.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels }, spec: { containers: [{ name: 'main', image: 'x' }] } });
    orphan('stray', { app: 'mysql', extra: 'yes' });
    orphan('other', { app: 'web' });
    const adoption = decide(cluster);
    expect(creates(adoption.commands)).toEqual([]);
    cluster.apply(...adoption.commands);
    expect((cluster.view().get(podKey('stray')) as Pod).metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'ReplicationController', name: 'mysql', uid: rc.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect((cluster.view().get(podKey('other')) as Pod).metadata.ownerReferences).toBeUndefined();
    const next = decide(cluster);
    expect(creates(next.commands)).toHaveLength(1);
    // The adopted pod lacks the template's tier label: not fully labeled.
    cluster.apply(...next.commands);
    expect(statusOf(decide(cluster).commands)).toMatchObject({ replicas: 2, fullyLabeledReplicas: 1 });
  });
});

describe('replicationcontroller keys', () => {
  it('maps a pod change to its controlling RC, an orphan to the RCs selecting it, and ignores its own status writes', () => {
    const { cluster } = setup(1);
    settle(cluster, [createReplicationController()], { now: NOW, node: 'n1' });
    const pod = cluster.view().list('Pod')[0] as Pod;
    const base = { eventId: 'e', partition: 0, offset: 0 } as const;
    const podChange = { ...base, type: 'MODIFIED', key: podKey(pod.metadata.name), object: pod, topic: 'observed' } as const;
    expect(replicatedKeysFor('ReplicationController', podChange, cluster.view())).toEqual([RC_KEY]);
    expect(replicatedKeysFor('ReplicaSet', podChange, cluster.view())).toEqual([]);
    const orphan: Pod = { ...pod, metadata: { ...pod.metadata, name: 'stray', ownerReferences: [] } };
    expect(replicatedKeysFor('ReplicationController', { ...podChange, key: podKey('stray'), object: orphan }, cluster.view())).toEqual([RC_KEY]);
    const rc = cluster.view().get(RC_KEY) as ReplicationController;
    expect(replicatedKeysFor('ReplicationController', { ...base, type: 'MODIFIED', key: RC_KEY, object: rc, topic: 'desired' }, cluster.view())).toEqual([RC_KEY]);
    expect(replicatedKeysFor('ReplicationController', { ...base, type: 'MODIFIED', key: RC_KEY, object: rc, topic: 'observed' }, cluster.view())).toEqual([]);
    const controller = createReplicationController();
    expect(controller.name).toBe(REPLICATION_CONTROLLER);
    expect(controller.initialKeys(cluster.view())).toEqual([RC_KEY]);
    expect(createReplicaSetController().initialKeys(cluster.view())).toEqual([]);
  });
});
