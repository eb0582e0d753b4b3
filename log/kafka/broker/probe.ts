/**
 * Client-side readiness: a cluster is up when kafkajs can describe it and list topics
 * through it (and, for a cluster of several brokers, sees all of them registered).
 */
import { Kafka, logLevel } from 'kafkajs';
import { sleep } from './process-util.ts';

/** What a cluster must show to count as answering. */
export interface AnswerExpectations {
  /** The KRaft cluster id: another broker on the same port does not count. */
  readonly expectedClusterId?: string;
  /** At least this many brokers in the cluster's metadata (live, unfenced brokers). */
  readonly expectedBrokers?: number;
}

/**
 * Asks the cluster once; true if it answered describeCluster and listTopics and meets
 * `expect` (cluster id, broker count).
 */
export async function brokerAnswers(brokers: readonly string[], timeoutMs = 5_000, expect: AnswerExpectations = {}): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'logplane-broker-probe',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 3_000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  const admin = kafka.admin({ retry: { retries: 0 } });
  let timer: NodeJS.Timeout | undefined;
  try {
    const attempt = (async () => {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length === 0 || cluster.brokers.length < (expect.expectedBrokers ?? 1)) return false;
      if (expect.expectedClusterId !== undefined && cluster.clusterId !== expect.expectedClusterId) return false;
      await admin.listTopics();
      return true;
    })();
    const timeout = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)));
    return await Promise.race([attempt, timeout]).catch(() => false);
  } finally {
    if (timer) clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Polls {@link brokerAnswers} until it says yes (true), the deadline passes (false), or
 * `shouldAbort` returns true (false).
 */
export async function waitUntilAnswers(
  brokers: readonly string[],
  options: AnswerExpectations & { timeoutMs: number; intervalMs?: number; shouldAbort?: () => boolean },
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (options.shouldAbort?.()) return false;
    const attemptMs = Math.max(1_000, Math.min(5_000, deadline - Date.now()));
    if (await brokerAnswers(brokers, attemptMs, options)) return true;
    if (options.shouldAbort?.()) return false;
    await sleep(options.intervalMs ?? 250);
  }
  return false;
}
