/**
 * Topic layout on Kafka: the three topics of a cluster, their configs, and the idempotent
 * setup that creates what is missing and refuses topics laid out differently.
 */
import type { Admin, IResourceConfigEntry, ITopicConfig } from 'kafkajs';
import { LogUnavailableError, LogUsageError } from '../errors.ts';
import { type LogLayout, TOPICS, type Topic, type TopicRetention, topicName } from '../port.ts';

const ONE_HOUR_MS = 60 * 60 * 1000;

/**
 * Topic configs for one retention: history topics keep everything (`retention.ms=-1`,
 * no size bound); time-bounded topics delete, and roll segments at most hourly so old
 * segments become deletable (Kafka only deletes whole, closed segments).
 */
export const topicConfigEntries = (retention: TopicRetention): IResourceConfigEntry[] => {
  switch (retention.type) {
    case 'forever':
      return [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: '-1' },
        { name: 'retention.bytes', value: '-1' },
      ];
    case 'time':
      return [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'retention.ms', value: String(retention.ms) },
        { name: 'segment.ms', value: String(Math.max(1_000, Math.min(retention.ms, ONE_HOUR_MS))) },
      ];
  }
};

/** The `createTopics` entries for a layout. */
export const topicConfigs = (layout: LogLayout, replicationFactor: number | undefined): ITopicConfig[] =>
  TOPICS.map((topic: Topic) => ({
    topic: topicName(layout.cluster, topic),
    numPartitions: layout.partitions,
    ...(replicationFactor === undefined ? {} : { replicationFactor }),
    configEntries: topicConfigEntries(layout.retention[topic]),
  }));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Creates the cluster's topics that do not exist yet (waiting for their leaders), then
 * checks that every topic has `layout.partitions` partitions, each with a leader.
 * Safe to run concurrently from several processes. Throws `LogUsageError` when a topic
 * exists with another partition count (offsets and key placement would not match).
 */
export const ensureTopics = async (admin: Admin, layout: LogLayout, replicationFactor: number | undefined): Promise<void> => {
  const wanted = topicConfigs(layout, replicationFactor);
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter(({ topic }) => !existing.has(topic));
  if (missing.length > 0) {
    // Returns false (without waiting for leaders) when another process created them first;
    // the leader check below covers that case.
    await admin.createTopics({ topics: missing, waitForLeaders: true, timeout: 30_000 });
  }

  const names = wanted.map(({ topic }) => topic);
  for (let attempt = 0; ; attempt++) {
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    for (const { name, partitions } of topics) {
      if (partitions.length !== layout.partitions) {
        throw new LogUsageError(
          `topic ${name} exists with ${partitions.length} partition(s) but this log is configured for ${layout.partitions}; ` +
            `use partitions: ${partitions.length}, or another cluster name (partition counts cannot be changed without moving keys)`,
          { topic: name, existingPartitions: partitions.length, configuredPartitions: layout.partitions },
        );
      }
    }
    const leaderless = topics.some(({ partitions }) => partitions.some((p) => p.leader < 0));
    if (!leaderless) return;
    if (attempt >= 50) {
      throw new LogUnavailableError(`topics ${names.join(', ')} still have partitions without a leader after 5 s`, { cluster: layout.cluster });
    }
    await sleep(100);
  }
};
