/**
 * Translation of kafkajs errors into the log package's errors, so callers only ever see
 * `LogError` subclasses with a `retriable` flag and a message that says what to do.
 */
import { LogError, type LogErrorContext, LogUnavailableError, LogUsageError } from '../errors.ts';

/** kafkajs error names that mean "the broker cannot be reached / did not answer". */
const UNREACHABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSLockTimeout',
]);

/** Protocol error types that are the caller's fault, not the broker's. */
const USAGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_TOPIC_EXCEPTION', 'TOPIC_AUTHORIZATION_FAILED']);

interface KafkaJSLikeError {
  readonly name?: string;
  readonly message?: string;
  readonly type?: string;
  readonly retriable?: boolean;
  readonly cause?: unknown;
}

/** The error and its `cause` chain, outermost first. */
const causeChain = (error: unknown): KafkaJSLikeError[] => {
  const chain: KafkaJSLikeError[] = [];
  let current: unknown = error;
  while (current && typeof current === 'object' && chain.length < 10 && !chain.includes(current as KafkaJSLikeError)) {
    chain.push(current as KafkaJSLikeError);
    current = (current as KafkaJSLikeError).cause;
  }
  return chain;
};

/** What to do when the brokers cannot be reached. */
export const unreachableHint = (brokers: readonly string[]): string =>
  `Kafka is not reachable at ${brokers.join(', ')}. Start a local broker with \`npm run kafka:start\`, ` +
  `or set KAFKA_BROKERS (or --kafka) to reachable host:port addresses.`;

/**
 * Maps a kafkajs (or any) error to a `LogError`: unreachable brokers → `LogUnavailableError`
 * (retriable), protocol errors the caller caused → `LogUsageError`, anything else → `LogError`
 * keeping kafkajs' own retriable verdict. `LogError`s pass through unchanged.
 */
export const toLogError = (error: unknown, operation: string, brokers: readonly string[], context: LogErrorContext = {}): LogError => {
  if (error instanceof LogError) return error;
  const chain = causeChain(error);
  const innermost = chain.at(-1);
  const detail = innermost?.message ?? String(error);
  const fullContext = { ...context, operation, brokers: brokers.join(','), kafkaError: innermost?.name };
  if (chain.some((e) => e.name !== undefined && UNREACHABLE.has(e.name))) {
    return new LogUnavailableError(`${operation} failed: ${detail}. ${unreachableHint(brokers)}`, fullContext, { cause: error });
  }
  const usage = chain.find((e) => e.type !== undefined && USAGE_TYPES.has(e.type));
  if (usage) {
    return new LogUsageError(`${operation} rejected by Kafka: ${usage.type}: ${usage.message ?? ''}`, { ...fullContext, kafkaType: usage.type });
  }
  const retriable = chain.some((e) => e.name === 'KafkaJSNumberOfRetriesExceeded') || innermost?.retriable === true;
  return new LogError(`${operation} failed: ${detail}`, retriable, { ...fullContext, kafkaType: innermost?.type }, { cause: error });
};

const LEADERSHIP_ERRORS = new Set(['NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION']);

/** A Kafka protocol error (anywhere in the cause chain) that says a partition's leadership is not settled yet. */
export const isLeadershipError = (error: unknown): boolean => {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (LEADERSHIP_ERRORS.has((current as Error & { type?: string }).type ?? '')) return true;
    current = (current as Error & { originalError?: unknown }).originalError ?? current.cause;
  }
  return false;
};
