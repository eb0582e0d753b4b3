/**
 * Where tests find Kafka. Kafka tests never skip: without a broker they fail with an
 * error that says how to get one.
 */
import { readState } from '../log/kafka/broker/state.ts';
import { STATE_FILE } from '../log/kafka/broker/paths.ts';

/** Parses a comma-separated `host:port` list; empty entries are dropped. */
export function parseBrokerList(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

/**
 * The bootstrap brokers for Kafka tests: `KAFKA_BROKERS` (comma-separated) wins, else the
 * local broker recorded in `.kafka-local/state.json`. Throws if neither is there.
 * (The vitest global setup starts a local broker and sets `KAFKA_BROKERS`, so inside
 * `npm test` this always has an answer.)
 */
export function kafkaBrokers(env: NodeJS.ProcessEnv = process.env, stateFile: string = STATE_FILE): string[] {
  const fromEnv = parseBrokerList(env['KAFKA_BROKERS'] ?? '');
  if (fromEnv.length > 0) return fromEnv;
  const state = readState(stateFile);
  if (state) return parseBrokerList(state.brokers);
  throw new Error(
    `No Kafka broker for the tests: KAFKA_BROKERS is unset and ${stateFile} does not exist. ` +
    `Run the tests through vitest (its global setup starts a local broker), or run ` +
    `'npm run kafka:start', or set KAFKA_BROKERS=host:port[,host:port].`,
  );
}
