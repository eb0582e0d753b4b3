/**
 * Options of `createKafkaLog`, validated eagerly: a bad option throws `LogUsageError`
 * naming it before any connection is attempted.
 */
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { LogUsageError } from '../errors.ts';
import { DEFAULT_RETENTION, type LogLayout, TOPICS, type Topic, type TopicRetention, topicName } from '../port.ts';

/** How verbose the kafkajs client is; its lines go to the pino logger. */
export const KAFKA_LOG_LEVELS = ['nothing', 'error', 'warn', 'info', 'debug'] as const;
export type KafkaLogLevel = (typeof KAFKA_LOG_LEVELS)[number];

/** Timing of consumer-group membership (`joinGroup`). */
export interface KafkaGroupOptions {
  /** Broker declares a silent member dead after this; must be ≥ the broker's `group.min.session.timeout.ms`. Default 6000. */
  readonly sessionTimeoutMs?: number;
  /** How long the broker waits for members to rejoin during a rebalance. Default 10000. */
  readonly rebalanceTimeoutMs?: number;
  /** How often a member heartbeats (and so notices a rebalance). Default min(1000, sessionTimeoutMs / 3). */
  readonly heartbeatIntervalMs?: number;
}

export interface KafkaLogOptions {
  /** Bootstrap brokers, `host:port` each. */
  readonly brokers: readonly string[];
  /** Cluster name: topics are `<cluster>.desired|observed|heartbeats`. */
  readonly cluster: string;
  /** Partitions per topic (default 1, or see `defaultPartitions`). Existing topics must have exactly this many. */
  readonly partitions?: number;
  /**
   * Without `partitions`: take the partition count of the cluster's existing topics, and
   * create missing topics with this many (what `logplane` components do, so that a second
   * `controllers` process gets partitions to work on). Ignored when `partitions` is given.
   */
  readonly defaultPartitions?: number;
  /** Retention per topic; defaults to `DEFAULT_RETENTION` (history forever, heartbeats 1 h). */
  readonly retention?: Partial<Record<Topic, TopicRetention>>;
  /** Replication factor for topics this log creates; default 3 on a cluster of 3 or more brokers, else every broker (see `topics.ts`). */
  readonly replicationFactor?: number;
  readonly clientId?: string;
  readonly ssl?: ConnectionOptions | boolean;
  readonly sasl?: SASLOptions;
  /** TCP connect timeout per broker attempt (default 3000). Bounds how long an unreachable broker takes to report. */
  readonly connectionTimeoutMs?: number;
  /** Longest a consumer fetch waits for new records; bounds live-delivery latency and unsubscribe time. Default 100. */
  readonly fetchMaxWaitMs?: number;
  readonly group?: KafkaGroupOptions;
  /** kafkajs verbosity (default `warn`; the harmless first-join MEMBER_ID_REQUIRED line is always dropped). */
  readonly logLevel?: KafkaLogLevel;
  /** Where kafkajs log lines go; default a pino logger on stderr. */
  readonly logger?: Logger;
}

/** Options after validation, with every default filled in. */
export interface ResolvedKafkaLogOptions {
  readonly brokers: readonly string[];
  readonly layout: LogLayout;
  readonly replicationFactor: number | undefined;
  readonly clientId: string;
  readonly ssl: ConnectionOptions | boolean | undefined;
  readonly sasl: SASLOptions | undefined;
  readonly connectionTimeoutMs: number;
  readonly fetchMaxWaitMs: number;
  readonly group: Required<KafkaGroupOptions>;
  readonly logLevel: KafkaLogLevel;
  readonly logger: Logger | undefined;
}

const LEGAL_TOPIC_CHARS = /^[a-zA-Z0-9._-]+$/;
const MAX_TOPIC_NAME_LENGTH = 249;

const positiveInteger = (name: string, value: unknown, { min = 1 }: { min?: number } = {}): number => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new LogUsageError(`${name} must be an integer ≥ ${min}, got ${String(value)}`, { option: name });
  }
  return value;
};

/** Checks one `host:port` bootstrap address (IPv6 hosts in brackets: `[::1]:9092`). */
export const validateBroker = (broker: unknown): string => {
  if (typeof broker !== 'string') {
    throw new LogUsageError(`broker address must be a string "host:port", got ${String(broker)}`, { option: 'brokers' });
  }
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]/]+):(\d{1,5})$/.exec(broker.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65_535) {
    throw new LogUsageError(`bad broker address "${broker}": expected host:port (e.g. 127.0.0.1:9092)`, {
      option: 'brokers',
      broker,
    });
  }
  return broker.trim();
};

const validateRetention = (topic: Topic, retention: TopicRetention): TopicRetention => {
  switch (retention.type) {
    case 'forever':
      return retention;
    case 'time':
      positiveInteger(`retention.${topic}.ms`, retention.ms);
      return retention;
    default:
      throw new LogUsageError(`retention.${topic} has unknown type ${JSON.stringify(retention)}`, { option: 'retention' });
  }
};

/** Validates `options` and fills in defaults; throws `LogUsageError` naming the bad option. */
export const resolveKafkaLogOptions = (options: KafkaLogOptions): ResolvedKafkaLogOptions => {
  if (!Array.isArray(options.brokers) || options.brokers.length === 0) {
    throw new LogUsageError('brokers must be a non-empty list of "host:port"', { option: 'brokers' });
  }
  const brokers = options.brokers.map(validateBroker);

  const { cluster } = options;
  if (typeof cluster !== 'string' || !LEGAL_TOPIC_CHARS.test(cluster)) {
    throw new LogUsageError(`cluster name "${String(cluster)}" must be non-empty and use only [a-zA-Z0-9._-]`, {
      option: 'cluster',
    });
  }
  const longest = Math.max(...TOPICS.map((topic) => topicName(cluster, topic).length));
  if (longest > MAX_TOPIC_NAME_LENGTH) {
    throw new LogUsageError(`cluster name "${cluster}" is too long: topic names would exceed ${MAX_TOPIC_NAME_LENGTH} characters`, {
      option: 'cluster',
    });
  }

  const partitions = positiveInteger('partitions', options.partitions ?? 1);
  const retention = Object.fromEntries(
    TOPICS.map((topic) => [topic, validateRetention(topic, options.retention?.[topic] ?? DEFAULT_RETENTION[topic])]),
  ) as Record<Topic, TopicRetention>;

  const replicationFactor =
    options.replicationFactor === undefined ? undefined : positiveInteger('replicationFactor', options.replicationFactor);
  const connectionTimeoutMs = positiveInteger('connectionTimeoutMs', options.connectionTimeoutMs ?? 3_000);
  const fetchMaxWaitMs = positiveInteger('fetchMaxWaitMs', options.fetchMaxWaitMs ?? 100);

  const sessionTimeoutMs = positiveInteger('group.sessionTimeoutMs', options.group?.sessionTimeoutMs ?? 6_000);
  const rebalanceTimeoutMs = positiveInteger('group.rebalanceTimeoutMs', options.group?.rebalanceTimeoutMs ?? 10_000);
  const heartbeatIntervalMs = positiveInteger(
    'group.heartbeatIntervalMs',
    options.group?.heartbeatIntervalMs ?? Math.max(1, Math.min(1_000, Math.floor(sessionTimeoutMs / 3))),
  );
  if (heartbeatIntervalMs >= sessionTimeoutMs) {
    throw new LogUsageError(
      `group.heartbeatIntervalMs (${heartbeatIntervalMs}) must be below group.sessionTimeoutMs (${sessionTimeoutMs})`,
      { option: 'group.heartbeatIntervalMs' },
    );
  }

  const logLevel = options.logLevel ?? 'warn';
  if (!KAFKA_LOG_LEVELS.includes(logLevel)) {
    throw new LogUsageError(`logLevel must be one of ${KAFKA_LOG_LEVELS.join(', ')}, got ${String(logLevel)}`, {
      option: 'logLevel',
    });
  }
  const clientId = options.clientId ?? 'logplane';
  if (typeof clientId !== 'string' || clientId.length === 0) {
    throw new LogUsageError('clientId must be a non-empty string', { option: 'clientId' });
  }

  return {
    brokers,
    layout: { cluster, partitions, retention },
    replicationFactor,
    clientId,
    ssl: options.ssl,
    sasl: options.sasl,
    connectionTimeoutMs,
    fetchMaxWaitMs,
    group: { sessionTimeoutMs, rebalanceTimeoutMs, heartbeatIntervalMs },
    logLevel,
    logger: options.logger,
  };
};
