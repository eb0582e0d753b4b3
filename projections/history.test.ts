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

describe('history queries: edges', () => {
  it('diffs a value that changes shape, a scalar at the root, arrays by index, and nothing for equal values', () => {
    expect(diffObjects({ a: [1] }, { a: { 0: 1 } })).toEqual([{ type: 'changed', path: 'a', from: [1], to: { 0: 1 } }]);
    expect(diffObjects('x', 'y')).toEqual([{ type: 'changed', path: '.', from: 'x', to: 'y' }]);
    expect(diffObjects([1, { b: 2 }], [1, { b: 2 }, 3])).toEqual([{ type: 'added', path: '[2]', value: 3 }]);
    expect(diffObjects({ a: null }, { a: { b: 1 } })).toEqual([{ type: 'changed', path: 'a', from: null, to: { b: 1 } }]);
    expect(diffObjects({ a: { b: [1, 2] } }, { a: { b: [1, 2] } })).toEqual([]);
  });

  const T0 = Date.parse('2024-05-02T08:00:00Z');
  const at = (event: EventEnvelope, time: number): EventEnvelope => ({ ...event, time });
  const controller: Actor = { type: 'controller', name: 'replicaset-controller' };
  const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
  const configMap = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });
  const deleteConfigMap = (name: string) =>
    ({ type: 'ObjectDeleted', kind: 'ConfigMap', namespace: 'default', name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null }) as const;

  const setup = () => {
    const projection = createProjection({ dir: temp.dir() });
    temp.track(projection);
    const desired = [
      at(makeEvent('Namespace//default', { type: 'ObjectCreated', object: ns }, alice), T0),
      at(makeEvent('ConfigMap/default/a', { type: 'ObjectCreated', object: configMap('a', { k: '1' }) }, alice), T0 + 1000),
      at(makeEvent('ConfigMap/default/b', { type: 'ObjectCreated', object: configMap('b', { k: '1' }) }, controller), T0 + 2000),
      at(makeEvent('ConfigMap/default/a', { type: 'ObjectUpdated', object: configMap('a', { k: '2' }), expectedResourceVersion: null, subresource: null }, bob), T0 + 3000),
      at(makeEvent('ConfigMap/default/t', { type: 'ObjectCreated', object: configMap('t', {}) }, bob), T0 + 4000),
      at(makeEvent('ConfigMap/default/t', deleteConfigMap('t'), bob), T0 + 5000),
    ];
    const batches = toBatches('desired', desired);
    projection.applyBatch(batches[0]!);
    return projection;
  };

  it('audits within a time window, newest first, up to a limit, users only unless all actors are asked for', () => {
    const projection = setup();
    const keys = (query: Parameters<typeof audit>[2]) => audit(projection.store, 1, query).map((e) => `${e.eventType} ${e.key}`);
    expect(keys({ since: T0 + 1000, until: T0 + 3000 })).toEqual(['ObjectUpdated ConfigMap/default/a', 'ObjectCreated ConfigMap/default/a']);
    expect(keys({ since: T0 + 1000, until: T0 + 3000, allActors: true })).toEqual([
      'ObjectUpdated ConfigMap/default/a',
      'ObjectCreated ConfigMap/default/b',
      'ObjectCreated ConfigMap/default/a',
    ]);
    expect(keys({ limit: 2 })).toEqual(['ObjectDeleted ConfigMap/default/t', 'ObjectCreated ConfigMap/default/t']);
    expect(keys({ user: 'replicaset-controller' })).toEqual([]);
    expect(keys({ user: 'replicaset-controller', allActors: true })).toEqual(['ObjectCreated ConfigMap/default/b']);
  });

  it('audits by kind: a kind of a named group by its kind or by the ref its keys use', () => {
    const projection = setup();
    const lease: KubeObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'default' }, spec: { holderIdentity: 'x' } };
    const [batch] = toBatches('desired', [at(makeEvent('Lease.coordination.k8s.io/default/l', { type: 'ObjectCreated', object: lease }, alice), T0 + 6000)], 1, [...projection.cursor().desired]);
    projection.applyBatch(batch!);
    const keys = (query: Parameters<typeof audit>[2]) => audit(projection.store, 1, query).map((e) => e.key);
    expect(keys({ kind: 'Lease' })).toEqual(['Lease.coordination.k8s.io/default/l']);
    expect(keys({ kind: 'Lease.coordination.k8s.io' })).toEqual(['Lease.coordination.k8s.io/default/l']);
    expect(keys({ kind: 'Namespace' })).toEqual(['Namespace//default']);
    expect(keys({ kind: 'CronTab.stable.example.com' })).toEqual([]);
  });

  it('diffs two moments: what changed with its field diff; an object created and deleted in between is neither', () => {
    const projection = setup();
    const afterCreates = { desired: [3], observed: [0] };
    const diff = diffPositions(projection.store, afterCreates, projection.cursor());
    expect(diff.created).toEqual([]);
    expect(diff.deleted).toEqual([]);
    expect(diff.changed.map((c) => [c.after.metadata.name, c.diff])).toEqual([['a', [{ type: 'changed', path: 'data.k', from: '1', to: '2' }]]]);
    expect(diffPositions(projection.store, projection.cursor(), projection.cursor())).toEqual({ created: [], deleted: [], changed: [] });
  });

  it('interleaves the two topics by time: a status report made before an update is listed before it', () => {
    const projection = createProjection({ dir: temp.dir() });
    temp.track(projection);
    const status = { type: 'PodStatusChanged', namespace: 'default', name: 'web', uid: null, status: { phase: 'Pending' } } as const;
    const desired = [
      at(makeEvent('Namespace//default', { type: 'ObjectCreated', object: ns }), T0),
      at(makeEvent('Pod/default/web', { type: 'ObjectCreated', object: pod('echo:1') }), T0 + 1000),
      at(makeEvent('Pod/default/web', { type: 'ObjectUpdated', object: pod('echo:2'), expectedResourceVersion: null, subresource: null }), T0 + 3000),
    ];
    const observed = [at(makeEvent('Pod/default/web', status), T0 + 2000)];
    for (const b of [...toBatches('desired', desired), ...toBatches('observed', observed)]) projection.applyBatch(b);
    const versions = objectHistory(projection.store, 1, 'Pod/default/web');
    expect(versions.map((v) => v.eventType)).toEqual(['ObjectCreated', 'PodStatusChanged', 'ObjectUpdated']);
    expect((versions[1]?.object as Pod | null)?.status?.phase).toBe('Pending');
  });
});
