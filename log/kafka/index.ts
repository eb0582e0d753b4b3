/**
 * The Kafka adapter of `EventLog`, on kafkajs.
 *
 * ```ts
 * const log = await createKafkaLog({ brokers: ['127.0.0.1:9092'], cluster: 'demo', partitions: 3 });
 * const [position] = await log.append('desired', [{ key: 'Pod/default/web', value: encoded }]);
 * log.subscribe('desired').subscribe((batch) => fold(batch));
 * ```
 *
 * One client per log: an admin (topics, offsets), one idempotent producer (acks=all,
 * explicit `partitionFor` partitioner, batched sends, see `appender.ts`), a throwaway
 * consumer per `read`/`subscribe` (see `reader.ts`) and a consumer per group membership
 * (see `group.ts`).
 */
import { Kafka, type Producer, type RetryOptions } from 'kafkajs';
import { Observable } from 'rxjs';
import { LogUnavailableError, LogUsageError } from '../errors.ts';
import { partitionFor } from '../partitioner.ts';
import {
  type EventLog,
  type GroupMembership,
  type LogRecord,
  type NewRecord,
  type Position,
  type RecordBatch,
  type StartPositions,
  TOPICS,
  type Topic,
  topicName,
} from '../port.ts';
import { createAppender, prepareRecord } from './appender.ts';
import { joinKafkaGroup } from './group.ts';
import { isLeadershipError, toLogError, unreachableHint } from './kafka-errors.ts';
import { defaultKafkaLogger, kafkajsLevel, pinoLogCreator } from './logging.ts';
import { type KafkaLogOptions, type ResolvedKafkaLogOptions, resolveKafkaLogOptions } from './options.ts';
import { type Reader, type ReaderSink, startReader } from './reader.ts';
import { ensureTopics, existingPartitionCount } from './topics.ts';
// kafkajs 2.2.4 keeps a 1 ms timer running on every connection; see request-queue-fix.ts.
import './request-queue-fix.ts';
// kafkajs 2.2.4 fails all-topics metadata requests for any leaderless partition; see metadata-fix.ts.
import './metadata-fix.ts';
// kafkajs 2.2.4 leaves the group's generation id out of its GROUP_JOIN event; see generation-fix.ts.
import './generation-fix.ts';

export type { KafkaGroupOptions, KafkaLogLevel, KafkaLogOptions } from './options.ts';

/** Counters of the log's producer, from kafkajs' request instrumentation. */
export interface KafkaLogStats {
  /** Produce requests sent (each carries one record batch per partition written). */
  readonly produceRequests: number;
}

/** An `EventLog` on Kafka, with producer counters for benchmarks and tests. */
export interface KafkaEventLog extends EventLog {
  stats(): KafkaLogStats;
}

/**
 * Retries of one connection attempt sequence and of admin operations. kafkajs applies the
 * client-level `retry` to `cluster.connect()` whatever retry the admin/producer/consumer got,
 * so this is what bounds "broker unreachable": 3 attempts, then `LogUnavailableError`.
 */
const CONNECT_RETRY: RetryOptions = { initialRetryTime: 100, maxRetryTime: 1_000, factor: 0.2, multiplier: 2, retries: 2 };
/**
 * Retries of producer sends and consumer loops (each attempt reconnecting with
 * `CONNECT_RETRY`): roughly 10 s of backoff (100 ms doubling, capped at 2 s) before an append
 * fails with `LogUnavailableError`, instead of kafkajs' unbounded retries for idempotent producers.
 */
/** Retries of a watermark read while a partition has no leader yet (see `watermarks`). */
const LEADERSHIP_RETRIES = 8;
const RUNTIME_RETRY: RetryOptions = { initialRetryTime: 100, maxRetryTime: 2_000, factor: 0.2, multiplier: 2, retries: 8 };

/**
 * Opens the Kafka log for `options.cluster`: validates the options (bad ones throw
 * `LogUsageError` naming them), connects, and creates the topics if missing. An
 * unreachable broker fails with `LogUnavailableError` within about
 * 3 × `connectionTimeoutMs` + 1 s.
 */
export const createKafkaLog = async (options: KafkaLogOptions): Promise<KafkaEventLog> => {
  const checked = resolveKafkaLogOptions(options);
  const config =
    options.partitions === undefined && options.defaultPartitions !== undefined
      ? resolveKafkaLogOptions({ ...options, partitions: (await probePartitions(checked)) ?? options.defaultPartitions })
      : checked;
  const log = kafkaLog(config);
  try {
    await log.setup();
  } catch (error) {
    await log.close().catch(() => undefined);
    throw error;
  }
  return log;
};

/** The partition count of the cluster's existing topics (undefined when there are none yet), asked with a throwaway admin. */
const probePartitions = async (config: ResolvedKafkaLogOptions): Promise<number | undefined> => {
  const admin = new Kafka({
    clientId: `${config.clientId}-partitions`,
    brokers: [...config.brokers],
    ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
    ...(config.sasl === undefined ? {} : { sasl: config.sasl }),
    connectionTimeout: config.connectionTimeoutMs,
    retry: CONNECT_RETRY,
    logLevel: kafkajsLevel('nothing'),
  }).admin();
  try {
    await admin.connect();
    return await existingPartitionCount(admin, config.layout.cluster);
  } catch (error) {
    throw toLogError(error, 'connecting', config.brokers, { cluster: config.layout.cluster });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
};

const kafkaLog = (config: ResolvedKafkaLogOptions): KafkaEventLog => {
  const { layout, brokers } = config;
  const logger = config.logger ?? defaultKafkaLogger();
  const kafka = new Kafka({
    clientId: config.clientId,
    brokers: [...brokers],
    ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
    ...(config.sasl === undefined ? {} : { sasl: config.sasl }),
    connectionTimeout: config.connectionTimeoutMs,
    retry: CONNECT_RETRY,
    logLevel: kafkajsLevel(config.logLevel),
    logCreator: pinoLogCreator(logger, config.logLevel),
  });
  const admin = kafka.admin();
  const physical = (topic: Topic) => topicName(layout.cluster, topic);
  const toError = (operation: string) => (error: unknown, context: Record<string, number | string> = {}) =>
    toLogError(error, operation, brokers, { cluster: layout.cluster, ...context });

  let closed = false;
  const readers = new Set<Reader>();
  const memberships = new Set<GroupMembership>();
  let produceRequests = 0;

  let producer: Promise<Producer> | undefined;
  const connectProducer = async (): Promise<Producer> => {
    const created = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: RUNTIME_RETRY,
      // Every message carries the partition `prepareRecord` chose with `partitionFor`; the
      // fallback only matters for a message without one (there are none).
      createPartitioner: () => ({ message }) => message.partition ?? partitionFor(String(message.key ?? ''), layout.partitions),
    });
    created.on(created.events.REQUEST, ({ payload }) => {
      if (payload.apiName === 'Produce') produceRequests += 1;
    });
    try {
      await created.connect();
    } catch (error) {
      await created.disconnect().catch(() => undefined);
      throw error;
    }
    return created;
  };
  const appender = createAppender({
    producer: () => (producer ??= connectProducer()),
    discardProducer: () => {
      const discarded = producer;
      producer = undefined;
      void discarded?.then((p) => p.disconnect()).catch(() => undefined);
    },
    toError: toError('append'),
  });

  const assertOpen = (operation: string): void => {
    if (closed) throw new LogUsageError(`${operation} on a closed log (cluster ${layout.cluster})`, { cluster: layout.cluster });
  };
  const assertTopic = (topic: unknown): Topic => {
    if (!TOPICS.includes(topic as Topic)) {
      throw new LogUsageError(`unknown topic ${String(topic)}; topics are ${TOPICS.join(', ')}`, { topic: String(topic) });
    }
    return topic as Topic;
  };
  const assertPartition = (partition: unknown): number => {
    if (!Number.isInteger(partition) || (partition as number) < 0 || (partition as number) >= layout.partitions) {
      throw new LogUsageError(`partition ${String(partition)} does not exist; this log has partitions 0..${layout.partitions - 1}`, {
        partition: String(partition),
        partitions: layout.partitions,
      });
    }
    return partition as number;
  };
  const assertOffset = (name: string, offset: unknown): number => {
    if (!Number.isSafeInteger(offset) || (offset as number) < 0) {
      throw new LogUsageError(`${name} must be an offset (integer ≥ 0), got ${String(offset)}`, { [name]: String(offset) });
    }
    return offset as number;
  };

  /**
   * Low and high watermark of every partition of `topic`, by partition. Right after a topic
   * is created (or a leader moves) the broker may answer "not the leader" or "leader not
   * available" for a while, which kafkajs' admin passes on after its own few retries: those
   * are retried here, with backoff, for up to ~10 s.
   */
  const watermarks = async (topic: Topic): Promise<{ low: number; high: number }[]> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const offsets = await admin.fetchTopicOffsets(physical(topic));
        return [...offsets]
          .sort((a, b) => a.partition - b.partition)
          .map(({ low, high }) => ({ low: Number(low), high: Number(high) }));
      } catch (error) {
        if (closed || attempt >= LEADERSHIP_RETRIES || !isLeadershipError(error)) throw toError('reading end offsets')(error, { topic });
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
      }
    }
  };

  const openReader = (topic: Topic, start: ReadonlyMap<number, number>, sink: ReaderSink): Reader => {
    const reader: Reader = startReader(
      { kafka, cluster: layout.cluster, fetchMaxWaitMs: config.fetchMaxWaitMs, retry: RUNTIME_RETRY, toError: toError(`reading ${topic}`) },
      topic,
      start,
      {
        ...sink,
        error: (error) => {
          readers.delete(reader);
          sink.error(error);
        },
        complete: () => {
          readers.delete(reader);
          sink.complete();
        },
      },
    );
    readers.add(reader);
    return reader;
  };

  const setup = async (): Promise<void> => {
    assertOpen('setup');
    const connectDeadlineMs = 3 * config.connectionTimeoutMs + 3_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        admin.connect(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new LogUnavailableError(`no answer from Kafka within ${connectDeadlineMs} ms. ${unreachableHint(brokers)}`, {
                  brokers: brokers.join(','),
                }),
              ),
            connectDeadlineMs,
          );
        }),
      ]);
    } catch (error) {
      throw toError('connecting')(error);
    } finally {
      clearTimeout(timer);
    }
    try {
      // A throwaway admin per broker, for ensureTopics to ask each broker itself.
      const adminOf = (address: string) =>
        new Kafka({
          clientId: `${config.clientId}-topic-check`,
          brokers: [address],
          ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
          ...(config.sasl === undefined ? {} : { sasl: config.sasl }),
          connectionTimeout: config.connectionTimeoutMs,
          retry: { retries: 0 },
          logLevel: kafkajsLevel('nothing'),
        }).admin({ retry: { retries: 0 } });
      await ensureTopics(admin, layout, config.replicationFactor, adminOf);
    } catch (error) {
      throw toError('creating topics')(error);
    }
  };

  const append = async (topic: Topic, records: readonly NewRecord[]): Promise<Position[]> => {
    assertOpen('append');
    assertTopic(topic);
    if (!Array.isArray(records)) throw new LogUsageError('append takes an array of records', { topic });
    const prepared = records.map((record, index) => prepareRecord(record, index, layout.partitions));
    return appender.append(physical(topic), prepared);
  };

  const read = async (topic: Topic, partition: number, from: number, to?: number): Promise<LogRecord[]> => {
    assertOpen('read');
    assertTopic(topic);
    assertPartition(partition);
    assertOffset('from', from);
    if (to !== undefined && assertOffset('to', to) < from) {
      throw new LogUsageError(`read range [${from}, ${to}) is reversed`, { from, to });
    }
    const { low, high } = (await watermarks(topic))[partition]!;
    const end = to === undefined ? high : Math.min(to, high);
    if (from >= end) return [];
    if (from < low) {
      throw new LogUsageError(
        `offset ${from} of ${physical(topic)}/${partition} is no longer retained; the partition starts at ${low}`,
        { topic, partition, from, logStartOffset: low },
      );
    }
    const records: LogRecord[] = [];
    let reader: Reader | undefined;
    const done = new Promise<void>((resolve, reject) => {
      reader = openReader(topic, new Map([[partition, from]]), {
        batch: (batch) => {
          for (const record of batch.records) {
            if (record.offset < end) records.push(record);
          }
          if (batch.records.at(-1)!.offset >= end - 1) resolve();
        },
        error: reject,
        complete: () => reject(new LogUsageError(`read of ${physical(topic)}/${partition} interrupted: the log was closed`, { topic, partition })),
      });
    });
    try {
      await done;
    } finally {
      await reader!.close();
    }
    return records;
  };

  const subscribe = (topic: Topic, from: StartPositions = {}): Observable<RecordBatch> =>
    new Observable<RecordBatch>((subscriber) => {
      let start: Map<number, number>;
      try {
        assertOpen('subscribe');
        assertTopic(topic);
        for (const [partition, offset] of Object.entries(from)) {
          assertPartition(Number(partition));
          assertOffset(`from[${partition}]`, offset);
        }
        start = new Map(Array.from({ length: layout.partitions }, (_, p) => [p, from[p] ?? 0]));
      } catch (error) {
        subscriber.error(error);
        return undefined;
      }
      const reader = openReader(topic, start, {
        batch: (batch) => subscriber.next(batch),
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => void reader.close();
    });

  const endOffsets = async (topic: Topic): Promise<number[]> => {
    assertOpen('endOffsets');
    assertTopic(topic);
    return (await watermarks(topic)).map(({ high }) => high);
  };

  const offsetsForTime = async (topic: Topic, timestamp: number): Promise<number[]> => {
    assertOpen('offsetsForTime');
    assertTopic(topic);
    if (!Number.isFinite(timestamp)) throw new LogUsageError(`timestamp must be a finite number, got ${timestamp}`, { topic });
    // Kafka reads -1 and -2 as "latest" and "earliest"; every record's timestamp is ≥ 0, so clamp.
    const target = Math.max(0, Math.ceil(timestamp));
    try {
      const offsets = await admin.fetchTopicOffsetsByTimestamp(physical(topic), target);
      // kafkajs already replaces "none" (-1) by the high watermark.
      return [...offsets].sort((a, b) => a.partition - b.partition).map(({ offset }) => Number(offset));
    } catch (error) {
      throw toError('looking up offsets by time')(error, { topic, timestamp });
    }
  };

  const joinGroup = async (groupId: string, topics: readonly Topic[]): Promise<GroupMembership> => {
    assertOpen('joinGroup');
    if (typeof groupId !== 'string' || groupId.length === 0) throw new LogUsageError('groupId must be a non-empty string');
    if (!Array.isArray(topics) || topics.length === 0) throw new LogUsageError('joinGroup needs at least one topic', { groupId });
    const unique = [...new Set(topics.map(assertTopic))];
    const membership = await joinKafkaGroup(
      {
        kafka,
        cluster: layout.cluster,
        group: config.group,
        fetchMaxWaitMs: config.fetchMaxWaitMs,
        retry: RUNTIME_RETRY,
        toError: toError(`consumer group ${groupId}`),
      },
      groupId,
      unique,
    );
    memberships.add(membership);
    return {
      get memberId() {
        return membership.memberId;
      },
      assignments$: membership.assignments$,
      leave: async () => {
        memberships.delete(membership);
        await membership.leave();
      },
    };
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      closed = true;
      await appender.drained();
      const connected = producer;
      producer = undefined;
      await Promise.allSettled([
        connected?.then((p) => p.disconnect()),
        ...[...readers].map((reader) => reader.close()),
        ...[...memberships].map((membership) => membership.leave()),
      ]);
      await admin.disconnect().catch(() => undefined);
    })();
    return closing;
  };

  return {
    layout,
    setup,
    append,
    read,
    subscribe,
    endOffsets,
    offsetsForTime,
    joinGroup,
    close,
    stats: () => ({ produceRequests }),
  };
};
