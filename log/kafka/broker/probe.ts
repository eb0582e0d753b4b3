/**
 * Client-side readiness: a broker is up when kafkajs can describe the cluster and list
 * topics through it.
 */
import { Kafka, logLevel } from 'kafkajs';
import { sleep } from './process-util.ts';

/**
 * Asks the broker once; true if it answered describeCluster and listTopics (and, when
 * `expectedClusterId` is given, belongs to that cluster: another broker on the same port
 * does not count).
 */
export async function brokerAnswers(brokers: readonly string[], timeoutMs = 5_000, expectedClusterId?: string): Promise<boolean> {
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
      if (cluster.brokers.length === 0) return false;
      if (expectedClusterId !== undefined && cluster.clusterId !== expectedClusterId) return false;
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
  options: { timeoutMs: number; intervalMs?: number; shouldAbort?: () => boolean; expectedClusterId?: string },
): Promise<boolean> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (options.shouldAbort?.()) return false;
    const attemptMs = Math.max(1_000, Math.min(5_000, deadline - Date.now()));
    if (await brokerAnswers(brokers, attemptMs, options.expectedClusterId)) return true;
    if (options.shouldAbort?.()) return false;
    await sleep(options.intervalMs ?? 250);
  }
  return false;
}
