/**
 * Deleting Deployments end to end on both logs (and 1 and 3 partitions), with the
 * deployment, replicaset and garbage-collector controllers on the real runtime.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Deployment, EventBody, Pod, PropagationPolicy, ReplicaSet } from '../../schemas/index.ts';
import { createDeploymentController } from '../deployment/index.ts';
import { createReplicaSetController } from '../replicaset/index.ts';
import { isPodActive, isPodReady } from '../replicaset/pods.ts';
import { deploymentObject, LOG_ADAPTERS, startScenario, type Scenario } from '../testing.ts';
import { createGarbageCollector } from './index.ts';

const KEY = 'Deployment/default/web';

const pods = (view: View): Pod[] => view.list('Pod', 'default') as Pod[];
const replicaSets = (view: View): ReplicaSet[] => view.list('ReplicaSet', 'default') as ReplicaSet[];
const readyPods = (view: View): number => pods(view).filter((pod) => isPodActive(pod) && isPodReady(pod)).length;

const deleteDeployment = (view: View, propagationPolicy: PropagationPolicy): EventBody => {
  const d = view.get(KEY) as Deployment;
  return { type: 'ObjectDeleted', kind: 'Deployment', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: d.metadata.uid ?? null, propagationPolicy, gracePeriodSeconds: null };
};

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('deleting deployments on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  beforeEach(async () => {
    scenario = await startScenario({
      adapter,
      partitions,
      controllers: [createDeploymentController(), createReplicaSetController(), createGarbageCollector({ absentOwnerGraceMs: 1_000 })],
    });
    await scenario.apply({ type: 'ObjectCreated', object: deploymentObject({ name: 'web', replicas: 3 }) });
    await scenario.waitUntil('3 pods are ready', (view) => readyPods(view) === 3 && pods(view).length === 3);
  });
  afterEach(async () => {
    await scenario.close();
  });

  it('Background removes the ReplicaSets and the pods', async () => {
    await scenario.apply(deleteDeployment(scenario.projection.view(), 'Background'));
    await scenario.waitUntil('everything is gone', (view) => !view.get(KEY) && replicaSets(view).length === 0 && pods(view).length === 0);
  });

  it('Foreground removes the pods, then the ReplicaSets, then the Deployment', async () => {
    let order = 'dependents first';
    const watch = scenario.projection.changes$.subscribe((change) => {
      if (change.type !== 'DELETED') return;
      const view = scenario.projection.view();
      if (change.object.kind === 'Deployment' && replicaSets(view).length > 0) order = 'Deployment before its ReplicaSets';
      if (change.object.kind === 'ReplicaSet' && pods(view).length > 0) order = 'ReplicaSet before its pods';
    });
    try {
      await scenario.apply(deleteDeployment(scenario.projection.view(), 'Foreground'));
      await scenario.waitUntil('everything is gone', (view) => !view.get(KEY) && replicaSets(view).length === 0 && pods(view).length === 0);
    } finally {
      watch.unsubscribe();
    }
    expect(order).toBe('dependents first');
  });

  it('Orphan keeps the ReplicaSet and its pods, and the ReplicaSet still manages them', async () => {
    const rs = replicaSets(scenario.projection.view())[0] as ReplicaSet;
    await scenario.apply(deleteDeployment(scenario.projection.view(), 'Orphan'));
    await scenario.waitUntil('the Deployment is gone and the ReplicaSet orphaned', (view) => {
      const current = view.get(`ReplicaSet/default/${rs.metadata.name}`);
      return !view.get(KEY) && current !== undefined && current.metadata.ownerReferences === undefined;
    });
    const view = scenario.projection.view();
    expect(pods(view).filter(isPodActive)).toHaveLength(3);
    for (const pod of pods(view)) expect(pod.metadata.ownerReferences?.map((ref) => ref.uid)).toEqual([rs.metadata.uid]);
    const victim = pods(view)[0] as Pod;
    await scenario.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: victim.metadata.name, expectedResourceVersion: null, uid: victim.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: 0 });
    await scenario.waitUntil('the orphaned ReplicaSet replaced the pod', (v) => readyPods(v) === 3 && !pods(v).some((pod) => pod.metadata.uid === victim.metadata.uid));
  });
});
