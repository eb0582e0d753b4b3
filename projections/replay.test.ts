/**
 * Replaying a log into a fresh projection: whatever the reads and transactions are cut
 * into, the result is the live projection's state, and an object's history (chained
 * through `heads`, written once per object per transaction) lists every event of it.
 */
import { describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import type { EventLog } from '../log/port.ts';
import { encodeEvent, type EventEnvelope, type Pod } from '../schemas/index.ts';
import { createProjection } from './projection.ts';
import { createReplayer, replayLog } from './replay.ts';
import { tempProjections } from './temp-projections.ts';
import { makeEvent } from './testing.ts';
import { openProjectionStore, type LogEntry } from './store.ts';
import { objectAt } from './view.ts';

const temp = tempProjections('logplane-replay-');

const PODS = 40;
const ROUNDS = 12;

/** Pods created, then round after round a status report each (and a label update every fourth round). */
const workload = (): { desired: EventEnvelope[]; observed: EventEnvelope[] } => {
  const desired: EventEnvelope[] = [
    makeEvent('Namespace//default', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } }),
  ];
  const observed: EventEnvelope[] = [];
  const pod = (i: number, round: number): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${i}`, namespace: 'default', labels: { round: String(round) } },
    spec: { containers: [{ name: 'main', image: 'logplane/echo' }] },
  });
  for (let i = 0; i < PODS; i++) desired.push(makeEvent(`Pod/default/p${i}`, { type: 'ObjectCreated', object: pod(i, 0) }));
  for (let round = 1; round <= ROUNDS; round++) {
    for (let i = 0; i < PODS; i++) {
      const key = `Pod/default/p${i}`;
      if (round % 4 === 0) desired.push(makeEvent(key, { type: 'ObjectUpdated', object: pod(i, round), expectedResourceVersion: null, subresource: null }));
      observed.push(makeEvent(key, { type: 'PodStatusChanged', namespace: 'default', name: `p${i}`, uid: null, status: { phase: 'Running', message: `round ${round}` } }));
    }
  }
  return { desired, observed };
};

const writeLog = async (): Promise<EventLog> => {
  const log = await createEmbeddedLog({ dir: temp.dir(), cluster: 'replay' });
  const events = workload();
  await log.append('desired', events.desired.map((e) => ({ key: e.key, value: encodeEvent(e), timestamp: e.time })));
  await log.append('observed', events.observed.map((e) => ({ key: e.key, value: encodeEvent(e), timestamp: e.time })));
  return log;
};

describe('replay', () => {
  it('gives the live projection state hash however the log is cut into reads and transactions', async () => {
    const log = await writeLog();
    try {
      const end = { desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') };
      const live = temp.track(createProjection({ dir: temp.dir(), log }));
      await live.waitFor(end);
      const liveHash = live.stateHash();
      // One read per transaction, several reads per transaction (objects folded many times in one), one transaction for all.
      for (const cut of [{ chunk: 7, perTransaction: 7 }, { chunk: 7, perTransaction: 100 }, { chunk: 1_000, perTransaction: 1_000 }]) {
        const replayed = await replayLog({ log, dir: temp.dir(), ...cut });
        expect(replayed.events, JSON.stringify(cut)).toBe(1 + PODS + PODS * ROUNDS + PODS * (ROUNDS / 4));
        expect(replayed.stateHash, JSON.stringify(cut)).toBe(liveHash);
      }
    } finally {
      await log.close();
    }
  });

  it('walks an object folded many times in one transaction back through every one of its events', async () => {
    const log = await writeLog();
    try {
      const dir = temp.dir();
      const replayer = createReplayer({ log, dir, chunk: 50, perTransaction: 10_000 });
      const end = { desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') };
      await replayer.advanceTo(end);
      await replayer.close();
      const projection = temp.track(createProjection({ dir, partitions: 1 }));
      const key = 'Pod/default/p3';
      const history = [...projection.store.history.getRange({ start: [key], end: [key, 2] })].map(({ value }) => value);
      expect(history.filter((e) => e.topic === 'desired')).toHaveLength(1 + ROUNDS / 4);
      expect(history.filter((e) => e.topic === 'observed').map((e) => (e.status?.status as { message: string }).message)).toEqual(
        Array.from({ length: ROUNDS }, (_, r) => `round ${r + 1}`),
      );
      expect(projection.store.statusOf(key)?.status).toEqual({ phase: 'Running', message: `round ${ROUNDS}` });
      // The object as it was after round 5's status report (the 5th observed event of p3).
      const fifth = history.filter((e) => e.topic === 'observed')[4]!;
      const at = objectAt(projection.store, key, { desired: end.desired, observed: [fifth.offset + 1] });
      expect((at as Pod | undefined)?.status).toEqual({ phase: 'Running', message: 'round 5' });
    } finally {
      await log.close();
    }
  });

  it('reads the change feed per change, whatever block boundaries and transactions cut it', async () => {
    const log = await writeLog();
    try {
      const end = { desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') };
      // One event per transaction on observed: every block is continued across transactions.
      const live = temp.track(createProjection({ dir: temp.dir(), partitions: 1 }));
      for (const topic of ['desired', 'observed'] as const) {
        for (let offset = 0; offset < end[topic][0]!; offset++) live.applyBatch({ topic, partition: 0, records: await log.read(topic, 0, offset, offset + 1) });
      }
      const replayed = await replayLog({ log, dir: temp.dir(), chunk: 1_000, perTransaction: 1_000 });
      expect(replayed.stateHash).toBe(live.stateHash());
      const changes = live.store.changes;
      const all = [...changes.getRange()];
      // Every event of the workload changes its object.
      expect(all.map(({ key }) => key)).toEqual([
        ...Array.from({ length: end.desired[0]! }, (_, o) => [0, 0, o]),
        ...Array.from({ length: end.observed[0]! }, (_, o) => [1, 0, o]),
      ]);
      for (const { key, value } of all) expect(changes.get(key)).toEqual(value);
      expect(changes.get([1, 0, end.observed[0]!])).toBeUndefined();
      const inRange = (topic: number, from: number, to: number) => all.filter(({ key }) => key[0] === topic && key[2] >= from && key[2] < to);
      for (const [from, to] of [[0, 1], [3, 17], [15, 16], [16, 48], [31, 33], [100, 1_000]] as const) {
        expect([...changes.getRange({ start: [1, 0, from], end: [1, 0, to] })]).toEqual(inRange(1, from, to));
        expect([...changes.getKeys({ start: [1, 0, from], end: [1, 0, to], limit: 5 })]).toEqual(inRange(1, from, to).slice(0, 5).map(({ key }) => key));
        expect([...changes.getRange({ start: [1, 0, to], end: [1, 0, from], reverse: true })]).toEqual(
          all.filter(({ key }) => key[0] === 1 && key[2] > from && key[2] <= to).reverse(),
        );
      }
    } finally {
      await log.close();
    }
  });

  it('an aborted transaction leaves no heads behind, in the database or in memory', () => {
    const store = openProjectionStore(temp.dir());
    const entry = (offset: number): LogEntry => ({
      key: 'Pod/default/a',
      time: 1_000 + offset,
      id: `id-${offset}`,
      type: 'PodStatusChanged',
      actor: { type: 'user', name: 'admin' },
      causationId: null,
      correlationId: `id-${offset}`,
      decidedAt: null,
      verdict: { type: 'accepted' },
      change: 'MODIFIED',
      object: null,
      status: { uid: null, status: { phase: 'Running' }, version: offset + 1 },
      prev: -1,
      prevChange: -1,
    });
    try {
      store.root.transactionSync(() => {
        store.recordEvent('observed', 0, 0, entry(0));
        store.writeCursor({ desired: [0], observed: [1] });
      });
      expect(() =>
        store.root.transactionSync(() => {
          store.recordEvent('observed', 0, 1, entry(1));
          throw new Error('fold failed');
        }),
      ).toThrow('fold failed');
      store.forgetMemory();
      expect(store.heads.get('Pod/default/a')?.slice(2, 4)).toEqual([0, 0]);
      store.root.transactionSync(() => {
        store.recordEvent('observed', 0, 1, entry(1));
        store.writeCursor({ desired: [0], observed: [2] });
      });
      expect(store.heads.get('Pod/default/a')?.slice(2, 4)).toEqual([1, 1]);
      expect(store.entryAt(1, 0, 1)?.prev).toBe(0);
      // Nor changes: the feed has the committed ones only, once each.
      expect([...store.changes.getRange()].map(({ key, value }) => [key, value.prev])).toEqual([
        [[1, 0, 0], -1],
        [[1, 0, 1], 0],
      ]);
    } finally {
      void store.close();
    }
  });
});
