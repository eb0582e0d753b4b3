/**
 * A ReplicationController end to end on both logs (and 1 and 3 partitions): the
 * replicationcontroller controller on the real runtime, with the test nodes standing in
 * for the scheduler and the node agents.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Pod, ReplicationController } from '../../schemas/index.ts';
import { isPodActive, isPodReady } from '../replicaset/pods.ts';
import { LOG_ADAPTERS, podTemplate, startScenario, type Scenario } from '../testing.ts';
import { createReplicationController } from './index.ts';

const KEY = 'ReplicationController/default/mysql';
const pods = (view: View): Pod[] => view.list('Pod', 'default') as Pod[];
const settled = (view: View, replicas: number): boolean => {
  const rc = view.get(KEY) as ReplicationController | undefined;
  const ready = pods(view).filter((pod) => isPodActive(pod) && isPodReady(pod));
  return pods(view).length === replicas && ready.length === replicas && rc?.status?.readyReplicas === replicas && rc.status.replicas === replicas;
};

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('a ReplicationController on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  beforeEach(async () => {
    scenario = await startScenario({ adapter, partitions, controllers: [createReplicationController()] });
  });
  afterEach(async () => {
    await scenario.close();
  });

  it('keeps its replicas: scales from 1 to 2 and replaces a failed pod', async () => {
    const labels = { app: 'mysql' };
    await scenario.apply({
      type: 'ObjectCreated',
      object: { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'mysql', namespace: 'default' }, spec: { replicas: 1, selector: labels, template: podTemplate('logplane/sleeper:1', labels) } },
    });
    await scenario.waitUntil('1 pod is ready', (view) => settled(view, 1));
    const rc = scenario.projection.view().get(KEY) as ReplicationController;
    await scenario.apply({ type: 'ObjectUpdated', object: { ...rc, spec: { ...rc.spec, replicas: 2 } }, expectedResourceVersion: null, subresource: 'scale' });
    await scenario.waitUntil('2 pods are ready', (view) => settled(view, 2));
    const failed = pods(scenario.projection.view())[0] as Pod;
    await scenario.apply({ type: 'PodStatusChanged', namespace: 'default', name: failed.metadata.name, uid: failed.metadata.uid ?? null, status: { phase: 'Failed', reason: 'Error' } });
    await scenario.waitUntil('the failed pod is replaced', (view) => settled(view, 2) && !pods(view).some((pod) => pod.metadata.uid === failed.metadata.uid));
    expect((scenario.projection.view().get(KEY) as ReplicationController).status?.observedGeneration).toBe(2);
  });
});
