/**
 * vitest global setup: makes sure a real Kafka broker is there for the Kafka tests, so
 * `npm test` alone works on a fresh machine.
 *
 * Order: `KAFKA_BROKERS` (if set, it must answer) → the live local broker from
 * `.kafka-local/state.json` → a new local broker started here (and stopped in teardown,
 * only then). `LOGPLANE_KAFKA=testcontainers` selects {@link startTestcontainersKafka}
 * instead of the jar broker. The address goes into `process.env.KAFKA_BROKERS`, which the
 * forked test workers inherit, and into `provide('kafkaBrokers')` for `inject()`.
 * If no broker can be had, this throws: Kafka tests are never skipped.
 */
import type { TestProject } from 'vitest/node';
import { ensureLocalBroker } from '../log/kafka/broker/launcher.ts';
import { waitUntilAnswers } from '../log/kafka/broker/probe.ts';
import { parseBrokerList } from './kafka-env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Comma-separated bootstrap brokers of the Kafka the suite uses. */
    kafkaBrokers: string;
  }
}

/** A broker this setup obtained, and how to release it. */
interface Acquired {
  readonly brokers: string;
  readonly teardown?: () => Promise<void>;
}

/**
 * For users with Docker: a Kafka in a container via Testcontainers (`LOGPLANE_KAFKA=testcontainers`).
 * Pinned to ^11 because 12.x needs Node >= 22.22. Loaded lazily, so runs without Docker never
 * touch the Docker client. Not exercised here (no Docker engine on this machine).
 */
export async function startTestcontainersKafka(): Promise<Acquired> {
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const image = process.env['LOGPLANE_KAFKA_IMAGE'] ?? 'confluentinc/cp-kafka:7.9.0';
  const started = await new KafkaContainer(image).withKraft().start();
  return {
    brokers: `${started.getHost()}:${started.getMappedPort(9093)}`,
    teardown: async () => void (await started.stop()),
  };
}

async function acquireKafka(): Promise<Acquired> {
  const fromEnv = process.env['KAFKA_BROKERS'];
  if (fromEnv && fromEnv.trim() !== '') {
    const ok = await waitUntilAnswers(parseBrokerList(fromEnv), { timeoutMs: 30_000 });
    if (!ok) throw new Error(`KAFKA_BROKERS=${fromEnv} is set but no Kafka answered there within 30 s.`);
    return { brokers: fromEnv };
  }
  if (process.env['LOGPLANE_KAFKA'] === 'testcontainers') return startTestcontainersKafka();
  const broker = await ensureLocalBroker();
  return broker.started && broker.stop ? { brokers: broker.brokers, teardown: () => broker.stop!() } : { brokers: broker.brokers };
}

/** vitest globalSetup entry: returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const acquired = await acquireKafka();
  process.env['KAFKA_BROKERS'] = acquired.brokers;
  project.provide('kafkaBrokers', acquired.brokers);
  return async () => {
    await acquired.teardown?.();
  };
}
