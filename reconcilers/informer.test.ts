import { describe, expect, it } from 'vitest';
import { createProjection, type Projection, type View } from '../projections/index.ts';
import { makeEvent, toBatches } from '../projections/testing.ts';
import type { EventBody, EventEnvelope, KubeObject, Pod, ReplicaSet } from '../schemas/index.ts';
import { KINDS } from '../schemas/index.ts';
import { createInformer } from './informer.ts';
import { seededRandom as random } from './testing.ts';
import { tempProjections } from '../projections/temp-projections.ts';

const temp = tempProjections('logplane-informer-');


/** Everything a controller can ask a view, as plain data. */
const answers = (view: View, uids: readonly string[], nodes: readonly string[]): unknown => ({
  position: view.position,
  lists: KINDS.map((kind) => view.list(kind)),
  byNamespace: ['default', 'other', 'nope', ''].map((ns) => view.list('Pod', ns).concat(view.list('ReplicaSet', ns))),
  unscheduled: view.unscheduledPods(),
  onNodes: nodes.map((node) => view.podsOnNode(node)),
  owned: uids.map((uid) => view.ownedBy(uid)),
  byUid: uids.map((uid) => view.byUid(uid) ?? null),
  gets: ['Pod/default/p1', 'Pod/other/p2', 'ReplicaSet/default/rs0', 'Node//a', 'Namespace//default', 'Pod/default/none'].map((key) => view.get(key) ?? null),
});

describe('the shared informer', () => {
  it.each([1, 2, 3])('answers exactly as the live view after every batch of random changes (seed %i)', (seed) => {
    const next = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const dir = temp.dir();
    const projection = createProjection({ dir, partitions: 3 });
    temp.track(projection);
    const offsets = { desired: [0, 0, 0], observed: [0, 0, 0] };
    const apply = (topic: 'desired' | 'observed', events: EventEnvelope[]): void => {
      for (const batch of toBatches(topic, events, 3, offsets[topic])) projection.applyBatch(batch);
    };
    const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) as KubeObject;
    apply('desired', [
      makeEvent('Namespace//default', { type: 'ObjectCreated', object: namespace('default') }),
      makeEvent('Namespace//other', { type: 'ObjectCreated', object: namespace('other') }),
      makeEvent('Node//a', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'a' }, spec: {} } as KubeObject }),
    ]);
    // Started after some state exists (it loads it), then follows the feed.
    const informer = createInformer(projection);
    const nodes = ['a', 'b', 'c'];
    const namespaces = ['default', 'other'];
    let checked = 0;
    for (let step = 0; step < 40; step++) {
      const view = projection.view();
      const replicaSets = (view.list('ReplicaSet') as ReplicaSet[]).filter((rs) => rs.metadata.uid);
      const desired: EventEnvelope[] = [];
      const observed: EventEnvelope[] = [];
      for (let i = 0; i < 10; i++) {
        const roll = next();
        const ns = pick(namespaces);
        const podName = `p${Math.floor(next() * 12)}`;
        const key = `Pod/${ns}/${podName}`;
        const existing = view.get(key) as Pod | undefined;
        if (roll < 0.1) {
          const name = `rs${Math.floor(next() * 3)}`;
          desired.push(makeEvent(`ReplicaSet/${ns}/${name}`, { type: 'ObjectCreated', object: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name, namespace: ns }, spec: { selector: { matchLabels: { app: name } } } } as KubeObject }));
        } else if (roll < 0.45 && !existing) {
          const owner = replicaSets.length > 0 && next() < 0.7 ? pick(replicaSets) : undefined;
          const object: Pod = {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: {
              name: podName,
              namespace: ns,
              labels: { app: 'x' },
              ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner.metadata.name, uid: owner.metadata.uid ?? '', controller: true }] } : {}),
            },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          };
          desired.push(makeEvent(key, { type: 'ObjectCreated', object }));
        } else if (roll < 0.65) {
          desired.push(makeEvent(key, { type: 'PodBound', namespace: ns, name: podName, node: pick(nodes), expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 0, totalNodes: 0 } }));
        } else if (roll < 0.75 && existing) {
          observed.push(makeEvent(key, { type: 'PodStatusChanged', namespace: ns, name: podName, uid: existing.metadata.uid ?? null, status: { phase: pick(['Running', 'Failed']) } }));
        } else if (roll < 0.85 && existing) {
          const body: EventBody = { type: 'ObjectUpdated', object: { ...existing, metadata: { ...existing.metadata, ownerReferences: [] } }, expectedResourceVersion: null, subresource: null };
          desired.push(makeEvent(key, body));
        } else {
          const kind = next() < 0.85 ? 'Pod' : 'ReplicaSet';
          const name = kind === 'Pod' ? podName : `rs${Math.floor(next() * 3)}`;
          desired.push(makeEvent(`${kind}/${ns}/${name}`, { type: 'ObjectDeleted', kind, namespace: ns, name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: 0 }));
        }
      }
      apply('desired', desired);
      apply('observed', observed);
      const after = projection.view();
      const uids = [...(after.list('ReplicaSet') as ReplicaSet[]), ...(after.list('Pod') as Pod[])].map((o) => o.metadata.uid ?? '').concat(['missing']);
      expect(answers(informer.view, uids, [...nodes, 'z'])).toEqual(answers(after, uids, [...nodes, 'z']));
      checked += after.list('Pod').length;
    }
    expect(checked).toBeGreaterThan(100);
    informer.close();
  });
});
