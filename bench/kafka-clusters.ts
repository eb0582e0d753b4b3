/**
 * The bench's Kafka clusters are throwaway: each (scenario, run) writes a cluster of its own
 * (`bench-xxxxxxxx.desired|observed|heartbeats`) on the shared broker, and nothing reads it
 * afterwards. Names come from `benchKafkaCluster`, which remembers them, and
 * `deleteKafkaClusters` deletes their topics once the unit is done, so the broker does not
 * keep every run's data (the replay alone writes ~400 MB; 79 bench clusters and 62 probe
 * clusters, about 2 GB, had piled up on the shared broker).
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { TOPICS, topicName } from '../log/port.ts';

const created = new Set<string>();

/** A fresh cluster name (`<prefix>-xxxxxxxx`), remembered for `deleteKafkaClusters`. */
export const benchKafkaCluster = (prefix = 'bench'): string => {
  const name = `${prefix}-${randomUUID().slice(0, 8)}`;
  created.add(name);
  return name;
};

/**
 * Deletes the topics of every cluster `benchKafkaCluster` named in this process (those that
 * exist); resolves with how many topics it deleted. Call it after the logs are closed.
 */
export const deleteKafkaClusters = async (brokers: readonly string[]): Promise<number> => {
  if (created.size === 0) return 0;
  const admin = new Kafka({ brokers: [...brokers], clientId: 'logplane-bench-cleanup', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const topics = [...created].flatMap((cluster) => TOPICS.map((topic) => topicName(cluster, topic))).filter((topic) => existing.has(topic));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    created.clear();
    return topics.length;
  } finally {
    await admin.disconnect();
  }
};
