/**
 * Coalesced timers: any number of deadlines behind a single Node timer, armed for the
 * earliest one. Lets a process hold timers for tens of thousands of simulated pods
 * without a Node timer each.
 */

/** Cancels a scheduled callback; a no-op once it ran or was cancelled. */
export type CancelTimer = () => void;

/** A min-heap of deadlines served by one unref'd Node timer. */
export interface TimerQueue {
  /** Runs `fire` once, `delayMs` from now. */
  schedule(delayMs: number, fire: () => void): CancelTimer;
  /** Number of callbacks still scheduled. */
  readonly size: number;
}

interface Entry {
  readonly at: number;
  readonly seq: number;
  fire: (() => void) | null;
}

/** Creates a timer queue on a monotonic clock (wall-clock jumps do not move deadlines). */
export function createTimerQueue(clock: () => number = () => performance.now()): TimerQueue {
  const heap: Entry[] = [];
  let live = 0;
  let seq = 0;
  let armed: { at: number; timer: NodeJS.Timeout } | null = null;

  const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
  const swap = (i: number, j: number) => {
    const t = heap[i] as Entry;
    heap[i] = heap[j] as Entry;
    heap[j] = t;
  };
  const push = (entry: Entry) => {
    heap.push(entry);
    for (let i = heap.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Entry, heap[parent] as Entry)) break;
      swap(i, parent);
      i = parent;
    }
  };
  const pop = (): Entry | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < heap.length && before(heap[l] as Entry, heap[smallest] as Entry)) smallest = l;
        if (r < heap.length && before(heap[r] as Entry, heap[smallest] as Entry)) smallest = r;
        if (smallest === i) break;
        swap(i, smallest);
        i = smallest;
      }
    }
    return top;
  };

  const arm = () => {
    while (heap.length > 0 && (heap[0] as Entry).fire === null) pop();
    const next = heap[0];
    if (next === undefined) {
      if (armed !== null) clearTimeout(armed.timer);
      armed = null;
      return;
    }
    if (armed !== null && armed.at <= next.at) return;
    if (armed !== null) clearTimeout(armed.timer);
    const timer = setTimeout(run, Math.max(0, next.at - clock()));
    timer.unref();
    armed = { at: next.at, timer };
  };

  const run = () => {
    armed = null;
    const now = clock();
    while (heap.length > 0 && (heap[0] as Entry).at <= now) {
      const entry = pop() as Entry;
      const fire = entry.fire;
      if (fire === null) continue;
      entry.fire = null;
      live--;
      try {
        fire();
      } catch (err) {
        queueMicrotask(() => {
          throw err;
        });
      }
    }
    arm();
  };

  /** Drops cancelled entries once they outnumber the live ones, so the heap stays small. */
  const compact = () => {
    if (heap.length < 64 || heap.length < 2 * live) return;
    const kept = heap.filter((entry) => entry.fire !== null);
    heap.length = 0;
    for (const entry of kept) push(entry);
  };

  return {
    schedule(delayMs, fire) {
      const entry: Entry = { at: clock() + Math.max(0, delayMs), seq: seq++, fire };
      live++;
      push(entry);
      arm();
      return () => {
        if (entry.fire === null) return;
        entry.fire = null;
        live--;
        compact();
        if (live === 0) arm();
      };
    },
    get size() {
      return live;
    },
  };
}

let shared: TimerQueue | undefined;

/** The process-wide queue the sim runtime uses, so all simulated nodes share one Node timer. */
export function sharedTimerQueue(): TimerQueue {
  shared ??= createTimerQueue();
  return shared;
}
