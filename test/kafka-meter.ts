/**
 * vitest setup file: tells which tests really talked to a Kafka broker, so CI counts those,
 * and only those, as Kafka tests (`.ci/check-report.mjs`).
 *
 * The rule: a test is a Kafka test when its worker sent at least one Kafka protocol request
 * (kafkajs `Connection.send`, any broker address) between the start of its `beforeEach`
 * hooks and the end of its `afterEach` hooks. The count is put into the test's
 * `meta.kafkaRequests`, which the JSON reporter writes into the report. Traffic of clients
 * opened in a `beforeAll` counts for the tests it runs during (a test of a cluster on the
 * Kafka log runs on Kafka even if its own body only calls the apiserver); a broker-less unit
 * test whose name mentions Kafka counts 0. Not counted: tests that reach Kafka only through
 * child processes (their requests are not sent by this worker).
 */
import { createRequire } from 'node:module';
import { afterEach, beforeEach } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Kafka requests this test's worker sent while the test and its each-hooks ran (set only when > 0). */
    kafkaRequests?: number;
  }
}

interface KafkaConnection {
  send(...args: unknown[]): Promise<unknown>;
}

// The adapter's `import { Kafka } from 'kafkajs'` loads kafkajs through Node's CommonJS
// loader (vitest externalizes node_modules), so this is the class its brokers use.
const { prototype: connection } = createRequire(import.meta.url)('kafkajs/src/network/connection.js') as { prototype: KafkaConnection };

/** The metered `send`, which keeps its own count: vitest runs this file again before each test file in the same worker (`isolate: false`), and every run must read the one counter the one wrapper increments. */
type MeteredSend = KafkaConnection['send'] & { readonly metered: true; requests: number };

const installMeter = (): MeteredSend => {
  const current = connection.send as KafkaConnection['send'] & { metered?: boolean };
  if (current.metered) return current as MeteredSend;
  const original = connection.send;
  const metered: MeteredSend = Object.assign(
    function (this: KafkaConnection, ...args: unknown[]): Promise<unknown> {
      metered.requests += 1;
      return original.apply(this, args);
    },
    { metered: true as const, requests: 0 },
  );
  connection.send = metered;
  return metered;
};
const meter = installMeter();

let atStart = 0;
beforeEach(() => {
  atStart = meter.requests;
});
afterEach(({ task }) => {
  const sent = meter.requests - atStart;
  if (sent > 0) task.meta.kafkaRequests = sent;
});
