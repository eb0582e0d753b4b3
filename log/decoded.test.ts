import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { filter, firstValueFrom, scan, take, timeout, toArray } from 'rxjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { bodies, envelope } from '../schemas/fixtures/samples.ts';
import { EncodeError, encodeEvent, type EventEnvelope } from '../schemas/index.ts';
import { appendEvents, decodeRecord, decodedBatches, decodedEvents } from './decoded.ts';
import { createEmbeddedLog } from './embedded/index.ts';
import { partitionFor } from './partitioner.ts';
import type { EventLog, LogRecord } from './port.ts';

const root = mkdtempSync(join(tmpdir(), 'logplane-decoded-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const logs: EventLog[] = [];
const freshLog = async (partitions = 1): Promise<EventLog> => {
  const cluster = `d-${randomUUID().slice(0, 8)}`;
  const log = await createEmbeddedLog({ dir: join(root, cluster), cluster, partitions });
  logs.push(log);
  return log;
};
afterEach(async () => {
  await Promise.all(logs.splice(0).map((log) => log.close()));
});

const capturingLogger = () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, logger };
};

const eventAt = (i: number, key = 'Pod/shop/web-0'): EventEnvelope => ({
  ...envelope(bodies[i % bodies.length]!, key),
  id: randomUUID(),
  time: 1_767_600_000_000 + i,
});

describe('decodeRecord', () => {
  const record = (value: Buffer): LogRecord => ({ topic: 'observed', partition: 2, offset: 41, key: 'k', value, timestamp: 0 });

  it('decodes an event', () => {
    const { logger, lines } = capturingLogger();
    const event = eventAt(0);
    const item = decodeRecord(record(encodeEvent(event)), logger);
    expect(item.type === 'event' && item.event.id).toBe(event.id);
    expect(lines).toEqual([]);
  });

  it.each([
    ['garbage', Buffer.from('garbage')],
    ['an empty value', Buffer.alloc(0)],
    ['a truncated event', encodeEvent(eventAt(1)).subarray(0, 20)],
  ])('quarantines %s and reports topic, partition and offset', (_, value) => {
    const { logger, lines } = capturingLogger();
    const item = decodeRecord(record(value), logger);
    expect(item.type).toBe('quarantined');
    expect(item.type === 'quarantined' && item.error).toBeInstanceOf(Error);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, topic: 'observed', partition: 2, offset: 41, key: 'k' });
  });
});

describe('appendEvents', () => {
  it('encodes, keys by partitionKey and stamps each record with its event time', async () => {
    const log = await freshLog(3);
    const events = [eventAt(0, 'Pod/shop/a'), eventAt(1, 'Pod/shop/b'), eventAt(2, 'Pod/shop/c')];
    const positions = await appendEvents(
      log,
      'desired',
      events.map((event) => ({ partitionKey: event.key, event })),
    );
    positions.forEach((position, i) => expect(position.partition).toBe(partitionFor(events[i]!.key, 3)));
    for (const [i, position] of positions.entries()) {
      const [record] = await log.read('desired', position.partition, position.offset, position.offset + 1);
      expect(record!.timestamp).toBe(events[i]!.time);
      expect(record!.key).toBe(events[i]!.key);
      const decoded = decodeRecord(record!);
      expect(decoded.type === 'event' && decoded.event.id).toBe(events[i]!.id);
    }
  });

  it('appends nothing when one event does not fit the schema', async () => {
    const log = await freshLog();
    const bad = { ...eventAt(1), actor: { type: 'robot', name: 'x' } } as unknown as EventEnvelope;
    await expect(
      appendEvents(log, 'desired', [
        { partitionKey: 'a', event: eventAt(0) },
        { partitionKey: 'a', event: bad },
      ]),
    ).rejects.toBeInstanceOf(EncodeError);
    expect(await log.endOffsets('desired')).toEqual([0]);
  });
});

describe('decodedEvents and decodedBatches', () => {
  it('carry on past a quarantined record, live', async () => {
    const log = await freshLog();
    const { logger, lines } = capturingLogger();
    await appendEvents(log, 'observed', [{ partitionKey: 'n', event: eventAt(0) }]);
    await log.append('observed', [{ key: 'n', value: Buffer.from([0xc3, 0x01, 1, 2, 3]) }]);
    const items = firstValueFrom(decodedEvents(log, 'observed', {}, { logger }).pipe(take(3), toArray(), timeout({ first: 10_000 })));
    const late = eventAt(2);
    await appendEvents(log, 'observed', [{ partitionKey: 'n', event: late }]);
    const received = await items;
    expect(received.map((item) => [item.type, item.record.offset])).toEqual([
      ['event', 0],
      ['quarantined', 1],
      ['event', 2],
    ]);
    expect(received[2]!.type === 'event' && received[2]!.event.id).toBe(late.id);
    expect(lines).toHaveLength(1);
  });

  it('keep the batches of the log, one item per record, from a start position', async () => {
    const log = await freshLog(3);
    const events = Array.from({ length: 30 }, (_, i) => eventAt(i, `Pod/shop/p-${i % 5}`));
    await appendEvents(log, 'desired', events.map((event) => ({ partitionKey: event.key, event })));
    const from = { 0: 1, 1: 1, 2: 1 };
    const expected = (await log.endOffsets('desired')).reduce((sum, end) => sum + Math.max(0, end - 1), 0);

    const batches = await firstValueFrom(
      decodedBatches(log, 'desired', from).pipe(
        scan((all: { partition: number; offsets: number[]; types: string[] }[], batch) => [
          ...all,
          { partition: batch.partition, offsets: batch.items.map((item) => item.record.offset), types: batch.items.map((item) => item.type) },
        ], []),
        filter((all) => all.reduce((sum, batch) => sum + batch.offsets.length, 0) >= expected),
        take(1),
        timeout({ first: 10_000 }),
      ),
    );
    for (const batch of batches) {
      expect(batch.offsets[0]).toBeGreaterThanOrEqual(1);
      expect(batch.types.every((type) => type === 'event')).toBe(true);
      expect(batch.offsets).toEqual(batch.offsets.map((_, i) => batch.offsets[0]! + i));
    }
  });
});
