/**
 * A StatefulSet end to end on both logs (and 1 and 3 partitions): the statefulset
 * controller on the real runtime, with the test nodes standing in for the scheduler and
 * the node agents.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Pod, StatefulSet } from '../../schemas/index.ts';
import { isPodReady } from '../replicaset/pods.ts';
import { LOG_ADAPTERS, podTemplate, startScenario, type Scenario } from '../testing.ts';
import { createStatefulSetController } from './index.ts';

const KEY = 'StatefulSet/default/db';
const live = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => !pod.metadata.deletionTimestamp);
const setOf = (view: View): StatefulSet | undefined => view.get(KEY) as StatefulSet | undefined;
const settled = (view: View, replicas: number, image: string): boolean => {
  const pods = live(view);
  const status = setOf(view)?.status;
  return (
    pods.length === replicas &&
    pods.every((pod) => isPodReady(pod) && pod.spec.containers[0]?.image === image) &&
    status?.readyReplicas === replicas &&
    status.updatedReplicas === replicas &&
    status.currentRevision === status.updateRevision
  );
};

const statefulSet: StatefulSet = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'default' },
  spec: {
    replicas: 3,
    serviceName: 'db',
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    revisionHistoryLimit: 10,
    selector: { matchLabels: { app: 'db' } },
    template: podTemplate('logplane/echo:1', { app: 'db' }),
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  },
};

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('a StatefulSet on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  beforeEach(async () => {
    scenario = await startScenario({ adapter, partitions, readyDelayMs: 20, controllers: [createStatefulSetController()] });
  });
  afterEach(async () => {
    await scenario.close();
  });

  it('creates db-0..2 in order with their claims, rolls an image change, and scales down from the top', async () => {
    const ordinals = new Set<string>();
    let outOfOrder = false;
    let creating = true;
    const subscription = scenario.projection.cursor$.subscribe(() => {
      if (!creating) return;
      const names = live(scenario.projection.view()).map((pod) => pod.metadata.name).sort();
      // OrderedReady: while the set is created, the pods present are always a prefix db-0..db-k.
      if (names.some((name, i) => name !== `db-${i}`)) outOfOrder = true;
      for (const name of names) ordinals.add(name);
    });
    try {
      await scenario.apply({ type: 'ObjectCreated', object: statefulSet });
      await scenario.waitUntil('3 pods are ready', (view) => settled(view, 3, 'logplane/echo:1'));
      creating = false;
      expect(scenario.projection.view().list('PersistentVolumeClaim', 'default').map((c) => c.metadata.name).sort()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
      const set = setOf(scenario.projection.view()) as StatefulSet;
      await scenario.apply({ type: 'ObjectUpdated', object: { ...set, spec: { ...set.spec!, template: podTemplate('logplane/echo:2', { app: 'db' }) } }, expectedResourceVersion: null, subresource: null });
      await scenario.waitUntil('the new image rolled out', (view) => settled(view, 3, 'logplane/echo:2'));
      const rolled = setOf(scenario.projection.view()) as StatefulSet;
      await scenario.apply({ type: 'ObjectUpdated', object: { ...rolled, spec: { ...rolled.spec!, replicas: 1 } }, expectedResourceVersion: null, subresource: null });
      await scenario.waitUntil('1 pod is left', (view) => settled(view, 1, 'logplane/echo:2'));
    } finally {
      subscription.unsubscribe();
    }
    expect(outOfOrder).toBe(false);
    expect([...ordinals].sort()).toEqual(['db-0', 'db-1', 'db-2']);
    expect(live(scenario.projection.view()).map((pod) => pod.metadata.name)).toEqual(['db-0']);
  });
});
