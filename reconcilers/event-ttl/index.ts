/**
 * The event-ttl controller: kube-apiserver writes every Event with an etcd lease of
 * `--event-ttl` (1 h by default), renewed with each write, so an Event leaves the cluster an
 * hour after it was last seen. Here the log keeps every Event forever (time travel shows the
 * Events of any past moment), and this controller ages them out of the current view: it
 * deletes an Event whose last sighting (lastTimestamp, series.lastObservedTime, eventTime or
 * creation, whichever is latest) is older than the TTL at the decision's `now`, and asks to
 * be requeued when a younger one will expire. The fold stays a pure function of the log:
 * the deletion is a command like any other, decided on a recorded `now`.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { Event } from '../../schemas/index.ts';
import { lastSeen } from '../../projections/event-correlator.ts';
import { parseTime } from '../replicaset/objects.ts';
import { InvalidControllerOptionError } from '../errors.ts';
import type { Controller, Decision } from '../runtime.ts';

/** The controller's name: its consumer group and the actor of its deletions (`controller:event-ttl`). */
export const EVENT_TTL_CONTROLLER = 'event-ttl';

/** kube-apiserver's default `--event-ttl` (1 h). */
export const DEFAULT_EVENT_TTL_MS = 3_600_000;

/** When `event` expires (epoch ms) with `ttlMs`: its latest write-relevant time plus the TTL. */
export const eventExpiresAt = (event: Event, ttlMs: number): number => {
  const seen = Math.max(lastSeen(event) ?? 0, parseTime(event.metadata.creationTimestamp) ?? 0);
  return seen + ttlMs;
};

/** Deletes Event `key` once `ttlMs` have passed since it was last seen, at `now` (uid and resourceVersion preconditions). */
export const decideEventTtl = (key: string, view: View, now: number, ttlMs: number): Decision => {
  const event = view.get(key);
  if (event?.kind !== 'Event' || event.metadata.deletionTimestamp) return { commands: [] };
  const expiresAt = eventExpiresAt(event, ttlMs);
  if (expiresAt > now) return { commands: [], requeueAfterMs: expiresAt - now };
  return {
    commands: [
      {
        type: 'ObjectDeleted',
        kind: 'Event',
        namespace: event.metadata.namespace ?? null,
        name: event.metadata.name,
        expectedResourceVersion: event.metadata.resourceVersion ?? null,
        uid: event.metadata.uid ?? null,
        propagationPolicy: null,
        gracePeriodSeconds: null,
      },
    ],
  };
};

/** An Event's change maps to itself (a repeat moves its expiry). */
export const eventTtlKeysFor = (change: AppliedChange): string[] => (change.object.kind === 'Event' && change.type !== 'DELETED' ? [change.key] : []);

export interface EventTtlOptions {
  /** How long an Event stays after it was last seen (ms; default {@link DEFAULT_EVENT_TTL_MS}). */
  readonly ttlMs?: number;
}

/** Creates the event-ttl controller. */
export const createEventTtlController = (options: EventTtlOptions = {}): Controller => {
  const ttlMs = options.ttlMs ?? DEFAULT_EVENT_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new InvalidControllerOptionError('event TTL (--event-ttl)', ttlMs, 'a positive number of ms');
  return {
    name: EVENT_TTL_CONTROLLER,
    keysFor: eventTtlKeysFor,
    initialKeys: (view) => [...view.keys('Event')],
    decide: (key, view, { now }) => decideEventTtl(key, view, now, ttlMs),
  };
};
