/**
 * Diagnostics of the api scenario, on when BENCH_API_TRACE names a directory: one JSON file
 * per measured run there, read with `npx tsx bench/api-trace-report.ts <dir>/*.json`.
 *
 * - In each of the three processes (apiserver, load, watcher): its GC pauses
 *   (PerformanceObserver 'gc', with V8's kind: 1 minor, 4 major, 8 incremental), the stalls
 *   of its event loop (a 2 ms timer that fired more than 6 ms late: a GC, long work, or the
 *   thread waiting for a core) and its main thread's scheduler counters
 *   (/proc/self/task/<pid>/schedstat: ns run, ns waited for a core, time slices).
 * - In the apiserver, per pod of the watched namespace: when the projection published its
 *   ADDED change, when the create's response was handed to the socket, and when watch
 *   streams were flushed (the watch corks a batch's events and uncorks them once).
 *
 * Wall-clock ms (`performance.timeOrigin + performance.now()`) throughout, as the delivery
 * figure itself. The 2 ms timer adds ~500 wake-ups per second to each process: compare
 * traced runs with traced runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import type { Observable } from 'rxjs';

/** The directory traces go to, if tracing is on. */
export const traceDir = (): string | undefined => process.env.BENCH_API_TRACE || undefined;

const wallClock = (): number => performance.timeOrigin + performance.now();

export interface SchedSample {
  readonly at: number;
  readonly runNs: number;
  readonly waitNs: number;
  readonly slices: number;
}

/** What one process saw of itself. */
export interface ProcessTrace {
  /** When the trace started (about when the process started). */
  readonly started: number;
  readonly gc: { readonly at: number; readonly ms: number; readonly kind: number }[];
  readonly stalls: { readonly at: number; readonly ms: number }[];
  /** At the start, at each `mark()`, and at the end. */
  readonly sched: SchedSample[];
}

const schedstat = (): SchedSample => {
  try {
    const [run, wait, slices] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { at: wallClock(), runNs: run!, waitNs: wait!, slices: slices! };
  } catch {
    return { at: wallClock(), runNs: Number.NaN, waitNs: Number.NaN, slices: Number.NaN };
  }
};

/** Starts recording this process's GC pauses, event-loop stalls and scheduler counters. */
export const startProcessTrace = (): { mark: () => void; stop: () => ProcessTrace } => {
  const trace: ProcessTrace = { started: wallClock(), gc: [], stalls: [], sched: [schedstat()] };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
      trace.gc.push({ at: performance.timeOrigin + entry.startTime, ms: entry.duration, kind });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - last > 6) trace.stalls.push({ at: performance.timeOrigin + last, ms: now - last });
    last = now;
  }, 2);
  ticker.unref();
  return {
    mark: () => void trace.sched.push(schedstat()),
    stop: () => {
      clearInterval(ticker);
      observer.disconnect();
      trace.sched.push(schedstat());
      return trace;
    },
  };
};

/** What the apiserver's process saw of the pods of the watched namespace. */
export interface ServerTrace {
  readonly process: ProcessTrace;
  /** Pod name → when the projection published its ADDED change. */
  readonly published: Record<string, number>;
  /** Pod name → when its create's response body was handed to the socket (`res.end`). */
  readonly responded: Record<string, number>;
  /** When a corked response (a watch stream) was uncorked: its batch's events left. */
  readonly watchFlushes: number[];
}

/**
 * Starts tracing the apiserver side: `changes` is the projection's change feed, `podPrefix`
 * the key prefix of the watched pods ("Pod/<namespace>/"). Patches ServerResponse's `end`
 * and `uncork` in this process until `stop()`.
 */
export const startServerTrace = (
  changes: Observable<{ readonly type: string; readonly key: string }>,
  podPrefix: string,
): { stop: () => ServerTrace } => {
  const processTrace = startProcessTrace();
  const published: Record<string, number> = {};
  const responded: Record<string, number> = {};
  const watchFlushes: number[] = [];
  const feed = changes.subscribe((change) => {
    if (change.type === 'ADDED' && change.key.startsWith(podPrefix)) published[change.key.slice(podPrefix.length)] = wallClock();
  });
  const proto = ServerResponse.prototype;
  const { end, uncork } = proto;
  const podName = /"kind":"Pod".*?"name":"([^"]+)"/;
  proto.end = function (this: ServerResponse, ...args: unknown[]) {
    const chunk = args[0];
    if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) {
      const name = podName.exec(chunk.toString())?.[1];
      if (name !== undefined && !(name in responded)) responded[name] = wallClock();
    }
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof end;
  proto.uncork = function (this: ServerResponse) {
    uncork.call(this);
    watchFlushes.push(wallClock());
  };
  let stopped: ServerTrace | undefined;
  return {
    /** Idempotent: restores ServerResponse and returns the same trace on every call. */
    stop: () => {
      if (stopped) return stopped;
      feed.unsubscribe();
      proto.end = end;
      proto.uncork = uncork;
      stopped = { process: processTrace.stop(), published, responded, watchFlushes };
      return stopped;
    },
  };
};

export interface StepSample {
  readonly at: number;
  readonly ms: number;
}

/** One measured run: what each process saw. */
export interface ApiTrace {
  readonly log: string;
  readonly durability: string;
  /** Wall-clock ms of the concurrent create phase. */
  readonly window: { readonly from: number; readonly to: number };
  /** Pod name → when its create's response arrived at the load client. */
  readonly clientResponded: Record<string, number>;
  /** Pod name → when its ADDED event arrived at the watcher. */
  readonly arrivals: Record<string, number>;
  readonly server: ServerTrace;
  /** The apiserver's appends of desired events and its waits for its projection: when each ended and how long it took. */
  readonly steps: { readonly append: readonly StepSample[]; readonly applied: readonly StepSample[] };
  readonly load?: ProcessTrace;
  readonly watch?: ProcessTrace;
}

export const writeApiTrace = (dir: string, trace: ApiTrace): string => {
  const file = join(dir, `api-${trace.log}-${trace.durability}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(trace));
  return file;
};
