import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { kafkaBrokers, parseBrokerList } from '../../../test/kafka-env.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { minInsyncReplicasFor, replicationFactorFor } from '../topics.ts';
import { newClusterId, renderServerProperties } from './config.ts';
import { parseJavaMajor } from './java.ts';
import { KAFKA_VERSION, POM_PATH, defaultDataDir } from './paths.ts';
import { readState } from './state.ts';

describe('local kafka broker: the broker the suite uses really answers', () => {
  it('is announced to the workers through KAFKA_BROKERS and provide()', () => {
    expect(process.env['KAFKA_BROKERS']).toBeTruthy();
    expect(inject('kafkaBrokers')).toBe(process.env['KAFKA_BROKERS']);
    expect(kafkaBrokers().length).toBeGreaterThan(0);
  });

  it('creates a topic, takes 3 messages and gives them back in order', async () => {
    const kafka = new Kafka({ clientId: 'broker-test', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
    const topic = `broker-test-${randomUUID()}`;
    const admin = kafka.admin();
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    const consumer = kafka.consumer({ groupId: `broker-test-${randomUUID()}`, sessionTimeout: 6_000, heartbeatInterval: 500 });
    try {
      await admin.connect();
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })).toBe(true);

      await producer.connect();
      await producer.send({ topic, messages: ['one', 'two', 'three'].map((value, i) => ({ key: `k${i}`, value })) });

      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const got: string[] = [];
      await new Promise<void>((resolve, reject) => {
        consumer.run({
          eachMessage: async ({ message }) => {
            got.push(message.value?.toString() ?? '');
            if (got.length === 3) resolve();
          },
        }).catch(reject);
      });
      expect(got).toEqual(['one', 'two', 'three']);

      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets).toEqual([expect.objectContaining({ partition: 0, high: '3', low: '0' })]);
    } finally {
      await consumer.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    }
  });

  it('does not auto-create topics', async () => {
    const kafka = new Kafka({ clientId: 'broker-test', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const topic = `never-created-${randomUUID()}`;
      await expect(admin.fetchTopicMetadata({ topics: [topic] })).rejects.toThrow();
      expect(await admin.listTopics()).not.toContain(topic);
    } finally {
      await admin.disconnect();
    }
  });
});

describe('local kafka broker: configuration', () => {
  it('pins the same Kafka version in pom.xml and the launcher', () => {
    expect(readFileSync(POM_PATH, 'utf8')).toContain(`<kafka.version>${KAFKA_VERSION}</kafka.version>`);
  });

  it('renders a single-node KRaft server.properties on 127.0.0.1', () => {
    const props = renderServerProperties({ port: 1111, controllerPort: 2222, logDirs: '/d', minSessionTimeoutMs: 1000 });
    for (const line of [
      'process.roles=broker,controller',
      'controller.quorum.voters=1@127.0.0.1:2222',
      'listeners=PLAINTEXT://127.0.0.1:1111,CONTROLLER://127.0.0.1:2222',
      'advertised.listeners=PLAINTEXT://127.0.0.1:1111',
      'auto.create.topics.enable=false',
      'group.min.session.timeout.ms=1000',
      'group.initial.rebalance.delay.ms=0',
      'offsets.topic.num.partitions=1',
      'log.dirs=/d',
    ]) expect(props.split('\n')).toContain(line);
  });

  it('renders node 2 of a 3-voter quorum: replication factor 3 and 2 in sync for internal topics', () => {
    const voters = [1, 2, 3].map((nodeId) => ({ nodeId, controllerPort: 2000 + nodeId }));
    const props = renderServerProperties({ port: 1112, controllerPort: 2002, logDirs: '/d/node-2/kraft', minSessionTimeoutMs: 1000, nodeId: 2, voters }).split('\n');
    for (const line of [
      'node.id=2',
      'controller.quorum.voters=1@127.0.0.1:2001,2@127.0.0.1:2002,3@127.0.0.1:2003',
      'listeners=PLAINTEXT://127.0.0.1:1112,CONTROLLER://127.0.0.1:2002',
      'default.replication.factor=3',
      'min.insync.replicas=2',
      'offsets.topic.replication.factor=3',
      'transaction.state.log.min.isr=2',
      'unclean.leader.election.enable=false',
      'broker.session.timeout.ms=6000',
    ]) expect(props).toContain(line);
    const single = renderServerProperties({ port: 1, controllerPort: 2, logDirs: '/d', minSessionTimeoutMs: 1000 }).split('\n');
    expect(single).toContain('offsets.topic.replication.factor=1');
    expect(single.some((line) => line.startsWith('broker.session.timeout.ms'))).toBe(false);
  });

  it.each([
    [1, 1, 1],
    [2, 2, 1],
    [3, 3, 2],
    [5, 3, 2],
  ])('gives a cluster of %i broker(s) topics of %i replicas with %i in sync', (brokers, replicas, inSync) => {
    expect(replicationFactorFor(brokers)).toBe(replicas);
    expect(minInsyncReplicasFor(replicas)).toBe(inSync);
  });

  it('keeps the data dir of each cluster size beside the state file', () => {
    expect(defaultDataDir(1, '/x/state.json')).toBe('/x/data');
    expect(defaultDataDir(3, '/x/state.json')).toBe('/x/data-3');
  });

  it('reads a state file written before clusters had several brokers as a cluster of one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-state-'));
    try {
      const file = join(dir, 'state.json');
      writeFileSync(file, JSON.stringify({ brokers: '127.0.0.1:9', pid: 42, port: 9, controllerPort: 10, clusterId: 'c', dataDir: '/d', logFile: '/d/broker.log' }));
      expect(readState(file)?.nodes).toEqual([{ nodeId: 1, pid: 42, port: 9, controllerPort: 10, dataDir: '/d', logFile: '/d/broker.log' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes 22-character base64url cluster ids', () => {
    const id = newClusterId();
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(newClusterId()).not.toBe(id);
  });

  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_392"', 8],
    ['garbage', undefined],
  ])('parses the Java major version of %s', (output, major) => {
    expect(parseJavaMajor(output)).toBe(major);
  });

  it('parses KAFKA_BROKERS lists', () => {
    expect(parseBrokerList(' a:1, b:2 ,,')).toEqual(['a:1', 'b:2']);
  });

  it('throws a clear error when there is no broker at all', () => {
    expect(() => kafkaBrokers({}, '/nonexistent/state.json')).toThrow(/KAFKA_BROKERS is unset/);
  });
});
