import { describe, expect, it } from 'vitest';
import type { Actor, EventEnvelope, KubeObject, Pod } from '../schemas/index.ts';
import { audit, diffObjects, diffPositions, eventPosition, objectHistory } from './history.ts';
import { formatVector, parseVector } from './positions.ts';
import { createProjection, type Projection } from './projection.ts';
import { makeEvent, toBatches } from './testing.ts';
import { objectAt } from './view.ts';
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

  it('prints the position of an event as the list resourceVersion just after it: the object it made exists there, and not before', () => {
    const projection = createProjection({ dir: temp.dir() });
    temp.track(projection);
    const T0 = Date.parse('2024-05-01T12:00:00Z');
    const at = (event: EventEnvelope, time: number): EventEnvelope => ({ ...event, time });
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
    const status = { type: 'PodStatusChanged', namespace: 'default', name: 'web', uid: null, status: { phase: 'Running' } } as const;
    const desired = [
      at(makeEvent('Namespace//default', { type: 'ObjectCreated', object: ns }), T0),
      at(makeEvent('Pod/default/web', { type: 'ObjectCreated', object: pod('echo:1') }), T0 + 1000),
      at(makeEvent('Pod/default/web', { type: 'ObjectUpdated', object: pod('echo:2'), expectedResourceVersion: null, subresource: null }), T0 + 2000),
    ];
    // The status report is stamped in the same millisecond as the update: history lists it after the update.
    const observed = [at(makeEvent('Pod/default/web', status), T0 + 2000)];
    for (const b of [...toBatches('desired', desired), ...toBatches('observed', observed)]) projection.applyBatch(b);

    const versions = objectHistory(projection.store, 1, 'Pod/default/web');
    expect(versions.map((v) => [v.eventType, v.position])).toEqual([
      ['ObjectCreated', '2.0'],
      ['ObjectUpdated', '3.0'],
      ['PodStatusChanged', '3.1'],
    ]);
    for (const version of versions) {
      const there = objectAt(projection.store, 'Pod/default/web', parseVector(version.position, 1)) as Pod | undefined;
      const shown = version.object as Pod | null;
      expect(there?.spec, `the pod at ${version.position} is the version history shows`).toEqual(shown?.spec);
      expect(there?.status ?? null).toEqual(shown?.status ?? null);
    }
    // One offset earlier on its own partition, the created object does not exist yet.
    expect(objectAt(projection.store, 'Pod/default/web', parseVector('1.0', 1))).toBeUndefined();
    expect(formatVector(eventPosition(projection.store, 1, { topic: 'desired', partition: 0, offset: 0, time: T0 }))).toBe('1.0');
    expect(audit(projection.store, 1, { allActors: true }).map((e) => e.position)).toEqual(['3.1', '3.0', '2.0', '1.0']);
    expect(audit(projection.store, 1, { after: parseVector('2.0', 1), upTo: parseVector('3.0', 1) }).map((e) => e.eventType)).toEqual(['ObjectUpdated']);
  });
});

describe('history diffs as clients see JSON', () => {
  it('a property whose value is undefined is absent (no "added status" for an update that left status undefined)', () => {
    expect(diffObjects({ data: { k: '1' } }, { data: { k: '1' }, status: undefined })).toEqual([]);
    expect(diffObjects({ data: { k: '1' }, status: undefined }, { data: { k: '2' } })).toEqual([{ type: 'changed', path: 'data.k', from: '1', to: '2' }]);
    expect(diffObjects({ a: undefined }, { a: 1 })).toEqual([{ type: 'added', path: 'a', value: 1 }]);
    expect(diffObjects({ a: 1 }, { a: undefined })).toEqual([{ type: 'removed', path: 'a', value: 1 }]);
  });
});
