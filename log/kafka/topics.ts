/**
 * Topic layout on Kafka: the three topics of a cluster, their configs, and the idempotent
 * setup that creates what is missing and refuses topics laid out differently.
 */
import type { Admin, IResourceConfigEntry, ITopicConfig } from 'kafkajs';
import { LogUnavailableError, LogUsageError } from '../errors.ts';
import { type LogLayout, TOPICS, type Topic, type TopicRetention, topicName } from '../port.ts';
import { isLeadershipError } from './kafka-errors.ts';

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

/**
 * Replicas per partition when the log's options leave it open: 3 on a cluster of 3 or more
 * brokers, else every broker (1 on a single broker).
 */
export const replicationFactorFor = (brokers: number): number => Math.max(1, Math.min(3, brokers));

/**
 * `min.insync.replicas` for a replication factor: a majority of the replicas, but at most
 * all of them but one, so an acknowledged (acks=all) append is on at least two brokers
 * with 3 replicas and appends go on with one broker down (1 → 1, 2 → 1, 3 → 2, 5 → 3).
 */
export const minInsyncReplicasFor = (replicationFactor: number): number =>
  Math.max(1, Math.min(Math.floor(replicationFactor / 2) + 1, replicationFactor - 1));

/** The `createTopics` entries for a layout, each with `replicationFactor` replicas and its `min.insync.replicas`. */
export const topicConfigs = (layout: LogLayout, replicationFactor: number): ITopicConfig[] =>
  TOPICS.map((topic: Topic) => ({
    topic: topicName(layout.cluster, topic),
    numPartitions: layout.partitions,
    replicationFactor,
    configEntries: [
      ...topicConfigEntries(layout.retention[topic]),
      { name: 'min.insync.replicas', value: String(minInsyncReplicasFor(replicationFactor)) },
    ],
  }));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long new topics may take to show a leader for every partition on the broker asked. */
const LEADER_WAIT_MS = 30_000;

/** A throwaway admin whose only bootstrap broker is `address` (with the log's TLS and SASL settings). */
export type BrokerAdmin = (address: string) => Admin;

/**
 * Waits until every broker of the cluster answers for each of `topics` itself. Each broker
 * learns of a new topic from the metadata log on its own, and one that has not yet answers
 * "unknown topic" to a client that asks it: kafkajs asks one broker for the metadata of a
 * consumer's topics when it subscribes, and fails the subscription with that (seen on a
 * loaded 3-broker cluster, a consumer group joined right after the log was opened). A fresh
 * client's first metadata request goes to its only bootstrap broker, so one client per
 * broker and topic asks exactly that broker.
 */
const untilEveryBrokerKnows = async (admin: Admin, adminOf: BrokerAdmin, topics: readonly string[], deadline: number): Promise<void> => {
  const { brokers } = await admin.describeCluster();
  if (brokers.length < 2) return;
  await Promise.all(
    brokers.flatMap(({ host, port }) =>
      topics.map(async (topic) => {
        const probe = adminOf(`${host}:${port}`);
        try {
          await probe.connect();
          for (let attempt = 0; ; attempt++) {
            try {
              await probe.fetchTopicOffsets(topic);
              return;
            } catch (error) {
              if (!isLeadershipError(error) || Date.now() > deadline) throw error;
              await sleep(Math.min(50 * 2 ** attempt, 1_000));
            }
          }
        } finally {
          await probe.disconnect().catch(() => undefined);
        }
      }),
    ),
  );
};

/**
 * Creates the cluster's topics that do not exist yet (waiting for their leaders), then
 * checks that every topic has `layout.partitions` partitions, each with a leader.
 * New topics get `replicationFactor` replicas, or when that is undefined
 * {@link replicationFactorFor} the brokers the cluster lists, and the matching
 * `min.insync.replicas` (3 brokers: 3 replicas, 2 in sync for an acknowledged append).
 * With `adminOf`, topics it created are then waited for on every broker (see
 * {@link untilEveryBrokerKnows}).
 * Safe to run concurrently from several processes. Throws `LogUsageError` when a topic
 * exists with another partition count (offsets and key placement would not match).
 */
export const ensureTopics = async (
  admin: Admin,
  layout: LogLayout,
  replicationFactor: number | undefined,
  adminOf?: BrokerAdmin,
): Promise<void> => {
  const existing = new Set(await admin.listTopics());
  const missingNames = TOPICS.map((topic) => topicName(layout.cluster, topic)).filter((topic) => !existing.has(topic));
  if (missingNames.length > 0) {
    const replicas = replicationFactor ?? replicationFactorFor((await admin.describeCluster()).brokers.length);
    const missing = topicConfigs(layout, replicas).filter(({ topic }) => missingNames.includes(topic));
    // Returns false when another process created them first. kafkajs' own wait for leaders
    // gives up on the first "unknown topic" from a broker that has not caught up with the
    // controller yet (usual on a cluster of several brokers): the wait below retries that.
    await admin.createTopics({ topics: missing, waitForLeaders: false, timeout: 30_000 });
  }

  const names = TOPICS.map((topic) => topicName(layout.cluster, topic));
  const deadline = Date.now() + LEADER_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    let topics: Awaited<ReturnType<Admin['fetchTopicMetadata']>>['topics'] | undefined;
    try {
      ({ topics } = await admin.fetchTopicMetadata({ topics: names }));
    } catch (error) {
      if (!isLeadershipError(error) || Date.now() > deadline) throw error;
    }
    for (const { name, partitions } of topics ?? []) {
      if (partitions.length !== layout.partitions) {
        throw new LogUsageError(
          `topic ${name} exists with ${partitions.length} partition(s) but this log is configured for ${layout.partitions}; ` +
            `use partitions: ${partitions.length}, or another cluster name (partition counts cannot be changed without moving keys)`,
          { topic: name, existingPartitions: partitions.length, configuredPartitions: layout.partitions },
        );
      }
    }
    const leaderless = topics === undefined || topics.some(({ partitions }) => partitions.some((p) => p.leader < 0));
    if (!leaderless) {
      if (missingNames.length > 0 && adminOf) await untilEveryBrokerKnows(admin, adminOf, missingNames, deadline);
      return;
    }
    if (Date.now() > deadline) {
      throw new LogUnavailableError(`topics ${names.join(', ')} still have partitions without a leader after ${LEADER_WAIT_MS / 1000} s`, {
        cluster: layout.cluster,
      });
    }
    await sleep(Math.min(100 * 2 ** attempt, 1_000));
  }
};

/** The partition count of the cluster's existing desired topic, or undefined when it does not exist yet. */
export const existingPartitionCount = async (admin: Admin, cluster: string): Promise<number | undefined> => {
  const name = topicName(cluster, 'desired');
  if (!(await admin.listTopics()).includes(name)) return undefined;
  const { topics } = await admin.fetchTopicMetadata({ topics: [name] });
  return topics[0]?.partitions.length;
};
