/**
 * The Kafka adapter on a real 3-broker KRaft cluster (3 JVMs, a 3-voter controller quorum,
 * started here in a temp dir on free loopback ports, stopped after): the shared EventLog
 * contract, the replication of logplane's topics (3 replicas, `min.insync.replicas=2`),
 * and a chaos test that SIGKILLs the leader broker while appends are in flight and checks
 * that no acknowledged append is lost and appends go on once leadership has moved.
 * One cluster for the whole file: a 3-broker start takes tens of seconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeEventLogContract } from '../contract.ts';
import { type EventLog, type LogRecord, type Position, TOPICS, topicName } from '../port.ts';
import { type LocalBroker, type LocalBrokerNode, startLocalBroker } from './broker/launcher.ts';
import { type KafkaLogOptions, createKafkaLog } from './index.ts';

const BROKERS = 3;
/** How soon the controller fences a dead broker (and so moves its leaderships). */
const BROKER_SESSION_TIMEOUT_MS = 6_000;

let home: string;
let cluster: LocalBroker;
let admin: Admin;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'logplane-kafka3-'));
  cluster = await startLocalBroker({
    brokers: BROKERS,
    dataDir: join(home, 'data'),
    stateFile: join(home, 'state.json'),
    brokerSessionTimeoutMs: BROKER_SESSION_TIMEOUT_MS,
    readyTimeoutMs: 180_000,
  });
  admin = new Kafka({ brokers: cluster.brokers.split(','), clientId: 'logplane-cluster-test', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
}, 240_000);

afterAll(async () => {
  await admin?.disconnect();
  await cluster?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
}, 60_000);

const open = (name: string, partitions: number, extra: Partial<KafkaLogOptions> = {}) =>
  createKafkaLog({ brokers: cluster.brokers.split(','), cluster: name, partitions, logLevel: 'error', ...extra });

describeEventLogContract('kafka-3-brokers', {
  create: ({ cluster: name, partitions }) => open(name, partitions),
  reopen: ({ cluster: name, partitions }) => open(name, partitions),
  supportsMultiMemberGroups: true,
});

/** Polls `check` until it returns a value other than undefined; fails after `ms`. */
const waitFor = async <T>(what: string | (() => string), check: () => Promise<T | undefined>, ms = 60_000): Promise<T> => {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`${typeof what === 'string' ? what : what()}: not within ${ms} ms`, { cause: lastError });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

/** Leader and in-sync replicas of every partition of `topic`, by partition. */
const partitionsOf = async (topic: string) => {
  const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
  return [...topics[0]!.partitions].sort((a, b) => a.partitionId - b.partitionId);
};

describe('kafka on 3 brokers: topics', () => {
  const logs: EventLog[] = [];
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
  });

  it('creates every topic with 3 replicas, all in sync, and min.insync.replicas=2', async () => {
    const name = `rf-${randomUUID().slice(0, 8)}`;
    logs.push(await open(name, 3));
    for (const topic of TOPICS) {
      // A broker may learn of new topics a moment after the one that answered the log.
      const partitions = await waitFor(`metadata of ${topic}`, () => partitionsOf(topicName(name, topic)), 10_000);
      expect(partitions).toHaveLength(3);
      for (const partition of partitions) {
        expect(new Set(partition.replicas)).toEqual(new Set([1, 2, 3]));
        expect(new Set(partition.isr)).toEqual(new Set([1, 2, 3]));
      }
    }
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: TOPICS.map((topic) => ({ type: 2, name: topicName(name, topic) })),
    });
    for (const resource of described.resources) {
      expect(resource.configEntries.find((entry) => entry.configName === 'min.insync.replicas')?.configValue).toBe('2');
    }
  });

  it('takes an explicit replication factor over the broker count', async () => {
    const name = `rf1-${randomUUID().slice(0, 8)}`;
    logs.push(await open(name, 1, { replicationFactor: 1 }));
    const [partition] = await waitFor('metadata of desired', () => partitionsOf(topicName(name, 'desired')), 10_000);
    expect(partition!.replicas).toHaveLength(1);
  });
});

/** One append of the chaos writers: what was sent and, once acknowledged, where it landed. */
interface Attempt {
  readonly values: readonly string[];
  readonly startedAt: number;
  acked?: { readonly at: number; readonly positions: readonly Position[] };
  failed?: { readonly at: number; readonly error: unknown };
}

describe('kafka on 3 brokers: chaos', () => {
  let log: EventLog | undefined;
  afterAll(async () => {
    await log?.close();
  });

  it('loses no acknowledged append when the leader broker is SIGKILLed mid-run, and appends go on after leadership moves', async () => {
    const name = `chaos-${randomUUID().slice(0, 8)}`;
    const partitions = 3;
    log = await open(name, partitions, { logLevel: 'nothing' });
    const desired = topicName(name, 'desired');
    // A read joins a throwaway consumer group: Kafka creates its offsets topic (3 replicas)
    // now, while all three brokers are up.
    const [warmUp] = await log.append('desired', [{ key: 'warm-up', value: Buffer.from('warm-up') }]);
    expect(await log.read('desired', warmUp!.partition, warmUp!.offset)).toHaveLength(1);

    const attempts: Attempt[] = [];
    let writing = true;
    const writer = async (id: number): Promise<void> => {
      for (let seq = 0; writing; seq++) {
        const values = Array.from({ length: 5 }, (_, i) => `w${id}-${seq}-${i}`);
        const attempt: Attempt = { values, startedAt: Date.now() };
        attempts.push(attempt);
        try {
          const positions = await log!.append('desired', values.map((value) => ({ key: `Pod/chaos/${value}`, value: Buffer.from(value) })));
          attempt.acked = { at: Date.now(), positions };
        } catch (error) {
          attempt.failed = { at: Date.now(), error };
        }
      }
    };
    const acked = () => attempts.filter((a) => a.acked !== undefined);
    const progress = (what: string) => () => {
      const failures = attempts.filter((a) => a.failed !== undefined);
      const last = failures.at(-1)?.failed?.error;
      return `${what} (${acked().length} acknowledged, ${failures.length} failed, last failure: ${last instanceof Error ? last.message : String(last)})`;
    };
    const writers = Promise.all(Array.from({ length: 4 }, (_, id) => writer(id)));

    try {
      await waitFor(progress('200 acknowledged appends before the kill'), async () => (acked().length >= 200 ? true : undefined), 60_000);

      // The victim leads partition 0 of the desired topic, so that leadership has to move.
      const leader = (await partitionsOf(desired))[0]!.leader;
      const victim: LocalBrokerNode = cluster.nodes.find((node) => node.nodeId === leader)!;
      // Another application's topic with its only replica on the victim: leaderless once the
      // victim dies, which must not stop logplane's producers (see metadata-fix.ts).
      const bystander = `bystander-${randomUUID().slice(0, 8)}`;
      await admin.createTopics({ topics: [{ topic: bystander, replicaAssignment: [{ partition: 0, replicas: [leader] }] }] });
      await waitFor('the bystander topic has its leader', async () => ((await partitionsOf(bystander))[0]?.leader === leader ? true : undefined));
      const killedAt = Date.now();
      await victim.kill('SIGKILL');
      expect(victim.alive()).toBe(false);

      // Leadership moves off the dead broker and the ISRs shrink to the two live ones.
      const moved = await waitFor('leadership moved off the killed broker', async () => {
        const now = await partitionsOf(desired);
        return now.every((p) => p.leader >= 0 && p.leader !== leader && !p.isr.includes(leader)) ? now : undefined;
      }, 60_000);
      const movedAt = Date.now();
      // A component starting now (a new client: topic check, new idempotent producer) works
      // while the bystander has no leader.
      const late = await open(name, partitions, { logLevel: 'nothing' });
      try {
        const [lateAt] = await late.append('desired', [{ key: 'Pod/chaos/late', value: Buffer.from('late') }]);
        expect((await late.read('desired', lateAt!.partition, lateAt!.offset, lateAt!.offset + 1)).map((r) => r.value.toString())).toEqual(['late']);
      } finally {
        await late.close();
      }
      const ackedAfterMove = () => attempts.filter((a) => a.acked !== undefined && a.startedAt >= movedAt);
      await waitFor(progress('200 appends acknowledged after leadership moved'), async () => (ackedAfterMove().length >= 200 ? true : undefined), 90_000);
      writing = false;
      await writers;

      const inFlight = attempts.filter((a) => a.startedAt < killedAt && (a.acked?.at ?? a.failed!.at) >= killedAt);
      const failed = attempts.filter((a) => a.failed !== undefined);
      const ackedAttempts = acked();
      expect(inFlight.length).toBeGreaterThan(0);
      expect(moved.map((p) => p.isr.length)).toEqual(Array.from({ length: partitions }, () => 2));
      // Every acknowledged record sits exactly at its acknowledged position; no record twice.
      const expectAllAcked = async (): Promise<LogRecord[]> => {
        const byPartition = await Promise.all(Array.from({ length: partitions }, (_, p) => log!.read('desired', p, 0)));
        for (const attempt of ackedAttempts) {
          attempt.acked!.positions.forEach((position, i) => {
            const stored = byPartition[position.partition]![position.offset];
            expect(stored?.value.toString(), `acked ${attempt.values[i]} at ${position.partition}/${position.offset}`).toBe(attempt.values[i]);
          });
        }
        const all = byPartition.flat();
        const values = all.map((record) => record.value.toString());
        expect(new Set(values).size).toBe(values.length);
        return all;
      };
      const afterKill = await expectAllAcked();
      const ackedRecords = ackedAttempts.reduce((n, a) => n + a.values.length, 0);
      process.stdout.write(
        `chaos: ${ackedAttempts.length} appends acknowledged (${ackedRecords} records), ${failed.length} failed, ` +
          `${inFlight.length} in flight at the kill of broker ${leader}, leadership moved after ${movedAt - killedAt} ms, ` +
          `${afterKill.length} records in the log, 0 acknowledged lost\n`,
      );

      // The killed broker comes back, catches up and rejoins every ISR; then another
      // broker dies and every acknowledged record is still there (it was replicated to
      // the restarted one too).
      await victim.restart();
      await waitFor('the restarted broker back in every ISR', async () => {
        const now = await partitionsOf(desired);
        return now.every((p) => p.isr.length === 3) ? true : undefined;
      }, 90_000);
      const second = cluster.nodes.find((node) => node.nodeId !== leader)!;
      await second.kill('SIGKILL');
      await waitFor('leadership moved off the second killed broker', async () => {
        const now = await partitionsOf(desired);
        return now.every((p) => p.leader >= 0 && p.leader !== second.nodeId && !p.isr.includes(second.nodeId)) ? true : undefined;
      }, 60_000);
      await expectAllAcked();
      const [next] = await log.append('desired', [{ key: 'Pod/chaos/after', value: Buffer.from('after') }]);
      expect(next!.offset).toBeGreaterThan(0);
      await second.restart();
    } finally {
      writing = false;
      await writers;
    }
  }, 300_000);
});
