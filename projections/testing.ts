/**
 * Helpers for tests of projections and the components above them: build events and
 * feed them to a projection without a log, and a minimal object factory.
 */
import { randomUUID } from 'node:crypto';
import type { LogRecord, RecordBatch } from '../log/port.ts';
import { partitionOfKey } from '../log/partitioner.ts';
import { encodeEvent, type Actor, type EventBody, type EventEnvelope } from '../schemas/index.ts';
import type { FoldedTopic } from './positions.ts';

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
