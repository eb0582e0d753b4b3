/**
 * The `EventLog` contract: one vitest suite that every adapter (embedded, Kafka) runs, so
 * both logs behave the same for everything built on the port.
 *
 * An adapter's test file calls `describeEventLogContract(name, harness)`. Every test works
 * on a fresh, uniquely named cluster, so tests are independent even when the backing store
 * (a Kafka broker) is shared by the whole run. Waiting is always "until a condition holds,
 * or fail after a timeout", never a sleep.
 */
import { randomUUID } from 'node:crypto';
import {
  combineLatest,
  filter,
  firstValueFrom,
  type Observable,
  ReplaySubject,
  scan,
  take,
  timeout,
  toArray,
} from 'rxjs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bodies, envelope } from '../schemas/fixtures/samples.ts';
import { appendEvents, decodedEvents } from './decoded.ts';
import { LogUsageError } from './errors.ts';
import { partitionFor } from './partitioner.ts';
import {
  type Assignment,
  type EventLog,
  type GroupMembership,
  type LogRecord,
  type NewRecord,
  type RecordBatch,
  TOPICS,
  type Topic,
} from './port.ts';

/** What the contract needs to know to open a log. */
export interface ContractLogOptions {
  /** A cluster name unique to the calling test. */
  readonly cluster: string;
  readonly partitions: number;
}

/** How the contract suite gets logs from one adapter. */
export interface EventLogHarness {
  /** Creates a log for a cluster name never used before (fresh storage / fresh topics). */
  create(opts: ContractLogOptions): Promise<EventLog>;
  /**
   * A new `EventLog` instance over the same storage as an earlier `create` with the same
   * options, after that instance was closed (embedded: reopen the directory; Kafka: a new
   * client on the same topics). Without it the durability test is skipped.
   */
  reopen?(opts: ContractLogOptions): Promise<EventLog>;
  /**
   * True when several members of one consumer group share partitions (Kafka). False when
   * one member owns every partition and the others stand by until it leaves (embedded).
   */
  readonly supportsMultiMemberGroups: boolean;
  /**
   * Extra check of the retention the backing store really applies (e.g. describe the
   * Kafka topic configs); throws (or fails an `expect`) when it disagrees with `log.layout`.
   */
  checkRetention?(log: EventLog): Promise<void>;
  /** Upper bound for any single wait-for-condition, e.g. a group rebalance. Default 30 s. */
  readonly waitTimeoutMs?: number;
}

const PARTITION_COUNTS = [1, 3] as const;

/** Registers the contract tests for `adapterName` (call at the top level of a test file). */
export const describeEventLogContract = (adapterName: string, harness: EventLogHarness): void => {
  const waitMs = harness.waitTimeoutMs ?? 30_000;
  const openLogs: EventLog[] = [];

  const clusterName = (): string =>
    `ct-${adapterName.replace(/[^a-zA-Z0-9-]/g, '-')}-${randomUUID().slice(0, 8)}`;
  const track = (log: EventLog): EventLog => {
    openLogs.push(log);
    return log;
  };
  const create = async (partitions: number, cluster = clusterName()): Promise<EventLog> =>
    track(await harness.create({ cluster, partitions }));

  afterEach(async () => {
    const logs = openLogs.splice(0);
    await Promise.all(logs.map((log) => log.close()));
  });

  /** Collects records from `source` until `done(records)` holds; fails after `ms`. */
  const collectUntil = async (
    source: Observable<RecordBatch>,
    done: (records: LogRecord[]) => boolean,
    ms = waitMs,
  ): Promise<LogRecord[]> => {
    let seen = 0;
    try {
      return await firstValueFrom(
        source.pipe(
          scan((records: LogRecord[], batch) => {
            expectWellFormedBatch(batch);
            records.push(...batch.records);
            seen = records.length;
            return records;
          }, []),
          filter(done),
          take(1),
          timeout({ first: ms }),
        ),
      );
    } catch (error) {
      throw new Error(`condition not met within ${ms} ms after ${seen} records`, { cause: error });
    }
  };

  /** Resolves once `count` records were delivered (more arriving later is checked by callers). */
  const collectCount = (source: Observable<RecordBatch>, count: number, ms = waitMs) =>
    collectUntil(source, (records) => records.length >= count, ms);

  describe(`EventLog contract: ${adapterName}`, () => {
    describe.each(PARTITION_COUNTS)('with %i partition(s)', (partitions) => {
      it('describes its layout', async () => {
        const cluster = clusterName();
        const log = await create(partitions, cluster);
        expect(log.layout.cluster).toBe(cluster);
        expect(log.layout.partitions).toBe(partitions);
      });

      it('appends: positions in input order, dense offsets from 0, placement by partitionFor', async () => {
        const log = await create(partitions);
        const records = numbered(40, (i) => `key-${i % 7}`);
        const positions = await log.append('desired', records);
        expect(positions).toHaveLength(records.length);
        const nextOffset = new Array<number>(partitions).fill(0);
        positions.forEach((position, i) => {
          expect(position.partition).toBe(partitionFor(records[i]!.key, partitions));
          expect(position.offset).toBe(nextOffset[position.partition]);
          nextOffset[position.partition]! += 1;
        });

        const more = await log.append('desired', numbered(5, () => 'key-0'));
        const p = partitionFor('key-0', partitions);
        expect(more).toEqual([0, 1, 2, 3, 4].map((i) => ({ partition: p, offset: nextOffset[p]! + i })));
      });

      it('reads back what was appended, in order per partition, and sub-ranges', async () => {
        const log = await create(partitions);
        // One key per partition, so every partition holds 30 / partitions records (at least 3 for the sub-range).
        const keys = range(0, partitions).map((partition) => keyInPartition('obj', partition, partitions));
        const records = numbered(30, (i) => keys[i % partitions]!, 1_700_000_000_000);
        const positions = await log.append('desired', records);

        for (let partition = 0; partition < partitions; partition++) {
          const expected = records.filter((_, i) => positions[i]!.partition === partition);
          expect(expected.length).toBeGreaterThanOrEqual(3);
          const all = await log.read('desired', partition, 0);
          expect(all.map(summary)).toEqual(
            expected.map((record, offset) => ({ ...summaryOf(record), offset, partition, topic: 'desired' })),
          );
          const middle = await log.read('desired', partition, 1, 3);
          expect(middle.map((record) => record.offset)).toEqual([1, 2]);
          expect(middle.map(summary)).toEqual(all.slice(1, 3).map(summary));
          expect(await log.read('desired', partition, all.length)).toEqual([]);
        }
      });

      it('keeps topics apart', async () => {
        const log = await create(partitions);
        await log.append('desired', numbered(3, () => 'a'));
        expect(await log.endOffsets('observed')).toEqual(new Array(partitions).fill(0));
        expect(await log.endOffsets('heartbeats')).toEqual(new Array(partitions).fill(0));
        await log.append('observed', [{ key: 'a', value: Buffer.from('status') }]);
        const p = partitionFor('a', partitions);
        const observed = await log.read('observed', p, 0);
        expect(observed.map((record) => [record.topic, record.value.toString()])).toEqual([['observed', 'status']]);
      });

      it('stamps records with the given timestamp, or the append time', async () => {
        const log = await create(partitions);
        const before = Date.now();
        const [explicit, implicit] = await log.append('desired', [
          { key: 'k', value: Buffer.from('x'), timestamp: 1_234_567_890_123 },
          { key: 'k', value: Buffer.from('y') },
        ]);
        const after = Date.now();
        const read = await log.read('desired', explicit!.partition, explicit!.offset, implicit!.offset + 1);
        expect(read[0]!.timestamp).toBe(1_234_567_890_123);
        expect(read[1]!.timestamp).toBeGreaterThanOrEqual(before - 1_000);
        expect(read[1]!.timestamp).toBeLessThanOrEqual(after + 1_000);
      });

      it('treats an empty append as a no-op', async () => {
        const log = await create(partitions);
        expect(await log.append('desired', [])).toEqual([]);
        expect(await log.endOffsets('desired')).toEqual(new Array(partitions).fill(0));
      });

      it('reports end offsets per partition', async () => {
        const log = await create(partitions);
        expect(await log.endOffsets('desired')).toEqual(new Array(partitions).fill(0));
        const positions = await log.append('desired', numbered(25, (i) => `n-${i}`));
        const expected = new Array<number>(partitions).fill(0);
        for (const position of positions) expected[position.partition] = position.offset + 1;
        expect(await log.endOffsets('desired')).toEqual(expected);
      });

      it('finds the first offset at or after a timestamp', async () => {
        const log = await create(partitions);
        const base = Date.now() - 3_600_000;
        // Every partition gets records stamped base, base+10s, base+20s, … in offset order.
        const perPartition = 4;
        const keys = keysCoveringPartitions(partitions);
        const records: NewRecord[] = [];
        for (let step = 0; step < perPartition; step++) {
          for (const key of keys) records.push({ key, value: Buffer.from(`${key}@${step}`), timestamp: base + step * 10_000 });
        }
        await log.append('desired', records);
        const everywhere = (offset: number) => new Array<number>(partitions).fill(offset);

        expect(await log.offsetsForTime('desired', base - 1)).toEqual(everywhere(0));
        expect(await log.offsetsForTime('desired', base)).toEqual(everywhere(0));
        expect(await log.offsetsForTime('desired', base + 1)).toEqual(everywhere(1));
        expect(await log.offsetsForTime('desired', base + 20_000)).toEqual(everywhere(2));
        expect(await log.offsetsForTime('desired', base + 25_000)).toEqual(everywhere(3));
        expect(await log.offsetsForTime('desired', base + 30_000)).toEqual(everywhere(3));
        expect(await log.offsetsForTime('desired', base + 30_001)).toEqual(everywhere(perPartition));
      });

      it('subscribes from 0: existing records first, then live appends on the same subscription', async () => {
        const log = await create(partitions);
        const first = numbered(20, (i) => `s-${i % 4}`);
        await log.append('desired', first);

        const received = new ReplaySubject<RecordBatch>();
        const subscription = log.subscribe('desired').subscribe(received);
        try {
          const existing = await collectCount(received, first.length);
          expectExactlyOnceInOrder(existing, first.length, partitions);
          expect(sortedValues(existing)).toEqual(sortedValues(first));

          const live = numbered(15, (i) => `s-${i % 4}`, undefined, 'live');
          await log.append('desired', live);
          const all = await collectCount(received, first.length + live.length);
          expectExactlyOnceInOrder(all, first.length + live.length, partitions);
          expect(sortedValues(all)).toEqual(sortedValues([...first, ...live]));
        } finally {
          subscription.unsubscribe();
        }
      });

      it('subscribes from the middle: exactly the records from the given positions on', async () => {
        const log = await create(partitions);
        const keys = keysCoveringPartitions(partitions);
        const records: NewRecord[] = [];
        for (let step = 0; step < 6; step++) for (const key of keys) records.push({ key, value: Buffer.from(`${key}#${step}`) });
        await log.append('desired', records);

        // Partition 0 starts at 4; the last partition (when more than one) is not named and so starts at 0.
        const from: Record<number, number> = { 0: 4 };
        for (let p = 1; p < partitions - 1; p++) from[p] = 6;
        const expectedCount = records.length - 4 - (partitions > 2 ? 6 * (partitions - 2) : 0);

        const received = new ReplaySubject<RecordBatch>();
        const subscription = log.subscribe('desired', from).subscribe(received);
        try {
          const got = await collectCount(received, expectedCount);
          expect(got).toHaveLength(expectedCount);
          for (let p = 0; p < partitions; p++) {
            const start = from[p] ?? 0;
            expect(got.filter((record) => record.partition === p).map((record) => record.offset)).toEqual(
              range(start, 6),
            );
          }
          await log.append('desired', [{ key: keys[0]!, value: Buffer.from('after') }]);
          const withLive = await collectCount(received, expectedCount + 1);
          expect(withLive.at(-1)!.value.toString()).toBe('after');
          expect(withLive.at(-1)!.offset).toBe(6);
        } finally {
          subscription.unsubscribe();
        }
      });

      it('has no gap or duplicate where catch-up turns into live delivery', async () => {
        const log = await create(partitions);
        const rounds = 30;
        const perRound = 40;
        const appending = (async () => {
          for (let round = 0; round < rounds; round++) {
            await log.append('desired', numbered(perRound, (i) => `b-${i % 9}`, undefined, `r${round}`));
          }
        })();
        // Subscribe while appends are in flight, so the reader crosses from stored to live records.
        await log.append('desired', numbered(perRound, (i) => `b-${i % 9}`, undefined, 'pre'));
        const received = new ReplaySubject<RecordBatch>();
        const subscription = log.subscribe('desired').subscribe(received);
        try {
          await appending;
          const total = (rounds + 1) * perRound;
          const all = await collectCount(received, total);
          expectExactlyOnceInOrder(all, total, partitions);
        } finally {
          subscription.unsubscribe();
        }
      });

      it('survives close and reopen: records kept, offsets continue', async ({ skip }) => {
        if (!harness.reopen) return skip('harness has no reopen');
        const cluster = clusterName();
        const first = await create(partitions, cluster);
        const desired = numbered(12, (i) => `d-${i % 5}`, 1_700_000_000_000);
        await first.append('desired', desired);
        await first.append('observed', numbered(4, (i) => `o-${i}`, 1_700_000_000_000));
        const ends = await first.endOffsets('desired');
        const before = await readEverything(first, 'desired');
        await first.close();

        const second = track(await harness.reopen({ cluster, partitions }));
        expect(await second.endOffsets('desired')).toEqual(ends);
        expect((await readEverything(second, 'desired')).map(summary)).toEqual(before.map(summary));
        expect((await readEverything(second, 'observed')).length).toBe(4);

        const [next] = await second.append('desired', [{ key: 'd-0', value: Buffer.from('after reopen') }]);
        expect(next!.offset).toBe(ends[next!.partition]);
        const received = await collectCount(second.subscribe('desired'), desired.length + 1);
        expectExactlyOnceInOrder(received, desired.length + 1, partitions);
      });

      it('quarantines an undecodable record and carries on with the events after it', async () => {
        const log = await create(partitions);
        const key = 'Pod/shop/web-0';
        const events = bodies.slice(0, 3).map((body, i) => ({ ...envelope(body, key), id: randomUUID(), time: 1_767_600_000_000 + i }));
        await appendEvents(log, 'desired', [{ partitionKey: key, event: events[0]! }]);
        const [garbage] = await log.append('desired', [{ key, value: Buffer.from('definitely not an Avro event') }]);
        await appendEvents(log, 'desired', events.slice(1).map((event) => ({ partitionKey: key, event })));

        const reported: Record<string, unknown>[] = [];
        const logger = pino({ level: 'error' }, { write: (line: string) => reported.push(JSON.parse(line)) });
        const items = await firstValueFrom(
          decodedEvents(log, 'desired', {}, { logger }).pipe(take(4), toArray(), timeout({ first: waitMs })),
        );
        expect(items.map((item) => item.type)).toEqual(['event', 'quarantined', 'event', 'event']);
        expect(items.flatMap((item) => (item.type === 'event' ? [item.event.id] : []))).toEqual(events.map((e) => e.id));
        expect(items.map((item) => item.record.offset)).toEqual([0, 1, 2, 3]);
        const quarantined = items[1]!;
        expect(quarantined.type === 'quarantined' && quarantined.error).toBeInstanceOf(Error);
        expect(reported).toHaveLength(1);
        expect(reported[0]).toMatchObject({ topic: 'desired', partition: garbage!.partition, offset: garbage!.offset });
      });

      it(
        'carries 100,000 small events appended in batches of 10,000, in order',
        async () => {
          const log = await create(partitions);
          const total = 100_000;
          const batchSize = 10_000;
          for (let start = 0; start < total; start += batchSize) {
            const batch: NewRecord[] = [];
            for (let i = start; i < start + batchSize; i++) {
              const value = Buffer.allocUnsafe(4);
              value.writeUInt32BE(i);
              batch.push({ key: `node-${i % 64}`, value });
            }
            const positions = await log.append('desired', batch);
            expect(positions).toHaveLength(batchSize);
          }

          const seenPerPartition = new Array<number>(partitions).fill(0);
          const lastValuePerPartition = new Array<number>(partitions).fill(-1);
          let count = 0;
          let sum = 0;
          await firstValueFrom(
            log.subscribe('desired').pipe(
              filter((batch) => {
                expectWellFormedBatch(batch);
                for (const record of batch.records) {
                  const value = record.value.readUInt32BE(0);
                  if (record.offset !== seenPerPartition[record.partition]) {
                    throw new Error(`partition ${record.partition}: offset ${record.offset}, expected ${seenPerPartition[record.partition]}`);
                  }
                  if (value <= lastValuePerPartition[record.partition]!) {
                    throw new Error(`partition ${record.partition}: value ${value} after ${lastValuePerPartition[record.partition]}`);
                  }
                  seenPerPartition[record.partition]! += 1;
                  lastValuePerPartition[record.partition] = value;
                  count += 1;
                  sum += value;
                }
                return count >= total;
              }),
              take(1),
              timeout({ first: 240_000 }),
            ),
          );
          expect(count).toBe(total);
          expect(sum).toBe((total * (total - 1)) / 2);
          expect(await log.endOffsets('desired')).toEqual(seenPerPartition);
        },
        300_000,
      );

      it(
        'gives a lone group member every partition of the topics it joined',
        async () => {
          const log = await create(partitions);
          const member = await log.joinGroup(`g-${randomUUID().slice(0, 8)}`, ['desired', 'observed']);
          const watched = watchAssignments(member);
          try {
            const assignment = await waitForAssignment(watched, (a) => a.partitions.desired.length > 0, waitMs);
            expect(sorted(assignment.partitions.desired)).toEqual(range(0, partitions));
            expect(sorted(assignment.partitions.observed)).toEqual(range(0, partitions));
            expect(assignment.partitions.heartbeats).toEqual([]);
          } finally {
            await member.leave();
          }
          await expect(watched.completed).resolves.toBeUndefined();
        },
        waitMs * 3,
      );

      it(
        'splits partitions between two members (disjoint, covering all) and hands them over on leave',
        async () => {
          const log = await create(partitions);
          const groupId = `g-${randomUUID().slice(0, 8)}`;
          const first = await log.joinGroup(groupId, ['desired']);
          const firstWatched = watchAssignments(first);
          await waitForAssignment(firstWatched, (a) => a.partitions.desired.length === partitions, waitMs);

          const second = await log.joinGroup(groupId, ['desired']);
          const secondWatched = watchAssignments(second);
          try {
            const [a, b] = await firstValueFrom(
              combineLatest([firstWatched.latest$, secondWatched.latest$]).pipe(
                filter(([a, b]) => {
                  const union = sorted([...a.partitions.desired, ...b.partitions.desired]);
                  return union.join() === range(0, partitions).join();
                }),
                take(1),
                timeout({ first: waitMs }),
              ),
            );
            expect(a.partitions.desired.filter((p) => b.partitions.desired.includes(p))).toEqual([]);
            if (harness.supportsMultiMemberGroups) {
              if (partitions > 1) {
                expect(a.partitions.desired.length).toBeGreaterThan(0);
                expect(b.partitions.desired.length).toBeGreaterThan(0);
                // One rebalance, one generation for every member (comparable across members).
                expect(a.generation).toBe(b.generation);
              }
            } else {
              // One member owns everything; the newcomer stands by with nothing.
              expect(sorted(a.partitions.desired)).toEqual(range(0, partitions));
              expect(b.partitions.desired).toEqual([]);
              expect(secondWatched.all.every((assignment) => assignment.partitions.desired.length === 0)).toBe(true);
            }

            await first.leave();
            await expect(firstWatched.completed).resolves.toBeUndefined();
            const takeover = await waitForAssignment(
              secondWatched,
              (assignment) => assignment.partitions.desired.length === partitions,
              waitMs,
            );
            expect(sorted(takeover.partitions.desired)).toEqual(range(0, partitions));
            expect(takeover.generation).toBeGreaterThan(b.generation);
          } finally {
            await second.leave();
          }
          await expect(secondWatched.completed).resolves.toBeUndefined();
        },
        waitMs * 5,
      );
    });

    it(
      'keeps separate groups independent: each lone member gets every partition',
      async () => {
        const log = await create(3);
        const one = await log.joinGroup(`g-${randomUUID().slice(0, 8)}`, ['observed']);
        const two = await log.joinGroup(`g-${randomUUID().slice(0, 8)}`, ['observed']);
        try {
          for (const member of [one, two]) {
            const assignment = await waitForAssignment(watchAssignments(member), (a) => a.partitions.observed.length === 3, waitMs);
            expect(sorted(assignment.partitions.observed)).toEqual([0, 1, 2]);
          }
        } finally {
          await Promise.all([one.leave(), two.leave()]);
        }
      },
      waitMs * 3,
    );

    it('keeps desired and observed forever and heartbeats for a bounded time', async () => {
      const log = await create(1);
      expect(log.layout.retention.desired).toEqual({ type: 'forever' });
      expect(log.layout.retention.observed).toEqual({ type: 'forever' });
      const heartbeats = log.layout.retention.heartbeats;
      expect(heartbeats.type).toBe('time');
      if (heartbeats.type === 'time') expect(heartbeats.ms).toBeGreaterThan(0);
      await harness.checkRetention?.(log);
    });

    describe('errors', () => {
      it('rejects a read of a partition that does not exist with LogUsageError', async () => {
        const log = await create(3);
        await expect(log.read('desired', 3, 0)).rejects.toBeInstanceOf(LogUsageError);
        await expect(log.read('desired', -1, 0)).rejects.toBeInstanceOf(LogUsageError);
      });

      it('rejects an unknown topic with LogUsageError', async () => {
        const log = await create(1);
        const bogus = 'bogus' as Topic;
        await expect(log.append(bogus, [{ key: 'k', value: Buffer.from('v') }])).rejects.toBeInstanceOf(LogUsageError);
        await expect(log.read(bogus, 0, 0)).rejects.toBeInstanceOf(LogUsageError);
      });

      it('rejects an append after close with LogUsageError; close is idempotent', async () => {
        const log = await create(1);
        await log.close();
        await expect(log.append('desired', [{ key: 'k', value: Buffer.from('v') }])).rejects.toBeInstanceOf(LogUsageError);
        await expect(log.close()).resolves.toBeUndefined();
      });
    });
  });
};

/** A batch names one partition and carries consecutive offsets of it. */
const expectWellFormedBatch = (batch: RecordBatch): void => {
  if (!TOPICS.includes(batch.topic)) throw new Error(`batch of unknown topic ${batch.topic}`);
  batch.records.forEach((record, i) => {
    if (record.topic !== batch.topic || record.partition !== batch.partition) {
      throw new Error(`record ${record.topic}/${record.partition}@${record.offset} in batch of ${batch.topic}/${batch.partition}`);
    }
    const previous = batch.records[i - 1];
    if (previous && record.offset !== previous.offset + 1) {
      throw new Error(`batch offsets not consecutive: ${previous.offset} then ${record.offset}`);
    }
  });
};

/** `total` records over `partitions`, each partition's offsets exactly 0, 1, 2, … in delivery order. */
const expectExactlyOnceInOrder = (records: readonly LogRecord[], total: number, partitions: number): void => {
  expect(records).toHaveLength(total);
  for (let p = 0; p < partitions; p++) {
    const offsets = records.filter((record) => record.partition === p).map((record) => record.offset);
    expect(offsets).toEqual(range(0, offsets.length));
  }
};

interface WatchedAssignments {
  /** Every assignment seen so far. Generations must strictly increase per member (not compared across members). */
  readonly all: Assignment[];
  /** Replays the latest assignment, then follows. */
  readonly latest$: Observable<Assignment>;
  /** Resolves when `assignments$` completes; rejects if it errors or a generation does not increase. */
  readonly completed: Promise<void>;
}

/** Subscribes to a member's assignments at once, so none is missed while a test waits. */
const watchAssignments = (member: GroupMembership): WatchedAssignments => {
  const all: Assignment[] = [];
  const latest$ = new ReplaySubject<Assignment>(1);
  const completed = new Promise<void>((resolve, reject) => {
    member.assignments$.subscribe({
      next: (assignment) => {
        const previous = all.at(-1);
        if (previous && assignment.generation <= previous.generation) {
          reject(new Error(`generation went from ${previous.generation} to ${assignment.generation}`));
        }
        all.push(assignment);
        latest$.next(assignment);
      },
      complete: () => {
        latest$.complete();
        resolve();
      },
      error: (error: unknown) => {
        latest$.error(error);
        reject(error);
      },
    });
  });
  // A test that never awaits `completed` must not see an unhandled rejection here.
  completed.catch(() => undefined);
  return { all, latest$, completed };
};

const waitForAssignment = (
  watched: WatchedAssignments,
  predicate: (assignment: Assignment) => boolean,
  ms: number,
): Promise<Assignment> => firstValueFrom(watched.latest$.pipe(filter(predicate), take(1), timeout({ first: ms })));

const numbered = (
  count: number,
  keyOf: (i: number) => string,
  timestampBase?: number,
  label = 'v',
): NewRecord[] =>
  Array.from({ length: count }, (_, i) => ({
    key: keyOf(i),
    value: Buffer.from(`${label}-${i}`),
    ...(timestampBase === undefined ? {} : { timestamp: timestampBase + i }),
  }));

/** One key per partition (found by trying `k-0`, `k-1`, …), in partition order. */
const keysCoveringPartitions = (partitions: number): string[] => {
  const keys: string[] = [];
  for (let i = 0; keys.filter(Boolean).length < partitions; i++) {
    const key = `k-${i}`;
    const p = partitionFor(key, partitions);
    if (keys[p] === undefined) keys[p] = key;
  }
  return keys;
};

const readEverything = async (log: EventLog, topic: Topic): Promise<LogRecord[]> => {
  const parts = await Promise.all(range(0, log.layout.partitions).map((p) => log.read(topic, p, 0)));
  return parts.flat();
};

const summaryOf = (record: NewRecord) => ({
  key: record.key,
  value: record.value.toString('base64'),
  ...(record.timestamp === undefined ? {} : { timestamp: record.timestamp }),
});
const summary = (record: LogRecord) => ({
  topic: record.topic,
  partition: record.partition,
  offset: record.offset,
  key: record.key,
  value: record.value.toString('base64'),
  timestamp: record.timestamp,
});
const sortedValues = (records: readonly { value: Buffer }[]): string[] => records.map((r) => r.value.toString()).sort();
const sorted = (numbers: readonly number[]): number[] => [...numbers].sort((a, b) => a - b);
const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
/** The first key `<prefix>-<n>` that `partitionFor` places in `partition`. */
const keyInPartition = (prefix: string, partition: number, partitions: number): string => {
  for (let n = 0; ; n++) {
    const key = `${prefix}-${n}`;
    if (partitionFor(key, partitions) === partition) return key;
  }
};
