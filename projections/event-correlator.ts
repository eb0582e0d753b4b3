/**
 * kube's EventCorrelator (client-go tools/record/events_cache.go), pure: its three caches
 * (the aggregator's, the event logger's, the spam filter's token buckets) are read from the
 * Events that already exist for the involved object, so a decision, its replay and
 * `debug reconcile` at the same view and `now` correlate alike.
 *
 * - Aggregation: events that differ only by message (same source, involved object, type,
 *   reason, reporting controller and instance) seen with 10 distinct messages within a
 *   rolling 10 minutes become one "(combined from similar events): …" Event.
 * - Counting: an event equal to an existing one (getEventKey's fields) increments its
 *   `count` and moves its `lastTimestamp` and message instead of creating an Event.
 * - Spam filter: a token bucket per source + involved object (burst 25, refilled at one
 *   event per 5 minutes) drops what exceeds it. The bucket is replayed over the recorded
 *   occurrences (an Event's later occurrences are placed at its lastTimestamp, which never
 *   leaves more tokens than the real bucket had), so the filter is never looser than kube's.
 */
import type { Event } from '../schemas/index.ts';

/** Distinct messages of similar events within the interval before they are aggregated (defaultAggregateMaxEvents). */
export const AGGREGATE_MAX_EVENTS = 10;
/** The rolling window of aggregation (defaultAggregateIntervalInSeconds, 600 s). */
export const AGGREGATE_INTERVAL_MS = 600_000;
/** Events a source may burst about one object (defaultSpamBurst). */
export const SPAM_BURST = 25;
/** Refill of the spam filter's bucket, tokens per ms (defaultSpamQPS: 1/300 per second). */
export const SPAM_TOKENS_PER_MS = 1 / 300 / 1000;
/** What EventAggregatorByReasonMessageFunc prefixes an aggregate Event's message with. */
export const AGGREGATE_MESSAGE_PREFIX = '(combined from similar events): ';

/** What correlating a new event against the existing ones gives. */
export type Correlation =
  /** A new Event to create (a first occurrence, or the first aggregate of a group). */
  | { readonly type: 'create'; readonly event: Event }
  /** An existing Event seen again: its next state (count + 1, lastTimestamp, message). */
  | { readonly type: 'update'; readonly event: Event }
  /** Dropped by the spam filter. */
  | { readonly type: 'skip' };

const field = (value: string | undefined): string => value ?? '';

/** getSpamKey: source and involved object. */
export const spamKey = (event: Event): string =>
  [
    field(event.source?.component),
    field(event.source?.host),
    field(event.involvedObject.kind),
    field(event.involvedObject.namespace),
    field(event.involvedObject.name),
    field(event.involvedObject.uid),
    field(event.involvedObject.apiVersion),
  ].join('\u0000');

/** EventAggregatorByReasonFunc's aggregate key: the spam key's fields, type, reason, reporting controller and instance. */
export const aggregateKey = (event: Event): string =>
  [spamKey(event), field(event.type), field(event.reason), field(event.reportingComponent), field(event.reportingInstance)].join('\u0000');

/** getEventKey: source, involved object (with fieldPath), type, reason and message. */
export const eventKey = (event: Event): string =>
  [spamKey(event), field(event.involvedObject.fieldPath), field(event.type), field(event.reason), field(event.message)].join('\u0000');

const parsed = (text: string | undefined): number | undefined => {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
};

/** When an Event was last seen (lastTimestamp, series.lastObservedTime or eventTime), epoch ms. */
export const lastSeen = (event: Event): number | undefined =>
  parsed(event.lastTimestamp) ?? parsed(event.series?.lastObservedTime) ?? parsed(event.eventTime) ?? parsed(event.metadata.creationTimestamp);

/** When an Event was first seen, epoch ms. */
const firstSeen = (event: Event): number | undefined => parsed(event.firstTimestamp) ?? parsed(event.eventTime) ?? lastSeen(event);

const isAggregate = (event: Event): boolean => (event.message ?? '').startsWith(AGGREGATE_MESSAGE_PREFIX);

/**
 * The members of an aggregate group that are in its current window: newest first, as long
 * as each is within the interval of the next newer one (kube's record resets after a quiet
 * interval longer than 10 minutes).
 */
const currentWindow = (group: readonly Event[], now: number): Event[] => {
  const sorted = group
    .map((event) => ({ event, at: lastSeen(event) ?? 0 }))
    .sort((a, b) => b.at - a.at);
  const window: Event[] = [];
  let after = now;
  for (const { event, at } of sorted) {
    if (after - at > AGGREGATE_INTERVAL_MS) break;
    window.push(event);
    after = at;
  }
  return window;
};

/**
 * Whether the spam filter's bucket for `related` (the Events of one source + object) has a
 * token at `now`. The bucket starts full and is replayed over every recorded occurrence.
 */
export const spamFilterAccepts = (related: readonly Event[], now: number): boolean => {
  const occurrences: { at: number; n: number }[] = [];
  for (const event of related) {
    const count = Math.max(1, event.count ?? 1);
    const first = firstSeen(event) ?? now;
    occurrences.push({ at: first, n: 1 });
    if (count > 1) occurrences.push({ at: Math.max(first, lastSeen(event) ?? first), n: count - 1 });
  }
  occurrences.sort((a, b) => a.at - b.at);
  let tokens = SPAM_BURST;
  let previous = occurrences[0]?.at ?? now;
  for (const { at, n } of occurrences) {
    tokens = Math.max(0, Math.min(SPAM_BURST, tokens + (at - previous) * SPAM_TOKENS_PER_MS) - n);
    previous = at;
  }
  tokens = Math.min(SPAM_BURST, tokens + Math.max(0, now - previous) * SPAM_TOKENS_PER_MS);
  return tokens >= 1;
};

/** RFC 3339 without fractional seconds (metav1.Time). */
const time = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * EventCorrelate of `incoming` (a new Event as the recorder made it: count 1, first and last
 * timestamp `now`) against `existing`, the Events already recorded about the same involved
 * object (any source or reason; others are ignored). `aggregateName` gives the name of the aggregate
 * Event if one is created.
 */
export const correlate = (incoming: Event, existing: readonly Event[], now: number, aggregateName: () => string): Correlation => {
  const related = existing.filter((event) => spamKey(event) === spamKey(incoming));
  // kube filters last, after aggregating and counting into its caches; read from the view
  // those steps change nothing, so filtering first decides the same.
  if (!spamFilterAccepts(related, now)) return { type: 'skip' };
  const group = related.filter((event) => aggregateKey(event) === aggregateKey(incoming));
  const window = currentWindow(group, now);
  const messages = new Set(window.filter((event) => !isAggregate(event)).map((event) => event.message ?? ''));
  messages.add(incoming.message ?? '');
  const aggregated = window.some(isAggregate) || messages.size >= AGGREGATE_MAX_EVENTS;

  if (aggregated) {
    const message = AGGREGATE_MESSAGE_PREFIX + (incoming.message ?? '');
    const previous = newest(group.filter(isAggregate));
    return previous
      ? { type: 'update', event: seenAgain(previous, message, now) }
      : {
          type: 'create',
          event: {
            ...incoming,
            metadata: { name: aggregateName(), namespace: incoming.metadata.namespace },
            involvedObject: { ...incoming.involvedObject },
            message,
            count: 1,
            firstTimestamp: time(now),
            lastTimestamp: time(now),
          },
        };
  }
  const previous = newest(group.filter((event) => eventKey(event) === eventKey(incoming)));
  return previous ? { type: 'update', event: seenAgain(previous, incoming.message ?? '', now) } : { type: 'create', event: incoming };
};

const newest = (events: readonly Event[]): Event | undefined =>
  events.reduce<Event | undefined>((best, event) => (best === undefined || (lastSeen(event) ?? 0) > (lastSeen(best) ?? 0) ? event : best), undefined);

/** eventObserve's patch: count + 1, lastTimestamp now, the newest message. */
const seenAgain = (previous: Event, message: string, now: number): Event => ({
  ...previous,
  count: (previous.count ?? 1) + 1,
  lastTimestamp: time(now),
  message,
});
