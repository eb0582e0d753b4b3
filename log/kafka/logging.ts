/**
 * Routes kafkajs log lines into pino, dropping or demoting the lines that are expected
 * in normal operation (so a WARN-level log stays meaningful).
 */
import { type LogEntry, type logCreator, logLevel } from 'kafkajs';
import { type Logger, pino } from 'pino';
import type { KafkaLogLevel } from './options.ts';

let defaultLogger: Logger | undefined;

/** The process-wide default logger for kafkajs lines: pino on stderr, created on first use. */
export const defaultKafkaLogger = (): Logger => {
  defaultLogger ??= pino({ name: 'logplane.kafka', level: 'debug' }, pino.destination(2));
  return defaultLogger;
};

/** kafkajs' numeric level for one of our level names. */
export const kafkajsLevel = (level: KafkaLogLevel): logLevel => {
  switch (level) {
    case 'nothing':
      return logLevel.NOTHING;
    case 'error':
      return logLevel.ERROR;
    case 'warn':
      return logLevel.WARN;
    case 'info':
      return logLevel.INFO;
    case 'debug':
      return logLevel.DEBUG;
  }
};

type PinoLevel = 'error' | 'warn' | 'info' | 'debug';

/** The broker's answers to FindCoordinator while a group's coordinator is not ready yet (retriable). */
const COORDINATOR_WAIT_ERRORS: ReadonlySet<string> = new Set([
  'The group coordinator is not available',
  "The coordinator is loading and hence can't process requests for this group",
  'This is not the correct coordinator for this group',
]);

/**
 * What to do with a line, by its content: `drop` for the first-JoinGroup MEMBER_ID_REQUIRED
 * round trip (KIP-394, logged at error level by kafkajs although it is the normal protocol),
 * `debug` for the normal signs of a group rebalance, the retried look-up of a group's coordinator
 * at start-up, and for choices this adapter made on purpose.
 */
export const classifyKafkaLine = (entry: LogEntry): 'drop' | 'debug' | 'keep' => {
  const { message } = entry.log;
  const error: unknown = entry.log['error'];
  if (typeof error === 'string' && error.includes('needs to have a valid member id')) return 'drop';
  if (typeof error === 'string' && error.includes('The group is rebalancing, so a rejoin is needed')) return 'debug';
  // Logged for every CreateTopics with a per-topic error, including "already exists" from a
  // concurrent setup; a real failure still reaches the caller as the thrown error.
  if (typeof error === 'string' && message.startsWith('Response CreateTopics') && error === 'Topic creation errors') return 'debug';
  if (message.includes('Limiting retries for the idempotent producer')) return 'debug';
  // A group's coordinator is found by retrying FindCoordinator (kafkajs names it
  // GroupCoordinator) until the broker has one: at every first start of a group (the
  // offsets topic is created on demand) and while a coordinator moves after a broker died.
  // kafkajs retries these itself; if no coordinator appears, the join fails with its error.
  if (typeof error === 'string' && message.startsWith('Response GroupCoordinator') && COORDINATOR_WAIT_ERRORS.has(error)) return 'debug';
  // A topic just created is not yet known to every broker: the metadata wait of ensureTopics
  // (topics.ts) retries it, and fails with its own error if it never appears.
  if (message.startsWith('Response Metadata') && error === 'This server does not host this topic-partition') return 'debug';
  // Likewise a watermark read of a partition whose leader is still being elected or has just
  // moved: `watermarks` (index.ts) retries it (LEADERSHIP_RETRIES) before it fails.
  if (message.startsWith('Response ListOffsets') && error === 'This server is not the leader for that topic-partition') return 'debug';
  if (message.startsWith('The group is rebalancing, re-joining')) return 'debug';
  return 'keep';
};

const pinoLevel = (level: logLevel): PinoLevel => {
  switch (level) {
    case logLevel.ERROR:
      return 'error';
    case logLevel.WARN:
      return 'warn';
    case logLevel.INFO:
      return 'info';
    default:
      return 'debug';
  }
};

/** A kafkajs `logCreator` writing to `logger` at `threshold` and above (after demotions). */
export const pinoLogCreator =
  (logger: Logger, threshold: KafkaLogLevel): logCreator =>
  () => {
    const max = kafkajsLevel(threshold);
    return (entry) => {
      const verdict = classifyKafkaLine(entry);
      if (verdict === 'drop') return;
      const level = verdict === 'debug' ? logLevel.DEBUG : entry.level;
      if (level > max || max === logLevel.NOTHING) return;
      const { message, timestamp: _timestamp, ...fields } = entry.log;
      logger[pinoLevel(level)]({ kafkajs: entry.namespace, ...fields }, message);
    };
  };
