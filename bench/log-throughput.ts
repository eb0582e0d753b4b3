/**
 * Append and consume rates of the EventLog adapters.
 *
 *   npx tsx bench/log-throughput.ts [--adapter kafka|embedded|both] [--events 100000]
 *                                   [--batch 10000] [--size 200] [--partitions 1]
 *
 * For each adapter, on a fresh cluster: appends `events` records of `size` bytes in
 * sequential batches of `batch`, then consumes them all through one `subscribe` from 0
 * (time includes the reader's start-up), then 2,000 single-record appends with 50 in
 * flight (how concurrent small appends share requests). Kafka comes from KAFKA_BROKERS or
 * `.kafka-local/state.json` (`npm run kafka:start`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { filter, firstValueFrom, scan } from 'rxjs';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { createKafkaLog } from '../log/kafka/index.ts';
import type { EventLog, NewRecord } from '../log/port.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';

interface BenchConfig {
  readonly events: number;
  readonly batch: number;
  readonly size: number;
  readonly partitions: number;
}

interface BenchResult {
  readonly adapter: string;
  readonly appendPerSec: number;
  readonly consumePerSec: number;
  readonly firstBatchMs: number;
  readonly smallAppendsPerSec: number;
  readonly smallAppendMeanMs: number;
}

const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / ms);

const makeBatches = (config: BenchConfig): NewRecord[][] => {
  const payload = randomBytes(config.size);
  const batches: NewRecord[][] = [];
  for (let start = 0; start < config.events; start += config.batch) {
    const batch: NewRecord[] = [];
    for (let i = start; i < Math.min(config.events, start + config.batch); i++) {
      const value = Buffer.from(payload);
      value.writeUInt32BE(i, 0);
      batch.push({ key: `Pod/default/pod-${i % 1_000}`, value });
    }
    batches.push(batch);
  }
  return batches;
};

const runBench = async (adapter: string, log: EventLog, config: BenchConfig): Promise<BenchResult> => {
  const batches = makeBatches(config);
  const appendStart = performance.now();
  for (const batch of batches) await log.append('desired', batch);
  const appendMs = performance.now() - appendStart;

  const consumeStart = performance.now();
  let firstBatchMs = 0;
  await firstValueFrom(
    log.subscribe('desired').pipe(
      scan((count, batch) => {
        if (count === 0) firstBatchMs = performance.now() - consumeStart;
        return count + batch.records.length;
      }, 0),
      filter((count) => count >= config.events),
    ),
  );
  const consumeMs = performance.now() - consumeStart;

  const small = 2_000;
  const inFlight = 50;
  let next = 0;
  let latencyTotal = 0;
  const smallStart = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < small) {
        const i = next++;
        const sent = performance.now();
        await log.append('observed', [{ key: `Node/node-${i % 10}`, value: Buffer.alloc(config.size, i % 256) }]);
        latencyTotal += performance.now() - sent;
      }
    }),
  );
  const smallMs = performance.now() - smallStart;

  return {
    adapter,
    appendPerSec: perSecond(config.events, appendMs),
    consumePerSec: perSecond(config.events, consumeMs),
    firstBatchMs: Math.round(firstBatchMs),
    smallAppendsPerSec: perSecond(small, smallMs),
    smallAppendMeanMs: Math.round((latencyTotal / small) * 10) / 10,
  };
};

const benchKafka = async (config: BenchConfig): Promise<BenchResult> => {
  const log = await createKafkaLog({
    brokers: kafkaBrokers(),
    cluster: `bench-${randomUUID().slice(0, 8)}`,
    partitions: config.partitions,
    logLevel: 'error',
  });
  try {
    const result = await runBench('kafka', log, config);
    const { produceRequests } = log.stats();
    console.error(`kafka: ${produceRequests} Produce requests in total`);
    return result;
  } finally {
    await log.close();
  }
};

const benchEmbedded = async (config: BenchConfig): Promise<BenchResult> => {
  const dir = await mkdtemp(join(tmpdir(), 'logplane-bench-'));
  const log = await createEmbeddedLog({ dir, cluster: 'bench', partitions: config.partitions });
  try {
    return await runBench('embedded', log, config);
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
};

const { values } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'both' },
    events: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '10000' },
    size: { type: 'string', default: '200' },
    partitions: { type: 'string', default: '1' },
  },
});
const config: BenchConfig = {
  events: Number(values.events),
  batch: Number(values.batch),
  size: Number(values.size),
  partitions: Number(values.partitions),
};
for (const [name, value] of Object.entries(config)) {
  if (!Number.isInteger(value) || value < (name === 'size' ? 4 : 1)) throw new Error(`--${name} must be a positive integer (size ≥ 4)`);
}
const adapters = values.adapter === 'both' ? ['embedded', 'kafka'] : [values.adapter];
if (!adapters.every((adapter) => adapter === 'kafka' || adapter === 'embedded')) {
  throw new Error(`--adapter must be kafka, embedded or both, got ${values.adapter}`);
}

console.log(
  `${config.events} events of ${config.size} B, appended in batches of ${config.batch}, ${config.partitions} partition(s)`,
);
const results: BenchResult[] = [];
for (const adapter of adapters) results.push(adapter === 'kafka' ? await benchKafka(config) : await benchEmbedded(config));
console.table(
  results.map((r) => ({
    adapter: r.adapter,
    'append events/s': r.appendPerSec,
    'consume events/s': r.consumePerSec,
    'first batch ms': r.firstBatchMs,
    '1-record appends/s (50 in flight)': r.smallAppendsPerSec,
    'mean append latency ms': r.smallAppendMeanMs,
  })),
);
