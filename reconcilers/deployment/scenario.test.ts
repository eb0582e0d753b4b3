/**
 * Deployments end to end on both logs (and 1 and 3 partitions): the real runtime runs the
 * deployment, replicaset and garbage-collector controllers over a projection following
 * the log, with the test nodes standing in for the scheduler and the node agents.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Deployment, Pod, ReplicaSet } from '../../schemas/index.ts';
import { createGarbageCollector } from '../garbage-collector/index.ts';
import { createReplicaSetController } from '../replicaset/index.ts';
import { isPodActive, isPodReady } from '../replicaset/pods.ts';
import { deploymentObject, LOG_ADAPTERS, startScenario, type Scenario } from '../testing.ts';
import { createDeploymentController, REVISION_ANNOTATION, rollbackTemplate, rollingBounds } from './index.ts';

const KEY = 'Deployment/default/web';
const NODES = ['n1', 'n2', 'n3'];

const webPods = (view: View): Pod[] =>
  (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === 'web' && isPodActive(pod));
const readyWebPods = (view: View): number => webPods(view).filter(isPodReady).length;
const deployment = (view: View): Deployment | undefined => view.get(KEY) as Deployment | undefined;
const replicaSets = (view: View): ReplicaSet[] => view.list('ReplicaSet', 'default') as ReplicaSet[];
const imageOf = (pod: Pod): string => pod.spec.containers[0]?.image ?? '';

/** Every pod of web runs `image`, is bound and ready, there are `replicas` of them, and the status says so. */
const rolledOut = (view: View, image: string, replicas: number): boolean => {
  const pods = webPods(view);
  const d = deployment(view);
  return (
    pods.length === replicas &&
    pods.every((pod) => imageOf(pod) === image && isPodReady(pod) && NODES.includes(pod.spec.nodeName ?? '')) &&
    d !== undefined &&
    (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
    d.status?.updatedReplicas === replicas &&
    d.status?.availableReplicas === replicas &&
    d.status?.replicas === replicas
  );
};

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('deployments on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  beforeEach(async () => {
    scenario = await startScenario({
      adapter,
      partitions,
      nodes: NODES,
      readyDelayMs: 30,
      controllers: [createDeploymentController(), createReplicaSetController(), createGarbageCollector({ absentOwnerGraceMs: 1_000 })],
    });
  });
  afterEach(async () => {
    await scenario.close();
  });

  /** Replaces the Deployment's spec, as `kubectl apply` would. */
  const updateSpec = async (change: (spec: Deployment['spec']) => Deployment['spec']): Promise<void> => {
    const d = deployment(scenario.projection.view());
    if (!d) throw new Error('deployment web is missing');
    await scenario.apply({ type: 'ObjectUpdated', object: { ...d, spec: change(structuredClone(d.spec)) }, expectedResourceVersion: null, subresource: null });
  };
  const setImage = (image: string) =>
    updateSpec((spec) => ({ ...spec, template: { ...spec.template, spec: { ...spec.template.spec, containers: spec.template.spec.containers.map((c) => ({ ...c, image })) } } }));

  it('runs 5 replicas on the nodes, scales to 10, then to 2', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: deploymentObject({ name: 'web', replicas: 5, image: 'app:A' }) });
    await scenario.waitUntil('5 pods run app:A', (view) => rolledOut(view, 'app:A', 5));
    const d = deployment(scenario.projection.view());
    expect(d?.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Available', 'True', 'MinimumReplicasAvailable'],
      ['Progressing', 'True', 'NewReplicaSetAvailable'],
    ]);
    await updateSpec((spec) => ({ ...spec, replicas: 10 }));
    await scenario.waitUntil('10 pods run', (view) => rolledOut(view, 'app:A', 10));
    await updateSpec((spec) => ({ ...spec, replicas: 2 }));
    await scenario.waitUntil('2 pods run', (view) => rolledOut(view, 'app:A', 2) && view.list('Pod').length === 2);
    expect(replicaSets(scenario.projection.view())).toHaveLength(1);
  });

  it('rolls A out to B without ever having fewer than replicas − maxUnavailable ready pods', async () => {
    const replicas = 5;
    await scenario.apply({ type: 'ObjectCreated', object: deploymentObject({ name: 'web', replicas, image: 'app:A' }) });
    await scenario.waitUntil('5 pods run app:A', (view) => rolledOut(view, 'app:A', replicas));
    const { maxUnavailable } = rollingBounds(deployment(scenario.projection.view()) as Deployment);
    let lowest = readyWebPods(scenario.projection.view());
    const watch = scenario.projection.changes$.subscribe(() => {
      lowest = Math.min(lowest, readyWebPods(scenario.projection.view()));
    });
    try {
      await setImage('app:B');
      await scenario.waitUntil('every pod runs app:B', (view) => rolledOut(view, 'app:B', replicas));
    } finally {
      watch.unsubscribe();
    }
    expect(lowest).toBeGreaterThanOrEqual(replicas - maxUnavailable);
    const view = scenario.projection.view();
    expect(deployment(view)?.metadata.annotations?.[REVISION_ANNOTATION]).toBe('2');
    expect(replicaSets(view).map((rs) => [rs.metadata.annotations?.[REVISION_ANNOTATION], rs.spec.replicas]).sort()).toEqual([['1', 0], ['2', replicas]]);
  });

  it('rolls back to the previous template and reuses its ReplicaSet', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: deploymentObject({ name: 'web', replicas: 3, image: 'app:A' }) });
    await scenario.waitUntil('3 pods run app:A', (view) => rolledOut(view, 'app:A', 3));
    await setImage('app:B');
    await scenario.waitUntil('3 pods run app:B', (view) => rolledOut(view, 'app:B', 3));
    const before = replicaSets(scenario.projection.view());
    const undo = rollbackTemplate(deployment(scenario.projection.view()) as Deployment, before);
    if (undo.type !== 'rollback') throw new Error(`expected a rollback, got ${JSON.stringify(undo)}`);
    expect(undo.revision).toBe(1);
    await updateSpec((spec) => ({ ...spec, template: undo.template }));
    await scenario.waitUntil('3 pods run app:A again', (view) => rolledOut(view, 'app:A', 3));
    const after = replicaSets(scenario.projection.view());
    expect(after.map((rs) => rs.metadata.uid).sort()).toEqual(before.map((rs) => rs.metadata.uid).sort());
    const reused = after.find((rs) => rs.spec.template?.spec.containers[0]?.image === 'app:A');
    expect(reused?.metadata.annotations?.[REVISION_ANNOTATION]).toBe('3');
    expect(deployment(scenario.projection.view())?.metadata.annotations?.[REVISION_ANNOTATION]).toBe('3');
  });
});
