import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, ObjectCreated, ObjectDeleted, ObjectUpdated, Pod, ReplicaSet, ReplicaSetStatus } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, podKey, replicaSetObject, runningPodStatus, type TestCluster } from '../testing.ts';
import { countActivePods, createReplicaSetController, decideReplicaSet, isPodActive, isPodAvailable, isPodReady, podNameForSlot, replicaSetKeysFor } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const RS_KEY = 'ReplicaSet/default/web';
const NOW = Date.UTC(2030, 0, 1);

/** A cluster with node n1 and ReplicaSet web (replicas as given). */
const setup = (replicas: number, extra: { minReadySeconds?: number } = {}) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  const rs = cluster.create(replicaSetObject({ name: 'web', replicas, ...extra }));
  return { cluster, rs };
};

const creates = (commands: readonly EventBody[]): Pod[] =>
  commands.filter((c): c is ObjectCreated => c.type === 'ObjectCreated').map((c) => c.object as Pod);
const deletes = (commands: readonly EventBody[]): string[] =>
  commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted').map((c) => c.name);
const statusOf = (commands: readonly EventBody[]): ReplicaSetStatus | undefined =>
  (commands.find((c): c is ObjectUpdated => c.type === 'ObjectUpdated' && c.subresource === 'status')?.object as ReplicaSet | undefined)
    ?.status;

/** Decides and folds the commands until the ReplicaSet has nothing left to do. */
const settle = (cluster: TestCluster, now = NOW): void => {
  for (let round = 0; round < 10; round++) {
    const { commands } = decideReplicaSet(RS_KEY, cluster.view(), now);
    if (commands.length === 0) return;
    cluster.apply(...commands);
  }
  throw new Error('the ReplicaSet did not settle in 10 rounds');
};

/** Pod of slot `slot`, bound to n1 and reported as given. */
type PodState = 'unscheduled' | 'pending' | 'notReady' | 'ready' | 'failed' | 'succeeded' | 'terminating';
const putInState = (cluster: TestCluster, rs: ReplicaSet, slot: number, state: PodState, readySince = NOW - 60_000): string => {
  const name = podNameForSlot(rs, slot);
  if (state === 'unscheduled') return name;
  cluster.apply({
    type: 'PodBound',
    namespace: 'default',
    name,
    node: 'n1',
    expectedPodVersion: null,
    rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 },
  });
  switch (state) {
    case 'pending':
      break;
    case 'notReady':
      cluster.podStatus(name, runningPodStatus(false, readySince));
      break;
    case 'ready':
      cluster.podStatus(name, runningPodStatus(true, readySince));
      break;
    case 'failed':
    case 'succeeded':
      cluster.podStatus(name, { phase: state === 'failed' ? 'Failed' : 'Succeeded' });
      break;
    case 'terminating': {
      const pod = cluster.view().get(podKey(name)) as Pod;
      cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name, expectedResourceVersion: null, uid: pod.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: 30 });
      break;
    }
    default:
      break;
  }
  return name;
};

describe('replicaset decide', () => {
  it('creates the missing pods from the template, owned by the ReplicaSet, with deterministic names', () => {
    const { cluster, rs } = setup(3);
    const decision = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    const pods = creates(decision.commands);
    expect(pods.map((p) => p.metadata.name)).toEqual([0, 1, 2].map((slot) => podNameForSlot(rs, slot)));
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(pod.metadata.namespace).toBe('default');
      expect(pod.metadata.labels).toEqual({ app: 'web' });
      expect(pod.metadata.ownerReferences).toEqual([
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(pod.spec).toEqual(rs.spec.template?.spec);
    }
    expect(statusOf(decision.commands)).toEqual({ replicas: 0, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 });
    // The same view decides the same commands: a second instance or a retried round.
    expect(decideReplicaSet(RS_KEY, cluster.view(), NOW)).toEqual(decision);
  });

  it('is idempotent: a duplicated decision creates no second pod', () => {
    const { cluster } = setup(3);
    const { commands } = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    const first = cluster.apply(...commands);
    const again = cluster.apply(...commands);
    expect(first.filter((r) => r.eventType === 'ObjectCreated').map((r) => r.verdict.type)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(again.filter((r) => r.eventType === 'ObjectCreated').map((r) => r.verdict)).toEqual(
      Array.from({ length: 3 }, () => expect.objectContaining({ type: 'rejected', reason: 'AlreadyExists' })),
    );
    expect(cluster.view().list('Pod')).toHaveLength(3);
    expect(creates(decideReplicaSet(RS_KEY, cluster.view(), NOW).commands)).toEqual([]);
  });

  it('fills the lowest free slots, skipping names still taken by terminating pods', () => {
    const { cluster, rs } = setup(3);
    settle(cluster);
    putInState(cluster, rs, 1, 'terminating');
    const pods = creates(decideReplicaSet(RS_KEY, cluster.view(), NOW).commands);
    expect(pods.map((p) => p.metadata.name)).toEqual([podNameForSlot(rs, 3)]);
  });

  type ScaleDownCase = { name: string; states: PodState[]; replicas: number; deleted: number[] };
  it.each<ScaleDownCase>([
    { name: 'unscheduled pods go first', states: ['ready', 'unscheduled', 'ready'], replicas: 2, deleted: [1] },
    { name: 'pending before running', states: ['ready', 'pending', 'notReady'], replicas: 1, deleted: [1, 2] },
    { name: 'not ready before ready', states: ['ready', 'notReady', 'ready'], replicas: 2, deleted: [1] },
    { name: 'newest first among equals', states: ['ready', 'ready', 'ready'], replicas: 1, deleted: [2, 1] },
    { name: 'ordering across all ranks', states: ['ready', 'notReady', 'unscheduled', 'pending'], replicas: 1, deleted: [2, 3, 1] },
  ])('scale down: $name', ({ states, replicas, deleted }) => {
    const { cluster, rs } = setup(states.length);
    settle(cluster);
    const names = states.map((state, slot) => putInState(cluster, rs, slot, state, NOW - 60_000));
    cluster.apply({ type: 'ObjectUpdated', object: { ...rs, spec: { ...rs.spec, replicas } }, expectedResourceVersion: null, subresource: null });
    const decision = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    expect(deletes(decision.commands)).toEqual(deleted.map((slot) => names[slot]));
    expect(creates(decision.commands)).toEqual([]);
  });

  it('prefers pods ready for less time when all are ready', () => {
    const { cluster, rs } = setup(2);
    settle(cluster);
    const older = putInState(cluster, rs, 0, 'ready', NOW - 60_000);
    const newer = putInState(cluster, rs, 1, 'ready', NOW - 1_000);
    cluster.apply({ type: 'ObjectUpdated', object: { ...rs, spec: { ...rs.spec, replicas: 1 } }, expectedResourceVersion: null, subresource: null });
    expect(deletes(decideReplicaSet(RS_KEY, cluster.view(), NOW).commands)).toEqual([newer]);
    expect(older).not.toBe(newer);
  });

  it.each<{ state: PodState }>([{ state: 'failed' }, { state: 'succeeded' }])('deletes a $state pod and replaces it', ({ state }) => {
    const { cluster, rs } = setup(2);
    settle(cluster);
    putInState(cluster, rs, 0, 'ready');
    const finished = putInState(cluster, rs, 1, state);
    const { commands } = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    expect(deletes(commands)).toEqual([finished]);
    expect(creates(commands).map((p) => p.metadata.name)).toEqual([podNameForSlot(rs, 2)]);
  });

  it('does not count terminating pods and replaces them', () => {
    const { cluster, rs } = setup(2);
    settle(cluster);
    putInState(cluster, rs, 0, 'terminating');
    const { commands } = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    expect(deletes(commands)).toEqual([]);
    expect(creates(commands)).toHaveLength(1);
  });

  it('reports ready and available replicas, available after minReadySeconds, and asks to be requeued until then', () => {
    const { cluster, rs } = setup(3, { minReadySeconds: 10 });
    settle(cluster);
    putInState(cluster, rs, 0, 'ready', NOW - 60_000);
    putInState(cluster, rs, 1, 'ready', NOW - 4_000);
    putInState(cluster, rs, 2, 'notReady');
    const decision = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    expect(statusOf(decision.commands)).toEqual({ replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 2, availableReplicas: 1, observedGeneration: 1 });
    expect(decision.requeueAfterMs).toBe(6_000);
    cluster.apply(...decision.commands);
    const later = decideReplicaSet(RS_KEY, cluster.view(), NOW + 6_000);
    expect(statusOf(later.commands)?.availableReplicas).toBe(2);
  });

  it('writes status only when it changed', () => {
    const { cluster } = setup(2);
    settle(cluster);
    expect(decideReplicaSet(RS_KEY, cluster.view(), NOW)).toEqual({ commands: [] });
    expect((cluster.view().get(RS_KEY) as ReplicaSet).status).toEqual({ replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 0, availableReplicas: 0, observedGeneration: 1 });
  });

  it('creates nothing for a ReplicaSet being deleted, but still reports status', () => {
    const { cluster, rs } = setup(2);
    cluster.apply({ type: 'ObjectDeleted', kind: 'ReplicaSet', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: rs.metadata.uid ?? null, propagationPolicy: 'Foreground', gracePeriodSeconds: null });
    const { commands } = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    expect(commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    expect(statusOf(commands)?.replicas).toBe(0);
  });

  it('adopts a matching orphan pod and then counts it', () => {
    const { cluster, rs } = setup(2);
    cluster.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'x' }] } });
    const adoption = decideReplicaSet(RS_KEY, cluster.view(), NOW);
    expect(creates(adoption.commands)).toEqual([]);
    cluster.apply(...adoption.commands);
    const stray = cluster.view().get(podKey('stray')) as Pod;
    expect(stray.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', uid: rs.metadata.uid, controller: true });
    expect(creates(decideReplicaSet(RS_KEY, cluster.view(), NOW).commands)).toHaveLength(1);
  });

  it('slow-starts a large scale-up: the first round creates 100 pods, each next one as many as are active, up to burstReplicas', () => {
    const { cluster } = setup(1_500);
    const sizes: number[] = [];
    for (let round = 0; round < 10; round++) {
      const { commands } = decideReplicaSet(RS_KEY, cluster.view(), NOW);
      const created = creates(commands).length;
      if (created === 0) break;
      sizes.push(created);
      cluster.apply(...commands);
    }
    expect(sizes).toEqual([100, 100, 200, 400, 500, 200]);
    expect(cluster.view().list('Pod')).toHaveLength(1_500);
    // Finished pods are not active: the batch follows the active pods, not the pods that exist.
    const { cluster: second, rs } = setup(1_000);
    for (let slot = 0; slot < 300; slot++) {
      second.create({ ...(creates(decideReplicaSet(RS_KEY, second.view(), NOW, { burstReplicas: 1 }).commands)[0] as Pod) });
      putInState(second, rs, slot, slot < 250 ? 'failed' : 'ready');
    }
    const next = decideReplicaSet(RS_KEY, second.view(), NOW);
    expect(creates(next.commands)).toHaveLength(100);
    expect(deletes(next.commands)).toHaveLength(250);
  });

  it('caps the pods created in one round at burstReplicas', () => {
    const { cluster } = setup(7);
    expect(creates(decideReplicaSet(RS_KEY, cluster.view(), NOW, { burstReplicas: 4 }).commands)).toHaveLength(4);
  });
});

describe('replicaset keys', () => {
  it('maps a pod change to its controlling ReplicaSet, and ignores the ReplicaSet status writes', () => {
    const { cluster } = setup(1);
    settle(cluster);
    const pod = cluster.view().list('Pod')[0] as Pod;
    const base = { eventId: 'e', partition: 0, offset: 0 } as const;
    expect(replicaSetKeysFor({ ...base, type: 'MODIFIED', key: podKey(pod.metadata.name), object: pod, topic: 'observed' }, cluster.view())).toEqual([RS_KEY]);
    const rs = cluster.view().get(RS_KEY) as ReplicaSet;
    expect(replicaSetKeysFor({ ...base, type: 'MODIFIED', key: RS_KEY, object: rs, topic: 'desired' }, cluster.view())).toEqual([RS_KEY]);
    expect(replicaSetKeysFor({ ...base, type: 'MODIFIED', key: RS_KEY, object: rs, topic: 'observed' }, cluster.view())).toEqual([]);
    expect(createReplicaSetController().initialKeys(cluster.view())).toEqual([RS_KEY]);
  });
});

describe('countActivePods', () => {
  it('counts as isPodActive, isPodReady, isPodAvailable and the label check do, pod by pod', () => {
    const now = Date.parse('2026-01-01T00:01:00Z');
    const pods: Pod[] = [];
    for (let i = 0; i < 96; i++) {
      const conditions =
        i % 4 === 0
          ? []
          : [
              { type: 'PodScheduled', status: 'True' },
              { type: 'Ready', status: i % 4 === 1 ? 'False' : 'True', ...(i % 3 === 0 ? {} : { lastTransitionTime: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z` }) },
            ];
      pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `p${i}`,
          namespace: 'default',
          labels: i % 5 === 0 ? { app: 'web' } : { app: 'web', tier: 'front' },
          ...(i % 7 === 0 ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
        },
        spec: { containers: [{ name: 'c', image: 'i' }] },
        status: { phase: ['Pending', 'Running', 'Succeeded', 'Failed', 'Running', 'Running'][i % 6] as string, conditions },
      } as Pod);
    }
    const labels: [string, string][] = [['app', 'web'], ['tier', 'front']];
    for (const minReadySeconds of [0, 10, 30, 100]) {
      const counts = countActivePods(pods, minReadySeconds, now, labels);
      const active = pods.filter(isPodActive);
      expect(counts.active).toEqual(active);
      expect(counts.ready).toBe(active.filter(isPodReady).length);
      expect(counts.available).toBe(active.filter((pod) => isPodAvailable(pod, minReadySeconds, now)).length);
      expect(counts.fullyLabeled).toBe(active.filter((pod) => labels.every(([k, v]) => pod.metadata.labels?.[k] === v)).length);
    }
    // The sample has every kind of pod, so the counts compare something.
    const some = countActivePods(pods, 30, now, labels);
    expect([some.active.length, some.ready, some.available, some.fullyLabeled].every((n) => n > 0)).toBe(true);
    expect(some.available).toBeLessThan(some.ready);
  });
});
