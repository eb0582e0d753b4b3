/**
 * Embedded log rates: 100,000 events appended in batches then consumed through one
 * subscription, and small appends with many in flight, for each durability setting.
 *
 *   npx tsx bench/log-embedded.ts [--events 100000] [--batch 10000] [--size 200]
 *                                 [--partitions 1] [--small 2000] [--inflight 50]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { filter, firstValueFrom, scan } from 'rxjs';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import type { EventLog, NewRecord } from '../log/port.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '10000' },
    size: { type: 'string', default: '200' },
    partitions: { type: 'string', default: '1' },
    small: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '50' },
  },
});
const events = Number(values.events);
const batch = Number(values.batch);
const size = Number(values.size);
const partitions = Number(values.partitions);
const small = Number(values.small);
const inflight = Number(values.inflight);

const record = (i: number): NewRecord => {
  const value = Buffer.alloc(size);
  value.writeUInt32BE(i);
  return { key: `node-${i % 64}`, value };
};
const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / ms);

const appendAll = async (log: EventLog): Promise<number> => {
  const started = performance.now();
  for (let start = 0; start < events; start += batch) {
    await log.append('desired', Array.from({ length: Math.min(batch, events - start) }, (_, i) => record(start + i)));
  }
  return perSecond(events, performance.now() - started);
};

const consumeAll = async (log: EventLog): Promise<number> => {
  const started = performance.now();
  await firstValueFrom(
    log.subscribe('desired').pipe(
      scan((count, received) => count + received.records.length, 0),
      filter((count) => count >= events),
    ),
  );
  return perSecond(events, performance.now() - started);
};

const smallAppends = async (log: EventLog): Promise<{ perSec: number; meanMs: number }> => {
  let next = 0;
  let latencyTotal = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < small) {
      const i = next++;
      const t0 = performance.now();
      await log.append('observed', [record(i)]);
      latencyTotal += performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  return { perSec: perSecond(small, performance.now() - started), meanMs: Number((latencyTotal / small).toFixed(2)) };
};

const rows = [];
for (const durability of ['flushed', 'committed'] as const) {
  const dir = await mkdtemp(join(tmpdir(), 'logplane-bench-embedded-'));
  const log = await createEmbeddedLog({ dir, cluster: 'bench', partitions, durability });
  try {
    const appendPerSec = await appendAll(log);
    const consumePerSec = await consumeAll(log);
    const { perSec, meanMs } = await smallAppends(log);
    rows.push({
      durability,
      'append events/s': appendPerSec,
      'consume events/s': consumePerSec,
      [`1-record appends/s (${inflight} in flight)`]: perSec,
      'mean append latency ms': meanMs,
    });
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
}
console.log(`${events} events of ${size} B in batches of ${batch}, ${partitions} partition(s); ${small} small appends`);
console.table(rows);
