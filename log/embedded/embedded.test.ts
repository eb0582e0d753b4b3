/**
 * The embedded adapter: the shared EventLog contract, then what is specific to it
 * (options, retention, sharing a directory, the lock, groups' standby semantics).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, scan, take, timeout, toArray } from 'rxjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeEventLogContract } from '../contract.ts';
import { LogUnavailableError, LogUsageError } from '../errors.ts';
import type { Assignment, EventLog, LogRecord, NewRecord, RecordBatch } from '../port.ts';
import { acquireEnvironment } from './environment.ts';
import { standbyAssignment } from './groups.ts';
import { createEmbeddedLog, type EmbeddedEventLog, type EmbeddedLogOptions } from './index.ts';

const root = mkdtempSync(join(tmpdir(), 'logplane-embedded-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describeEventLogContract('embedded', {
  create: ({ cluster, partitions }) => createEmbeddedLog({ dir: join(root, cluster), cluster, partitions }),
  reopen: ({ cluster, partitions }) => createEmbeddedLog({ dir: join(root, cluster), cluster, partitions }),
  supportsMultiMemberGroups: false,
});

describe('embedded log', () => {
  const logs: EventLog[] = [];
  const freshDir = () => join(root, `own-${randomUUID().slice(0, 8)}`);
  const open = async (options: Partial<EmbeddedLogOptions> & { dir: string }): Promise<EmbeddedEventLog> => {
    const log = await createEmbeddedLog({ cluster: 'demo', ...options });
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
  });

  const records = (count: number, key = 'k', timestamp?: (i: number) => number): NewRecord[] =>
    Array.from({ length: count }, (_, i) => ({
      key,
      value: Buffer.from(`v${i}`),
      ...(timestamp ? { timestamp: timestamp(i) } : {}),
    }));
  const collect = (log: EventLog, count: number, from = {}): Promise<LogRecord[]> =>
    firstValueFrom(
      log.subscribe('desired', from).pipe(
        scan((all: LogRecord[], batch: RecordBatch) => [...all, ...batch.records], []),
        filter((all) => all.length >= count),
        take(1),
        timeout({ first: 10_000 }),
      ),
    );

  describe('options are validated before anything is opened', () => {
    it.each<[string, Partial<EmbeddedLogOptions>]>([
      ['an empty dir', { dir: '' }],
      ['a cluster with a slash', { cluster: 'a/b' }],
      ['an empty cluster', { cluster: '' }],
      ['zero partitions', { partitions: 0 }],
      ['fractional partitions', { partitions: 1.5 }],
      ['a retention for an unknown topic', { retention: { bogus: { type: 'forever' } } as never }],
      ['a zero time retention', { retention: { heartbeats: { type: 'time', ms: 0 } } }],
      ['an unknown durability', { durability: 'eventually' as never }],
    ])('rejects %s with LogUsageError', async (_, options) => {
      const dir = freshDir();
      await expect(createEmbeddedLog({ dir, cluster: 'demo', ...options })).rejects.toBeInstanceOf(LogUsageError);
    });
  });

  it('refuses to reopen a cluster with another partition count', async () => {
    const dir = freshDir();
    const first = await open({ dir, partitions: 3 });
    await first.close();
    await expect(createEmbeddedLog({ dir, cluster: 'demo', partitions: 2 })).rejects.toThrow(/has 3 partitions, not 2/);
  });

  it('keeps clusters in one directory apart', async () => {
    const dir = freshDir();
    const a = await open({ dir, cluster: 'a' });
    const b = await open({ dir, cluster: 'b', partitions: 2 });
    await a.append('desired', records(3));
    expect(await a.endOffsets('desired')).toEqual([3]);
    expect(await b.endOffsets('desired')).toEqual([0, 0]);
  });

  describe('two logs on one directory in one process', () => {
    it('share records, live notifications and end offsets', async () => {
      const dir = freshDir();
      const writer = await open({ dir, partitions: 2 });
      const reader = await open({ dir, partitions: 2 });
      const live = collect(reader, 10);
      const positions = await writer.append('desired', records(10, 'shared'));
      expect((await live).map((record) => record.offset)).toEqual(positions.map((position) => position.offset));
      expect(await reader.endOffsets('desired')).toEqual(await writer.endOffsets('desired'));
      // Appends through both interleave on one offset sequence.
      const [a, b] = await Promise.all([writer.append('desired', records(5, 'shared')), reader.append('desired', records(5, 'shared'))]);
      expect([...a!, ...b!].map((position) => position.offset).sort((x, y) => x - y)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    });

    it('share consumer groups: closing the owner hands its partitions to the other log', async () => {
      const dir = freshDir();
      const one = await open({ dir, partitions: 3 });
      const two = await open({ dir, partitions: 3 });
      const owner = await one.joinGroup('scheduler', ['desired']);
      const standby = await two.joinGroup('scheduler', ['desired']);
      const seen: Assignment[] = [];
      standby.assignments$.subscribe((assignment) => seen.push(assignment));
      expect(seen.map((a) => a.partitions.desired)).toEqual([[]]);
      await one.close();
      expect(seen.map((a) => a.partitions.desired)).toEqual([[], [0, 1, 2]]);
      expect(seen[1]!.generation).toBeGreaterThan(seen[0]!.generation);
      await owner.leave(); // already left by close: a no-op
      await standby.leave();
    });

    it('refuse a second open of the same cluster with another retention', async () => {
      const dir = freshDir();
      await open({ dir });
      await expect(
        createEmbeddedLog({ dir, cluster: 'demo', retention: { heartbeats: { type: 'time', ms: 5_000 } } }),
      ).rejects.toBeInstanceOf(LogUsageError);
    });
  });

  describe('the directory lock', () => {
    it('keeps out a process while another live process holds the directory', async () => {
      const dir = freshDir();
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'logplane-embedded.lock'), String(process.ppid));
      const opening = createEmbeddedLog({ dir, cluster: 'demo' });
      await expect(opening).rejects.toBeInstanceOf(LogUnavailableError);
      await expect(opening).rejects.toThrow(`in use by process ${process.ppid}`);
    });

    it('takes over a lock left by a process that is gone', async () => {
      const dir = freshDir();
      mkdirSync(dir, { recursive: true });
      const gone = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
      writeFileSync(join(dir, 'logplane-embedded.lock'), String(gone));
      const log = await open({ dir });
      expect(await log.endOffsets('desired')).toEqual([0]);
    });
  });

  describe('time retention', () => {
    const hour = 3_600_000;

    it('deletes expired records, keeps offsets dense, and reads start at the first retained offset', async () => {
      const dir = freshDir();
      const now = Date.now();
      const log = await open({ dir, retention: { heartbeats: { type: 'time', ms: hour } } });
      const old = records(5, 'node-1', (i) => now - 3 * hour + i);
      const fresh = records(3, 'node-1', (i) => now - 1_000 + i);
      await log.append('heartbeats', [...old, ...fresh]);
      await log.append('desired', records(2, 'k', () => now - 3 * hour));

      expect(await log.pruneExpired(now)).toEqual({ desired: 0, observed: 0, heartbeats: 5 });
      expect(await log.startOffsets('heartbeats')).toEqual([5]);
      expect(await log.endOffsets('heartbeats')).toEqual([8]);
      expect((await log.read('heartbeats', 0, 0)).map((record) => record.offset)).toEqual([5, 6, 7]);
      expect(await log.startOffsets('desired')).toEqual([0]);

      const subscribed = await firstValueFrom(
        log.subscribe('heartbeats').pipe(
          scan((all: number[], batch) => [...all, ...batch.records.map((record) => record.offset)], []),
          filter((all) => all.length >= 3),
          take(1),
          timeout({ first: 10_000 }),
        ),
      );
      expect(subscribed).toEqual([5, 6, 7]);
      expect(await log.offsetsForTime('heartbeats', 0)).toEqual([5]);
      expect(await log.append('heartbeats', records(1, 'node-1'))).toEqual([{ partition: 0, offset: 8 }]);
    });

    it('remembers the end offset when everything expired, across a reopen', async () => {
      const dir = freshDir();
      const retention = { heartbeats: { type: 'time', ms: hour } } as const;
      const first = await open({ dir, retention });
      await first.append('heartbeats', records(4, 'node-1', () => 1_000));
      expect(await first.pruneExpired()).toMatchObject({ heartbeats: 4 });
      expect(await first.startOffsets('heartbeats')).toEqual([4]);
      expect(await first.read('heartbeats', 0, 0)).toEqual([]);
      await first.close();

      const second = await open({ dir, retention });
      expect(await second.endOffsets('heartbeats')).toEqual([4]);
      expect(await second.startOffsets('heartbeats')).toEqual([4]);
      expect(await second.append('heartbeats', records(1, 'node-1'))).toEqual([{ partition: 0, offset: 4 }]);
    });

    it('prunes on its own timer when the log opens', async () => {
      const dir = freshDir();
      const retention = { heartbeats: { type: 'time', ms: hour } } as const;
      const first = await open({ dir, retention });
      await first.append('heartbeats', records(3, 'node-1', () => 1_000));
      await first.close();
      const second = await open({ dir, retention });
      await expect.poll(() => second.startOffsets('heartbeats'), { timeout: 10_000 }).toEqual([3]);
    });
  });

  it('finds times by the running max, so out-of-order timestamps keep Kafka semantics', async () => {
    const log = await open({ dir: freshDir() });
    const stamps = [100, 50, 200, 150, 300];
    await log.append('desired', stamps.map((timestamp, i) => ({ key: 'k', value: Buffer.from(`${i}`), timestamp })));
    expect((await log.read('desired', 0, 0)).map((record) => record.timestamp)).toEqual(stamps);
    expect(await log.offsetsForTime('desired', 50)).toEqual([0]);
    expect(await log.offsetsForTime('desired', 120)).toEqual([2]);
    expect(await log.offsetsForTime('desired', 150)).toEqual([2]);
    expect(await log.offsetsForTime('desired', 250)).toEqual([4]);
    expect(await log.offsetsForTime('desired', 301)).toEqual([5]);
  });

  it('delivers a backlog in chunks of at most 1,000, then live records, without gaps or duplicates', async () => {
    const log = await open({ dir: freshDir() });
    await log.append('desired', records(2_500));
    const batches: RecordBatch[] = [];
    const done = firstValueFrom(
      log.subscribe('desired').pipe(
        scan((count, batch) => {
          batches.push(batch);
          return count + batch.records.length;
        }, 0),
        filter((count) => count >= 2_510),
        take(1),
        timeout({ first: 10_000 }),
      ),
    );
    await log.append('desired', records(10));
    await done;
    expect(batches.every((batch) => batch.records.length <= 1_000)).toBe(true);
    expect(batches.flatMap((batch) => batch.records.map((record) => record.offset))).toEqual(
      Array.from({ length: 2_510 }, (_, i) => i),
    );
  });

  it('group-commits concurrent appends without losing or reusing offsets', async () => {
    const log = await open({ dir: freshDir(), partitions: 3 });
    const appends = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append('desired', records(3, `key-${i % 11}`))));
    const offsets = new Map<number, number[]>();
    for (const position of appends.flat()) offsets.set(position.partition, [...(offsets.get(position.partition) ?? []), position.offset]);
    for (const [partition, list] of offsets) {
      expect(list.sort((a, b) => a - b)).toEqual(Array.from({ length: list.length }, (_, i) => i));
      expect((await log.endOffsets('desired'))[partition]).toBe(list.length);
    }
  });

  it('rejects a malformed batch whole, appending nothing', async () => {
    const log = await open({ dir: freshDir() });
    const bad = [...records(2), { key: 'k', value: 'not a buffer' as unknown as Buffer }];
    await expect(log.append('desired', bad)).rejects.toBeInstanceOf(LogUsageError);
    await expect(log.append('desired', records(1, 'k', () => -5))).rejects.toBeInstanceOf(LogUsageError);
    expect(await log.endOffsets('desired')).toEqual([0]);
  });

  it('completes subscriptions and group streams on close', async () => {
    const log = await createEmbeddedLog({ dir: freshDir(), cluster: 'demo' });
    const batches = firstValueFrom(log.subscribe('desired').pipe(toArray()));
    const member = await log.joinGroup('g', ['desired']);
    const assignments = firstValueFrom(member.assignments$.pipe(toArray()));
    await log.close();
    await expect(batches).resolves.toEqual([]);
    expect((await assignments).map((a) => a.partitions.desired)).toEqual([[0]]);
    await expect(firstValueFrom(log.subscribe('desired'))).rejects.toBeInstanceOf(LogUsageError);
  });

  describe('durability', () => {
    /**
     * Holds back what the writer of `dir`'s environment awaits: the commit of a transaction
     * (its `batch` promise) and the flush to disk (`root.flushed`), each until released.
     */
    const holdWrites = async (dir: string) => {
      const env = await acquireEnvironment(dir);
      const root = env.root as unknown as { batch: (...args: unknown[]) => Promise<unknown>; flushed: PromiseLike<unknown> };
      const gate = () => {
        let release!: () => void;
        let reached!: () => void;
        return { held: new Promise<void>((resolve) => (release = resolve)), release: () => release(), reachedAt: new Promise<void>((resolve) => (reached = resolve)), reached: () => reached() };
      };
      const commit = gate();
      const flush = gate();
      const batch = root.batch;
      const flushed = root.flushed;
      root.batch = (...args: unknown[]) => {
        const committing = batch.apply(root, args);
        commit.reached();
        return commit.held.then(() => committing);
      };
      root.flushed = {
        then: (onDone, onFailed) => {
          flush.reached();
          return flush.held.then(() => flushed).then(onDone, onFailed);
        },
      };
      return {
        commit,
        flush,
        restore: async () => {
          commit.release();
          flush.release();
          delete (root as { batch?: unknown }).batch;
          delete (root as { flushed?: unknown }).flushed;
          await env.release();
        },
      };
    };
    /** Lets every callback already queued run (the writer's continuations of a released gate). */
    const settle = async () => {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const tracked = <T>(promise: Promise<T>) => {
      const state = { settled: false, promise };
      void promise.then(() => (state.settled = true), () => (state.settled = true));
      return state;
    };

    it('resolves appends after the commit only, when asked for committed durability', async () => {
      const dir = freshDir();
      const log = await open({ dir, durability: 'committed' });
      const writes = await holdWrites(dir);
      try {
        const append = tracked(log.append('desired', records(2)));
        await writes.commit.reachedAt;
        await settle();
        expect(append.settled, 'resolved before its transaction committed').toBe(false);
        writes.commit.release();
        // The flush stays held: a committed append must not wait for it.
        const outcome = await Promise.race([append.promise, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000))]);
        expect(outcome).toEqual([
          { partition: 0, offset: 0 },
          { partition: 0, offset: 1 },
        ]);
        expect((await log.read('desired', 0, 0)).map((record) => record.value.toString())).toEqual(['v0', 'v1']);
      } finally {
        await writes.restore();
      }
    });

    it('resolves appends only after the flush by default', async () => {
      const dir = freshDir();
      const log = await open({ dir });
      const writes = await holdWrites(dir);
      try {
        const append = tracked(log.append('desired', records(2)));
        await writes.commit.reachedAt;
        writes.commit.release();
        await Promise.race([writes.flush.reachedAt, append.promise]);
        await settle();
        expect(append.settled, 'resolved before its transaction was flushed').toBe(false);
        writes.flush.release();
        expect(await append.promise).toEqual([
          { partition: 0, offset: 0 },
          { partition: 0, offset: 1 },
        ]);
      } finally {
        await writes.restore();
      }
    });
  });
});

describe('standbyAssignment', () => {
  const member = (memberId: string, ...topics: ('desired' | 'observed' | 'heartbeats')[]) => ({ memberId, topics });
  it.each([
    {
      name: 'a lone member owns every partition of its topics',
      members: [member('a', 'desired', 'observed')],
      expected: { a: { desired: [0, 1, 2], observed: [0, 1, 2], heartbeats: [] } },
    },
    {
      name: 'a later member stands by',
      members: [member('a', 'desired'), member('b', 'desired')],
      expected: { a: { desired: [0, 1, 2], observed: [], heartbeats: [] }, b: { desired: [], observed: [], heartbeats: [] } },
    },
    {
      name: 'each topic goes to its longest-standing subscriber',
      members: [member('a', 'desired'), member('b', 'desired', 'heartbeats')],
      expected: {
        a: { desired: [0, 1, 2], observed: [], heartbeats: [] },
        b: { desired: [], observed: [], heartbeats: [0, 1, 2] },
      },
    },
  ])('$name', ({ members, expected }) => {
    expect(Object.fromEntries(standbyAssignment(members, 3))).toEqual(expected);
  });
});
