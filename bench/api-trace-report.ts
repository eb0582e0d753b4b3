/**
 * Reads the traces of the api scenario (BENCH_API_TRACE, see api-trace.ts) and prints, per
 * run, where the watch delivery's time went:
 *
 *   npx tsx bench/api-trace-report.ts /tmp/trace/*.json
 *
 * - delivery (watch arrival − response arrival, as the bench figure) split into the apiserver's
 *   part (watch flush − response handed to the socket) and the clients' part (the rest);
 * - per process, during the concurrent create phase: GC pauses by kind, event-loop stalls,
 *   and the time its main thread waited for a core;
 * - the watcher's major GCs in seconds after it started, beside the phase's place;
 * - of the deliveries over 5 ms, how many overlapped a watcher GC or another watcher stall.
 */
import { readFileSync } from 'node:fs';
import type { ApiTrace, ProcessTrace } from './api-trace.ts';
import { quantile } from './support.ts';

const ms = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');
const KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'major', 8: 'incremental', 16: 'weak' };

const overlapping = <T extends { at: number; ms: number }>(events: readonly T[], from: number, to: number): T[] =>
  events.filter((event) => event.at < to && event.at + event.ms > from);

const processLine = (name: string, trace: ProcessTrace | undefined, window: ApiTrace['window']): string => {
  if (!trace) return `  ${name}: not traced`;
  const gcs = overlapping(trace.gc, window.from, window.to);
  const byKind = new Map<string, number[]>();
  for (const gc of gcs) byKind.set(KINDS[gc.kind] ?? `kind ${gc.kind}`, [...(byKind.get(KINDS[gc.kind] ?? `kind ${gc.kind}`) ?? []), gc.ms]);
  const kinds = [...byKind].map(([kind, pauses]) => `${pauses.length} ${kind} (max ${ms(Math.max(...pauses))} ms)`).join(', ') || 'none';
  const stalls = overlapping(trace.stalls, window.from, window.to);
  // The sched sample nearest before and after the window (the load client marks its edges).
  const before = [...trace.sched].reverse().find((s) => s.at <= window.from + 1) ?? trace.sched[0]!;
  const after = trace.sched.find((s) => s.at >= window.to - 1) ?? trace.sched.at(-1)!;
  const waited = (after.waitNs - before.waitNs) / 1e6;
  const ran = (after.runNs - before.runNs) / 1e6;
  return `  ${name}: GCs ${kinds}; stalls > 6 ms: ${stalls.length} (max ${ms(Math.max(0, ...stalls.map((s) => s.ms)))} ms); main thread ran ${ms(ran)} ms, waited for a core ${ms(waited)} ms (${ms((after.at - before.at))} ms measured)`;
};

for (const file of process.argv.slice(2)) {
  const trace = JSON.parse(readFileSync(file, 'utf8')) as ApiTrace;
  const { window, server } = trace;
  console.log(`\n${file}: ${trace.log}, durability ${trace.durability}; concurrent creates ${ms((window.to - window.from) / 1000)} s`);
  const flushes = [...server.watchFlushes].sort((a, b) => a - b);
  const firstFlushAfter = (at: number): number => {
    let low = 0;
    let high = flushes.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (flushes[mid]! < at) low = mid + 1;
      else high = mid;
    }
    return flushes[low] ?? Number.NaN;
  };
  const pods = Object.keys(trace.clientResponded).flatMap((name) => {
    const arrived = trace.arrivals[name];
    const published = server.published[name];
    const responded = server.responded[name];
    if (arrived === undefined || published === undefined || responded === undefined) return [];
    const flushed = firstFlushAfter(published);
    return [{ arrived, published, responded, flushed, clientResponded: trace.clientResponded[name]! }];
  });
  if (pods.length === 0) {
    console.log('  no watched pods (a creates-only run)');
  } else {
    const delivery = pods.map((p) => Math.max(0, p.arrived - p.clientResponded));
    const serverPart = pods.map((p) => p.flushed - p.responded);
    const clientPart = pods.map((p) => p.arrived - p.flushed - (p.clientResponded - p.responded));
    console.log(`  delivery p50 ${ms(quantile(delivery, 0.5))} p99 ${ms(quantile(delivery, 0.99))} max ${ms(Math.max(...delivery))} ms (${pods.length} pods)`);
    console.log(
      `  apiserver: watch flushed before the response was handed over for ${pods.filter((p) => p.flushed <= p.responded).length} of ${pods.length} pods; flush − response p50 ${ms(quantile(serverPart, 0.5))} p99 ${ms(quantile(serverPart, 0.99))} ms`,
    );
    console.log(`  clients: (watch flush → arrival) − (response → arrival) p50 ${ms(quantile(clientPart, 0.5))} p99 ${ms(quantile(clientPart, 0.99))} ms`);
    if (trace.watch) {
      const slow = pods.filter((p) => p.arrived - p.clientResponded > 5);
      const duringGc = slow.filter((p) => overlapping(trace.watch!.gc, p.published, p.arrived).length > 0).length;
      const duringStall = slow.filter((p) => overlapping(trace.watch!.gc, p.published, p.arrived).length === 0 && overlapping(trace.watch!.stalls, p.published, p.arrived).length > 0).length;
      console.log(`  deliveries over 5 ms: ${slow.length}; during a watcher GC ${duringGc}, during another watcher stall ${duringStall}, neither ${slow.length - duringGc - duringStall}`);
      const start = trace.watch.started;
      const majors = trace.watch.gc.filter((gc) => gc.kind === 2 || gc.kind === 4).map((gc) => `${ms((gc.at - start) / 1000)} s (${ms(gc.ms)} ms)`);
      console.log(`  watcher: concurrent creates ${ms((window.from - start) / 1000)}–${ms((window.to - start) / 1000)} s after it started; its major GCs at ${majors.join(', ') || 'none'}`);
    }
  }
  console.log(processLine('apiserver', server.process, window));
  console.log(processLine('load', trace.load, window));
  console.log(processLine('watcher', trace.watch, window));
}
