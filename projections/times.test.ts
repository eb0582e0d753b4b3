/**
 * The time index keeps one key per run of same-time events; the `times` facade and
 * `positionAtTime` must still answer exactly what a key per event answered, whatever the
 * batching, across restarts, and with times that are not in offset order.
 */
import { describe, expect, it } from 'vitest';
import type { RecordBatch } from '../log/port.ts';
import { randomUUID } from 'node:crypto';
import { carriesTime, eventIdTime, newEventId, type EventEnvelope } from '../schemas/index.ts';
import { createProjection, type Projection } from './projection.ts';
import { makeEvent, toBatches } from './testing.ts';
import { tempProjections } from './temp-projections.ts';

const temp = tempProjections('logplane-times-');
const openProjection = (dir: string): Projection => {
  const projection = createProjection({ dir, partitions: PARTITIONS });
  temp.track(projection);
  return projection;
};
const closeProjection = async (projection: Projection): Promise<void> => {
  await projection.close();
  temp.forget(projection);
};

const PARTITIONS = 2;
const BASE = Date.UTC(2026, 0, 1);

/** Namespaces created (some twice: rejected, still recorded), in runs of same-time events, with some stamped earlier than those before them. */
const workload = (): EventEnvelope[] => {
  const events: EventEnvelope[] = [];
  for (let i = 0; i < 600; i++) {
    const name = `n${i % 450}`;
    const event = makeEvent(`Namespace//${name}`, { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    const time = i % 13 === 5 ? BASE + 500 : i % 29 === 0 ? BASE + Math.floor(i / 9) * 1000 - 3000 : BASE + Math.floor(i / 9) * 1000;
    events.push({ ...event, time });
  }
  return events;
};

/** Every folded event's [topic, partition, time, offset], from the log entries. */
const everyEvent = (projection: Projection): [number, number, number, number][] => {
  const keys: [number, number, number, number][] = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const end = projection.cursor().desired[partition] ?? 0;
    for (let offset = 0; offset < end; offset++) {
      const entry = projection.store.entryAt(0, partition, offset);
      if (entry) keys.push([0, partition, entry.time, offset]);
    }
  }
  return keys.sort((a, b) => a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
};

/** The position a key per event gave: per partition, 1 + offset of the greatest (time, offset) stamped ≤ time. */
const expectedPosition = (all: [number, number, number, number][], time: number): number[] =>
  Array.from({ length: PARTITIONS }, (_, partition) => {
    const stamped = all.filter((k) => k[1] === partition && k[2] <= time);
    return stamped.length === 0 ? 0 : stamped[stamped.length - 1]![3] + 1;
  });

const check = (projection: Projection): void => {
  const all = everyEvent(projection);
  expect(all.length).toBe(600);
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const mine = all.filter((k) => k[1] === partition);
    // The facade lists every event, forward and reverse, with its id.
    expect([...projection.store.times.getKeys({ start: [0, partition, 0, 0], end: [0, partition, Number.MAX_SAFE_INTEGER, 0] })]).toEqual(mine);
    expect([...projection.store.times.getKeys({ start: [0, partition, Number.MAX_SAFE_INTEGER, 0], end: [0, partition, -1, -1], reverse: true })]).toEqual([...mine].reverse());
    const ranged = [...projection.store.times.getRange({ start: [0, partition, BASE + 10_000, 0], end: [0, partition, BASE + 20_000, Number.MAX_SAFE_INTEGER] })];
    const inRange = mine.filter((k) => k[2] >= BASE + 10_000 && k[2] <= BASE + 20_000);
    expect(ranged.map((r) => r.key)).toEqual(inRange);
    expect(ranged.map((r) => r.value)).toEqual(inRange.map((k) => projection.store.entryAt(0, k[1], k[3])!.id));
    // Offset bounds inside a run.
    const middle = mine[Math.floor(mine.length / 2)]!;
    expect([...projection.store.times.getKeys({ start: [0, partition, middle[2], middle[3]], end: [0, partition, middle[2], Number.MAX_SAFE_INTEGER] })]).toEqual(
      mine.filter((k) => k[2] === middle[2] && k[3] >= middle[3]),
    );
    expect([...projection.store.times.getKeys({ start: [0, partition, 0, 0], end: [0, partition, Number.MAX_SAFE_INTEGER, 0], limit: 5 })]).toEqual(mine.slice(0, 5));
    for (const k of mine.slice(0, 40)) expect(projection.store.times.get(k)).toBe(projection.store.entryAt(0, k[1], k[3])!.id);
    expect(projection.store.times.get([0, partition, 1, mine[0]![3]])).toBeUndefined();
  }
  for (let time = BASE - 4000; time <= BASE + 70_000; time += 250) {
    expect(projection.positionAtTime(time).desired).toEqual(expectedPosition(all, time));
  }
  // Far fewer keys than events: one per run.
  expect([...projection.store.timeIndex.getKeys()].length).toBeLessThan(all.length / 2);
};

describe('the time index (one key per run of same-time events)', () => {
  it('answers every time query as a key per event did, whatever the batching, across restarts; replays hash the same', async () => {
    const events = workload();
    const batches = toBatches('desired', events, PARTITIONS);
    // Live: batches of 1 to 11 records, so runs cross batch boundaries, with restarts in between.
    const dir = temp.dir();
    let live = openProjection(dir);
    let step = 0;
    for (const batch of batches) {
      for (let i = 0; i < batch.records.length; ) {
        const size = 1 + (step++ % 11);
        live.applyBatch({ ...batch, records: batch.records.slice(i, i + size) });
        i += size;
        if (step % 37 === 0) {
          await closeProjection(live);
          live = openProjection(dir);
        }
      }
    }
    check(live);
    // A replay in whole batches: the same keys.
    const replayed = openProjection(temp.dir());
    for (const batch of batches as RecordBatch[]) replayed.applyBatch(batch);
    check(replayed);
    expect([...replayed.store.timeIndex.getKeys()]).toEqual([...live.store.timeIndex.getKeys()]);
    expect(replayed.stateHash()).toBe(live.stateHash());
  });
});

describe('carriesTime', () => {
  it('says exactly what eventIdTime(id) === time says', () => {
    const time = Date.UTC(2026, 0, 5, 10, 0, 0);
    const v7 = newEventId(time);
    const ids = [
      v7,
      newEventId(time + 1),
      v7.toUpperCase(),
      v7.replace(/-7/, '-4'),
      `${v7.slice(0, 19)}c${v7.slice(20)}`,
      `${v7.slice(0, 8)}x${v7.slice(9)}`,
      `${v7.slice(0, 35)}g`,
      `${v7}0`,
      v7.slice(0, 35),
      randomUUID(),
      'e0000000-0000-4000-8000-fffffffffffe',
      '',
      `${v7.slice(0, 30)}\u00e9${v7.slice(31)}`,
    ];
    for (const id of ids) {
      for (const t of [time, time + 1, eventIdTime(id) ?? time]) expect(carriesTime(id, t), `${id} ${t}`).toBe(eventIdTime(id) === t);
    }
    expect(carriesTime(v7, time)).toBe(true);
  });
});
