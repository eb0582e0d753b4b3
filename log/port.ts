/**
 * The `EventLog` port: the only way logplane talks to its log. Two adapters implement
 * it (`kafka/` on kafkajs, `embedded/` on LMDB) and one contract suite tests both.
 *
 * The port moves opaque bytes: decoding (and quarantining what cannot be decoded) is
 * layered on top in `decoded.ts`, so a corrupt record is a fact the port can carry.
 */
import type { Observable } from 'rxjs';

/** The logical topics of a cluster. Physical names are `<cluster>.<topic>`. */
export const TOPICS = ['desired', 'observed', 'heartbeats'] as const;
export type Topic = (typeof TOPICS)[number];

/** Retention per topic: desired and observed are history (forever); heartbeats are liveness. */
export type TopicRetention = { type: 'forever' } | { type: 'time'; ms: number };

/** A record to append. `key` chooses the partition (see `partitionFor`); `value` is an encoded event. */
export interface NewRecord {
  readonly key: string;
  readonly value: Buffer;
  /** Epoch milliseconds; defaults to now. The log indexes by it for time → position lookups. */
  readonly timestamp?: number;
  /**
   * Transport metadata about who appended the record (a reconciler's consumer group, member,
   * generation and decided key), as Kafka record headers. Not part of the event: the fold never
   * reads it, and the embedded log does not keep it.
   */
  readonly headers?: RecordHeaders;
}

/** Record headers: names to UTF-8 values (Kafka record headers). */
export type RecordHeaders = Readonly<Record<string, string>>;

/** Where a record landed. Offsets are per partition, dense, starting at 0. */
export interface Position {
  readonly partition: number;
  readonly offset: number;
}

/** A record as read back from the log. */
export interface LogRecord {
  readonly topic: Topic;
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  readonly value: Buffer;
  readonly timestamp: number;
  /** The headers the appender set (the Kafka log; the embedded log keeps none). */
  readonly headers?: RecordHeaders;
}

/** Consecutive records of one partition, in offset order, delivered together. */
export interface RecordBatch {
  readonly topic: Topic;
  readonly partition: number;
  readonly records: readonly LogRecord[];
}

/**
 * Where to start reading, per partition: the next offset to deliver.
 * Partitions not named start at 0.
 */
export type StartPositions = Readonly<Record<number, number>>;

/** The partitions of each topic that a consumer-group member currently owns. */
export interface Assignment {
  /** The group's generation: strictly increasing, the same for every member of one rebalance. */
  readonly generation: number;
  readonly partitions: Readonly<Record<Topic, readonly number[]>>;
}

/** Membership of one consumer group. */
export interface GroupMembership {
  readonly memberId: string;
  /** Emits every (re)assignment, starting with the first one; completes after `leave`. */
  readonly assignments$: Observable<Assignment>;
  /** Leaves the group so the remaining members take over this member's partitions. */
  leave(): Promise<void>;
}

/** Topic layout chosen at setup; every invariant must hold for any partition count. */
export interface LogLayout {
  readonly cluster: string;
  readonly partitions: number;
  readonly retention: Readonly<Record<Topic, TopicRetention>>;
}

/** The event log. Factories return one of these; `close` releases every resource. */
export interface EventLog {
  readonly layout: LogLayout;
  /** Creates the topics if missing (idempotent). Called by factories before returning. */
  setup(): Promise<void>;
  /** Appends a batch; resolves with each record's position, in input order, once durable. */
  append(topic: Topic, records: readonly NewRecord[]): Promise<Position[]>;
  /** Reads `[from, to)` of one partition (to defaults to the end at call time). */
  read(topic: Topic, partition: number, from: number, to?: number): Promise<LogRecord[]>;
  /**
   * Live, ordered stream of batches from `from` onward for every partition of `topic`.
   * Order is guaranteed per partition only. Unsubscribing stops the reader.
   */
  subscribe(topic: Topic, from?: StartPositions): Observable<RecordBatch>;
  /** The next offset to be written, per partition (the "high watermark"). */
  endOffsets(topic: Topic): Promise<number[]>;
  /** Per partition, the first offset whose timestamp is ≥ `timestamp` (end offset if none). */
  offsetsForTime(topic: Topic, timestamp: number): Promise<number[]>;
  /** Joins consumer group `groupId` for `topics`; partitions are split among its members. */
  joinGroup(groupId: string, topics: readonly Topic[]): Promise<GroupMembership>;
  close(): Promise<void>;
}

/** Default retention: history forever, heartbeats for one hour. */
export const DEFAULT_RETENTION: Readonly<Record<Topic, TopicRetention>> = {
  desired: { type: 'forever' },
  observed: { type: 'forever' },
  heartbeats: { type: 'time', ms: 60 * 60 * 1000 },
};

/** Physical topic name, e.g. `demo.desired`. */
export const topicName = (cluster: string, topic: Topic): string => `${cluster}.${topic}`;
