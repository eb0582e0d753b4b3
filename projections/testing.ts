/**
 * Helpers for tests of projections and the components above them: build events and
 * feed them to a projection without a log, a fold state in memory, and logs of both
 * adapters.
 */
import { randomUUID } from 'node:crypto';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { createKafkaLog } from '../log/kafka/index.ts';
import type { EventLog, LogRecord, RecordBatch } from '../log/port.ts';
import { partitionOfKey } from '../log/partitioner.ts';
import { assertNever, encodeEvent, type Actor, type EventBody, type EventEnvelope } from '../schemas/index.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';
import type { DesiredRecord, FoldState, StatusRecord } from './fold.ts';
import type { FoldedTopic } from './positions.ts';
import type { NodeUsage } from './resources.ts';
import { deepFreeze, type ProjectionStore } from './store.ts';

export const admin: Actor = { type: 'user', name: 'admin' };

let clock = Date.UTC(2026, 0, 1);

/** An event with a fresh id and a strictly increasing timestamp. */
export const makeEvent = (key: string, body: EventBody, actor: Actor = admin, causationId: string | null = null): EventEnvelope => {
  const id = randomUUID();
  clock += 1000;
  return { id, time: clock, actor, causationId, correlationId: causationId ?? id, key, body };
};

/** Turns events into record batches as a log of `partitions` partitions would deliver them. */
export const toBatches = (
  topic: FoldedTopic,
  events: readonly (EventEnvelope | Buffer)[],
  partitions = 1,
  nextOffsets: number[] = Array.from({ length: partitions }, () => 0),
): RecordBatch[] => {
  const byPartition = new Map<number, LogRecord[]>();
  for (const item of events) {
    const isRaw = Buffer.isBuffer(item);
    const key = isRaw ? 'garbage' : item.key;
    const partition = partitionOfKey(key, partitions);
    const offset = nextOffsets[partition] ?? 0;
    nextOffsets[partition] = offset + 1;
    const records = byPartition.get(partition) ?? [];
    records.push({
      topic,
      partition,
      offset,
      key,
      value: isRaw ? item : encodeEvent(item),
      timestamp: isRaw ? 0 : item.time,
    });
    byPartition.set(partition, records);
  }
  return [...byPartition.entries()].map(([partition, records]) => ({ topic, partition, records }));
};

/**
 * Everything a fold's state holds, as plain data with keys in sorted order: two states with
 * equal contents answer every read of the fold alike.
 */
export interface FoldContents {
  readonly desired: Readonly<Record<string, DesiredRecord>>;
  readonly status: Readonly<Record<string, StatusRecord>>;
  readonly usage: Readonly<Record<string, NodeUsage>>;
  readonly allocations: Readonly<Record<string, string>>;
}

/** A `FoldState` in memory, for tests of the fold alone, that can show its contents. */
export interface MemoryFoldState extends FoldState {
  contents(): FoldContents;
}

const sortedRecord = <V>(map: ReadonlyMap<string, V>): Record<string, V> =>
  Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * An in-memory `FoldState` for a log of `partitions` partitions. It deep-freezes what it
 * stores, as the LMDB store does, so a fold that writes into a stored record throws.
 */
export const memoryFoldState = (partitions = 1): MemoryFoldState => {
  const desired = new Map<string, DesiredRecord>();
  const status = new Map<string, StatusRecord>();
  const usage = new Map<string, NodeUsage>();
  const allocations = new Map<string, string>();
  return {
    getDesired: (key) => desired.get(key),
    putDesired: (key, record) => void desired.set(key, deepFreeze(record)),
    deleteDesired: (key) => void desired.delete(key),
    getStatus: (key) => status.get(key),
    putStatus: (key, record) => void status.set(key, deepFreeze(structuredClone(record))),
    getNodeUsage: (node) => usage.get(node),
    putNodeUsage: (node, value) => void usage.set(node, deepFreeze({ ...value })),
    getAllocation: (resource) => allocations.get(resource),
    putAllocation: (resource, owner) => void (owner === undefined ? allocations.delete(resource) : allocations.set(resource, owner)),
    sharesPartition: (a, b) => partitionOfKey(a, partitions) === partitionOfKey(b, partitions),
    desiredKeys: (prefix) => [...desired.keys()].filter((key) => key.startsWith(prefix)).sort(),
    contents: () => structuredClone({
      desired: sortedRecord(desired),
      status: sortedRecord(status),
      usage: sortedRecord(usage),
      allocations: sortedRecord(allocations),
    }),
  };
};

/** The contents of a projection's current state, in the shape of `MemoryFoldState.contents`. */
export const projectionContents = (store: ProjectionStore): FoldContents => {
  const entries = <V>(range: Iterable<{ key: string; value: V }>): Record<string, V> =>
    Object.fromEntries([...range].map(({ key, value }) => [key, value]));
  const desired: Record<string, DesiredRecord> = {};
  for (const key of store.objects.getKeys()) {
    const record = store.desiredOf(key);
    if (record) desired[key] = record;
  }
  return structuredClone({
    desired,
    status: entries(store.status.getRange()),
    usage: entries(store.usage.getRange()),
    allocations: entries(store.allocations.getRange()),
  });
};

/** The two logs every projection scenario runs on. */
export const LOG_ADAPTERS = ['embedded', 'kafka'] as const;
export type LogAdapter = (typeof LOG_ADAPTERS)[number];

/**
 * A log of `adapter`: the embedded LMDB log in `dir`, or Kafka topics on the real broker
 * vitest's global setup provides. A new cluster name unless `cluster` is given (a Kafka
 * client of a cluster opened before: another writer on the same topics).
 */
export const openTestLog = async (
  adapter: LogAdapter,
  options: { readonly dir: string; readonly partitions: number; readonly cluster?: string },
): Promise<EventLog> => {
  const cluster = options.cluster ?? `proj-${randomUUID().slice(0, 8)}`;
  const { dir, partitions } = options;
  switch (adapter) {
    case 'embedded':
      return createEmbeddedLog({ dir, cluster, partitions, durability: 'committed' });
    case 'kafka':
      return createKafkaLog({ brokers: kafkaBrokers(), cluster, partitions, logLevel: 'error' });
    default:
      return assertNever(adapter, 'log adapter');
  }
};
