/**
 * A projection when folding fails (DESIGN invariant 4, the failure paths): an error inside
 * the LMDB transaction of a batch rolls it back whole (state, cursor, history, in-memory
 * caches, change feed), and a projection following a log folds that batch again from its
 * stored cursor, so nothing is lost or applied twice; a reader failing with a retriable
 * error is followed again; records the log no longer holds below the cursor stop the
 * projection with a terminal error instead of being folded past.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { type EventLog, TOPICS, topicName } from '../log/port.ts';
import { encodeEvent, type EventEnvelope, type Pod } from '../schemas/index.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';
import { ProjectionError } from './errors.ts';
import { formatVector, type FoldedTopic } from './positions.ts';
import { createProjection, type AppliedChange, type Projection } from './projection.ts';
import { tempProjections } from './temp-projections.ts';
import { LOG_ADAPTERS, makeEvent, openTestLog, toBatches } from './testing.ts';

const temp = tempProjections('logplane-follow-failures-');

const namespace = (name: string): EventEnvelope =>
  makeEvent(`Namespace//${name}`, { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
const pod = (name: string, labels: Record<string, string> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'main', image: 'logplane/echo' }] },
});
const created = (name: string): EventEnvelope => makeEvent(`Pod/default/${name}`, { type: 'ObjectCreated', object: pod(name) });
const updated = (name: string, app: string): EventEnvelope =>
  makeEvent(`Pod/default/${name}`, { type: 'ObjectUpdated', object: pod(name, { app }), expectedResourceVersion: null, subresource: null });
const deleted = (name: string): EventEnvelope =>
  makeEvent(`Pod/default/${name}`, { type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name, uid: null, expectedResourceVersion: null, gracePeriodSeconds: 0, propagationPolicy: null });

/** Makes the store's `recordEvent` (called inside the batch's transaction) throw once, at `offset` of `topic`. */
const failOnceAt = (projection: Projection, topic: FoldedTopic, offset: number, error: Error = new Error('injected failure inside the transaction')) => {
  const { store } = projection;
  const original = store.recordEvent.bind(store);
  const fault = { thrown: 0 };
  store.recordEvent = ((...args: Parameters<typeof original>) => {
    if (fault.thrown === 0 && args[0] === topic && args[2] === offset) {
      fault.thrown++;
      throw error;
    }
    return original(...args);
  }) as typeof store.recordEvent;
  return fault;
};

const changesOf = (projection: Projection): AppliedChange[] => {
  const changes: AppliedChange[] = [];
  projection.changes$.subscribe((change) => changes.push(change));
  return changes;
};

describe('projection: a failed transaction is rolled back whole', () => {
  it('leaves state, cursor, history, live view and change feed as they were, and the same batch folds afterwards as on a clean projection', () => {
    const first = [namespace('default'), created('a'), created('b'), created('c')];
    const second = [updated('a', 'moved'), created('d'), deleted('b'), updated('c', 'moved')];
    const [firstBatch] = toBatches('desired', first);
    const [secondBatch] = toBatches('desired', second, 1, [first.length]);

    const clean = temp.track(createProjection({ dir: temp.dir() }));
    clean.applyBatch(firstBatch!);
    clean.applyBatch(secondBatch!);

    const projection = temp.track(createProjection({ dir: temp.dir() }));
    const changes = changesOf(projection);
    projection.applyBatch(firstBatch!);
    const before = { hash: projection.stateHash(), cursor: formatVector(projection.cursor()), a: projection.view().get('Pod/default/a'), changes: changes.length };
    expect(before.changes).toBe(4);

    // The third record of the batch (b's deletion) fails after a's update and d's creation were written.
    const fault = failOnceAt(projection, 'desired', first.length + 2);
    expect(() => projection.applyBatch(secondBatch!)).toThrow('injected failure inside the transaction');
    expect(fault.thrown).toBe(1);

    expect(projection.stateHash()).toBe(before.hash);
    expect(formatVector(projection.cursor())).toBe(before.cursor);
    expect(projection.store.readCursor(1)).toEqual({ desired: [first.length], observed: [0] });
    expect(projection.view().get('Pod/default/a')).toEqual(before.a);
    expect(projection.view().get('Pod/default/d')).toBeUndefined();
    expect(projection.view().get('Pod/default/b')).toBeDefined();
    expect(projection.store.eventAt('desired', 0, first.length, second[0]!.id)).toBeUndefined();
    expect(changes).toHaveLength(before.changes);

    projection.applyBatch(secondBatch!);
    expect(projection.stateHash()).toBe(clean.stateHash());
    expect(changes.slice(before.changes).map((c) => [c.type, c.key, c.offset])).toEqual([
      ['MODIFIED', 'Pod/default/a', 4],
      ['ADDED', 'Pod/default/d', 5],
      ['DELETED', 'Pod/default/b', 6],
      ['MODIFIED', 'Pod/default/c', 7],
    ]);
    expect(projection.view().get('Pod/default/a')?.metadata.labels).toEqual({ app: 'moved' });
  });
});

describe.each(LOG_ADAPTERS)('projection following the %s log, when folding fails', (adapter) => {
  const open = async (): Promise<EventLog> => openTestLog(adapter, { dir: temp.dir(), partitions: 1 });

  it('folds a batch whose transaction failed again from the stored cursor: every change once, the hash of a clean replay', async () => {
    const log = await open();
    try {
      const events = [namespace('default'), ...Array.from({ length: 12 }, (_, i) => created(`p${i}`)), updated('p3', 'x'), deleted('p4')];
      const projection = temp.track(createProjection({ dir: temp.dir(), log }));
      const fault = failOnceAt(projection, 'desired', 7);
      const changes = changesOf(projection);
      await log.append('desired', events.map((e) => ({ key: e.key, value: encodeEvent(e), timestamp: e.time })));
      await projection.waitFor({ desired: [events.length], observed: [0] }, 60_000);
      expect(fault.thrown).toBe(1);
      expect(changes.map((c) => c.offset)).toEqual(events.map((_, offset) => offset));
      expect(changes.map((c) => c.eventId)).toEqual(events.map((e) => e.id));
      for (const [offset, event] of events.entries()) expect(projection.store.eventAt('desired', 0, offset, event.id)).toBeDefined();
      const replay = temp.track(createProjection({ dir: temp.dir(), log }));
      await replay.waitFor({ desired: [events.length], observed: [0] }, 60_000);
      expect(projection.stateHash()).toBe(replay.stateHash());
    } finally {
      await log.close();
    }
  });
});

describe('projection following the kafka log, when the log fails', () => {
  const admin = async () => {
    const client = new Kafka({ brokers: kafkaBrokers(), clientId: 'follow-failures-test', logLevel: logLevel.NOTHING }).admin();
    await client.connect();
    return client;
  };

  it('follows the log again after its reader failed with a retriable error (topics missing, then created)', async () => {
    const cluster = `follow-${randomUUID().slice(0, 8)}`;
    const log = await openTestLog('kafka', { dir: temp.dir(), partitions: 1, cluster });
    const kafka = await admin();
    try {
      await kafka.deleteTopics({ topics: TOPICS.map((topic) => topicName(cluster, topic)) });
      const projection = temp.track(createProjection({ dir: temp.dir(), log }));
      // The reader fails at once ("This server does not host this topic-partition", retriable) and again until the topics are back.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await log.setup();
      const event = namespace('after-outage');
      await log.append('desired', [{ key: event.key, value: encodeEvent(event), timestamp: event.time }]);
      await projection.waitFor({ desired: [1], observed: [0] }, 60_000);
      expect(projection.view().get('Namespace//after-outage')).toBeDefined();
    } finally {
      await kafka.deleteTopics({ topics: TOPICS.map((topic) => topicName(cluster, topic)) }).catch(() => undefined);
      await kafka.disconnect();
      await log.close();
    }
  });

  it('stops with a terminal error at records the log no longer holds, instead of folding past them', async () => {
    const cluster = `gone-${randomUUID().slice(0, 8)}`;
    const log = await openTestLog('kafka', { dir: temp.dir(), partitions: 1, cluster });
    const kafka = await admin();
    try {
      const events = [namespace('default'), ...Array.from({ length: 9 }, (_, i) => created(`p${i}`))];
      await log.append('desired', events.map((e) => ({ key: e.key, value: encodeEvent(e), timestamp: e.time })));
      const desired = topicName(cluster, 'desired');
      await kafka.fetchTopicMetadata({ topics: [desired] });
      await kafka.deleteTopicRecords({ topic: desired, partitions: [{ partition: 0, offset: '4' }] });

      const projection = temp.track(createProjection({ dir: temp.dir(), log }));
      const changes = changesOf(projection);
      const waited = projection.waitFor({ desired: [events.length], observed: [0] }, 60_000);
      await expect(waited).rejects.toThrow(ProjectionError);
      await expect(waited).rejects.toMatchObject({
        retriable: false,
        message: expect.stringMatching(/^the log no longer holds desired\/0 offsets 0\.\.3 \(it delivered 4 next\)/),
      });
      expect(formatVector(projection.cursor())).toBe('0.0');
      expect(changes).toEqual([]);
      expect(projection.view().get('Pod/default/p5')).toBeUndefined();
      // Later waits fail at once with the same error.
      await expect(projection.waitFor({ desired: [1], observed: [0] }, 60_000)).rejects.toMatchObject({ retriable: false, context: { expected: 0, delivered: 4 } });
    } finally {
      await kafka.deleteTopics({ topics: TOPICS.map((topic) => topicName(cluster, topic)) }).catch(() => undefined);
      await kafka.disconnect();
      await log.close();
    }
  });
});
