/**
 * A ReplicaSet end to end on both logs (and 1 and 3 partitions): the replicaset
 * controller on the real runtime, with the test nodes standing in for the scheduler and
 * the node agents.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Pod, ReplicaSet } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replicaSetObject, startScenario, type Scenario } from '../testing.ts';
import { createReplicaSetController } from './index.ts';
import { isPodActive, isPodReady } from './pods.ts';

const KEY = 'ReplicaSet/default/web';
const pods = (view: View): Pod[] => view.list('Pod', 'default') as Pod[];
const readyPods = (view: View): Pod[] => pods(view).filter((pod) => isPodActive(pod) && isPodReady(pod));
const settled = (view: View, replicas: number): boolean => {
  const rs = view.get(KEY) as ReplicaSet | undefined;
  return pods(view).length === replicas && readyPods(view).length === replicas && rs?.status?.readyReplicas === replicas && rs.status.replicas === replicas;
};

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('a ReplicaSet on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  beforeEach(async () => {
    scenario = await startScenario({ adapter, partitions, controllers: [createReplicaSetController()] });
  });
  afterEach(async () => {
    await scenario.close();
  });

  it('keeps its replicas: replaces a failed pod, scales up and down', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: replicaSetObject({ name: 'web', replicas: 3 }) });
    await scenario.waitUntil('3 pods are ready', (view) => settled(view, 3));
    const failed = pods(scenario.projection.view())[0] as Pod;
    await scenario.apply({ type: 'PodStatusChanged', namespace: 'default', name: failed.metadata.name, uid: failed.metadata.uid ?? null, status: { phase: 'Failed', reason: 'Error' } });
    await scenario.waitUntil('the failed pod is replaced', (view) => settled(view, 3) && !pods(view).some((pod) => pod.metadata.uid === failed.metadata.uid));

    const rs = scenario.projection.view().get(KEY) as ReplicaSet;
    await scenario.apply({ type: 'ObjectUpdated', object: { ...rs, spec: { ...rs.spec, replicas: 6 } }, expectedResourceVersion: null, subresource: null });
    await scenario.waitUntil('6 pods are ready', (view) => settled(view, 6));
    const scaled = scenario.projection.view().get(KEY) as ReplicaSet;
    await scenario.apply({ type: 'ObjectUpdated', object: { ...scaled, spec: { ...scaled.spec, replicas: 1 } }, expectedResourceVersion: null, subresource: null });
    await scenario.waitUntil('1 pod is left', (view) => settled(view, 1));
    const names = pods(scenario.projection.view()).map((pod) => pod.metadata.name);
    expect(names.every((name) => /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(name))).toBe(true);
  });
});
