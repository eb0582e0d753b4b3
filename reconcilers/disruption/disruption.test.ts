import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, KubeObject, Pod, PodDisruptionBudget } from '../../schemas/index.ts';
import { controllerReferenceTo, isoTime, keyOf } from '../replicaset/objects.ts';
import { createTestCluster, deploymentObject, replicaSetObject, runningPodStatus, type TestCluster } from '../testing.ts';
import {
  createDisruptionController,
  DELETION_TIMEOUT_MS,
  disruptionsAllowed,
  ExpectedCountError,
  scaledValue,
} from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const NOW = Date.UTC(2030, 0, 1);
const controller = createDisruptionController();

const open = (): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  return cluster;
};

const budget = (spec: PodDisruptionBudget['spec'], name = 'pdb'): PodDisruptionBudget => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name, namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
});

/** A pod labelled app=web, controlled by `owner` when given, Ready or not. */
const addPod = (cluster: TestCluster, name: string, ready: boolean | 'pending', owner?: KubeObject, labels: Record<string, string> = { app: 'web' }): Pod => {
  const pod = cluster.create<Pod>({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels, ...(owner ? { ownerReferences: [controllerReferenceTo(owner)] } : {}) },
    spec: { containers: [{ name: 'c', image: 'logplane/echo:1' }] },
  });
  if (ready !== 'pending') cluster.podStatus(name, runningPodStatus(ready, NOW - 60_000));
  return pod;
};

/** Decides the budget and folds its commands; returns the decision's commands. */
const sync = (cluster: TestCluster, name = 'pdb', now = NOW): { commands: readonly EventBody[]; requeueAfterMs?: number | undefined } => {
  const decision = controller.decide(`PodDisruptionBudget.policy/default/${name}`, cluster.view(), { now });
  for (const command of decision.commands) cluster.apply(command);
  return decision;
};

const statusOf = (cluster: TestCluster, name = 'pdb'): NonNullable<PodDisruptionBudget['status']> =>
  (cluster.view().get(`PodDisruptionBudget.policy/default/${name}`) as PodDisruptionBudget).status!;

const eventReasons = (commands: readonly EventBody[]): string[] =>
  commands.flatMap((c) => (c.type === 'ObjectCreated' && c.object.kind === 'Event' ? [c.object.reason ?? ''] : []));

describe('int-or-percent scaling (intstr.GetScaledValueFromIntOrPercent, rounding up)', () => {
  it.each([
    { value: 3, total: 10, expected: 3 },
    { value: '34%', total: 3, expected: 2 },
    { value: '50%', total: 3, expected: 2 },
    { value: '28%', total: 10, expected: 3 },
    { value: '0%', total: 7, expected: 0 },
    { value: '100%', total: 5, expected: 5 },
    { value: '20%', total: 0, expected: 0 },
  ])('$value of $total = $expected', ({ value, total, expected }) => {
    expect(scaledValue(value, total, true)).toBe(expected);
  });

  it.each(['3', 'abc', '%', '1.5%'])('%j is not a percentage: an error, as kube', (value) => {
    expect(() => scaledValue(value, 10, true)).toThrow(ExpectedCountError);
  });
});

describe('disruptionsAllowed (updatePdbStatus)', () => {
  it.each([
    { currentHealthy: 3, desiredHealthy: 2, expectedCount: 3, expected: 1 },
    { currentHealthy: 2, desiredHealthy: 2, expectedCount: 3, expected: 0 },
    { currentHealthy: 1, desiredHealthy: 2, expectedCount: 3, expected: 0 },
    { currentHealthy: 5, desiredHealthy: 0, expectedCount: 5, expected: 5 },
    { currentHealthy: 5, desiredHealthy: 0, expectedCount: 0, expected: 0 },
  ])('healthy $currentHealthy, desired $desiredHealthy, expected $expectedCount → $expected', ({ expected, ...counts }) => {
    expect(disruptionsAllowed(counts)).toBe(expected);
  });
});

describe('the disruption controller (kube disruption_test.go cases)', () => {
  it('a budget selecting no pods allows nothing and records NoPods (TestNoSelector)', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: 3 }));
    const { commands } = sync(cluster);
    expect(eventReasons(commands)).toEqual(['NoPods']);
    const status = statusOf(cluster);
    expect(status).toMatchObject({ currentHealthy: 0, desiredHealthy: 3, expectedPods: 0, disruptionsAllowed: 0, observedGeneration: 1 });
    expect(status.conditions).toEqual([
      expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', observedGeneration: 1 }),
    ]);
    expect(sync(cluster).commands).toEqual([]);
  });

  it('integer minAvailable counts the selected pods; ready ones are healthy (TestUnavailable)', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: 2 }));
    for (const name of ['a', 'b', 'c']) addPod(cluster, name, true);
    addPod(cluster, 'other', true, undefined, { app: 'db' });
    sync(cluster);
    expect(statusOf(cluster)).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1 });
    expect(statusOf(cluster).conditions?.[0]).toMatchObject({ status: 'True', reason: 'SufficientPods' });
    const since = statusOf(cluster).conditions?.[0]?.lastTransitionTime;
    cluster.podStatus('c', runningPodStatus(false, NOW));
    sync(cluster, 'pdb', NOW + 5000);
    expect(statusOf(cluster)).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 0 });
    const condition = statusOf(cluster).conditions?.[0];
    expect(condition).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    expect(condition?.lastTransitionTime).not.toBe(since);
  });

  it('percent minAvailable takes the expected count from a Deployment above the ReplicaSet (TestDeploymentFinderFunction)', () => {
    const cluster = open();
    const deployment = cluster.create(deploymentObject({ name: 'web', replicas: 10, labels: { app: 'web' } }));
    const rs = replicaSetObject({ name: 'web-1', replicas: 10, labels: { app: 'web' } });
    const replicaSet = cluster.create({ ...rs, metadata: { ...rs.metadata, ownerReferences: [controllerReferenceTo(deployment)] } });
    cluster.create(budget({ minAvailable: '28%' }));
    for (const name of ['a', 'b', 'c', 'd']) addPod(cluster, name, true, replicaSet);
    sync(cluster);
    // 28 % of the Deployment's 10, rounded up: 3 desired; 4 healthy allow 1.
    expect(statusOf(cluster)).toMatchObject({ expectedPods: 10, desiredHealthy: 3, currentHealthy: 4, disruptionsAllowed: 1 });
  });

  it.each([
    { maxUnavailable: 1, replicas: 3, desiredHealthy: 2 },
    { maxUnavailable: '34%', replicas: 3, desiredHealthy: 1 },
    { maxUnavailable: '25%', replicas: 4, desiredHealthy: 3 },
    { maxUnavailable: 5, replicas: 3, desiredHealthy: 0 },
  ])('maxUnavailable $maxUnavailable of a ReplicaSet of $replicas: $desiredHealthy desired (TestIntegerMaxUnavailable, TestReplicaSet)', ({ maxUnavailable, replicas, desiredHealthy }) => {
    const cluster = open();
    const replicaSet = cluster.create(replicaSetObject({ name: 'web', replicas, labels: { app: 'web' } }));
    cluster.create(budget({ maxUnavailable }));
    for (let i = 0; i < replicas; i++) addPod(cluster, `p${i}`, true, replicaSet);
    sync(cluster);
    expect(statusOf(cluster)).toMatchObject({ expectedPods: replicas, desiredHealthy, currentHealthy: replicas, disruptionsAllowed: replicas - desiredHealthy });
  });

  it('two controllers add their scales (TestTwoControllers)', () => {
    const cluster = open();
    const first = cluster.create(replicaSetObject({ name: 'one', replicas: 3, labels: { app: 'web' } }));
    const second = cluster.create(replicaSetObject({ name: 'two', replicas: 2, labels: { app: 'web' } }));
    cluster.create(budget({ minAvailable: '50%' }));
    addPod(cluster, 'a', true, first);
    addPod(cluster, 'b', true, first);
    addPod(cluster, 'c', false, second);
    sync(cluster);
    expect(statusOf(cluster)).toMatchObject({ expectedPods: 5, desiredHealthy: 3, currentHealthy: 2, disruptionsAllowed: 0 });
  });

  it('a pod no controller manages is skipped for a percentage, with UnmanagedPods (TestNakedPod)', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: '28%' }));
    addPod(cluster, 'naked', true);
    const { commands } = sync(cluster);
    expect(eventReasons(commands)).toEqual(['UnmanagedPods']);
    expect(statusOf(cluster)).toMatchObject({ expectedPods: 0, currentHealthy: 1, disruptionsAllowed: 0 });
  });

  it('a controller without a scale fails the sync safe: SyncFailed, no disruptions, CalculateExpectedPodCountFailed', () => {
    const cluster = open();
    const job = cluster.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'job', namespace: 'default' },
      spec: { template: { metadata: { labels: { app: 'web' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'logplane/echo:1' }] } } },
    } as KubeObject);
    cluster.create(budget({ maxUnavailable: 1 }));
    addPod(cluster, 'a', true, job);
    const { commands } = sync(cluster);
    expect(eventReasons(commands)).toEqual(['CalculateExpectedPodCountFailed']);
    const status = statusOf(cluster);
    expect(status.disruptionsAllowed).toBe(0);
    expect(status.conditions?.[0]).toMatchObject({ type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: 'jobs.batch does not implement the scale subresource' });
    expect(sync(cluster).commands).toEqual([]);
  });

  it('a controller that is gone fails the sync: "found no controllers for pod"', () => {
    const cluster = open();
    const replicaSet = cluster.create(replicaSetObject({ name: 'web', replicas: 2, labels: { app: 'web' } }));
    cluster.create(budget({ maxUnavailable: 1 }));
    addPod(cluster, 'a', true, { ...replicaSet, metadata: { ...replicaSet.metadata, uid: 'another-incarnation' } });
    sync(cluster);
    expect(statusOf(cluster).conditions?.[0]).toMatchObject({ reason: 'SyncFailed', message: 'found no controllers for pod "a"' });
  });

  it('a fresh disruptedPods entry keeps its pod out of currentHealthy until the timeout, then is dropped with NotDeleted (TestUpdateDisruptedPods)', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: 1 }));
    for (const name of ['a', 'b', 'c']) addPod(cluster, name, true);
    sync(cluster);
    const pdb = cluster.view().get('PodDisruptionBudget.policy/default/pdb') as PodDisruptionBudget;
    // What the eviction subresource writes: one disruption used, pod a about to go.
    cluster.apply({
      type: 'ObjectUpdated',
      object: { ...pdb, status: { ...pdb.status!, disruptionsAllowed: 1, disruptedPods: { a: isoTime(NOW), gone: isoTime(NOW) } } },
      expectedResourceVersion: null,
      subresource: 'status',
    });
    const decision = sync(cluster, 'pdb', NOW + 1000);
    expect(statusOf(cluster)).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1, disruptedPods: { a: isoTime(NOW) } });
    expect(decision.requeueAfterMs).toBeGreaterThan(DELETION_TIMEOUT_MS - 1000 - 1);
    expect(decision.requeueAfterMs).toBeLessThanOrEqual(DELETION_TIMEOUT_MS - 1000 + 1);
    const late = sync(cluster, 'pdb', NOW + DELETION_TIMEOUT_MS + 1000);
    expect(eventReasons(late.commands)).toEqual(['NotDeleted']);
    expect(statusOf(cluster).disruptedPods).toBeUndefined();
    expect(statusOf(cluster)).toMatchObject({ currentHealthy: 3, disruptionsAllowed: 2 });
  });

  it('a pod being deleted is not healthy', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: 1 }));
    addPod(cluster, 'a', true);
    addPod(cluster, 'b', true);
    cluster.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } } as KubeObject);
    cluster.apply({ type: 'PodBound', namespace: 'default', name: 'a', node: 'n1', expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } });
    cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: 'a', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: 30 });
    expect(cluster.view().get('Pod/default/a')?.metadata.deletionTimestamp).toBeTruthy();
    sync(cluster);
    expect(statusOf(cluster)).toMatchObject({ currentHealthy: 1, expectedPods: 2, disruptionsAllowed: 0 });
  });

  it('a status write decided before an eviction is rejected by the fold, not undoing the eviction', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: 1 }));
    addPod(cluster, 'a', true);
    addPod(cluster, 'b', true);
    sync(cluster);
    cluster.podStatus('b', runningPodStatus(false, NOW));
    const stale = controller.decide('PodDisruptionBudget.policy/default/pdb', cluster.view(), { now: NOW });
    const pdb = cluster.view().get('PodDisruptionBudget.policy/default/pdb') as PodDisruptionBudget;
    cluster.apply({
      type: 'ObjectUpdated',
      object: { ...pdb, status: { ...pdb.status!, disruptionsAllowed: 0, disruptedPods: { a: isoTime(NOW) } } },
      expectedResourceVersion: pdb.metadata.resourceVersion ?? null,
      subresource: 'status',
    });
    const [verdict] = cluster.apply(stale.commands[0]!);
    expect(verdict?.verdict).toMatchObject({ type: 'rejected', reason: 'Conflict' });
    expect(statusOf(cluster).disruptedPods).toEqual({ a: isoTime(NOW) });
  });

  it('maps a pod change to the budgets selecting it, and a budget change to itself', () => {
    const cluster = open();
    cluster.create(budget({ minAvailable: 1 }, 'web'));
    cluster.create({ ...budget({ minAvailable: 1 }, 'db'), spec: { selector: { matchLabels: { app: 'db' } }, minAvailable: 1 } });
    cluster.create({ ...budget({ minAvailable: 1 }, 'none'), spec: { minAvailable: 1 } });
    const pod = addPod(cluster, 'a', true);
    const change = { type: 'ADDED' as const, key: keyOf(pod), eventId: 'e', object: pod, topic: 'desired' as const, partition: 0, offset: 0 };
    expect(controller.keysFor(change, cluster.view())).toEqual(['PodDisruptionBudget.policy/default/web']);
    expect([...controller.initialKeys(cluster.view())].sort()).toEqual(['db', 'none', 'web'].map((n) => `PodDisruptionBudget.policy/default/${n}`));
  });
});
