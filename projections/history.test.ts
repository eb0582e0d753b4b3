import { describe, expect, it } from 'vitest';
import type { Actor, EventEnvelope, KubeObject, Pod } from '../schemas/index.ts';
import { audit, diffObjects, diffPositions, objectHistory } from './history.ts';
import { createProjection, type Projection } from './projection.ts';
import { makeEvent, toBatches } from './testing.ts';
import { tempProjections } from './temp-projections.ts';

const temp = tempProjections('logplane-history-');

const alice: Actor = { type: 'user', name: 'alice' };
const bob: Actor = { type: 'user', name: 'bob' };
const pod = (image: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default' },
  spec: { containers: [{ name: 'main', image }] },
});

describe('history queries', () => {
  it('diffs JSON values field by field', () => {
    expect(diffObjects({ a: 1, b: { c: [1, 2] } }, { a: 2, b: { c: [1] }, d: 'x' })).toEqual([
      { type: 'changed', path: 'a', from: 1, to: 2 },
      { type: 'removed', path: 'b.c[1]', value: 2 },
      { type: 'added', path: 'd', value: 'x' },
    ]);
  });

  it('lists every version with actor and diff, including rejected writes and the deletion; audits by user; diffs two moments', () => {
    const dir = temp.dir();
    const projection = createProjection({ dir });
    temp.track(projection);
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
    const events: EventEnvelope[] = [
      makeEvent('Namespace//default', { type: 'ObjectCreated', object: ns }, alice),
      makeEvent('Pod/default/web', { type: 'ObjectCreated', object: pod('echo:1') }, alice),
      makeEvent('Pod/default/web', { type: 'ObjectCreated', object: pod('echo:2') }, bob),
      makeEvent('Pod/default/web', { type: 'ObjectUpdated', object: pod('echo:2'), expectedResourceVersion: null, subresource: null }, bob),
    ];
    for (const b of toBatches('desired', events)) projection.applyBatch(b);
    const middle = projection.cursor();
    const deletion = makeEvent('Pod/default/web', {
      type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: 'web',
      expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
    }, alice);
    for (const b of toBatches('desired', [deletion], 1, [4])) projection.applyBatch(b);

    const history = objectHistory(projection.store, 1, 'Pod/default/web');
    expect(history.map((v) => [v.eventType, v.actor.name, v.verdict.type, v.change])).toEqual([
      ['ObjectCreated', 'alice', 'accepted', 'ADDED'],
      ['ObjectCreated', 'bob', 'rejected', null],
      ['ObjectUpdated', 'bob', 'accepted', 'MODIFIED'],
      ['ObjectDeleted', 'alice', 'accepted', 'DELETED'],
    ]);
    expect(history[2]?.diff).toContainEqual({ type: 'changed', path: 'spec.containers[0].image', from: 'echo:1', to: 'echo:2' });
    expect(history[3]?.object).toBeNull();

    expect(audit(projection.store, 1, { user: 'bob' }).map((e) => e.eventType)).toEqual(['ObjectUpdated', 'ObjectCreated']);
    expect(audit(projection.store, 1, { kind: 'Namespace' })).toHaveLength(1);

    const start = { desired: [1], observed: [0] };
    const grown = diffPositions(projection.store, start, middle);
    expect(grown.created.map((o) => o.metadata.name)).toEqual(['web']);
    const gone = diffPositions(projection.store, middle, projection.cursor());
    expect(gone.deleted.map((o) => o.metadata.name)).toEqual(['web']);
  });
});
