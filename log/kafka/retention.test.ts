/**
 * Reading offsets Kafka no longer retains (the suite's broker; records removed with the
 * admin API's DeleteRecords, which moves the log start offset as time or size retention
 * does). The adapter's behaviour, defined here: `read` of a range starting below the log
 * start fails with a terminal `LogUsageError` naming the first retained offset; `subscribe`
 * from below it delivers from the first retained offset, as the embedded log does, so a
 * subscriber sees the gap in the offsets it gets (the projection refuses it: see
 * projections/follow-failures.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { filter, firstValueFrom, scan, timeout } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaBrokers } from '../../test/kafka-env.ts';
import { LogUsageError } from '../errors.ts';
import { type EventLog, TOPICS, topicName } from '../port.ts';
import { createKafkaLog } from './index.ts';

const cluster = `retention-${randomUUID().slice(0, 8)}`;
let log: EventLog;
let admin: Admin;

beforeAll(async () => {
  log = await createKafkaLog({ brokers: kafkaBrokers(), cluster, partitions: 1, logLevel: 'nothing' });
  admin = new Kafka({ brokers: kafkaBrokers(), clientId: 'retention-test', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await log.append('desired', Array.from({ length: 10 }, (_, i) => ({ key: 'Pod/default/p', value: Buffer.from(`v${i}`) })));
  const desired = topicName(cluster, 'desired');
  await admin.fetchTopicMetadata({ topics: [desired] });
  await admin.deleteTopicRecords({ topic: desired, partitions: [{ partition: 0, offset: '4' }] });
});

afterAll(async () => {
  await admin?.deleteTopics({ topics: TOPICS.map((topic) => topicName(cluster, topic)) }).catch(() => undefined);
  await admin?.disconnect();
  await log?.close();
});

describe('kafka: offsets no longer retained', () => {
  it.each([
    ['from 0', 0, undefined],
    ['from 3 to 6', 3, 6],
  ])('refuses a read %s with a terminal LogUsageError naming the first retained offset', async (_title, from, to) => {
    const read = log.read('desired', 0, from, to);
    await expect(read).rejects.toThrow(LogUsageError);
    await expect(read).rejects.toMatchObject({
      retriable: false,
      message: `offset ${from} of ${cluster}.desired/0 is no longer retained; the partition starts at 4`,
      context: { topic: 'desired', partition: 0, from, logStartOffset: 4 },
    });
  });

  it('reads from the first retained offset on', async () => {
    expect((await log.read('desired', 0, 4)).map((record) => [record.offset, record.value.toString()])).toEqual(
      [4, 5, 6, 7, 8, 9].map((offset) => [offset, `v${offset}`]),
    );
    expect(await log.endOffsets('desired')).toEqual([10]);
  });

  it('subscribes from below the log start at the first retained offset, as the embedded log does: the gap shows in the offsets', async () => {
    const offsets = await firstValueFrom(
      log.subscribe('desired', { 0: 1 }).pipe(
        scan((all: number[], batch) => [...all, ...batch.records.map((record) => record.offset)], []),
        filter((all) => all.length >= 6),
        timeout({ first: 60_000 }),
      ),
    );
    expect(offsets).toEqual([4, 5, 6, 7, 8, 9]);
  });
});
