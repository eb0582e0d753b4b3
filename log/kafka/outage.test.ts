/**
 * The Kafka adapter when its only broker is taken down mid-run (a private one-broker KRaft
 * cluster started here in a temp dir on free loopback ports, SIGKILLed, restarted on the
 * same ports and data, stopped after): an append while the broker is down fails within a
 * bound with a retriable `LogError` (surfaced, not hung), a live subscription rides the
 * outage out (its reader's retriable failures are retried) and, once the broker is back,
 * delivers every acknowledged record once, in order, without a gap; appends go on.
 * The 3-broker case (the leader killed, leadership moving) is cluster.test.ts's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogError } from '../errors.ts';
import type { EventLog, LogRecord } from '../port.ts';
import { type LocalBroker, startLocalBroker } from './broker/launcher.ts';
import { createKafkaLog } from './index.ts';

let home: string;
let broker: LocalBroker;
let log: EventLog | undefined;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'logplane-kafka-outage-'));
  broker = await startLocalBroker({ brokers: 1, dataDir: join(home, 'data'), stateFile: join(home, 'state.json'), readyTimeoutMs: 180_000 });
  // The first consumer group a fresh broker sees waits for its offsets topic (50 partitions)
  // to be created and loaded, minutes on a loaded machine: a read (a throwaway group) does it now.
  const warmUp = await createKafkaLog({ brokers: broker.brokers.split(','), cluster: 'warm-up', partitions: 1, logLevel: 'nothing' });
  try {
    const [position] = await warmUp.append('desired', [{ key: 'warm-up', value: Buffer.from('warm-up') }]);
    expect(await warmUp.read('desired', 0, position!.offset)).toHaveLength(1);
  } finally {
    await warmUp.close();
  }
}, 480_000);

afterAll(async () => {
  await log?.close();
  await broker?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
}, 60_000);

/** Polls `check` until it returns a value other than undefined; fails after `ms`. */
const waitFor = async <T>(what: () => string, check: () => Promise<T | undefined>, ms: number): Promise<T> => {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`${what()}: not within ${ms} ms`, { cause: lastError });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

describe('kafka: the only broker taken down mid-run', () => {
  it('fails appends with a retriable error while it is down; a subscription rides the outage out and delivers every acknowledged record once, in order', async () => {
    log = await createKafkaLog({ brokers: broker.brokers.split(','), cluster: 'outage', partitions: 1, logLevel: 'nothing' });
    const delivered: LogRecord[] = [];
    const failures: unknown[] = [];
    const subscription = log.subscribe('desired').subscribe({ next: (batch) => delivered.push(...batch.records), error: (error) => failures.push(error) });
    const acked: string[] = [];
    const append = async (value: string) => {
      const [position] = await log!.append('desired', [{ key: 'Pod/default/p', value: Buffer.from(value) }]);
      acked.push(value);
      return position!;
    };
    try {
      for (let i = 0; i < 5; i++) await append(`before-${i}`);
      await waitFor(() => `5 records delivered before the kill (${delivered.length})`, async () => (delivered.length === 5 ? true : undefined), 60_000);

      const [node] = broker.nodes;
      await node!.kill('SIGKILL');
      const startedAt = Date.now();
      const down = await append('during').then(
        () => undefined,
        (error: unknown) => error,
      );
      const failedAfterMs = Date.now() - startedAt;
      expect(down).toBeInstanceOf(LogError);
      expect(down).toMatchObject({ retriable: true });
      expect(failedAfterMs).toBeLessThan(120_000);

      await node!.restart();
      // The first append after the restart may meet the partition's leader still being elected.
      await waitFor(() => 'an append acknowledged after the restart', async () => (await append('after-0')) ?? undefined, 90_000);
      for (let i = 1; i < 5; i++) await append(`after-${i}`);
      await waitFor(() => `every acknowledged record delivered (${delivered.length} of ${acked.length})`, async () => (delivered.length >= acked.length ? true : undefined), 90_000);

      expect(failures).toEqual([]);
      expect(delivered.map((record) => record.value.toString())).toEqual(acked);
      expect(delivered.map((record) => record.offset)).toEqual(acked.map((_, offset) => offset));
      expect(acked).not.toContain('during');
      process.stdout.write(`outage: the append during the outage failed after ${failedAfterMs} ms with ${(down as Error).name}: ${(down as Error).message}\n`);
    } finally {
      subscription.unsubscribe();
    }
  }, 400_000);
});
