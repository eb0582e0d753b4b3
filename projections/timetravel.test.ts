/**
 * Time travel over layout 2: the whole cluster at a position (snapshots rolled forward)
 * answers exactly what the live view said at that position and what `objectAt` (which
 * walks each object's changes, no snapshots) says; replay order does not change the
 * state hash; directories that cannot be trusted are emptied and refolded.
 */
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import type { RecordBatch } from '../log/port.ts';
import type { EventEnvelope, KubeObject, Pod } from '../schemas/index.ts';
import { DamagedStoreError } from './errors.ts';
import { objectHistory } from './history.ts';
import type { PositionVector } from './positions.ts';
import { createProjection, type Projection } from './projection.ts';
import { SNAPSHOT_INTERVAL, decodeSnapshot, encodeSnapshot, snapshotInterval } from './store.ts';
import { makeEvent, toBatches } from './testing.ts';
import { objectAt } from './view.ts';
import { tempProjections } from './temp-projections.ts';

const temp = tempProjections('logplane-timetravel-');
const openProjection = (dir: string, partitions: number): Projection => {
  const projection = createProjection({ dir, partitions });
  temp.track(projection);
  return projection;
};

const PARTITIONS = 2;
const PODS = 400;
const ROUNDS = 50;

const pod = (i: number, round: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p${i}`, namespace: 'default', labels: { round: String(round) } },
  spec: { containers: [{ name: 'main', image: 'echo' }] },
});
const podKey = (i: number) => `Pod/default/p${i}`;

/** Round by round: desired updates of half the pods, deletions and re-creations, a status report of every pod. */
const rounds = (): { desired: EventEnvelope[]; observed: EventEnvelope[] }[] => {
  const result: { desired: EventEnvelope[]; observed: EventEnvelope[] }[] = [];
  const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
  for (let round = 0; round < ROUNDS; round++) {
    const desired: EventEnvelope[] = [];
    const observed: EventEnvelope[] = [];
    if (round === 0) {
      desired.push(makeEvent('Namespace//default', { type: 'ObjectCreated', object: namespace }));
      for (let i = 0; i < PODS; i++) desired.push(makeEvent(podKey(i), { type: 'ObjectCreated', object: pod(i, round) }));
    }
    for (let i = 0; i < PODS; i++) {
      if (round % 10 === 3 && i % 7 === 0) {
        desired.push(
          makeEvent(podKey(i), {
            type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: `p${i}`,
            expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
          }),
        );
      } else if (round % 10 === 6 && i % 7 === 0) {
        desired.push(makeEvent(podKey(i), { type: 'ObjectCreated', object: pod(i, round) }));
      } else if ((i + round) % 2 === 0) {
        desired.push(makeEvent(podKey(i), { type: 'ObjectUpdated', object: pod(i, round), expectedResourceVersion: null, subresource: null }));
      }
      observed.push(makeEvent(podKey(i), { type: 'PodStatusChanged', namespace: 'default', name: `p${i}`, uid: null, status: { phase: 'Running', message: `round ${round}` } }));
    }
    result.push({ desired, observed });
  }
  return result;
};

describe('time travel with snapshots', () => {
  it('answers the whole cluster at a position as the live view saw it and as objectAt does; replay order gives the same hash', () => {
    const workload = rounds();
    const live = openProjection(temp.dir(), PARTITIONS);
    const next = { desired: [0, 0], observed: [0, 0] };
    const samples: { position: PositionVector; pods: KubeObject[] }[] = [];
    const allBatches: RecordBatch[] = [];
    workload.forEach((round, r) => {
      const batches = [...toBatches('desired', round.desired, PARTITIONS, next.desired), ...toBatches('observed', round.observed, PARTITIONS, next.observed)];
      allBatches.push(...batches);
      for (const batch of batches) live.applyBatch(batch);
      if (r % 4 === 1 || r === ROUNDS - 1) samples.push({ position: live.cursor(), pods: structuredClone(live.view().list('Pod')) });
    });
    // Both topics crossed snapshot boundaries (on the partition of pods; the namespace may lie in the other one).
    const cursor = live.cursor();
    for (const offsets of [cursor.desired, cursor.observed]) expect(Math.max(...offsets)).toBeGreaterThan(SNAPSHOT_INTERVAL);
    expect([...live.store.snapshots.getKeys()].map((k) => k[0])).toEqual(expect.arrayContaining([0, 1]));

    for (const { position, pods } of samples) {
      const listed = live.viewAt(position).list('Pod');
      expect(listed.length).toBeGreaterThan(0);
      expect(listed).toEqual(pods);
      const oneByOne = Array.from({ length: PODS }, (_, i) => objectAt(live.store, podKey(i), position))
        .filter((o): o is KubeObject => o !== undefined)
        .sort((a, b) => (podKey(Number(a.metadata.name.slice(1))) < podKey(Number(b.metadata.name.slice(1))) ? -1 : 1));
      expect(listed).toEqual(oneByOne);
    }
    // A deleted pod's whole history is still there, in order, with its deletion.
    const versions = objectHistory(live.store, PARTITIONS, podKey(7));
    expect(versions.filter((v) => v.eventType === 'ObjectDeleted')).toHaveLength(ROUNDS / 10);
    expect(versions.filter((v) => v.eventType === 'PodStatusChanged')).toHaveLength(ROUNDS);

    // A replay folds all of desired, then all of observed, in other batches: same state.
    const replayed = openProjection(temp.dir(), PARTITIONS);
    for (const topic of ['desired', 'observed'] as const) {
      for (const batch of allBatches.filter((b) => b.topic === topic)) {
        for (let i = 0; i < batch.records.length; i += 333) replayed.applyBatch({ ...batch, records: batch.records.slice(i, i + 333) });
      }
    }
    expect(replayed.cursor()).toEqual(live.cursor());
    expect(replayed.stateHash()).toBe(live.stateHash());
  });
});

describe('the snapshot record format', () => {
  const roundTrip = (keys: string[], offsets: number[]) => {
    const bytes = encodeSnapshot({ keys, offsets });
    const decoded = decodeSnapshot(bytes);
    expect(decoded.keys).toEqual(keys);
    expect(Array.from(decoded.offsets)).toEqual(offsets);
    return bytes;
  };
  it('round-trips keys and offsets, in binary unless a key holds a NUL, and reads only the record of a longer buffer', () => {
    const bytes = roundTrip(['Pod/default/a', 'Pod/default/ü-2', 'Service/default/web'], [0, 2 ** 40, 17]);
    expect(bytes[0]).toBe(1);
    expect(roundTrip([], [])[0]).toBe(1);
    expect(roundTrip(['Pod/default/a\0b', 'Pod/default/c'], [3, 4])[0]).toBe(0);
    // lmdb-js hands a range's value over in a reused buffer, with the record's size.
    const padded = Buffer.concat([bytes, Buffer.from('\0left over from a longer record')]);
    expect(decodeSnapshot(padded, bytes.length).keys).toEqual(['Pod/default/a', 'Pod/default/ü-2', 'Service/default/web']);
    expect(() => decodeSnapshot(Buffer.of(9))).toThrow(DamagedStoreError);
    expect(() => decodeSnapshot(Buffer.of(9))).toThrow(/unknown format 9/);
  });
});

describe('snapshots in a cluster larger than twice the interval', () => {
  it('come every half of the objects, where the log alone says; views of the past stay exact and a replay in other cuts gives the same hash', () => {
    const PODS_LARGE = 12_000;
    const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
    const deletion = (i: number) =>
      makeEvent(podKey(i), {
        type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: `p${i}`,
        expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
      });
    const update = (i: number, round: number) =>
      makeEvent(podKey(i), { type: 'ObjectUpdated', object: pod(i, round), expectedResourceVersion: null, subresource: null });
    // The cluster grows to 12,001 objects, every pod is updated, half are deleted, the rest updated again.
    const events: EventEnvelope[] = [makeEvent('Namespace//default', { type: 'ObjectCreated', object: namespace })];
    for (let i = 0; i < PODS_LARGE; i++) events.push(makeEvent(podKey(i), { type: 'ObjectCreated', object: pod(i, 0) }));
    for (let i = 0; i < PODS_LARGE; i++) events.push(update(i, 1));
    for (let i = 0; i < PODS_LARGE; i += 2) events.push(deletion(i));
    for (let i = 1; i < PODS_LARGE; i += 2) events.push(update(i, 2));

    // Where the snapshots are due, by the rule alone: at the first offset at least
    // snapshotInterval(objects living before it) past the last snapshot.
    const expected: number[] = [];
    let last = 0;
    let living = 0;
    events.forEach((event, offset) => {
      if (offset - last >= snapshotInterval(living)) {
        expected.push(offset);
        last = offset;
      }
      if (event.body.type === 'ObjectCreated') living++;
      if (event.body.type === 'ObjectDeleted') living--;
    });
    // The rule stretched the interval while the cluster was large.
    expect(expected.slice(1).some((offset, i) => offset - expected[i]! > SNAPSHOT_INTERVAL)).toBe(true);

    const [batch] = toBatches('desired', events, 1);
    const live = openProjection(temp.dir(), 1);
    const samples: { position: PositionVector; pods: KubeObject[] }[] = [];
    for (let from = 0; from < batch!.records.length; from += 7_000) {
      live.applyBatch({ ...batch!, records: batch!.records.slice(from, from + 7_000) });
      samples.push({ position: live.cursor(), pods: structuredClone(live.view().list('Pod')) });
    }
    expect([...live.store.snapshots.getKeys()].filter((k) => k[0] === 0).map((k) => k[2])).toEqual(expected);

    for (const { position, pods } of samples) {
      const listed = live.viewAt(position).list('Pod');
      expect(listed).toEqual(pods);
      expect(listed.length).toBe(pods.length);
      const sampled = listed.filter((_, i) => i % 97 === 0);
      for (const object of sampled) expect(objectAt(live.store, `Pod/default/${object.metadata.name}`, position)).toEqual(object);
    }

    // Cut into other transactions (and the snapshots' check run at other cursors): the same state.
    const replayed = openProjection(temp.dir(), 1);
    for (let from = 0; from < batch!.records.length; from += 1_234) replayed.applyBatch({ ...batch!, records: batch!.records.slice(from, from + 1_234) });
    expect(replayed.stateHash()).toBe(live.stateHash());
  });
});

describe('projection directories that cannot be trusted', () => {
  const events = rounds()[0]!.desired.slice(0, 20);
  const fill = (projection: Projection) => {
    for (const b of toBatches('desired', events, 1)) projection.applyBatch(b);
  };
  const setMeta = async (dir: string, key: string, value: unknown) => {
    const root = open({ path: dir, maxDbs: 24 });
    const meta = root.openDB<unknown, string>({ name: 'meta', encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
    await meta.put(key, value);
    await root.close();
  };

  it('resumes a directory it closed, and refolds one of another layout or one left unflushed by an earlier boot', async () => {
    const dir = temp.dir();
    const first = openProjection(dir, 1);
    fill(first);
    const hash = first.stateHash();
    const position = first.cursor();
    await first.close();
    temp.forget(first);

    const again = openProjection(dir, 1);
    expect(again.cursor()).toEqual(position);
    expect(again.stateHash()).toBe(hash);
    await again.close();
    temp.forget(again);

    for (const [key, value] of [
      ['layout', 1],
      ['unflushed', 'a-boot-that-is-not-this-one'],
    ] as const) {
      await setMeta(dir, key, value);
      const rebuilt = openProjection(dir, 1);
      expect(rebuilt.cursor()).toEqual({ desired: [0], observed: [0] });
      expect(rebuilt.view().list('Pod')).toEqual([]);
      expect([...rebuilt.store.log.getKeys()]).toEqual([]);
      fill(rebuilt);
      expect(rebuilt.stateHash()).toBe(hash);
      await rebuilt.close();
      temp.forget(rebuilt);
    }
  });
});
