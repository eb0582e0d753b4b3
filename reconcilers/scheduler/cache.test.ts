import { describe, expect, it } from 'vitest';
import { createProjection, type Projection } from '../../projections/projection.ts';
import { makeEvent, toBatches } from '../../projections/testing.ts';
import type { EventBody, EventEnvelope, KubeObject, Node, Pod } from '../../schemas/index.ts';
import { createNodeInfoCache } from './cache.ts';
import { createSchedulerController, decidePods, defaultSchedulerProfiles, nodeInfosOf } from './controller.ts';
import { seededRandom as random } from '../testing.ts';
import { tempProjections } from '../../projections/temp-projections.ts';

const defaultProfiles = defaultSchedulerProfiles();

const temp = tempProjections('logplane-sched-cache-');


const node = (name: string, cpu: string, ready: boolean): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, zone: `z${name.length % 2}` } },
  spec: {},
  status: {
    capacity: { cpu, memory: '8Gi', pods: '4' },
    allocatable: { cpu, memory: '8Gi', pods: '4' },
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  },
});

const pod = (name: string, cpu: string | undefined, app: string, antiAffinity: boolean, nodeName?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app } },
  spec: {
    ...(nodeName ? { nodeName } : {}),
    containers: [{ name: 'main', image: 'logplane/echo', ...(cpu ? { resources: { requests: { cpu, memory: '256Mi' } } } : {}) }],
    ...(antiAffinity
      ? {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [
                { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app } } },
              ],
            },
          },
        }
      : {}),
  },
});

const emptyRationale = { filtered: [], scores: [], feasibleNodes: 0, totalNodes: 0 };

describe('the scheduler NodeInfo cache', () => {
  it.each([1, 2, 3, 4, 5])('equals a rebuild from the view after every batch of random changes (seed %i)', (seed) => {
    const next = random(seed);
    const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(next() * items.length)];
    const dir = temp.dir();
    const projection = createProjection({ dir, partitions: 2 });
    temp.track(projection);
    const offsets = { desired: [0, 0], observed: [0, 0] };
    const apply = (topic: 'desired' | 'observed', events: EventEnvelope[]): void => {
      for (const batch of toBatches(topic, events, 2, offsets[topic])) projection.applyBatch(batch);
    };
    apply('desired', [makeEvent('Namespace//default', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } as KubeObject })]);

    // Attached like the runtime attaches it, and a bare cache reset at the start: both must track the view.
    const controller = createSchedulerController();
    const detach = controller.attach?.(projection);
    const cache = createNodeInfoCache();
    const subscription = projection.changes$.subscribe((change) => cache.apply(change));
    cache.reset(projection.view());

    const nodeNames = ['a', 'bb', 'c', 'dd', 'e', 'ff'];
    const podNames = Array.from({ length: 30 }, (_, i) => `p${i}`);
    let checkedBound = 0;
    for (let step = 0; step < 60; step++) {
      const view = projection.view();
      const desired: EventEnvelope[] = [];
      const observed: EventEnvelope[] = [];
      for (let i = 0; i < 8; i++) {
        const roll = next();
        const nodeName = pick(nodeNames) as string;
        const podName = pick(podNames) as string;
        const existingNode = view.get(`Node//${nodeName}`) as Node | undefined;
        const existingPod = view.get(`Pod/default/${podName}`) as Pod | undefined;
        let body: EventBody;
        if (roll < 0.15) {
          const object = node(nodeName, pick(['2', '4', '500m']) as string, next() < 0.8);
          body = existingNode ? { type: 'ObjectUpdated', object, expectedResourceVersion: null, subresource: null } : { type: 'ObjectCreated', object };
        } else if (roll < 0.22) {
          body = { type: 'ObjectDeleted', kind: 'Node', namespace: null, name: nodeName, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null };
        } else if (roll < 0.5 && !existingPod) {
          const direct = next() < 0.2 ? nodeName : undefined;
          body = { type: 'ObjectCreated', object: pod(podName, pick([undefined, '100m', '1']), pick(['web', 'db']) as string, next() < 0.2, direct) };
        } else if (roll < 0.7) {
          body = { type: 'PodBound', namespace: 'default', name: podName, node: nodeName, expectedPodVersion: null, rationale: emptyRationale };
        } else if (roll < 0.8 && existingPod) {
          // A relabel (anti-affinity reads labels).
          const object = { ...existingPod, metadata: { ...existingPod.metadata, labels: { app: pick(['web', 'db']) as string } } } as Pod;
          body = { type: 'ObjectUpdated', object, expectedResourceVersion: null, subresource: null };
        } else if (roll < 0.9 && existingPod) {
          observed.push(
            makeEvent(`Pod/default/${podName}`, {
              type: 'PodStatusChanged',
              namespace: 'default',
              name: podName,
              uid: existingPod.metadata.uid ?? null,
              status: { phase: pick(['Running', 'Succeeded', 'Failed']) },
            }),
          );
          continue;
        } else {
          body = { type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: podName, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: 0 };
        }
        const key = body.type === 'ObjectCreated' || body.type === 'ObjectUpdated' ? `${body.object.kind}/${body.object.metadata.namespace ?? ''}/${body.object.metadata.name}` : body.type === 'PodBound' ? `Pod/default/${podName}` : body.kind === 'Node' ? `Node//${nodeName}` : `Pod/default/${podName}`;
        desired.push(makeEvent(key, body));
      }
      apply('desired', desired);
      apply('observed', observed);

      const after = projection.view();
      const rebuilt = nodeInfosOf(after);
      expect(cache.nodeInfos()).toEqual(rebuilt);
      checkedBound += rebuilt.reduce((sum, info) => sum + info.pods.length, 0);
      // The attached controller decides on its cache exactly as on a rebuild from the view.
      const pending = after.unscheduledPods().map((p) => `Pod/default/${p.metadata.name}`);
      const withCache = controller.decideAll?.(pending, after, { now: 0 });
      const fromView = decidePods(pending, after, { now: 0 }, defaultProfiles);
      // The controller adds the Events its decisions record (Scheduled, FailedScheduling) after them.
      const decided = [...(withCache ?? [])].map(([key, decision]) => [key, { commands: decision.commands.filter((c) => c.type !== 'ObjectCreated' || c.object.kind !== 'Event') }]);
      expect(JSON.stringify(decided)).toBe(JSON.stringify([...fromView]));
    }
    // The random walk did bind pods (the comparison was not between empty caches).
    expect(checkedBound).toBeGreaterThan(50);
    subscription.unsubscribe();
    detach?.();
  });

  it('is not used for a view at another position than the projection (a past view is rebuilt)', () => {
    const dir = temp.dir();
    const projection = createProjection({ dir });
    temp.track(projection);
    const offsets = { desired: [0] };
    const apply = (events: EventEnvelope[]): void => {
      for (const batch of toBatches('desired', events, 1, offsets.desired)) projection.applyBatch(batch);
    };
    apply([
      makeEvent('Namespace//default', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } as KubeObject }),
      makeEvent('Node//a', { type: 'ObjectCreated', object: node('a', '2', true) }),
      makeEvent('Pod/default/x', { type: 'ObjectCreated', object: pod('x', '1', 'web', false) }),
    ]);
    const controller = createSchedulerController();
    controller.attach?.(projection);
    const past = projection.cursor();
    // Later, node a fills up: at the past position x still fits there, now it does not.
    apply([makeEvent('Pod/default/y', { type: 'ObjectCreated', object: pod('y', '2', 'web', false, 'a') })]);
    const then = controller.decide('Pod/default/x', projection.viewAt(past), { now: 0 });
    const now = controller.decide('Pod/default/x', projection.view(), { now: 0 });
    expect(then.commands[0]?.type).toBe('PodBound');
    expect(now.commands[0]?.type).toBe('ObjectUpdated');
  });
});
