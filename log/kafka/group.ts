/**
 * Consumer-group membership on Kafka. A member is a kafkajs consumer whose only job is to
 * hold partitions: on every join it pauses everything it was assigned, so it never fetches
 * records (the reconcilers read through `subscribe`), while kafkajs' run loop keeps
 * heartbeating (with nothing to fetch it sleeps `maxWaitTimeInMs`, then heartbeats), which
 * keeps the membership alive and is how a member learns that a rebalance started.
 * Partitions are assigned sticky (see `sticky-assigner.ts`): a join or leave moves only
 * the partitions balance requires.
 */
import type { Kafka, RetryOptions } from 'kafkajs';
import { ReplaySubject } from 'rxjs';
import { type LogError, LogUnavailableError } from '../errors.ts';
import { type Assignment, type GroupMembership, TOPICS, type Topic, topicName } from '../port.ts';
import type { KafkaGroupOptions } from './options.ts';
import { stickyPartitionAssigner, type TopicPartitions } from './sticky-assigner.ts';

export interface GroupDeps {
  readonly kafka: Kafka;
  readonly cluster: string;
  readonly group: Required<KafkaGroupOptions>;
  readonly fetchMaxWaitMs: number;
  readonly retry: RetryOptions;
  readonly toError: (error: unknown) => LogError;
}

/** Logical topic → sorted partitions, from kafkajs' `memberAssignment` (physical topic → partitions). */
export const toAssignment = (
  cluster: string,
  generation: number,
  memberAssignment: Readonly<Record<string, readonly number[]>>,
): Assignment => {
  const partitions = Object.fromEntries(TOPICS.map((topic) => [topic, [] as number[]])) as Record<Topic, number[]>;
  for (const topic of TOPICS) {
    const assigned = memberAssignment[topicName(cluster, topic)];
    if (assigned) partitions[topic] = [...assigned].sort((a, b) => a - b);
  }
  return { generation, partitions };
};

/**
 * Joins `groupId` for `topics` and resolves after the first assignment. `generation` is the
 * group's generation id from the broker (kafkajs 2.2.4 does not put it in its join event;
 * `generation-fix.ts` adds it), so it strictly increases and is comparable across members.
 */
export const joinKafkaGroup = async (deps: GroupDeps, groupId: string, topics: readonly Topic[]): Promise<GroupMembership> => {
  const physical = topics.map((topic) => topicName(deps.cluster, topic));
  let owned: TopicPartitions = {};
  const consumer = deps.kafka.consumer({
    groupId,
    partitionAssigners: [stickyPartitionAssigner(() => owned)],
    sessionTimeout: deps.group.sessionTimeoutMs,
    rebalanceTimeout: deps.group.rebalanceTimeoutMs,
    heartbeatInterval: deps.group.heartbeatIntervalMs,
    maxWaitTimeInMs: deps.fetchMaxWaitMs,
    allowAutoTopicCreation: false,
    retry: deps.retry,
  });
  const assignments = new ReplaySubject<Assignment>(1);
  let memberId = '';
  let generation = 0;
  let joined!: () => void;
  let failed!: (error: LogError) => void;
  const firstJoin = new Promise<void>((resolve, reject) => {
    joined = resolve;
    failed = reject;
  });
  firstJoin.catch(() => undefined);

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    consumer.pause(physical.map((topic) => ({ topic })));
    memberId = payload.memberId;
    owned = payload.memberAssignment;
    const { generationId } = payload as { generationId?: unknown };
    generation = typeof generationId === 'number' ? generationId : generation + 1;
    assignments.next(toAssignment(deps.cluster, generation, payload.memberAssignment));
    joined();
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart) return;
    const error = deps.toError(payload.error);
    assignments.error(error);
    failed(error);
  });

  let leaving: Promise<void> | undefined;
  const leave = (): Promise<void> => {
    leaving ??= (async () => {
      try {
        await consumer.disconnect();
      } finally {
        assignments.complete();
      }
    })();
    return leaving;
  };

  const firstJoinTimeoutMs = deps.group.sessionTimeoutMs + deps.group.rebalanceTimeoutMs + 10_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: physical, fromBeginning: false });
    await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
    await Promise.race([
      firstJoin,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new LogUnavailableError(`joining consumer group ${groupId} took longer than ${firstJoinTimeoutMs} ms`, {
                groupId,
              }),
            ),
          firstJoinTimeoutMs,
        );
      }),
    ]);
  } catch (error) {
    await leave().catch(() => undefined);
    throw deps.toError(error);
  } finally {
    clearTimeout(timer);
  }

  return {
    get memberId() {
      return memberId;
    },
    assignments$: assignments.asObservable(),
    leave,
  };
};
