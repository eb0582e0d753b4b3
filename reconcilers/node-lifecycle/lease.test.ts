import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, Lease, Node } from '../../schemas/index.ts';
import { createTestCluster, namespaceObject, nodeObject, type TestCluster } from '../testing.ts';
import { createNodeLifecycleController, lastRenewal, NODE_LEASE_NAMESPACE, type HeartbeatTracker } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const T0 = Date.UTC(2030, 0, 1, 12);
const micro = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const NODE_KEY = 'Node//n1';
const LEASE_KEY = `Lease.coordination.k8s.io/${NODE_LEASE_NAMESPACE}/n1`;

/** A cluster with Ready node n1 and, when `renewedAt` is given, its Lease renewed then (as its agent creates it). */
const setup = (renewedAt?: number): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(namespaceObject(NODE_LEASE_NAMESPACE));
  const node = cluster.create<Node>(nodeObject('n1'));
  if (renewedAt !== undefined) {
    cluster.create<Lease>({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'n1', namespace: NODE_LEASE_NAMESPACE, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata.uid ?? '' }] },
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: micro(renewedAt) },
    });
  }
  return cluster;
};

const tracker = (beats: Record<string, number>, since: number, horizon = since - 100_000): HeartbeatTracker => ({
  lastSeen: (node) => beats[node],
  since,
  horizon,
  close: () => undefined,
});

const readyIn = (commands: readonly EventBody[]): string | undefined => {
  const change = commands.find((c) => c.type === 'NodeStatusChanged');
  return change?.type === 'NodeStatusChanged' ? change.status.conditions?.find((c) => c.type === 'Ready')?.status : undefined;
};

describe('lastRenewal', () => {
  it.each([
    ['no Lease, no heartbeat', undefined, undefined, undefined],
    ['only heartbeats', undefined, T0 + 5_000, T0 + 5_000],
    ['only the Lease renewTime (its creation)', T0 + 3_000, undefined, T0 + 3_000],
    ['a heartbeat after the creation', T0 + 3_000, T0 + 13_000, T0 + 13_000],
    ['a renewTime a client set after the last heartbeat', T0 + 20_000, T0 + 13_000, T0 + 20_000],
    ['a renewTime older than the tracked window', T0 - 200_000, undefined, undefined],
  ])('%s', (_, renewedAt, beat, wanted) => {
    const cluster = setup(renewedAt);
    expect(lastRenewal(cluster.view(), 'n1', tracker(beat === undefined ? {} : { n1: beat }, T0))).toBe(wanted);
  });
});

describe('the node lifecycle controller on node Leases', () => {
  it('looks at the node when its Lease changes', () => {
    const cluster = setup(T0);
    const controller = createNodeLifecycleController({ heartbeats: tracker({}, T0) });
    const change = { type: 'ADDED', eventId: 'e1', object: cluster.view().get(LEASE_KEY)!, topic: 'desired', partition: 0, offset: 0 } as const;
    expect(controller.keysFor({ ...change, key: LEASE_KEY }, cluster.view())).toEqual([NODE_KEY]);
    expect(controller.keysFor({ ...change, key: 'Lease.coordination.k8s.io/kube-system/n1' }, cluster.view())).toEqual([]);
  });

  it('judges a node by its Lease: silent a grace period after the last renewal, Ready again once renewed', () => {
    // The controller started at T0 and has seen no heartbeat; the agent created the Lease at T0 + 5 s.
    const cluster = setup(T0 + 5_000);
    const controller = createNodeLifecycleController({ heartbeats: tracker({}, T0), gracePeriodMs: 40_000 });
    const decide = (now: number): readonly EventBody[] => {
      const { commands } = controller.decide(NODE_KEY, cluster.view(), { now });
      cluster.apply(...commands);
      return commands;
    };
    // The grace runs from the renewal, not from the controller's start.
    expect(decide(T0 + 45_000)).toEqual([]);
    expect(readyIn(decide(T0 + 45_001))).toBe('Unknown');
    // A renewal (here a client's update of renewTime) makes it Ready again.
    const lease = cluster.view().get(LEASE_KEY) as Lease;
    cluster.apply({ type: 'ObjectUpdated', object: { ...lease, spec: { ...lease.spec, renewTime: micro(T0 + 50_000) } }, expectedResourceVersion: null, subresource: null });
    expect(readyIn(decide(T0 + 50_500))).toBe('True');
  });

  it('gives a node whose Lease was renewed before the tracked window its grace from the start of tracking', () => {
    const cluster = setup(T0 - 500_000);
    const controller = createNodeLifecycleController({ heartbeats: tracker({}, T0), gracePeriodMs: 40_000 });
    expect(controller.decide(NODE_KEY, cluster.view(), { now: T0 + 40_000 }).commands).toEqual([]);
    expect(readyIn(controller.decide(NODE_KEY, cluster.view(), { now: T0 + 40_001 }).commands)).toBe('Unknown');
  });
});
