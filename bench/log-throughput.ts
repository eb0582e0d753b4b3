/**
 * Append and consume rates of the EventLog adapters.
 *
 *   npm run bench:log [-- --adapter embedded,kafka,etcd|both|all] [--events 100000]
 *                        [--batch 10000] [--size 200] [--partitions 1]
 *
 * For each adapter, on a fresh cluster: appends `events` records of `size` bytes in
 * sequential batches of `batch`, then consumes them all through one `subscribe` from 0
 * (time includes the reader's start-up), then 2,000 single-record appends with 50 in
 * flight (how concurrent small appends share requests). Kafka comes from KAFKA_BROKERS or
 * `.kafka-local/state.json` (`npm run kafka:start`).
 *
 * `etcd` (in `all`, the default) is the store under Kubernetes, measured the same way in
 * the same run: a fresh single-member etcd started here (`etcd.ts`; `npm run bench:log`
 * installs Debian's etcd-server first, see `setup.sh`), each batch one transaction of
 * `batch` puts (of distinct keys: etcd refuses a key twice in one transaction), the
 * consumption one watch from the first revision, the single-record
 * appends single puts with 50 in flight. Printed in the same table, with each log's
 * figure as a multiple of etcd's.
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
import { etcdClient, startLocalEtcd } from './etcd.ts';

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

/** The same three measurements on a fresh etcd, with puts and a watch in place of appends and a subscription. */
const benchEtcd = async (config: BenchConfig): Promise<BenchResult> => {
  const etcd = await startLocalEtcd();
  const client = etcdClient(etcd.endpoint);
  try {
    const batches = makeBatches(config);
    const appendStart = performance.now();
    let firstRevision = 0;
    let sequence = 0;
    for (const batch of batches) {
      // etcd refuses a transaction that puts one key twice, and the batches repeat their
      // 1,000 keys: each record gets a key of its own, as each event is a record of its own.
      const revision = await client.putAll(batch.map(({ key, value }) => ({ key: `/desired/${key}/${sequence++}`, value })));
      firstRevision ||= revision;
    }
    const appendMs = performance.now() - appendStart;

    const consumeStart = performance.now();
    let firstBatchMs = 0;
    let seen = 0;
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const watch = await client.watch('/desired/', firstRevision, (count) => {
      if (seen === 0) firstBatchMs = performance.now() - consumeStart;
      seen += count;
      if (seen >= config.events) done();
    });
    await all;
    const consumeMs = performance.now() - consumeStart;
    await watch.close();

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
          await client.put(`/observed/Node/node-${i % 10}`, Buffer.alloc(config.size, i % 256));
          latencyTotal += performance.now() - sent;
        }
      }),
    );
    const smallMs = performance.now() - smallStart;
    return {
      adapter: `etcd ${etcd.version}`,
      appendPerSec: perSecond(config.events, appendMs),
      consumePerSec: perSecond(config.events, consumeMs),
      firstBatchMs: Math.round(firstBatchMs),
      smallAppendsPerSec: perSecond(small, smallMs),
      smallAppendMeanMs: Math.round((latencyTotal / small) * 10) / 10,
    };
  } finally {
    client.close();
    await etcd.stop();
  }
};

const ADAPTERS = ['embedded', 'kafka', 'etcd'] as const;
type Adapter = (typeof ADAPTERS)[number];

const { values } = parseArgs({
  options: {
    adapter: { type: 'string', default: 'all' },
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
const adapterList = values.adapter === 'all' ? [...ADAPTERS] : values.adapter === 'both' ? ['embedded', 'kafka'] : values.adapter.split(',');
if (!adapterList.every((adapter): adapter is Adapter => (ADAPTERS as readonly string[]).includes(adapter))) {
  throw new Error(`--adapter must be all, both, or a comma-separated list of ${ADAPTERS.join(', ')}; got ${values.adapter}`);
}
const adapters: readonly Adapter[] = adapterList;

console.log(
  `${config.events} events of ${config.size} B, appended in batches of ${config.batch}, ${config.partitions} partition(s)`,
);
const run = (adapter: Adapter): Promise<BenchResult> => {
  switch (adapter) {
    case 'embedded':
      return benchEmbedded(config);
    case 'kafka':
      return benchKafka(config);
    case 'etcd':
      return benchEtcd(config);
  }
};
const results: BenchResult[] = [];
for (const adapter of adapters) results.push(await run(adapter));
const etcd = results.find((r) => r.adapter.startsWith('etcd'));
/** `value` and, beside an etcd row in the same run, its multiple of etcd's figure. */
const withRatio = (value: number, etcdValue: number | undefined, isEtcd: boolean): string =>
  etcdValue === undefined || isEtcd || etcdValue === 0 ? String(value) : `${value} (${(value / etcdValue).toFixed(2)}x etcd)`;
console.table(
  results.map((r) => {
    const isEtcd = r === etcd;
    return {
      adapter: r.adapter,
      'append events/s': withRatio(r.appendPerSec, etcd?.appendPerSec, isEtcd),
      'consume events/s': withRatio(r.consumePerSec, etcd?.consumePerSec, isEtcd),
      'first batch ms': r.firstBatchMs,
      '1-record appends/s (50 in flight)': withRatio(r.smallAppendsPerSec, etcd?.smallAppendsPerSec, isEtcd),
      'mean append latency ms': withRatio(r.smallAppendMeanMs, etcd?.smallAppendMeanMs, isEtcd),
    };
  }),
);
