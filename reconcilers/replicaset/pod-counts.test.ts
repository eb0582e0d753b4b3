import { afterEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Deployment, EventBody, Pod, ReplicaSet } from '../../schemas/index.ts';
import { decideDeployment } from '../deployment/decide.ts';
import { createTestCluster, deploymentObject, nodeObject, replicaSetObject, runningPodStatus, type TestCluster } from '../testing.ts';
import { controllerRef, controllerReferenceTo, keyOf } from './objects.ts';
import { countPods, createPodCountsAttachment, EMPTY_COUNTS, type ControlledPodCounts, type PodCounts } from './pod-counts.ts';
import { decideReplicaSet } from './decide.ts';
import { createReplicaSetController } from './index.ts';
import { isPodActive } from './pods.ts';
import { seededRandom as random } from '../testing.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const NOW = Date.UTC(2030, 0, 1);


/** Counts as plain data (label sets by content). */
const plain = (counts: ControlledPodCounts): unknown => ({
  ...counts,
  labelSets: [...counts.labelSets].map(([set, count]) => [set.signature, count]).sort(),
});

/** Every count the controllers read, from the kept counts and from scratch. */
const compare = (view: View, counts: PodCounts): number => {
  const pods = view.list('Pod') as Pod[];
  const owners = new Set<string>();
  for (const object of [...view.list('ReplicaSet'), ...pods]) {
    owners.add(`${object.metadata.namespace}/${object.metadata.uid}`);
    const ref = controllerRef(object);
    if (ref) owners.add(`${object.metadata.namespace}/${ref.uid}`);
  }
  owners.add('default/missing');
  for (const owner of owners) {
    const [namespace, uid] = owner.split('/') as [string, string];
    const controlled = pods.filter((pod) => pod.metadata.namespace === namespace && controllerRef(pod)?.uid === uid);
    const fromScratch = countPods(controlled);
    expect(plain(counts.controlled(namespace, uid) ?? EMPTY_COUNTS)).toEqual(plain(fromScratch));
    for (const labels of [[], [['app', 'web']], [['app', 'web'], ['tier', 'a']], [['tier', 'b']]] as [string, string][][]) {
      const expected = controlled.filter((pod) => isPodActive(pod) && labels.every(([k, v]) => pod.metadata.labels?.[k] === v)).length;
      expect(counts.fullyLabeled(counts.controlled(namespace, uid) ?? EMPTY_COUNTS, labels)).toBe(expected);
    }
  }
  for (const namespace of ['default', 'other', 'none']) {
    const orphans = pods.filter((pod) => pod.metadata.namespace === namespace && !controllerRef(pod) && isPodActive(pod)).length;
    expect(counts.uncontrolledActive(namespace)).toBe(orphans);
  }
  return pods.length;
};

describe('pod counts kept from the change feed', () => {
  it.each([1, 2, 3, 4])(
    'equal a count from scratch, and decisions on them equal decisions without them, after random changes (seed %i)',
    (seed) => {
      const next = random(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
      const cluster = createTestCluster();
      clusters.push(cluster);
      cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
      cluster.create(nodeObject('a'));
      // Some state exists before the counts start (they load it), then they follow the feed.
      const d = cluster.create(deploymentObject({ name: 'web', replicas: 6 }));
      cluster.apply(...decideDeployment(keyOf(d), cluster.view(), NOW).commands);
      const attachment = createPodCountsAttachment();
      expect(attachment.countsFor(cluster.view())).toBeUndefined();
      const detach = attachment.attach(cluster.projection);
      for (const ns of ['default', 'other']) {
        cluster.create(replicaSetObject({ name: 'rs', namespace: ns, replicas: 3, labels: { app: 'web', tier: ns === 'default' ? 'a' : 'b' } }));
      }
      let checked = 0;
      for (let step = 0; step < 60; step++) {
        const view = cluster.view();
        const pods = view.list('Pod') as Pod[];
        const replicaSets = view.list('ReplicaSet') as ReplicaSet[];
        const bodies: EventBody[] = [];
        const roll = next();
        const pod = pods.length > 0 ? pick(pods) : undefined;
        if (roll < 0.25) {
          // The controllers' own decisions keep the state realistic (creates, deletes, scaling).
          for (const rs of replicaSets) bodies.push(...decideReplicaSet(keyOf(rs), view, NOW, { burstReplicas: 3 }).commands);
          bodies.push(...decideDeployment('Deployment/default/web', view, NOW).commands);
        } else if (roll < 0.35 && replicaSets.length > 0) {
          const rs = pick(replicaSets);
          const name = `x${Math.floor(next() * 6)}`;
          const owned = next() < 0.6;
          const labels = pick<Record<string, string>>([{ app: 'web' }, { app: 'web', tier: 'a' }, { tier: 'b' }, {}]);
          bodies.push({
            type: 'ObjectCreated',
            object: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name, namespace: rs.metadata.namespace ?? 'default', labels, ...(owned ? { ownerReferences: [controllerReferenceTo(rs)] } : {}) },
              spec: { containers: [{ name: 'c', image: 'i' }] },
            },
          });
        } else if (roll < 0.5 && pod) {
          bodies.push({ type: 'PodBound', namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name, node: 'a', expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } });
        } else if (roll < 0.7 && pod) {
          const state = pick(['ready', 'notReady', 'Succeeded', 'Failed'] as const);
          const status = state === 'ready' || state === 'notReady' ? runningPodStatus(state === 'ready', NOW - 1000) : { phase: state };
          bodies.push({ type: 'PodStatusChanged', namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name, uid: pod.metadata.uid ?? null, status });
        } else if (roll < 0.8 && pod) {
          // Relabel, or drop / set the controller reference.
          const metadata = next() < 0.5
            ? { ...pod.metadata, labels: pick<Record<string, string>>([{ app: 'web' }, { app: 'web', tier: 'a' }, { tier: 'b', app: 'web' }]) }
            : { ...pod.metadata, ownerReferences: controllerRef(pod) || replicaSets.length === 0 ? [] : [controllerReferenceTo(pick(replicaSets))] };
          bodies.push({ type: 'ObjectUpdated', object: { ...pod, metadata }, expectedResourceVersion: null, subresource: null });
        } else if (roll < 0.95 && pod) {
          // Bound pods with a grace period stay, terminating, until the node confirms.
          const grace = pick([0, 30, null]);
          bodies.push({ type: 'ObjectDeleted', kind: 'Pod', namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name, expectedResourceVersion: null, uid: pod.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: grace });
        } else if (replicaSets.length > 0) {
          const rs = pick(replicaSets);
          bodies.push({ type: 'ObjectUpdated', object: { ...rs, spec: { ...rs.spec, replicas: Math.floor(next() * 5) } }, expectedResourceVersion: null, subresource: null });
        }
        if (bodies.length > 0) cluster.apply(...bodies);
        const after = cluster.view();
        const counts = attachment.countsFor(after);
        expect(counts).toBeDefined();
        checked += compare(after, counts as PodCounts);
        for (const rs of after.list('ReplicaSet')) {
          expect(decideReplicaSet(keyOf(rs), after, NOW, {}, counts)).toEqual(decideReplicaSet(keyOf(rs), after, NOW));
        }
        for (const deployment of after.list('Deployment') as Deployment[]) {
          expect(decideDeployment(keyOf(deployment), after, NOW, counts)).toEqual(decideDeployment(keyOf(deployment), after, NOW));
        }
      }
      expect(checked).toBeGreaterThan(200);
      detach();
      expect(attachment.countsFor(cluster.view())).toBeUndefined();
    },
  );

  it('are not used for a view at another position than the projection (a past view counts from scratch)', () => {
    const cluster = createTestCluster();
    clusters.push(cluster);
    const rs = cluster.create(replicaSetObject({ name: 'web', replicas: 2 }));
    const controller = createReplicaSetController();
    const attachment = createPodCountsAttachment();
    controller.attach?.(cluster.projection);
    attachment.attach(cluster.projection);
    const past = cluster.projection.cursor();
    const [first] = decideReplicaSet(keyOf(rs), cluster.view(), NOW).commands;
    cluster.apply(first as EventBody);
    expect(attachment.countsFor(cluster.projection.viewAt(past))).toBeUndefined();
    expect(attachment.countsFor(cluster.view())?.controlled('default', rs.metadata.uid ?? '')?.active).toBe(1);
    const creates = (view: View): number =>
      controller.decide(keyOf(rs), view, { now: NOW }).commands.filter((c) => c.type === 'ObjectCreated' && c.object.kind === 'Pod').length;
    // At the past position no pod existed yet: two to create; now one.
    expect(creates(cluster.projection.viewAt(past))).toBe(2);
    expect(creates(cluster.view())).toBe(1);
  });
});
