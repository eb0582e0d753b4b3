/**
 * The write side of the Kafka log: appends are queued and sent by one loop, many records
 * per Produce request (several appends waiting at once share a request: group commit),
 * with each record's position computed from the per-partition `baseOffset` Kafka returns.
 *
 * Why positions are exact: within one Produce request kafkajs puts all messages of one
 * partition, in the order given, into one record batch, and Kafka appends a batch
 * atomically at consecutive offsets starting at the `baseOffset` of that partition's
 * response. So the i-th record we placed for partition p in a request lands at
 * `baseOffset(p) + i`. One request is in flight at a time (the next waits for every
 * partition's answer), so appends reach the log in the order `append` was called (per
 * partition), and an append's records stay in input order even when it spans several
 * requests.
 *
 * A request is handed to kafkajs as one `sendBatch` per partition, run concurrently (so
 * partitions led by different brokers still go out in parallel). With all partitions in one
 * call, a 3-broker cluster wrote a batch twice and the call succeeded: right after topic
 * creation, one partition's 6 records of a 30-record append sat at offsets 0-5 and again
 * at 6-11. kafkajs 2.2.4 (sendMessages.js) sends a call's partitions to each leader in a
 * request of its own and, on a retry, re-sends to every broker it holds no answer from,
 * keyed by broker object; the sequence numbers of a broker that answered stay advanced, so
 * when its broker object was replaced meanwhile, its batch goes out again as new records.
 * A call for one partition has one leader: a retry re-sends the same batch with the same
 * sequence numbers, which Kafka dedupes. `assignPositions` refuses an answer that names a
 * partition twice.
 */
import type { Message, Producer, RecordMetadata, TopicMessages } from 'kafkajs';
import { LogError, LogUsageError } from '../errors.ts';
import { partitionFor } from '../partitioner.ts';
import type { NewRecord, Position } from '../port.ts';

/** Bounds of one Produce request. */
export interface RequestLimits {
  /** Estimated bytes per partition record batch; Kafka rejects batches over `message.max.bytes` (≈1 MiB default). */
  readonly maxBatchBytes: number;
  /** Records per partition per request (kafkajs groups messages per partition in O(n²); 5,000 keeps that ~30 ms). */
  readonly maxBatchRecords: number;
  /** Estimated bytes of the whole request. */
  readonly maxRequestBytes: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = {
  maxBatchBytes: 900_000,
  maxBatchRecords: 5_000,
  maxRequestBytes: 16 * 1024 * 1024,
};

/** Per-record overhead in a v2 record batch (length, attributes, deltas, key/value lengths, header count), rounded up. */
const RECORD_OVERHEAD_BYTES = 24;
/** Per-header overhead in a v2 record (the name and value varint lengths), rounded up. */
const HEADER_OVERHEAD_BYTES = 10;
/** Largest record accepted: Kafka's default `message.max.bytes` (1048588) minus the batch header and slack. */
export const MAX_RECORD_BYTES = 1_000_000;

/** A record with its partition and estimated size, ready to be placed in a request. */
export interface PreparedRecord {
  readonly partition: number;
  readonly size: number;
  readonly message: Message;
}

/** Validates one record and computes its partition with `partitionFor`, the same function the embedded log uses. */
export const prepareRecord = (record: NewRecord, index: number, partitions: number): PreparedRecord => {
  if (record === null || typeof record !== 'object' || typeof record.key !== 'string') {
    throw new LogUsageError(`record ${index}: key must be a string`, { index });
  }
  if (!Buffer.isBuffer(record.value)) {
    throw new LogUsageError(`record ${index}: value must be a Buffer`, { index, key: record.key });
  }
  const { timestamp } = record;
  if (timestamp !== undefined && (!Number.isSafeInteger(timestamp) || timestamp < 0)) {
    throw new LogUsageError(`record ${index}: timestamp must be epoch milliseconds (integer ≥ 0), got ${timestamp}`, {
      index,
      key: record.key,
    });
  }
  const { headers } = record;
  let headerBytes = 0;
  if (headers !== undefined) {
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      if (typeof value !== 'string') throw new LogUsageError(`record ${index}: header ${name} must be a string`, { index, key: record.key });
      headerBytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value, 'utf8') + HEADER_OVERHEAD_BYTES;
    }
  }
  const size = Buffer.byteLength(record.key, 'utf8') + record.value.length + headerBytes + RECORD_OVERHEAD_BYTES;
  if (size > MAX_RECORD_BYTES) {
    throw new LogUsageError(`record ${index} (key ${record.key}) is ${size} bytes; the limit is ${MAX_RECORD_BYTES}`, {
      index,
      key: record.key,
      size,
    });
  }
  const partition = partitionFor(record.key, partitions);
  return {
    partition,
    size,
    message: {
      key: record.key,
      value: record.value,
      partition,
      timestamp: String(timestamp ?? Date.now()),
      ...(headers !== undefined ? { headers: { ...headers } } : {}),
    },
  };
};

/** One queued append: its records, the positions found so far, and how many records were sent. */
export interface PendingAppend {
  /** Physical topic name. */
  readonly topic: string;
  readonly records: readonly PreparedRecord[];
  readonly positions: Position[];
  /** Records already acknowledged by Kafka (a prefix of `records`). */
  sent: number;
}

/** The next records of one append placed in a request: `records[from, to)`. */
export interface Slice {
  readonly append: PendingAppend;
  readonly from: number;
  readonly to: number;
}

/** One Produce request: what to send, and which (append, record) sits at each per-partition index. */
export interface RequestPlan {
  readonly topicMessages: TopicMessages[];
  readonly slices: readonly Slice[];
  /** `topic\0partition` → the records placed for that partition, in batch order. */
  readonly placements: ReadonlyMap<string, readonly { readonly append: PendingAppend; readonly index: number }[]>;
}

const placementKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/**
 * Takes records from the head of `queue` (oldest append first, each append's records in
 * order) until a limit would be exceeded. Always takes at least one record when the queue
 * has any, so a record at the size limit still goes out (alone).
 */
export const planRequest = (queue: readonly PendingAppend[], limits: RequestLimits = DEFAULT_REQUEST_LIMITS): RequestPlan => {
  const messagesByTopic = new Map<string, Message[]>();
  const placements = new Map<string, { append: PendingAppend; index: number }[]>();
  const batchBytes = new Map<string, number>();
  const slices: Slice[] = [];
  let requestBytes = 0;
  let taken = 0;

  fill: for (const append of queue) {
    let index = append.sent;
    for (; index < append.records.length; index++) {
      const record = append.records[index]!;
      const key = placementKey(append.topic, record.partition);
      const placed = placements.get(key);
      const bytes = batchBytes.get(key) ?? 0;
      const full =
        taken > 0 &&
        (requestBytes + record.size > limits.maxRequestBytes ||
          (placed !== undefined &&
            (bytes + record.size > limits.maxBatchBytes || placed.length + 1 > limits.maxBatchRecords)));
      if (full) {
        if (index > append.sent) slices.push({ append, from: append.sent, to: index });
        break fill;
      }
      let messages = messagesByTopic.get(append.topic);
      if (!messages) messagesByTopic.set(append.topic, (messages = []));
      messages.push(record.message);
      if (placed) placed.push({ append, index });
      else placements.set(key, [{ append, index }]);
      batchBytes.set(key, bytes + record.size);
      requestBytes += record.size;
      taken += 1;
    }
    if (index > append.sent) slices.push({ append, from: append.sent, to: index });
  }

  return {
    topicMessages: [...messagesByTopic].map(([topic, messages]) => ({ topic, messages })),
    slices,
    placements,
  };
};

/**
 * Writes each placed record's position from the per-partition `baseOffset`s of the Produce
 * response: the i-th record placed for a partition gets `baseOffset + i`. Throws if the
 * response lacks a partition the request wrote to, or names one twice.
 */
export const assignPositions = (plan: RequestPlan, response: readonly RecordMetadata[]): void => {
  const baseOffsets = new Map<string, number>();
  for (const meta of response) {
    const base = meta.baseOffset ?? meta.offset;
    if (base === undefined) continue;
    const key = placementKey(meta.topicName, meta.partition);
    if (baseOffsets.has(key)) {
      throw new LogError(`Kafka's produce response has ${key.replace('\u0000', '/')} twice: its records were written twice`, false, {
        partition: key,
      });
    }
    baseOffsets.set(key, Number(base));
  }
  for (const [key, placed] of plan.placements) {
    const base = baseOffsets.get(key);
    if (base === undefined || !Number.isSafeInteger(base) || base < 0) {
      throw new LogError(`Kafka's produce response has no base offset for ${key.replace('\u0000', '/')}`, false, { partition: key });
    }
    placed.forEach(({ append, index }, i) => {
      append.positions[index] = { partition: append.records[index]!.partition, offset: base + i };
    });
  }
};

/** Splits a request's messages into one `topicMessages` per topic partition, each in batch order. */
export const byPartition = (topicMessages: readonly TopicMessages[]): TopicMessages[][] =>
  topicMessages.flatMap(({ topic, messages }) => {
    const partitions = new Map<number, Message[]>();
    for (const message of messages) {
      const partition = message.partition ?? 0;
      const list = partitions.get(partition);
      if (list) list.push(message);
      else partitions.set(partition, [message]);
    }
    return [...partitions.values()].map((partitionMessages) => [{ topic, messages: partitionMessages }]);
  });

interface QueuedAppend extends PendingAppend {
  resolve(positions: Position[]): void;
  reject(error: LogError): void;
}

/** The appender's collaborators: how to get a connected producer and how to name failures. */
export interface AppenderDeps {
  /** A connected idempotent producer; called again after `discardProducer`. */
  readonly producer: () => Promise<Producer>;
  /** Drops the current producer (after a failed send) so the next send starts a fresh producer id. */
  readonly discardProducer: () => void;
  readonly toError: (error: unknown, context: Record<string, number>) => LogError;
  readonly limits?: RequestLimits;
}

export interface Appender {
  /** Queues `records` (already prepared) for physical topic `topic`; resolves with their positions, in input order. */
  append(topic: string, records: readonly PreparedRecord[]): Promise<Position[]>;
  /** Resolves once every queued append has been sent (or failed). */
  drained(): Promise<void>;
}

/**
 * One send loop per log. A failed request fails every append that had records in it
 * (records of such an append sent in earlier requests are durable: the error says how
 * many), and the producer is replaced so a lost acknowledgement can never make Kafka treat
 * later records as duplicates of the failed ones.
 */
export const createAppender = (deps: AppenderDeps): Appender => {
  const queue: QueuedAppend[] = [];
  let loop: Promise<void> | undefined;

  const run = async (): Promise<void> => {
    while (queue.length > 0) {
      const plan = planRequest(queue, deps.limits);
      try {
        const producer = await deps.producer();
        const sends = await Promise.allSettled(
          byPartition(plan.topicMessages).map((topicMessages) => producer.sendBatch({ topicMessages, acks: -1 })),
        );
        const failed = sends.find((send): send is PromiseRejectedResult => send.status === 'rejected');
        if (failed) throw failed.reason;
        assignPositions(plan, sends.flatMap((send) => (send.status === 'fulfilled' ? send.value : [])));
      } catch (error) {
        deps.discardProducer();
        for (const { append } of plan.slices) {
          const queued = append as QueuedAppend;
          queue.splice(queue.indexOf(queued), 1);
          queued.reject(deps.toError(error, { records: append.records.length, durableRecords: append.sent }));
        }
        continue;
      }
      for (const { append, to } of plan.slices) append.sent = to;
      while (queue.length > 0 && queue[0]!.sent === queue[0]!.records.length) {
        const done = queue.shift()!;
        done.resolve(done.positions);
      }
    }
  };

  const kick = (): void => {
    loop ??= run().finally(() => {
      loop = undefined;
      if (queue.length > 0) kick();
    });
  };

  return {
    append: (topic, records) =>
      new Promise<Position[]>((resolve, reject) => {
        if (records.length === 0) return resolve([]);
        queue.push({ topic, records, positions: new Array<Position>(records.length), sent: 0, resolve, reject });
        kick();
      }),
    drained: async () => {
      while (loop) await loop;
    },
  };
};
