import { afterEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Deployment, DeploymentStrategy, EventBody, ObjectCreated, Pod, PodTemplateSpec, ReplicaSet } from '../../schemas/index.ts';
import { createReplicaSetController } from '../replicaset/index.ts';
import { isPodActive, isPodReady } from '../replicaset/pods.ts';
import { createTestCluster, deploymentObject, nodeObject, podTemplate, replicaSetObject, settle, type DeploymentFixture, type TestCluster } from '../testing.ts';
import {
  createDeploymentController,
  decideDeployment,
  deploymentKeysFor,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  newReplicaSetReplicas,
  planDeployment,
  podTemplateHash,
  POD_TEMPLATE_HASH_LABEL,
  proportionalSizes,
  resolveIntOrPercent,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  appendRevisionHistory,
  MAX_REVISION_HISTORY_CHARS,
  rollbackTemplate,
  rollingBounds,
  scaleDownOldReplicaSets,
} from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const NOW = Date.UTC(2030, 0, 1);
const KEY = 'Deployment/default/web';
const controllers = [createDeploymentController(), createReplicaSetController()];

const setup = (fixture: Partial<DeploymentFixture> = {}) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  cluster.create(deploymentObject({ name: 'web', replicas: 5, ...fixture }));
  return cluster;
};

const deployment = (view: View): Deployment => view.get(KEY) as Deployment;
const replicaSets = (view: View): ReplicaSet[] => view.list('ReplicaSet') as ReplicaSet[];
const activePods = (view: View): Pod[] => (view.list('Pod') as Pod[]).filter(isPodActive);
const readyPods = (view: View): Pod[] => activePods(view).filter(isPodReady);
const imagesOf = (pods: readonly Pod[]): string[] => [...new Set(pods.map((p) => p.spec.containers[0]?.image ?? ''))].sort();
const condition = (d: Deployment, type: string) => d.status?.conditions?.find((c) => c.type === type);

/** Replaces the Deployment's spec (as a user's update without a precondition). */
const updateSpec = (cluster: TestCluster, change: (spec: Deployment['spec']) => Deployment['spec']): void => {
  const d = deployment(cluster.view());
  const [record] = cluster.apply({ type: 'ObjectUpdated', object: { ...d, spec: change(structuredClone(d.spec)) }, expectedResourceVersion: null, subresource: null });
  expect(record?.verdict.type).toBe('accepted');
};
const withImage = (image: string) => (spec: Deployment['spec']): Deployment['spec'] => ({
  ...spec,
  template: { ...spec.template, spec: { ...spec.template.spec, containers: [{ name: 'main', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }] } },
});

const run = (cluster: TestCluster, options: { readyPerRound?: number; check?: (view: View) => void; now?: number } = {}) =>
  settle(cluster, controllers, { now: options.now ?? NOW, node: 'n1', ...options });

describe('rollout arithmetic', () => {
  it.each<{ value: number | string; total: number; roundUp: boolean; expected: number }>([
    { value: 2, total: 10, roundUp: true, expected: 2 },
    { value: '25%', total: 10, roundUp: true, expected: 3 },
    { value: '25%', total: 10, roundUp: false, expected: 2 },
    { value: '25%', total: 5, roundUp: false, expected: 1 },
    { value: '100%', total: 4, roundUp: false, expected: 4 },
    { value: '0%', total: 4, roundUp: true, expected: 0 },
    { value: 'x', total: 4, roundUp: true, expected: 0 },
  ])('resolveIntOrPercent($value of $total, up=$roundUp) = $expected', ({ value, total, roundUp, expected }) => {
    expect(resolveIntOrPercent(value, total, roundUp)).toBe(expected);
  });

  it.each<{ name: string; replicas: number; strategy?: DeploymentStrategy; expected: { maxSurge: number; maxUnavailable: number } }>([
    { name: 'defaults, 10 replicas', replicas: 10, expected: { maxSurge: 3, maxUnavailable: 2 } },
    { name: 'defaults, 5 replicas', replicas: 5, expected: { maxSurge: 2, maxUnavailable: 1 } },
    { name: 'defaults, 1 replica', replicas: 1, expected: { maxSurge: 1, maxUnavailable: 0 } },
    { name: 'both zero → unavailable 1', replicas: 3, strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } }, expected: { maxSurge: 0, maxUnavailable: 1 } },
    { name: 'unavailable capped at replicas', replicas: 2, strategy: { rollingUpdate: { maxUnavailable: 5 } }, expected: { maxSurge: 1, maxUnavailable: 2 } },
    { name: 'Recreate has neither', replicas: 4, strategy: { type: 'Recreate' }, expected: { maxSurge: 0, maxUnavailable: 0 } },
  ])('rollingBounds: $name', ({ replicas, strategy, expected }) => {
    expect(rollingBounds(deploymentObject({ name: 'x', replicas, ...(strategy ? { strategy } : {}) }))).toEqual(expected);
  });

  const rs = (name: string, replicas: number, available = replicas) => ({ name, replicas, available });
  it.each<{ name: string; replicas: number; all: ReturnType<typeof rs>[]; current?: ReturnType<typeof rs>; expected: number }>([
    { name: 'first rollout takes all replicas', replicas: 5, all: [], expected: 5 },
    { name: 'surge over the old pods', replicas: 5, all: [rs('old', 5)], current: rs('new', 0), expected: 2 },
    { name: 'no room left', replicas: 5, all: [rs('old', 5), rs('new', 2)], current: rs('new', 2), expected: 2 },
    { name: 'room after the old shrank', replicas: 5, all: [rs('old', 3), rs('new', 2)], current: rs('new', 2), expected: 4 },
    { name: 'never beyond replicas', replicas: 5, all: [rs('old', 0), rs('new', 4)], current: rs('new', 4), expected: 5 },
  ])('newReplicaSetReplicas: $name', ({ replicas, all, current, expected }) => {
    expect(newReplicaSetReplicas(deploymentObject({ name: 'x', replicas }), all, current)).toBe(expected);
  });

  it.each<{ name: string; replicas: number; newRs: ReturnType<typeof rs>; old: ReturnType<typeof rs>[]; expected: Record<string, number> }>([
    { name: 'new pods not available yet: keep the old', replicas: 5, newRs: rs('new', 2, 0), old: [rs('old', 5)], expected: { old: 4 } },
    { name: 'after one scale-down, wait for the new', replicas: 5, newRs: rs('new', 2, 0), old: [rs('old', 4)], expected: {} },
    { name: 'new available: shrink the old by as many', replicas: 5, newRs: rs('new', 2, 2), old: [rs('old', 4)], expected: { old: 2 } },
    { name: 'unhealthy old replicas go first, within maxScaledDown', replicas: 5, newRs: rs('new', 2, 0), old: [rs('old', 5, 3)], expected: { old: 4 } },
    { name: 'unhealthy replicas of an older ReplicaSet first', replicas: 5, newRs: rs('new', 2, 2), old: [rs('a', 2, 0), rs('b', 3, 3)], expected: { a: 0, b: 2 } },
    { name: 'oldest ReplicaSet first', replicas: 4, newRs: rs('new', 4, 4), old: [rs('a', 1), rs('b', 1)], expected: { a: 0, b: 0 } },
    { name: 'nothing old left', replicas: 4, newRs: rs('new', 4, 4), old: [rs('a', 0)], expected: {} },
  ])('scaleDownOldReplicaSets: $name', ({ replicas, newRs, old, expected }) => {
    expect(Object.fromEntries(scaleDownOldReplicaSets(deploymentObject({ name: 'x', replicas }), newRs, old))).toEqual(expected);
  });

  it.each<{ name: string; replicas: number; active: { name: string; replicas: number; max?: number }[]; expected: Record<string, number> }>([
    { name: 'scale up 10 → 20 mid-rollout', replicas: 20, active: [{ name: 'old', replicas: 8, max: 13 }, { name: 'new', replicas: 5, max: 13 }], expected: { old: 15, new: 10 } },
    { name: 'scale down 10 → 5 mid-rollout', replicas: 5, active: [{ name: 'old', replicas: 8, max: 13 }, { name: 'new', replicas: 5, max: 13 }], expected: { old: 4, new: 3 } },
    { name: 'scale to zero', replicas: 0, active: [{ name: 'old', replicas: 3, max: 5 }, { name: 'new', replicas: 2, max: 5 }], expected: { old: 0, new: 0 } },
  ])('proportionalSizes: $name', ({ replicas, active, expected }) => {
    const d = deploymentObject({ name: 'x', replicas });
    const sizes = proportionalSizes(d, active.map((a, i) => ({ name: a.name, replicas: a.replicas, maxReplicasBefore: a.max, created: i })), 0);
    expect(Object.fromEntries(sizes)).toEqual(expected);
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(replicas === 0 ? 0 : replicas + rollingBounds(d).maxSurge);
  });
});

describe('pod template hash', () => {
  const template = podTemplate('nginx:1', { app: 'web', tier: 'front' });
  it('is 10 characters of the safe alphabet, stable under key order', () => {
    const hash = podTemplateHash(template);
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{10}$/);
    const reordered: PodTemplateSpec = { spec: template.spec, metadata: { labels: { tier: 'front', app: 'web' } } };
    expect(podTemplateHash(reordered)).toBe(hash);
  });
  it('changes with the template and with the collision count, not with its own label', () => {
    const hash = podTemplateHash(template);
    expect(podTemplateHash(podTemplate('nginx:2', { app: 'web', tier: 'front' }))).not.toBe(hash);
    expect(podTemplateHash(template, 1)).not.toBe(hash);
    const labelled = { ...template, metadata: { labels: { ...template.metadata?.labels, [POD_TEMPLATE_HASH_LABEL]: hash } } };
    expect(podTemplateHash(labelled)).toBe(hash);
  });
});

describe('deployment decide', () => {
  it('creates the first ReplicaSet: hash name, revision 1, hash in selector and template, owned by the Deployment', () => {
    const cluster = setup();
    const d = deployment(cluster.view());
    const decision = decideDeployment(KEY, cluster.view(), NOW);
    const created = decision.commands.find((c): c is ObjectCreated => c.type === 'ObjectCreated')?.object as ReplicaSet;
    const hash = podTemplateHash(d.spec.template);
    expect(created.metadata.name).toBe(`web-${hash}`);
    expect(created.metadata.annotations).toEqual({ [REVISION_ANNOTATION]: '1', [DESIRED_REPLICAS_ANNOTATION]: '5', [MAX_REPLICAS_ANNOTATION]: '7' });
    expect(created.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(created.spec.replicas).toBe(5);
    expect(created.spec.selector.matchLabels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    expect(created.spec.template?.metadata?.labels).toEqual({ app: 'web', [POD_TEMPLATE_HASH_LABEL]: hash });
    expect(decideDeployment(KEY, cluster.view(), NOW)).toEqual(decision);
  });

  it('brings 5 replicas up and reports a complete rollout', () => {
    const cluster = setup();
    run(cluster);
    const view = cluster.view();
    expect(activePods(view)).toHaveLength(5);
    expect(readyPods(view)).toHaveLength(5);
    const d = deployment(view);
    expect(d.metadata.annotations?.[REVISION_ANNOTATION]).toBe('1');
    expect(d.status).toMatchObject({ observedGeneration: 1, replicas: 5, updatedReplicas: 5, readyReplicas: 5, availableReplicas: 5, unavailableReplicas: 0 });
    expect(condition(d, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(condition(d, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
    expect(decideDeployment(KEY, view, NOW + 60_000)).toEqual({ commands: [] });
  });

  it.each<{ to: number }>([{ to: 10 }, { to: 2 }, { to: 0 }])('scales to $to through the one ReplicaSet', ({ to }) => {
    const cluster = setup();
    run(cluster);
    updateSpec(cluster, (spec) => ({ ...spec, replicas: to }));
    run(cluster);
    const view = cluster.view();
    expect(activePods(view)).toHaveLength(to);
    expect(replicaSets(view)).toHaveLength(1);
    expect(replicaSets(view)[0]?.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION]).toBe(String(to));
    expect(deployment(view).status).toMatchObject({ replicas: to, updatedReplicas: to, availableReplicas: to });
  });

  it.each<{ name: string; replicas: number; strategy?: DeploymentStrategy; readyPerRound: number }>([
    { name: 'defaults (25%/25%)', replicas: 5, readyPerRound: 1 },
    { name: 'maxSurge 0, maxUnavailable 1', replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } }, readyPerRound: 1 },
    { name: 'maxSurge 3, maxUnavailable 0', replicas: 6, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 0 } }, readyPerRound: 2 },
    { name: 'percentages, 10 replicas', replicas: 10, strategy: { rollingUpdate: { maxSurge: '30%', maxUnavailable: '20%' } }, readyPerRound: 1 },
  ])('rolling update ($name) keeps replicas − maxUnavailable ready and replaces every pod', ({ replicas, strategy, readyPerRound }) => {
    const cluster = setup({ replicas, image: 'app:A', ...(strategy ? { strategy } : {}) });
    run(cluster);
    const d = deployment(cluster.view());
    const { maxSurge, maxUnavailable } = rollingBounds(d);
    updateSpec(cluster, withImage('app:B'));
    let lowest = Number.POSITIVE_INFINITY;
    let highest = 0;
    run(cluster, {
      readyPerRound,
      check: (view) => {
        lowest = Math.min(lowest, readyPods(view).length);
        highest = Math.max(highest, replicaSets(view).reduce((sum, rs) => sum + (rs.spec.replicas ?? 0), 0));
      },
    });
    expect(lowest).toBeGreaterThanOrEqual(replicas - maxUnavailable);
    expect(highest).toBeLessThanOrEqual(replicas + maxSurge);
    const view = cluster.view();
    expect(imagesOf(activePods(view))).toEqual(['app:B']);
    expect(readyPods(view)).toHaveLength(replicas);
    const sets = replicaSets(view).sort((a, b) => Number(a.metadata.annotations?.[REVISION_ANNOTATION]) - Number(b.metadata.annotations?.[REVISION_ANNOTATION]));
    expect(sets.map((rs) => [rs.metadata.annotations?.[REVISION_ANNOTATION], rs.spec.replicas])).toEqual([['1', 0], ['2', replicas]]);
    const status = deployment(view);
    expect(status.metadata.annotations?.[REVISION_ANNOTATION]).toBe('2');
    expect(status.status).toMatchObject({ observedGeneration: 2, replicas, updatedReplicas: replicas, availableReplicas: replicas });
    expect(condition(status, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
  });

  it('reports ReplicaSetUpdated while a rollout progresses', () => {
    const cluster = setup({ image: 'app:A' });
    run(cluster);
    updateSpec(cluster, withImage('app:B'));
    const reasons = new Set<string>();
    run(cluster, { readyPerRound: 1, check: (view) => reasons.add(condition(deployment(view), 'Progressing')?.reason ?? '') });
    expect([...reasons]).toEqual(expect.arrayContaining(['NewReplicaSetCreated', 'ReplicaSetUpdated', 'NewReplicaSetAvailable']));
  });

  it('Recreate: old pods are all gone before any new pod exists', () => {
    const cluster = setup({ replicas: 3, image: 'app:A', strategy: { type: 'Recreate' } });
    run(cluster);
    updateSpec(cluster, withImage('app:B'));
    let mixed = false;
    run(cluster, {
      check: (view) => {
        const images = imagesOf(view.list('Pod') as Pod[]);
        if (images.length > 1) mixed = true;
      },
    });
    expect(mixed).toBe(false);
    expect(imagesOf(activePods(cluster.view()))).toEqual(['app:B']);
    expect(readyPods(cluster.view())).toHaveLength(3);
  });

  it('rolls back to the previous template by reusing its ReplicaSet under a new revision', () => {
    const cluster = setup({ image: 'app:A' });
    run(cluster);
    updateSpec(cluster, withImage('app:B'));
    run(cluster);
    const before = replicaSets(cluster.view());
    const undo = rollbackTemplate(deployment(cluster.view()), before);
    expect(undo.type).toBe('rollback');
    if (undo.type !== 'rollback') return;
    expect(undo.revision).toBe(1);
    expect(undo.template.metadata?.labels).toEqual({ app: 'web' });
    updateSpec(cluster, (spec) => ({ ...spec, template: undo.template }));
    run(cluster, { readyPerRound: 1, check: (view) => expect(readyPods(view).length).toBeGreaterThanOrEqual(4) });
    const after = replicaSets(cluster.view());
    expect(after.map((rs) => rs.metadata.name).sort()).toEqual(before.map((rs) => rs.metadata.name).sort());
    const reused = after.find((rs) => rs.spec.template?.spec.containers[0]?.image === 'app:A');
    expect(reused?.metadata.annotations).toMatchObject({ [REVISION_ANNOTATION]: '3', [REVISION_HISTORY_ANNOTATION]: '1' });
    expect(reused?.spec.replicas).toBe(5);
    expect(imagesOf(activePods(cluster.view()))).toEqual(['app:A']);
    expect(rollbackTemplate(deployment(cluster.view()), after, 3)).toMatchObject({ type: 'skipped', revision: 3 });
  });

  it('copies the change-cause onto the current ReplicaSet whenever the Deployment is annotated, as kube does', () => {
    const cluster = setup({ replicas: 2, image: 'app:A' });
    run(cluster);
    const annotate = (cause: string): void => {
      const d = deployment(cluster.view());
      const annotations = { ...d.metadata.annotations, 'kubernetes.io/change-cause': cause, 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
      cluster.apply({ type: 'ObjectUpdated', object: { ...d, metadata: { ...d.metadata, annotations } }, expectedResourceVersion: null, subresource: null });
    };
    annotate('first');
    run(cluster);
    updateSpec(cluster, withImage('app:B'));
    run(cluster);
    annotate('second');
    run(cluster);
    const byRevision = Object.fromEntries(
      replicaSets(cluster.view()).map((rs) => [rs.metadata.annotations?.[REVISION_ANNOTATION], rs.metadata.annotations?.['kubernetes.io/change-cause']]),
    );
    // kubectl rollout history: 1 first, 2 second (revision 2 was created with "first", then updated).
    expect(byRevision).toEqual({ '1': 'first', '2': 'second' });
    for (const rs of replicaSets(cluster.view())) expect(rs.metadata.annotations).not.toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
    expect(deployment(cluster.view()).metadata.annotations?.[REVISION_ANNOTATION]).toBe('2');
  });

  it('keeps the revision history of a ReplicaSet rolled back to twice, and never lowers a revision', () => {
    const cluster = setup({ replicas: 1, image: 'app:A' });
    run(cluster);
    for (const image of ['app:B', 'app:A', 'app:B', 'app:A']) {
      updateSpec(cluster, withImage(image));
      run(cluster);
    }
    const a = replicaSets(cluster.view()).find((rs) => rs.spec.template?.spec.containers[0]?.image === 'app:A');
    const b = replicaSets(cluster.view()).find((rs) => rs.spec.template?.spec.containers[0]?.image === 'app:B');
    expect(a?.metadata.annotations).toMatchObject({ [REVISION_ANNOTATION]: '5', [REVISION_HISTORY_ANNOTATION]: '1,3' });
    expect(b?.metadata.annotations).toMatchObject({ [REVISION_ANNOTATION]: '4', [REVISION_HISTORY_ANNOTATION]: '2' });
    expect(deployment(cluster.view()).metadata.annotations?.[REVISION_ANNOTATION]).toBe('5');
  });

  it('bounds the revision-history annotation at 2,000 characters, dropping the oldest revisions', () => {
    expect(appendRevisionHistory(undefined, '7')).toBe('7');
    expect(appendRevisionHistory('1,3', '5')).toBe('1,3,5');
    expect(appendRevisionHistory('11,22,33', '44', 8)).toBe('22,33,44');
    expect(appendRevisionHistory('11,22,33', '44', 7)).toBe('33,44');
    const long = Array.from({ length: 500 }, (_, i) => String(1000 + i)).join(',');
    const bounded = appendRevisionHistory(long, '9999');
    expect(bounded.length).toBeLessThanOrEqual(MAX_REVISION_HISTORY_CHARS);
    expect(bounded.endsWith(',1499,9999')).toBe(true);
    expect(bounded.startsWith('1101,')).toBe(true);
  });

  it('keeps only revisionHistoryLimit old ReplicaSets', () => {
    const cluster = setup({ replicas: 2, image: 'app:1', revisionHistoryLimit: 1 });
    run(cluster);
    for (const image of ['app:2', 'app:3', 'app:4']) {
      updateSpec(cluster, withImage(image));
      run(cluster);
    }
    const revisions = replicaSets(cluster.view()).map((rs) => rs.metadata.annotations?.[REVISION_ANNOTATION]).sort();
    expect(revisions).toEqual(['3', '4']);
  });

  it('bumps collisionCount when the hash name is taken by another ReplicaSet, then uses a new name', () => {
    const cluster = setup();
    const d = deployment(cluster.view());
    const squatter = replicaSetObject({ name: `web-${podTemplateHash(d.spec.template)}`, replicas: 0, labels: { other: 'x' } });
    cluster.create(squatter);
    const first = decideDeployment(KEY, cluster.view(), NOW);
    expect(first.commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    cluster.apply(...first.commands);
    expect(deployment(cluster.view()).status?.collisionCount).toBe(1);
    const second = decideDeployment(KEY, cluster.view(), NOW);
    const created = second.commands.find((c): c is ObjectCreated => c.type === 'ObjectCreated')?.object;
    expect(created?.metadata.name).toBe(`web-${podTemplateHash(d.spec.template, 1)}`);
  });

  it('marks a rollout that stops progressing as ProgressDeadlineExceeded after the deadline', () => {
    const cluster = setup({ replicas: 2 });
    updateSpec(cluster, (spec) => ({ ...spec, progressDeadlineSeconds: 30 }));
    settle(cluster, controllers, { now: NOW });
    const waiting = decideDeployment(KEY, cluster.view(), NOW);
    expect(waiting.commands).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(31_000);
    const late = decideDeployment(KEY, cluster.view(), NOW + 31_000);
    cluster.apply(...late.commands);
    expect(condition(deployment(cluster.view()), 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(condition(deployment(cluster.view()), 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable' });
  });

  it('does not roll out a paused Deployment, and resumes when unpaused', () => {
    const cluster = setup({ image: 'app:A' });
    run(cluster);
    updateSpec(cluster, (spec) => ({ ...withImage('app:B')(spec), paused: true }));
    run(cluster);
    expect(replicaSets(cluster.view())).toHaveLength(1);
    expect(condition(deployment(cluster.view()), 'Progressing')).toMatchObject({ status: 'Unknown', reason: 'DeploymentPaused' });
    updateSpec(cluster, (spec) => ({ ...spec, paused: false }));
    run(cluster);
    expect(imagesOf(activePods(cluster.view()))).toEqual(['app:B']);
  });

  it('does nothing but status for a Deployment being deleted', () => {
    const cluster = setup();
    const d = deployment(cluster.view());
    cluster.apply({ type: 'ObjectDeleted', kind: 'Deployment', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: d.metadata.uid ?? null, propagationPolicy: 'Orphan', gracePeriodSeconds: null });
    expect(planDeployment(deployment(cluster.view()), cluster.view(), NOW).step).toEqual({ type: 'idle' });
    expect(decideDeployment(KEY, cluster.view(), NOW).commands.every((c: EventBody) => c.type === 'ObjectUpdated' && c.subresource === 'status')).toBe(true);
  });

  it('adopts an orphan ReplicaSet its selector matches', () => {
    const cluster = setup();
    cluster.create(replicaSetObject({ name: 'stray', replicas: 1, labels: { app: 'web' } }));
    const plan = planDeployment(deployment(cluster.view()), cluster.view(), NOW);
    expect(plan.step.type).toBe('adopt');
  });

  it('maps ReplicaSet and Pod changes to the Deployment', () => {
    const cluster = setup({ replicas: 1 });
    run(cluster);
    const view = cluster.view();
    const rs = replicaSets(view)[0] as ReplicaSet;
    const pod = activePods(view)[0] as Pod;
    const base = { eventId: 'e', partition: 0, offset: 0, type: 'MODIFIED', topic: 'desired' } as const;
    expect(deploymentKeysFor({ ...base, key: `ReplicaSet/default/${rs.metadata.name}`, object: rs }, view)).toEqual([KEY]);
    expect(deploymentKeysFor({ ...base, key: `Pod/default/${pod.metadata.name}`, object: pod }, view)).toEqual([KEY]);
    expect(deploymentKeysFor({ ...base, key: KEY, object: deployment(view), topic: 'observed' }, view)).toEqual([]);
  });
});

describe('rollbackTemplate', () => {
  const cluster = () => {
    const c = setup({ replicas: 1, image: 'app:1' });
    run(c);
    for (const image of ['app:2', 'app:3']) {
      updateSpec(c, withImage(image));
      run(c);
    }
    return c;
  };
  it.each<{ name: string; to?: number; expected: { type: string; revision?: number; image?: string } }>([
    { name: 'previous revision by default', expected: { type: 'rollback', revision: 2, image: 'app:2' } },
    { name: 'a given revision', to: 1, expected: { type: 'rollback', revision: 1, image: 'app:1' } },
    { name: 'the current revision is skipped', to: 3, expected: { type: 'skipped', revision: 3 } },
    { name: 'an unknown revision', to: 9, expected: { type: 'notFound' } },
  ])('$name', ({ to, expected }) => {
    const c = cluster();
    const result = rollbackTemplate(deployment(c.view()), replicaSets(c.view()), to);
    expect(result.type).toBe(expected.type);
    if (result.type === 'rollback') {
      expect(result.revision).toBe(expected.revision);
      expect(result.template.spec.containers[0]?.image).toBe(expected.image);
      expect(result.template.metadata?.labels?.[POD_TEMPLATE_HASH_LABEL]).toBeUndefined();
    }
    if (result.type === 'skipped') expect(result.revision).toBe(expected.revision);
  });
  it('finds nothing for a Deployment without history', () => {
    const c = setup();
    expect(rollbackTemplate(deployment(c.view()), [])).toMatchObject({ type: 'notFound' });
  });
});
