import { afterEach, describe, expect, it } from 'vitest';
import type { Event, EventBody } from '../../schemas/index.ts';
import { createTestCluster, replicaSetObject, type TestCluster } from '../testing.ts';
import {
  AGGREGATE_MESSAGE_PREFIX,
  SPAM_BURST,
  correlate,
  createRecorder,
  spamFilterAccepts,
  type Recorder,
} from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const T0 = Date.UTC(2030, 0, 1);
const SOURCE = { component: 'replicaset-controller' };

const setup = () => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  const rs = cluster.create(replicaSetObject({ name: 'web', replicas: 1 }));
  return { cluster, rs };
};

/** Records with `fill` on a fresh recorder at `now`, folds its commands, and returns them. */
const recordAt = (cluster: TestCluster, now: number, fill: (recorder: Recorder) => void): EventBody[] => {
  const recorder = createRecorder(cluster.view(), now, SOURCE);
  fill(recorder);
  const commands = recorder.commands();
  for (const record of cluster.apply(...commands)) expect(record.verdict.type).toBe('accepted');
  return commands;
};

const eventsOf = (cluster: TestCluster): Event[] => cluster.view().list('Event', 'default') as Event[];

describe('the recorder', () => {
  it("creates kube's core/v1 Event named <object>.<hex UnixNano> about the object", () => {
    const { cluster, rs } = setup();
    const [command] = recordAt(cluster, T0, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: web-abcde'));
    expect(command?.type).toBe('ObjectCreated');
    const [event] = eventsOf(cluster);
    const nanos = BigInt(`0x${event?.metadata.name.split('.')[1] ?? '0'}`);
    expect(nanos / 1_000_000n).toBe(BigInt(T0));
    expect(event?.metadata.name).toMatch(/^web\.[0-9a-f]+$/);
    expect(event).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'default' },
      involvedObject: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', namespace: 'default', uid: rs.metadata.uid },
      type: 'Normal',
      reason: 'SuccessfulCreate',
      message: 'Created pod: web-abcde',
      count: 1,
      firstTimestamp: '2030-01-01T00:00:00Z',
      lastTimestamp: '2030-01-01T00:00:00Z',
      source: { component: 'replicaset-controller' },
      reportingComponent: 'replicaset-controller',
    });
  });

  it('counts a repeat on the same Event (count + 1, lastTimestamp moves, firstTimestamp stays), judged on its resourceVersion', () => {
    const { cluster, rs } = setup();
    recordAt(cluster, T0, (r) => r.event(rs, 'Warning', 'FailedCreate', 'Error creating: quota'));
    const [first] = eventsOf(cluster);
    const [repeat] = recordAt(cluster, T0 + 30_000, (r) => r.event(rs, 'Warning', 'FailedCreate', 'Error creating: quota'));
    expect(repeat).toMatchObject({ type: 'ObjectUpdated', expectedResourceVersion: first?.metadata.resourceVersion });
    const events = eventsOf(cluster);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ metadata: { name: first?.metadata.name }, count: 2, firstTimestamp: '2030-01-01T00:00:00Z', lastTimestamp: '2030-01-01T00:00:30Z' });
    // Three repeats in one decision give one write of count 5.
    const commands = recordAt(cluster, T0 + 60_000, (r) => {
      for (let i = 0; i < 3; i++) r.event(rs, 'Warning', 'FailedCreate', 'Error creating: quota');
    });
    expect(commands).toHaveLength(1);
    expect(eventsOf(cluster)[0]?.count).toBe(5);
  });

  it('keeps Events of another reason, type or message apart', () => {
    const { cluster, rs } = setup();
    recordAt(cluster, T0, (r) => {
      r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: a');
      r.event(rs, 'Normal', 'SuccessfulDelete', 'Deleted pod: a');
      r.event(rs, 'Warning', 'SuccessfulCreate', 'Created pod: a');
      r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: b');
    });
    expect(eventsOf(cluster).map((e) => [e.type, e.reason, e.message, e.count])).toEqual(
      expect.arrayContaining([
        ['Normal', 'SuccessfulCreate', 'Created pod: a', 1],
        ['Normal', 'SuccessfulDelete', 'Deleted pod: a', 1],
        ['Warning', 'SuccessfulCreate', 'Created pod: a', 1],
        ['Normal', 'SuccessfulCreate', 'Created pod: b', 1],
      ]),
    );
    expect(new Set(eventsOf(cluster).map((e) => e.metadata.name)).size).toBe(4);
  });

  it('aggregates similar events: the 10th distinct message within 10 minutes starts a "(combined from similar events)" Event that later ones count on', () => {
    const { cluster, rs } = setup();
    recordAt(cluster, T0, (r) => {
      for (let i = 0; i < 9; i++) r.event(rs, 'Normal', 'SuccessfulCreate', `Created pod: web-${i}`);
    });
    expect(eventsOf(cluster)).toHaveLength(9);
    recordAt(cluster, T0 + 60_000, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: web-9'));
    const aggregate = (): Event | undefined => eventsOf(cluster).find((e) => e.message?.startsWith(AGGREGATE_MESSAGE_PREFIX));
    expect(eventsOf(cluster)).toHaveLength(10);
    expect(aggregate()).toMatchObject({ message: '(combined from similar events): Created pod: web-9', count: 1, reason: 'SuccessfulCreate' });
    recordAt(cluster, T0 + 120_000, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: web-10'));
    expect(eventsOf(cluster)).toHaveLength(10);
    expect(aggregate()).toMatchObject({ message: '(combined from similar events): Created pod: web-10', count: 2, lastTimestamp: '2030-01-01T00:02:00Z' });
    // A quiet interval longer than 10 minutes starts a fresh window: a new message is its own Event again.
    recordAt(cluster, T0 + 120_000 + 601_000, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: web-11'));
    expect(eventsOf(cluster).find((e) => e.message === 'Created pod: web-11')).toMatchObject({ count: 1 });
    expect(aggregate()?.count).toBe(2);
  });

  it("drops what exceeds the spam filter's bucket (burst 25 per source and object, one more every 5 minutes)", () => {
    const { cluster, rs } = setup();
    recordAt(cluster, T0, (r) => {
      for (let i = 0; i < 40; i++) r.event(rs, 'Warning', 'FailedCreate', 'Error creating: quota');
    });
    expect(eventsOf(cluster)[0]?.count).toBe(SPAM_BURST);
    // Another reason of the same source about the same object shares the bucket.
    expect(recordAt(cluster, T0 + 1000, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: x'))).toEqual([]);
    // 5 minutes refill one token; another source has its own bucket.
    expect(recordAt(cluster, T0 + 300_000, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: x'))).toHaveLength(1);
    expect(recordAt(cluster, T0 + 301_000, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: y'))).toEqual([]);
    const other = createRecorder(cluster.view(), T0 + 302_000, { component: 'deployment-controller' });
    other.event(rs, 'Normal', 'ScalingReplicaSet', 'Scaled up');
    expect(other.commands()).toHaveLength(1);
  });

  it('decides the same commands on the same view and now (replay, debug reconcile)', () => {
    const { cluster, rs } = setup();
    recordAt(cluster, T0, (r) => r.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: a'));
    const run = (): EventBody[] => {
      const recorder = createRecorder(cluster.view(), T0 + 5000, SOURCE);
      recorder.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: a');
      recorder.event(rs, 'Normal', 'SuccessfulCreate', 'Created pod: b');
      return recorder.commands();
    };
    expect(run()).toEqual(run());
    expect(run().map((c) => c.type)).toEqual(['ObjectUpdated', 'ObjectCreated']);
  });
});

describe('the correlator, pure', () => {
  const event = (message: string, at: number, extra: Partial<Event> = {}): Event => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `web.${at.toString(16)}`, namespace: 'default' },
    involvedObject: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', namespace: 'default', uid: 'u1' },
    type: 'Normal',
    reason: 'SuccessfulCreate',
    message,
    count: 1,
    firstTimestamp: new Date(at).toISOString(),
    lastTimestamp: new Date(at).toISOString(),
    source: SOURCE,
    reportingComponent: SOURCE.component,
    reportingInstance: '',
    ...extra,
  });

  it.each([
    ['a full bucket', true, []],
    ['25 occurrences just now', false, [event('m', T0, { count: 25 })]],
    ['24 occurrences just now', true, [event('m', T0, { count: 24 })]],
    ['25 occurrences 5 minutes ago', true, [event('m', T0 - 300_000, { count: 25 })]],
    ['25 occurrences spread over the last 4 minutes', false, [event('m', T0 - 240_000, { count: 25, lastTimestamp: new Date(T0).toISOString() })]],
  ] as const)('the spam filter with %s accepts: %s', (_, accepts, related) => {
    expect(spamFilterAccepts(related, T0)).toBe(accepts);
  });

  it('ignores Events about other objects', () => {
    const others = Array.from({ length: 30 }, (_, i) => event(`m${i}`, T0, { involvedObject: { kind: 'ReplicaSet', name: 'web', namespace: 'default', uid: 'other' } }));
    expect(correlate(event('new', T0), others, T0, () => 'web.agg')).toMatchObject({ type: 'create', event: { message: 'new' } });
  });
});
