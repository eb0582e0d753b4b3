import { describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { createLogBarrier } from './log-barrier.ts';

/** A log whose end-offsets answers the test releases by hand, numbering the queries. */
const manualLog = () => {
  const pending: { topic: string; resolve: (offsets: number[]) => void; reject: (error: Error) => void }[] = [];
  let queries = 0;
  let end = 0;
  const log = {
    endOffsets: (topic: string) =>
      new Promise<number[]>((resolve, reject) => {
        if (topic === 'desired') queries += 1;
        pending.push({ topic, resolve, reject });
      }),
  } as unknown as EventLog;
  return {
    log,
    queries: () => queries,
    /** Appends happen: the end the next answers report. */
    advance: (to: number) => {
      end = to;
    },
    /** Answers every query in flight with the current end. */
    answer: async () => {
      for (const query of pending.splice(0)) query.resolve([end]);
      await new Promise((resolve) => setImmediate(resolve));
    },
    fail: async () => {
      for (const query of pending.splice(0)) query.reject(new Error('broker unreachable'));
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
};

describe('log barrier (consistent reads)', () => {
  it('never answers a read with a query sent before the read arrived', async () => {
    const manual = manualLog();
    const barrier = createLogBarrier(manual.log);
    const first = barrier();
    manual.advance(5); // a write completes after the first query was sent
    const second = barrier(); // ...and before this read: it must see offset 5
    await manual.answer(); // the first query's answer (sent before the write... but answered now)
    manual.advance(7);
    await manual.answer(); // the query sent for the second read
    expect((await second).desired).toEqual([7]);
    expect((await first).desired[0]).toBeLessThanOrEqual(7);
    expect(manual.queries()).toBe(2);
  });

  it('reads arriving while a query is in flight share the next one', async () => {
    const manual = manualLog();
    const barrier = createLogBarrier(manual.log);
    const first = barrier();
    const waiting = Array.from({ length: 10 }, () => barrier());
    expect(manual.queries()).toBe(1);
    manual.advance(3);
    await manual.answer();
    expect(manual.queries()).toBe(2);
    await manual.answer();
    expect((await Promise.all(waiting)).map((p) => p.desired[0])).toEqual(Array(10).fill(3));
    expect((await first).desired).toEqual([3]);
    // idle again: the next read sends its own query at once
    const later = barrier();
    expect(manual.queries()).toBe(3);
    await manual.answer();
    expect((await later).observed).toEqual([3]);
  });

  it('a failed query fails its reads; the reads after it query again', async () => {
    const manual = manualLog();
    const barrier = createLogBarrier(manual.log);
    const failed = barrier();
    const sharing = barrier();
    await manual.fail();
    await expect(failed).rejects.toThrow('broker unreachable');
    expect(manual.queries()).toBe(2); // the sharing read's own query went out after the failure
    await manual.answer();
    expect((await sharing).desired).toEqual([0]);
  });
});
