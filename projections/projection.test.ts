import { describe, expect, it } from 'vitest';
import { newEventId, type EventEnvelope, type KubeObject, type Node, type Pod } from '../schemas/index.ts';
import { createProjection, type Projection } from './projection.ts';
import { formatVector } from './positions.ts';
import { makeEvent, toBatches } from './testing.ts';
import { materializeDecoded, type View } from './view.ts';
import type { AppliedChange } from './projection.ts';
import { tempProjections } from './temp-projections.ts';
import { ProjectionError, ProjectionTimeoutError } from './errors.ts';
import { MAX_PARTITIONS } from './store.ts';

const temp = tempProjections('logplane-projection-');

const open = (partitions = 1): Projection => {
  const dir = temp.dir();
  const projection = createProjection({ dir, partitions });
  temp.track(projection);
  return projection;
};

const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const node = (name: string, cpu = '2', memory = '4Gi'): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: { capacity: { cpu, memory, pods: '110' }, allocatable: { cpu, memory, pods: '110' } },
});
const pod = (name: string, cpu = '500m', labels: Record<string, string> = { app: 'web' }): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'main', image: 'logplane/echo', resources: { requests: { cpu, memory: '64Mi' } } }] },
});
const created = (object: KubeObject): EventEnvelope => {
  const ns = 'namespace' in object.metadata ? object.metadata.namespace : undefined;
  return makeEvent(`${object.kind}/${ns ?? ''}/${object.metadata.name}`, { type: 'ObjectCreated', object });
};
const bound = (name: string, nodeName: string, expectedPodVersion: string | null = null): EventEnvelope =>
  makeEvent(`Pod/default/${name}`, {
    type: 'PodBound',
    namespace: 'default',
    name,
    node: nodeName,
    expectedPodVersion,
    rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 },
  });

const historyOf = (projection: Projection, key: string) =>
  [...projection.store.history.getRange({ start: [key, 0, 0], end: [key, 9, 0] })].map((e) => e.value);

const applyAll = (projection: Projection, topic: 'desired' | 'observed', events: EventEnvelope[], offsets?: number[]) => {
  for (const batch of toBatches(topic, events, projection.partitions, offsets)) projection.applyBatch(batch);
};

describe('projection fold', () => {
  it('creates objects, assigns uid and resourceVersion, and rejects a second create of the same name', () => {
    const projection = open();
    const first = created(namespace('default'));
    const again = created(namespace('default'));
    applyAll(projection, 'desired', [first, again]);
    const ns = projection.view().get('Namespace//default');
    expect(ns?.metadata.uid).toBe(first.id);
    expect(ns?.metadata.resourceVersion).toBe('1.0');
    expect(projection.store.events.get(again.id)?.verdict).toMatchObject({ type: 'rejected', reason: 'AlreadyExists' });
    const history = historyOf(projection, 'Namespace//default');
    expect(history.map((h) => [h.eventType, h.verdict.type])).toEqual([
      ['ObjectCreated', 'accepted'],
      ['ObjectCreated', 'rejected'],
    ]);
    expect(formatVector(projection.cursor())).toBe('2.0');
  });

  it('rejects a pod in a namespace that does not exist', () => {
    const projection = open();
    const event = created(pod('orphan'));
    applyAll(projection, 'desired', [event]);
    expect(projection.store.events.get(event.id)?.verdict).toMatchObject({ type: 'rejected', reason: 'NotFound' });
    expect(projection.view().get('Pod/default/orphan')).toBeUndefined();
  });

  it('judges updates by resourceVersion: the stale one gets Conflict', () => {
    const projection = open();
    applyAll(projection, 'desired', [created(namespace('default')), created(pod('a'))]);
    const current = projection.view().get('Pod/default/a') as Pod;
    const rv = current.metadata.resourceVersion ?? null;
    const relabel = (value: string): EventEnvelope =>
      makeEvent('Pod/default/a', {
        type: 'ObjectUpdated',
        object: { ...current, metadata: { ...current.metadata, labels: { app: value } } },
        expectedResourceVersion: rv,
        subresource: null,
      });
    const winner = relabel('one');
    const loser = relabel('two');
    applyAll(projection, 'desired', [winner, loser], [2]);
    expect(projection.store.events.get(winner.id)?.verdict.type).toBe('accepted');
    expect(projection.store.events.get(loser.id)?.verdict).toMatchObject({ type: 'rejected', reason: 'Conflict' });
    expect(projection.view().get('Pod/default/a')?.metadata.labels).toEqual({ app: 'one' });
  });

  it('binds a pod once, and never over a node capacity', () => {
    const projection = open();
    applyAll(projection, 'desired', [
      created(namespace('default')),
      created(node('n1', '1')),
      created(pod('a', '600m')),
      created(pod('b', '600m')),
      bound('a', 'n1'),
      bound('a', 'n1'),
      bound('b', 'n1'),
    ]);
    const view = projection.view();
    expect((view.get('Pod/default/a') as Pod).spec?.nodeName).toBe('n1');
    expect((view.get('Pod/default/b') as Pod).spec?.nodeName).toBeUndefined();
    expect(view.podsOnNode('n1').map((p) => p.metadata.name)).toEqual(['a']);
    expect(view.unscheduledPods().map((p) => p.metadata.name)).toEqual(['b']);
    const verdicts = [...projection.store.history.getRange({ start: ['Pod/default/'], end: ['Pod/default/\uffff'] })].map((e) => e.value)
      .filter((h) => h.eventType === 'PodBound')
      .map((h) => (h.verdict.type === 'rejected' ? h.verdict.reason : 'accepted'));
    expect(verdicts).toEqual(['accepted', 'Conflict', 'Unschedulable']);
  });

  it('merges status from the observed topic, whatever the order of the two topics', () => {
    const build = (order: 'desired-first' | 'observed-first') => {
      const projection = open();
      return { projection, order };
    };
    const ns = created(namespace('default'));
    const p = created(pod('a'));
    const status = makeEvent('Pod/default/a', {
      type: 'PodStatusChanged',
      namespace: 'default',
      name: 'a',
      uid: p.id,
      status: { phase: 'Running', podIP: '127.100.0.2' },
    });
    const hashes = (['desired-first', 'observed-first'] as const).map((order) => {
      const { projection } = build(order);
      if (order === 'desired-first') {
        applyAll(projection, 'desired', [ns, p]);
        applyAll(projection, 'observed', [status]);
      } else {
        applyAll(projection, 'observed', [status]);
        applyAll(projection, 'desired', [ns, p]);
      }
      const current = projection.view().get('Pod/default/a') as Pod;
      expect(current.status?.phase).toBe('Running');
      expect(current.metadata.resourceVersion).toBe('2.1');
      return projection.stateHash();
    });
    expect(hashes[0]).toBe(hashes[1]);
  });

  it('quarantines a record that cannot be decoded and carries on', () => {
    const projection = open();
    const after = created(namespace('after'));
    applyAll(projection, 'desired', [created(namespace('default')) as EventEnvelope, Buffer.from('not avro') as unknown as EventEnvelope, after]);
    expect([...projection.store.quarantine.getRange()]).toHaveLength(1);
    expect(projection.view().get('Namespace//after')).toBeDefined();
    expect(formatVector(projection.cursor())).toBe('3.0');
  });

  it('applies each offset once: a redelivered batch changes nothing', () => {
    const projection = open();
    const batches = toBatches('desired', [created(namespace('default')), created(pod('a'))]);
    for (const batch of batches) projection.applyBatch(batch);
    const hash = projection.stateHash();
    for (const batch of batches) projection.applyBatch(batch);
    expect(projection.stateHash()).toBe(hash);
  });

  it('answers object-at-position and cluster-at-position from history', () => {
    const projection = open();
    applyAll(projection, 'desired', [created(namespace('default')), created(pod('a')), created(pod('b'))]);
    const before = projection.cursor();
    const deletion = makeEvent('Pod/default/a', {
      type: 'ObjectDeleted',
      kind: 'Pod',
      namespace: 'default',
      name: 'a',
      expectedResourceVersion: null,
      uid: null,
      propagationPolicy: null,
      gracePeriodSeconds: null,
    });
    applyAll(projection, 'desired', [deletion], [3]);
    expect(projection.view().get('Pod/default/a')).toBeUndefined();
    const past = projection.viewAt(before);
    expect(past.get('Pod/default/a')?.metadata.name).toBe('a');
    expect(past.list('Pod').map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect(projection.viewAt({ desired: [1], observed: [0] }).list('Pod')).toEqual([]);
    expect(projection.positionAtTime(deletion.time - 1)).toEqual(before);
  });

  it('hands the change feed deep-frozen objects, equal to a fresh decode (key order too), which the live view then answers without decoding', () => {
    const projection = open();
    const seen: AppliedChange[] = [];
    projection.changes$.subscribe((change) => seen.push(change));
    const isDeepFrozen = (value: unknown): boolean =>
      typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(isDeepFrozen));
    /** Decoded from LMDB (no cache): the version in `objects`, the object in that version's log entry. */
    const fresh = (key: string) => {
      const version = projection.store.objects.get(key);
      const head = projection.store.heads.get(key);
      const object = version !== undefined && head ? projection.store.entryAt(0, head[4], version - 1)?.object : undefined;
      return object ? materializeDecoded({ object, version: version! }, projection.store.status.get(key)) : undefined;
    };
    const p = created(pod('a'));
    const steps: [('desired' | 'observed'), EventEnvelope][] = [
      ['desired', created(namespace('default'))],
      ['desired', created(node('n1'))],
      ['desired', p],
      ['observed', makeEvent('Pod/default/a', { type: 'PodStatusChanged', namespace: 'default', name: 'a', uid: p.id, status: { conditions: [] } })],
      ['desired', bound('a', 'n1')],
      ['observed', makeEvent('Pod/default/a', { type: 'PodStatusChanged', namespace: 'default', name: 'a', uid: p.id, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } })],
      ['observed', makeEvent('Node//n1', { type: 'NodeStatusChanged', name: 'n1', status: { conditions: [{ type: 'Ready', status: 'True' }] } } as never)],
      ['desired', makeEvent('Pod/default/a', { type: 'ObjectUpdated', object: pod('a', '500m', { app: 'db' }), expectedResourceVersion: null, subresource: null })],
      ['desired', makeEvent('Pod/default/a', { type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: 'a', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: 0 })],
    ];
    let view: View = projection.view();
    const offsets = { desired: [0], observed: [0] };
    for (const [topic, event] of steps) {
      const before = fresh(event.key);
      const count = seen.length;
      applyAll(projection, topic, [event], offsets[topic]);
      view = projection.view();
      const change = seen[count];
      expect(change, `${event.body.type} on ${event.key}`).toBeDefined();
      expect(isDeepFrozen(change!.object)).toBe(true);
      const expected = change!.type === 'DELETED' ? before : fresh(event.key);
      expect(JSON.stringify(change!.object)).toBe(JSON.stringify(expected));
      if (change!.type !== 'DELETED') expect(view.get(event.key)).toBe(change!.object);
      else expect(view.get(event.key)).toBeUndefined();
    }
    expect(seen.map((c) => c.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    // A subscriber that writes into a feed object fails loudly instead of changing what others see.
    expect(() => {
      (seen[2]!.object.metadata as { name: string }).name = 'changed';
    }).toThrow(TypeError);
  });
});

describe('events by id', () => {
  it('finds an event whose UUIDv7 id carries its time through the time index, and indexes only other ids', () => {
    const projection = open(2);
    const time = Date.UTC(2026, 0, 7, 12, 0, 0);
    const stamped = (event: EventEnvelope, at: number, id = newEventId(at)): EventEnvelope => ({ ...event, id, correlationId: id, time: at });
    // Many events of one millisecond on both partitions, one of another, a v4 id and a v7 id made for another time.
    const sameTime = Array.from({ length: 40 }, (_, i) => stamped(created(namespace(`ns-${i}`)), time));
    const later = stamped(created(namespace('later')), time + 5);
    const v4 = created(namespace('v4'));
    const mismatched = stamped(created(namespace('mismatched')), time + 9, newEventId(time + 1_000));
    const all = [...sameTime, later, v4, mismatched];
    applyAll(projection, 'desired', all);
    for (const event of all) {
      const record = projection.store.events.get(event.id);
      expect(record?.id, event.id).toBe(event.id);
      expect(record?.key).toBe(event.key);
      expect(record?.verdict.type).toBe('accepted');
    }
    // Only the ids that do not carry their event's time are in the id index.
    expect([...projection.store.eventIds.getKeys()].sort()).toEqual([v4.id, mismatched.id].sort());
    // An id of that time that no event has is not found; nor is one of a time with no events.
    expect(projection.store.events.get(newEventId(time))).toBeUndefined();
    expect(projection.store.events.get(newEventId(time + 3))).toBeUndefined();
  });
});

describe('projection edges', () => {
  it(`refuses more partitions than a projection folds (${MAX_PARTITIONS}), as a terminal error`, () => {
    const attempt = () => createProjection({ dir: temp.dir(), partitions: MAX_PARTITIONS + 1 });
    expect(attempt).toThrow(ProjectionError);
    expect(attempt).toThrow(`a projection folds at most ${MAX_PARTITIONS} partitions, not ${MAX_PARTITIONS + 1}`);
    try {
      attempt();
    } catch (error) {
      expect((error as ProjectionError).retriable).toBe(false);
    }
  });

  it('ignores a batch of a topic it does not fold (heartbeats): cursor and state unchanged', () => {
    const projection = open();
    applyAll(projection, 'desired', [created(namespace('default'))]);
    const [batch] = toBatches('desired', [created(namespace('other'))], 1, [1]);
    const hash = projection.stateHash();
    const cursor = projection.cursor();
    projection.applyBatch({ ...batch!, topic: 'heartbeats', records: batch!.records.map((r) => ({ ...r, topic: 'heartbeats' as const })) });
    expect(projection.cursor()).toEqual(cursor);
    expect(projection.stateHash()).toBe(hash);
    expect(projection.view().get('Namespace//other')).toBeUndefined();
  });

  it('waitForEvent of a quarantined record rejects: applied, but there is no event', async () => {
    const projection = open();
    for (const batch of toBatches('desired', [Buffer.from('not avro')])) projection.applyBatch(batch);
    expect(projection.cursor().desired).toEqual([1]);
    const waited = projection.waitForEvent('desired', 0, 0, newEventId());
    await expect(waited).rejects.toBeInstanceOf(ProjectionTimeoutError);
    await expect(projection.waitForEvent('desired', 0, 0, newEventId())).rejects.toThrow(/was it quarantined\?/);
  });

  it('waitFor resolves at once for a reached position and rejects with a timeout error for one never reached', async () => {
    const projection = open();
    applyAll(projection, 'desired', [created(namespace('default'))]);
    await expect(projection.waitFor({ desired: [1], observed: [0] })).resolves.toBeUndefined();
    await expect(projection.waitFor({ desired: [5], observed: [0] }, 20)).rejects.toBeInstanceOf(ProjectionTimeoutError);
  });

  it('serves past views of reached positions from a cache of the latest two; a position not reached yet is never cached', () => {
    const projection = open();
    applyAll(projection, 'desired', [created(namespace('default')), created(namespace('a')), created(namespace('b'))]);
    const at = (offset: number) => ({ desired: [offset], observed: [0] });
    const first = projection.viewAt(at(1));
    expect(first.list('Namespace').map((n) => n.metadata.name)).toEqual(['default']);
    expect(projection.viewAt(at(1))).toBe(first);
    const second = projection.viewAt(at(2));
    expect(second.list('Namespace').map((n) => n.metadata.name).sort()).toEqual(['a', 'default']);
    const third = projection.viewAt(at(3));
    // at(1) was the least recently used of three: dropped, a new view is built (with the same answer).
    const again = projection.viewAt(at(1));
    expect(again).not.toBe(first);
    expect(again.list('Namespace').map((n) => n.metadata.name)).toEqual(['default']);
    expect(projection.viewAt(at(3))).toBe(third);
    // Reading at(1) again evicted at(2), then the least recently used.
    expect(projection.viewAt(at(2))).not.toBe(second);
    const ahead = projection.viewAt(at(9));
    expect(projection.viewAt(at(9))).not.toBe(ahead);
  });
});
