/**
 * kube's EventCorrelator (client-go `tools/record/events_cache.go` of 1.32), pure: the
 * timestamps an Event is seen at, counting a repeat, aggregating similar events (10
 * distinct messages in a rolling 10 minutes), updating the aggregate afterwards, the quiet
 * interval that resets aggregation, and the spam filter's token bucket per source + object.
 * The recorder and its folded writes are tested in `reconcilers/events/events.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import type { Event } from '../schemas/index.ts';
import {
  AGGREGATE_INTERVAL_MS,
  AGGREGATE_MAX_EVENTS,
  AGGREGATE_MESSAGE_PREFIX,
  SPAM_BURST,
  aggregateKey,
  correlate,
  eventKey,
  lastSeen,
  spamFilterAccepts,
  spamKey,
  type Correlation,
} from './event-correlator.ts';

const T0 = Date.UTC(2030, 0, 1);
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const MINUTE = 60_000;

let serial = 0;
/** An Event as the recorder makes it at `at`: count 1, first and last timestamp `at`. */
const event = (message: string | undefined, at: number, extra: Partial<Event> = {}): Event => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name: `web.${(serial++).toString(16)}`, namespace: 'default' },
  involvedObject: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', namespace: 'default', uid: 'u-1' },
  source: { component: 'replicaset-controller' },
  reportingComponent: 'replicaset-controller',
  type: 'Warning',
  reason: 'FailedCreate',
  ...(message === undefined ? {} : { message }),
  count: 1,
  firstTimestamp: iso(at),
  lastTimestamp: iso(at),
  ...extra,
});
const name = () => 'web.aggregate';
const created = (correlation: Correlation): Event => {
  if (correlation.type !== 'create') throw new Error(`expected a create, got ${correlation.type}`);
  return correlation.event;
};
const updated = (correlation: Correlation): Event => {
  if (correlation.type !== 'update') throw new Error(`expected an update, got ${correlation.type}`);
  return correlation.event;
};

describe('when an Event was seen', () => {
  it('lastTimestamp first, then series.lastObservedTime, eventTime, creationTimestamp; unparsable times are absent', () => {
    const bare = event('m', T0, { firstTimestamp: undefined, lastTimestamp: undefined });
    expect(lastSeen({ ...bare, lastTimestamp: iso(T0 + 5000), series: { count: 2, lastObservedTime: iso(T0 + 9000) } })).toBe(T0 + 5000);
    expect(lastSeen({ ...bare, series: { count: 2, lastObservedTime: '2030-01-01T00:00:09.000000Z' }, eventTime: iso(T0) })).toBe(T0 + 9000);
    expect(lastSeen({ ...bare, lastTimestamp: 'not a time', eventTime: '2030-01-01T00:00:03.000000Z' })).toBe(T0 + 3000);
    expect(lastSeen({ ...bare, lastTimestamp: '', metadata: { ...bare.metadata, creationTimestamp: iso(T0 + 1000) } })).toBe(T0 + 1000);
    expect(lastSeen(bare)).toBeUndefined();
  });
});

describe('the keys', () => {
  it('the spam key is source + involved object; the event key adds fieldPath, type, reason and message', () => {
    const a = event('pulled', T0);
    expect(spamKey(event('other', T0, { reason: 'Other', type: 'Normal' }))).toBe(spamKey(a));
    expect(spamKey(event('pulled', T0, { source: { component: 'kubelet', host: 'n1' } }))).not.toBe(spamKey(a));
    expect(eventKey(event('pulled', T0 + 1000))).toBe(eventKey(a));
    expect(eventKey(event('pulled', T0, { involvedObject: { ...a.involvedObject, fieldPath: 'spec.containers{c}' } }))).not.toBe(eventKey(a));
    expect(aggregateKey(event('another message', T0))).toBe(aggregateKey(a));
    expect(aggregateKey(event('pulled', T0, { reportingInstance: 'kcm-2' }))).not.toBe(aggregateKey(a));
  });
});

describe('counting (eventObserve)', () => {
  it('a repeat updates the newest equal Event: count + 1, lastTimestamp now, firstTimestamp kept', () => {
    const older = event('quota exceeded', T0, { count: 3, lastTimestamp: iso(T0 + MINUTE) });
    const newer = event('quota exceeded', T0, { count: 7, lastTimestamp: iso(T0 + 2 * MINUTE) });
    const next = updated(correlate(event('quota exceeded', T0 + 3 * MINUTE), [older, newer], T0 + 3 * MINUTE, name));
    expect(next).toMatchObject({ metadata: { name: newer.metadata.name }, count: 8, firstTimestamp: iso(T0), lastTimestamp: iso(T0 + 3 * MINUTE), message: 'quota exceeded' });
  });

  it('an Event without a count counts as one', () => {
    const previous = event('x', T0, { count: undefined });
    expect(updated(correlate(event('x', T0 + 1000), [previous], T0 + 1000, name)).count).toBe(2);
  });

  it('a message-less repeat is still a repeat', () => {
    const previous = event(undefined, T0);
    expect(updated(correlate(event(undefined, T0 + 1000), [previous], T0 + 1000, name))).toMatchObject({ count: 2, message: '' });
  });

  it('a different message, reason or involved object is a new Event', () => {
    const previous = event('a', T0);
    const incoming = event('b', T0 + 1000);
    expect(created(correlate(incoming, [previous], T0 + 1000, name))).toBe(incoming);
    const otherReason = event('a', T0 + 1000, { reason: 'SuccessfulCreate' });
    expect(created(correlate(otherReason, [previous], T0 + 1000, name))).toBe(otherReason);
    const otherObject = event('a', T0 + 1000, { involvedObject: { ...previous.involvedObject, name: 'db', uid: 'u-2' } });
    expect(created(correlate(otherObject, [previous], T0 + 1000, name))).toBe(otherObject);
  });
});

describe('aggregation (EventAggregate)', () => {
  const similar = (count: number, from: number, step = 1000): Event[] =>
    Array.from({ length: count }, (_, i) => event(`Error creating: pod ${i}`, from + i * step));

  it(`the ${AGGREGATE_MAX_EVENTS}th distinct message within the interval creates the aggregate Event`, () => {
    const existing = similar(AGGREGATE_MAX_EVENTS - 1, T0);
    const now = T0 + MINUTE;
    const aggregate = created(correlate(event('Error creating: pod 9', now), existing, now, name));
    expect(aggregate).toMatchObject({
      metadata: { name: 'web.aggregate', namespace: 'default' },
      message: `${AGGREGATE_MESSAGE_PREFIX}Error creating: pod 9`,
      reason: 'FailedCreate',
      count: 1,
      firstTimestamp: iso(now),
      lastTimestamp: iso(now),
    });
  });

  it('one message fewer is not aggregated, and repeats of a message count once', () => {
    const existing = [...similar(AGGREGATE_MAX_EVENTS - 2, T0), event('Error creating: pod 0', T0 + 20_000)];
    const incoming = event('Error creating: pod 8', T0 + MINUTE);
    expect(created(correlate(incoming, existing, T0 + MINUTE, name))).toBe(incoming);
  });

  it('after the aggregate exists, a similar event updates it with its own message', () => {
    const existing = [...similar(AGGREGATE_MAX_EVENTS - 1, T0), event(`${AGGREGATE_MESSAGE_PREFIX}Error creating: pod 9`, T0 + 10_000, { metadata: { name: 'web.aggregate', namespace: 'default' } })];
    const next = updated(correlate(event('Error creating: pod 42', T0 + 20_000), existing, T0 + 20_000, name));
    expect(next).toMatchObject({ metadata: { name: 'web.aggregate' }, count: 2, message: `${AGGREGATE_MESSAGE_PREFIX}Error creating: pod 42`, lastTimestamp: iso(T0 + 20_000) });
  });

  it('the window rolls: events each within the interval of the next stay in it, however long the chain', () => {
    const step = 4 * MINUTE;
    const existing = similar(AGGREGATE_MAX_EVENTS - 1, T0, step);
    const now = T0 + (AGGREGATE_MAX_EVENTS - 1) * step;
    expect(now - T0).toBeGreaterThan(AGGREGATE_INTERVAL_MS);
    expect(correlate(event('Error creating: pod 9', now), existing, now, name).type).toBe('create');
    expect(created(correlate(event('Error creating: pod 9', now), existing, now, name)).message).toMatch(/^\(combined from similar events\): /);
  });

  it('a quiet interval longer than 10 minutes resets aggregation: an old aggregate is not reused', () => {
    const oldAggregate = event(`${AGGREGATE_MESSAGE_PREFIX}Error creating: pod 9`, T0);
    const existing = [...similar(AGGREGATE_MAX_EVENTS - 1, T0), oldAggregate];
    const now = T0 + AGGREGATE_INTERVAL_MS + MINUTE;
    const incoming = event('Error creating: pod 10', now);
    expect(created(correlate(incoming, existing, now, name))).toBe(incoming);
  });

  it('similar events of another reason or type are not part of the group', () => {
    const existing = similar(AGGREGATE_MAX_EVENTS - 1, T0).map((e) => ({ ...e, reason: 'FailedDelete' }));
    const incoming = event('Error creating: pod 9', T0 + MINUTE);
    expect(created(correlate(incoming, existing, T0 + MINUTE, name))).toBe(incoming);
  });
});

describe('the spam filter (token bucket per source + object)', () => {
  it(`a burst of ${SPAM_BURST} empties the bucket; one token comes back after 5 minutes`, () => {
    const burst = Array.from({ length: SPAM_BURST }, (_, i) => event(`m${i}`, T0));
    expect(spamFilterAccepts(burst.slice(1), T0)).toBe(true);
    expect(spamFilterAccepts(burst, T0)).toBe(false);
    expect(spamFilterAccepts(burst, T0 + 4 * MINUTE)).toBe(false);
    expect(spamFilterAccepts(burst, T0 + 5 * MINUTE)).toBe(true);
    expect(correlate(event('one more', T0 + MINUTE), burst, T0 + MINUTE, name)).toEqual({ type: 'skip' });
  });

  it("an Event's count is its occurrences: later ones at its lastTimestamp", () => {
    expect(spamFilterAccepts([event('m', T0, { count: SPAM_BURST - 1 })], T0)).toBe(true);
    expect(spamFilterAccepts([event('m', T0, { count: SPAM_BURST, lastTimestamp: iso(T0 + MINUTE) })], T0 + MINUTE)).toBe(false);
    // Spread over a long time the bucket refills between them: 24 at T0, the 25th an hour later.
    expect(spamFilterAccepts([event('m', T0, { count: SPAM_BURST - 1 }), event('n', T0 + 60 * MINUTE)], T0 + 60 * MINUTE)).toBe(true);
  });

  it('an Event without any timestamp is placed at now', () => {
    const untimed = Array.from({ length: SPAM_BURST }, (_, i) => event(`m${i}`, T0, { firstTimestamp: undefined, lastTimestamp: undefined }));
    expect(spamFilterAccepts(untimed, T0 + 60 * MINUTE)).toBe(false);
    expect(spamFilterAccepts([], T0)).toBe(true);
  });

  it("another source's events do not use this source's bucket", () => {
    const kubelet = Array.from({ length: SPAM_BURST }, (_, i) => event(`m${i}`, T0, { source: { component: 'kubelet', host: 'n1' } }));
    const incoming = event('mine', T0);
    expect(created(correlate(incoming, kubelet, T0, name))).toBe(incoming);
  });
});
