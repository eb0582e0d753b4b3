/**
 * The Kafka adapter against a real broker (vitest's global setup provides one; these tests
 * never skip): the shared EventLog contract, then what is specific to Kafka.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeEventLogContract } from '../contract.ts';
import { LogUnavailableError, LogUsageError } from '../errors.ts';
import { partitionFor } from '../partitioner.ts';
import { type EventLog, type NewRecord, type Position, TOPICS, topicName } from '../port.ts';
import { kafkaBrokers } from '../../test/kafka-env.ts';
import { assignPositions, type PendingAppend, planRequest, prepareRecord } from './appender.ts';
import { type KafkaEventLog, createKafkaLog } from './index.ts';
import { classifyKafkaLine } from './logging.ts';
import { resolveKafkaLogOptions } from './options.ts';
import { type StickyMember, stickyAssign } from './sticky-assigner.ts';

const brokers = kafkaBrokers();
const admin = new Kafka({ brokers, clientId: 'logplane-test', logLevel: logLevel.NOTHING }).admin();
let adminConnected: Promise<void> | undefined;
const testAdmin = async () => {
  adminConnected ??= admin.connect();
  await adminConnected;
  return admin;
};
afterAll(async () => {
  if (adminConnected) await admin.disconnect();
});

const open = (cluster: string, partitions: number) => createKafkaLog({ brokers, cluster, partitions, logLevel: 'error' });

describeEventLogContract('kafka', {
  create: ({ cluster, partitions }) => open(cluster, partitions),
  reopen: ({ cluster, partitions }) => open(cluster, partitions),
  supportsMultiMemberGroups: true,
  checkRetention: async (log) => {
    const kafkaAdmin = await testAdmin();
    const described = await kafkaAdmin.describeConfigs({
      includeSynonyms: false,
      resources: TOPICS.map((topic) => ({ type: 2, name: topicName(log.layout.cluster, topic) })),
    });
    for (const topic of TOPICS) {
      const resource = described.resources.find((r) => r.resourceName === topicName(log.layout.cluster, topic))!;
      const config = (name: string) => resource.configEntries.find((entry) => entry.configName === name)?.configValue;
      const retention = log.layout.retention[topic];
      expect(config('cleanup.policy')).toBe('delete');
      expect(config('retention.ms')).toBe(retention.type === 'forever' ? '-1' : String(retention.ms));
    }
  },
});

describe('kafka adapter', () => {
  const logs: EventLog[] = [];
  const fresh = async (partitions: number): Promise<KafkaEventLog> => {
    const log = await open(`kt-${randomUUID().slice(0, 8)}`, partitions);
    logs.push(log);
    return log;
  };
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
  });

  /** Reads back every partition and checks that `records[i]` sits exactly at `positions[i]`. */
  const expectAt = async (log: EventLog, records: readonly NewRecord[], positions: readonly Position[]) => {
    const byPartition = await Promise.all(
      Array.from({ length: log.layout.partitions }, (_, p) => log.read('desired', p, 0)),
    );
    records.forEach((record, i) => {
      const position = positions[i]!;
      const stored = byPartition[position.partition]![position.offset];
      expect(stored?.offset).toBe(position.offset);
      expect(stored?.key).toBe(record.key);
      expect(stored?.value.equals(record.value)).toBe(true);
    });
  };

  it('maps positions per record with 3 partitions and mixed keys in one append', async () => {
    const log = await fresh(3);
    const records: NewRecord[] = Array.from({ length: 500 }, (_, i) => ({
      key: `Pod/ns-${i % 3}/p-${(i * 7919) % 41}`,
      value: Buffer.from(`event-${i}`),
    }));
    const positions = await log.append('desired', records);
    const next = [0, 0, 0];
    positions.forEach((position, i) => {
      expect(position.partition).toBe(partitionFor(records[i]!.key, 3));
      expect(position.offset).toBe(next[position.partition]);
      next[position.partition]! += 1;
    });
    expect(next.every((count) => count > 0)).toBe(true);
    await expectAt(log, records, positions);
  });

  it('keeps record headers (who appended) and reads them back; records without headers read back without', async () => {
    const log = await fresh(1);
    const headers = { 'logplane-group': 'c.scheduler', 'logplane-generation': '7', 'logplane-decided-key': 'Pod/default/ü' };
    await log.append('desired', [
      { key: 'Pod/default/a', value: Buffer.from('with'), headers },
      { key: 'Pod/default/b', value: Buffer.from('without') },
    ]);
    const [withHeaders, without] = await log.read('desired', 0, 0);
    expect(withHeaders!.headers).toEqual(headers);
    expect(without!.headers).toBeUndefined();
  });

  it('keeps concurrent appends apart: each one gets its own records’ positions, log order = call order', async () => {
    const log = await fresh(3);
    const appends = Array.from({ length: 8 }, (_, a) =>
      Array.from({ length: 50 + a * 30 }, (_, i) => ({ key: `k-${(i + a) % 11}`, value: Buffer.from(`a${a}-r${i}`) })),
    );
    const results = await Promise.all(appends.map((records) => log.append('desired', records)));
    const allRecords = appends.flat();
    const allPositions = results.flat();
    await expectAt(log, allRecords, allPositions);
    // Per partition, append a's records all come before append a+1's (appends are sent in call order).
    const ownerOf = appends.flatMap((records, a) => records.map(() => a));
    for (let p = 0; p < 3; p++) {
      const owners = allPositions
        .map((position, i) => ({ position, owner: ownerOf[i]! }))
        .filter(({ position }) => position.partition === p)
        .sort((x, y) => x.position.offset - y.position.offset)
        .map(({ owner }) => owner);
      expect(owners).toEqual([...owners].sort((x, y) => x - y));
    }
  });

  it('sends 10,000 records of one append in a few Produce requests, positions dense', async () => {
    const log = await fresh(1);
    const before = log.stats().produceRequests;
    const records = Array.from({ length: 10_000 }, (_, i) => ({ key: `Node/node-${i % 64}`, value: Buffer.alloc(200, i % 251) }));
    const positions = await log.append('desired', records);
    const requests = log.stats().produceRequests - before;
    expect(requests).toBeGreaterThan(0);
    expect(requests).toBeLessThan(20);
    expect(positions.map((position) => position.offset)).toEqual(records.map((_, i) => i));
    expect(await log.endOffsets('desired')).toEqual([10_000]);
  });

  it('fails fast with LogUnavailableError naming the brokers and what to do when Kafka is unreachable', async () => {
    const started = Date.now();
    const error = await createKafkaLog({ brokers: ['127.0.0.1:1'], cluster: 'unreachable', logLevel: 'nothing', connectionTimeoutMs: 1_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LogUnavailableError);
    expect((error as Error).message).toContain('127.0.0.1:1');
    expect((error as Error).message).toContain('npm run kafka:start');
    expect((error as Error).message).toContain('KAFKA_BROKERS');
    // Bounded, unlike kafkajs' default retrying (minutes): far below that even on a loaded machine.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it.each([
    [['localhost'], 'localhost'],
    [['127.0.0.1:0'], '127.0.0.1:0'],
    [['127.0.0.1:99999'], '127.0.0.1:99999'],
    [['kafka://127.0.0.1:9092'], 'kafka://127.0.0.1:9092'],
    [['127.0.0.1:9092', 'host :9092'], 'host :9092'],
  ])('rejects bad broker list %j eagerly, naming %s', async (bad, named) => {
    const attempt = createKafkaLog({ brokers: bad, cluster: 'c' });
    await expect(attempt).rejects.toBeInstanceOf(LogUsageError);
    await expect(attempt).rejects.toThrow(named);
  });

  it.each([
    [{ cluster: '' }, 'cluster'],
    [{ cluster: 'has space' }, 'cluster'],
    [{ partitions: 0 }, 'partitions'],
    [{ partitions: 1.5 }, 'partitions'],
    [{ retention: { heartbeats: { type: 'time', ms: 0 } } }, 'retention.heartbeats.ms'],
    [{ group: { sessionTimeoutMs: 3000, heartbeatIntervalMs: 3000 } }, 'heartbeatIntervalMs'],
  ] as const)('rejects bad option %j', (bad, named) => {
    expect(() => resolveKafkaLogOptions({ brokers: ['127.0.0.1:9092'], cluster: 'ok', ...bad } as never)).toThrow(named);
  });

  it('sets up idempotently, also from two clients at once', async () => {
    const cluster = `kt-${randomUUID().slice(0, 8)}`;
    const [a, b] = await Promise.all([open(cluster, 3), open(cluster, 3)]);
    logs.push(a, b);
    await a.setup();
    const [position] = await a.append('observed', [{ key: 'x', value: Buffer.from('1') }]);
    expect(await b.endOffsets('observed')).toEqual([0, 1, 2].map((p) => (p === position!.partition ? 1 : 0)));
  });

  it('refuses existing topics with another partition count', async () => {
    const cluster = `kt-${randomUUID().slice(0, 8)}`;
    logs.push(await open(cluster, 3));
    const attempt = open(cluster, 1);
    await expect(attempt).rejects.toBeInstanceOf(LogUsageError);
    await expect(attempt).rejects.toThrow(/3 partition\(s\).*configured for 1/);
  });

  it('creates heartbeats with the configured time retention and history topics forever', async () => {
    const cluster = `kt-${randomUUID().slice(0, 8)}`;
    const log = await createKafkaLog({ brokers, cluster, logLevel: 'error', retention: { heartbeats: { type: 'time', ms: 120_000 } } });
    logs.push(log);
    const kafkaAdmin = await testAdmin();
    const { resources } = await kafkaAdmin.describeConfigs({
      includeSynonyms: false,
      resources: TOPICS.map((topic) => ({ type: 2, name: topicName(cluster, topic) })),
    });
    const value = (topic: string, name: string) =>
      resources.find((r) => r.resourceName === topicName(cluster, topic as never))!.configEntries.find((e) => e.configName === name)
        ?.configValue;
    expect(value('heartbeats', 'retention.ms')).toBe('120000');
    expect(value('heartbeats', 'cleanup.policy')).toBe('delete');
    expect(value('desired', 'retention.ms')).toBe('-1');
    expect(value('observed', 'retention.ms')).toBe('-1');
  });

  it('delivers a batch outside promise continuations: what the subscriber schedules with nextTick runs before the promise callbacks it releases', async () => {
    // The apiserver's watch relies on this: it flushes a batch's events on the next tick, and
    // the create responses the same batch releases are promise callbacks; the events must leave first.
    const log = await fresh(1);
    const order: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    }).then(() => order.push('promise callback'));
    const handled = new Promise<void>((resolve) => {
      const subscription = log.subscribe('desired', { 0: 0 }).subscribe((batch) => {
        order.push(`batch of ${batch.records.length}`);
        release();
        process.nextTick(() => {
          order.push('next tick');
          subscription.unsubscribe();
          resolve();
        });
      });
    });
    await log.append('desired', [{ key: 'Pod/ns/a', value: Buffer.from('a') }]);
    await Promise.all([handled, released]);
    expect(order).toEqual(['batch of 1', 'next tick', 'promise callback']);
  });
});

describe('kafka appender request planning (no broker)', () => {
  const pending = (topic: string, records: NewRecord[], partitions: number): PendingAppend => ({
    topic,
    records: records.map((record, i) => prepareRecord(record, i, partitions)),
    positions: new Array<Position>(records.length),
    sent: 0,
  });

  it('puts one partition’s records in input order and maps them from baseOffset, whatever the response order', () => {
    const records = Array.from({ length: 30 }, (_, i) => ({ key: `k-${i % 5}`, value: Buffer.from(String(i)) }));
    const first = pending('c.desired', records, 3);
    const second = pending('c.desired', records.slice(0, 4), 3);
    const plan = planRequest([first, second]);
    expect(plan.slices.map(({ from, to }) => [from, to])).toEqual([[0, 30], [0, 4]]);
    const base = [100, 200, 300];
    assignPositions(plan, [2, 0, 1].map((partition) => ({ topicName: 'c.desired', partition, errorCode: 0, baseOffset: String(base[partition]) })));
    const next = [...base];
    for (const append of [first, second]) {
      append.records.forEach((record, i) => {
        expect(append.positions[i]).toEqual({ partition: record.partition, offset: next[record.partition] });
        next[record.partition]! += 1;
      });
    }
  });

  it('splits by batch bytes and record count, never reordering', () => {
    const big = pending('c.desired', Array.from({ length: 12 }, (_, i) => ({ key: 'same', value: Buffer.alloc(100, i) })), 1);
    const limits = { maxBatchBytes: 500, maxBatchRecords: 100, maxRequestBytes: 10_000 };
    const plan = planRequest([big], limits);
    expect(plan.slices).toEqual([{ append: big, from: 0, to: 3 }]);
    big.sent = 3;
    expect(planRequest([big], { ...limits, maxBatchBytes: 10_000, maxBatchRecords: 4 }).slices).toEqual([{ append: big, from: 3, to: 7 }]);
  });

  it('always sends at least one record, and fails loudly when a partition is missing from the response', () => {
    const one = pending('c.desired', [{ key: 'k', value: Buffer.alloc(2_000) }], 1);
    const plan = planRequest([one], { maxBatchBytes: 10, maxBatchRecords: 1, maxRequestBytes: 10 });
    expect(plan.slices).toEqual([{ append: one, from: 0, to: 1 }]);
    expect(() => assignPositions(plan, [])).toThrow(/no base offset/);
  });

  it('rejects records it cannot send: bad key, value, timestamp, oversize', () => {
    expect(() => prepareRecord({ key: 1 as never, value: Buffer.from('') }, 0, 1)).toThrow(LogUsageError);
    expect(() => prepareRecord({ key: 'k', value: 'v' as never }, 0, 1)).toThrow(LogUsageError);
    expect(() => prepareRecord({ key: 'k', value: Buffer.from(''), timestamp: -1 }, 0, 1)).toThrow(LogUsageError);
    expect(() => prepareRecord({ key: 'k', value: Buffer.alloc(2_000_000) }, 0, 1)).toThrow(/limit/);
    expect(() => prepareRecord({ key: 'k', value: Buffer.from(''), headers: { h: 1 as never } }, 0, 1)).toThrow(/header h must be a string/);
    // Headers count toward the record's size.
    expect(() => prepareRecord({ key: 'k', value: Buffer.alloc(990_000), headers: { h: 'x'.repeat(20_000) } }, 0, 1)).toThrow(/limit/);
    expect(prepareRecord({ key: 'k', value: Buffer.alloc(990_000) }, 0, 1).size).toBeLessThan(1_000_000);
  });

  it('drops kafkajs’ MEMBER_ID_REQUIRED line and demotes rebalance notices', () => {
    const line = (message: string, error?: string) => ({ namespace: 'Connection', level: 1, label: 'ERROR', log: { timestamp: '', message, error } });
    expect(
      classifyKafkaLine(line('Response JoinGroup(key: 11, version: 5)', 'The group member needs to have a valid member id before actually entering a consumer group')),
    ).toBe('drop');
    expect(classifyKafkaLine(line('Response Heartbeat(key: 12, version: 3)', 'The group is rebalancing, so a rejoin is needed'))).toBe('debug');
    expect(classifyKafkaLine(line('Response Produce(key: 0, version: 7)', 'Broker: Not enough replicas'))).toBe('keep');
  });
});

describe('kafka sticky partition assigner (no broker)', () => {
  const member = (memberId: string, owned: Record<string, number[]> = {}, topics = ['t']): StickyMember => ({ memberId, topics, owned });

  it.each([
    ['fresh group splits 3 partitions 2 + 1', { t: [0, 1, 2] }, [member('a'), member('b')], { a: { t: [0, 2] }, b: { t: [1] } }],
    ['a newcomer takes only the surplus', { t: [0, 1, 2] }, [member('b', { t: [0, 1, 2] }), member('a')], { a: { t: [2] }, b: { t: [0, 1] } }],
    ['one partition stays with its owner', { t: [0] }, [member('z', { t: [0] }), member('a')], { a: {}, z: { t: [0] } }],
    ['the survivor takes everything after a leave', { t: [0, 1, 2] }, [member('b', { t: [2] })], { b: { t: [0, 1, 2] } }],
    ['conflicting claims go to the lowest member id', { t: [0, 1] }, [member('b', { t: [0] }), member('a', { t: [0] })], { a: { t: [0] }, b: { t: [1] } }],
    ['claims of vanished partitions are ignored', { t: [0] }, [member('a', { t: [0, 7] })], { a: { t: [0] } }],
    [
      'only subscribers get a topic',
      { t: [0, 1], u: [0, 1] },
      [member('a', {}, ['t']), member('b', {}, ['t', 'u'])],
      { a: { t: [0] }, b: { t: [1], u: [0, 1] } },
    ],
    [
      'single-partition topics spread over members',
      { t: [0], u: [0] },
      [member('a', {}, ['t', 'u']), member('b', {}, ['t', 'u'])],
      { a: { t: [0] }, b: { u: [0] } },
    ],
  ] as const)('%s', (_name, partitions, members, expected) => {
    expect(stickyAssign(partitions, members)).toEqual(expected);
  });

  it('always assigns every partition exactly once within ⌊n/m⌋..⌈n/m⌉', () => {
    for (let n = 1; n <= 7; n++) {
      for (let m = 1; m <= 4; m++) {
        const partitions = Array.from({ length: n }, (_, p) => p);
        const members = Array.from({ length: m }, (_, i) => member(`m${i}`, { t: partitions.filter((p) => (p * 7 + i) % 3 === 0) }));
        const result = stickyAssign({ t: partitions }, members);
        const counts = Object.values(result).map((owned) => owned['t']?.length ?? 0);
        expect(Object.values(result).flatMap((owned) => owned['t'] ?? []).sort((a, b) => a - b)).toEqual(partitions);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }
    }
  });
});
