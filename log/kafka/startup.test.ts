/**
 * What a component meets when it starts on Kafka (the suite's broker): without an explicit
 * partition count it takes the existing topics' count, or `defaultPartitions` for a new
 * cluster; and joining a consumer group on a fresh cluster logs nothing at warn or error
 * level (kafkajs' retried coordinator look-ups are debug lines). The "coordinator not
 * available" answers come only while the broker creates its offsets topic (the first group a
 * broker ever sees) or moves a coordinator, so on a broker that has had groups the last test
 * passes without the demotion; the classification test pins the demotion itself.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaBrokers } from '../../test/kafka-env.ts';
import type { EventLog } from '../port.ts';
import { topicName } from '../port.ts';
import { createKafkaLog } from './index.ts';
import { classifyKafkaLine } from './logging.ts';

const opened: EventLog[] = [];
afterAll(async () => {
  await Promise.all(opened.map((log) => log.close()));
});
const open = async (options: { cluster: string; partitions?: number; defaultPartitions?: number; logger?: pino.Logger; logLevel?: 'debug' | 'nothing' }) => {
  const log = await createKafkaLog({ brokers: kafkaBrokers(), logLevel: options.logLevel ?? 'nothing', ...options });
  opened.push(log);
  return log;
};
const topicPartitions = async (cluster: string): Promise<number> => {
  const admin = new Kafka({ brokers: kafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topicName(cluster, 'desired')] });
    return topics[0]!.partitions.length;
  } finally {
    await admin.disconnect();
  }
};

describe('kafka: partition count at start', () => {
  it('creates a new cluster with defaultPartitions, and a later open with another default keeps the existing count', async () => {
    const cluster = `parts-${randomUUID().slice(0, 8)}`;
    const first = await open({ cluster, defaultPartitions: 3 });
    expect(first.layout.partitions).toBe(3);
    expect(await topicPartitions(cluster)).toBe(3);
    const second = await open({ cluster, defaultPartitions: 5 });
    expect(second.layout.partitions).toBe(3);
  });

  it('takes an existing one-partition cluster as it is, and an explicit count over the default', async () => {
    const cluster = `parts1-${randomUUID().slice(0, 8)}`;
    expect((await open({ cluster, partitions: 1 })).layout.partitions).toBe(1);
    expect((await open({ cluster, defaultPartitions: 3 })).layout.partitions).toBe(1);
    await expect(open({ cluster, partitions: 2, defaultPartitions: 3 })).rejects.toThrow(/exists with 1 partition/);
  });

  it('keeps the library default of 1 without either option', async () => {
    expect((await open({ cluster: `parts0-${randomUUID().slice(0, 8)}` })).layout.partitions).toBe(1);
  });
});

describe('kafka: start-up log lines', () => {
  it('demotes the retried group-coordinator look-up, the metadata and watermarks of a topic just created to debug, and keeps other errors', () => {
    const line = (message: string, error?: string) => ({ namespace: 'Connection', level: 1, label: 'ERROR', log: { timestamp: '', message, error } });
    expect(classifyKafkaLine(line('Response GroupCoordinator(key: 10, version: 2)', 'The group coordinator is not available'))).toBe('debug');
    expect(classifyKafkaLine(line('Response GroupCoordinator(key: 10, version: 2)', "The coordinator is loading and hence can't process requests for this group"))).toBe('debug');
    expect(classifyKafkaLine(line('Response GroupCoordinator(key: 10, version: 2)', 'Broker: Cluster authorization failed'))).toBe('keep');
    expect(classifyKafkaLine(line('Response Produce(key: 0, version: 7)', 'The group coordinator is not available'))).toBe('keep');
    expect(classifyKafkaLine(line('Response Metadata(key: 3, version: 6)', 'This server does not host this topic-partition'))).toBe('debug');
    expect(classifyKafkaLine(line('Response Produce(key: 0, version: 7)', 'This server does not host this topic-partition'))).toBe('keep');
    expect(classifyKafkaLine(line('Response ListOffsets(key: 2, version: 3)', 'This server is not the leader for that topic-partition'))).toBe('debug');
  });

  it('logs nothing at warn or error level when the first consumer group of a fresh cluster starts', async () => {
    const lines: { level: number; msg: string; error?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(text) as (typeof lines)[number]);
        done();
      },
    });
    const logger = pino({ level: 'debug' }, sink);
    const log = await open({ cluster: `startlog-${randomUUID().slice(0, 8)}`, defaultPartitions: 3, logger, logLevel: 'debug' });
    // A group id no broker has seen: its coordinator is looked up from scratch.
    const membership = await log.joinGroup(`fresh-group-${randomUUID().slice(0, 8)}`, ['desired']);
    try {
      await new Promise<void>((resolve, reject) => {
        const subscription = membership.assignments$.subscribe({ next: () => resolve(), error: reject });
        void subscription;
      });
    } finally {
      await membership.leave();
    }
    expect(lines.length, 'kafkajs lines reached the logger').toBeGreaterThan(0);
    expect(lines.filter((l) => l.level >= 40).map((l) => `${l.msg} ${l.error ?? ''}`)).toEqual([]);
  });
});
