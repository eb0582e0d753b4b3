/**
 * History queries over a projection: every version of an object with a diff, the causation
 * chain behind an object ("why"), the audit trail, and what changed between two moments.
 * All of them read LMDB indexes; none replays the log.
 */
import { managersChanged, type ManagerChange } from './field-managers.ts';
import { kindRef } from '../schemas/keys.ts';
import { kindByRef } from '../schemas/kinds/registry.ts';
import { kindRefOf } from '../schemas/kinds/refs.ts';
import { sameJson } from '../schemas/canonical-json.ts';
import type { EventLog } from '../log/port.ts';
import { decodeEvent, type Actor, type BindingRationale, type KubeObject } from '../schemas/index.ts';
import type { ChangeType, Verdict } from './fold.ts';
import { FOLDED_TOPICS, formatVector, topicIndex, type FoldedTopic, type PositionVector } from './positions.ts';
import type { EventRecord, HistoryEntry, ProjectionStore } from './store.ts';
import { materialize, materializeShared, objectAt, positionAtTime, type KindOrRef } from './view.ts';

/** Where one event lies in the log, and when it was stamped. */
export interface EventAddress {
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
  readonly time: number;
}

/**
 * The position just after `event`, as the list resourceVersion every history reply prints:
 * on the event's own topic partition, the event and every one before it (offset + 1, the
 * way an object's resourceVersion counts); on every other topic partition, the events
 * stamped no later than it, observed events stamped at the same millisecond as a desired
 * one counting as after it (the order `objectHistory` lists them in). So the object an
 * event created exists at the event's position, and the cluster there is the cluster as it
 * was right after the event. Read from the time index: a function of the folded log.
 */
export const eventPosition = (store: ProjectionStore, partitions: number, event: EventAddress, atTime = (time: number) => positionAtTime(store, time, partitions)): PositionVector => {
  const sameTime = atTime(event.time);
  const observed = event.topic === 'desired' ? atTime(event.time - 1).observed : sameTime.observed;
  const position = { desired: [...sameTime.desired], observed: [...observed] };
  position[event.topic][event.partition] = event.offset + 1;
  return position;
};

/** An event as the history replies carry it: with its position (`eventPosition`). */
export type PositionedEvent = EventRecord & { readonly position: string };

const positioned = (store: ProjectionStore, partitions: number, event: EventRecord): PositionedEvent => ({
  ...event,
  position: formatVector(eventPosition(store, partitions, event)),
});

/** One field that differs between two versions. */
export type FieldChange =
  | { readonly type: 'added'; readonly path: string; readonly value: unknown }
  | { readonly type: 'removed'; readonly path: string; readonly value: unknown }
  | { readonly type: 'changed'; readonly path: string; readonly from: unknown; readonly to: unknown };

/**
 * Field-level diff of two JSON values (arrays compared by index). A property whose value is
 * `undefined` is absent, as in the JSON clients see (the fold may leave e.g. `status: undefined`).
 */
export const diffObjects = (before: unknown, after: unknown, path = ''): FieldChange[] => {
  const isContainer = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (isContainer(before) && isContainer(after) && Array.isArray(before) === Array.isArray(after)) {
    const present = (v: Record<string, unknown>): string[] => Object.keys(v).filter((k) => v[k] !== undefined);
    const keys = [...new Set([...present(before), ...present(after)])].sort();
    return keys.flatMap((k) => {
      const child = Array.isArray(before) ? `${path}[${k}]` : path ? `${path}.${k}` : k;
      if (before[k] === undefined) return [{ type: 'added', path: child, value: after[k] } as const];
      if (after[k] === undefined) return [{ type: 'removed', path: child, value: before[k] } as const];
      return diffObjects(before[k], after[k], child);
    });
  }
  if (sameJson(before, after)) return [];
  return [{ type: 'changed', path: path || '.', from: before, to: after }];
};

/** One version of an object in its history. */
export interface VersionView {
  /** The list resourceVersion just after the event (`eventPosition`): the object is at this version there. */
  readonly position: string;
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
  readonly time: number;
  readonly actor: Actor;
  readonly eventId: string;
  readonly eventType: string;
  readonly verdict: Verdict;
  readonly change: ChangeType | null;
  /** The object as clients saw it after this event (absent once deleted or if rejected before creation). */
  readonly object: KubeObject | null;
  readonly diff: readonly FieldChange[];
  /** The field managers whose `managedFields` entries this change wrote (new or changed entries). */
  readonly managers: readonly ManagerChange[];
}

const withoutVersion = (o: KubeObject | null): unknown => {
  if (!o) return null;
  const copy = structuredClone(o);
  delete copy.metadata.resourceVersion;
  return copy;
};

/**
 * Every entry of `key` on both topics, oldest first (each topic's in log order, the two
 * interleaved by time), leaving out those `upTo` does not hold when given.
 */
const entriesOf = (store: ProjectionStore, key: string, upTo?: PositionVector): HistoryEntry[] => {
  // Each topic's entries come in log order (the range is keyed by offset); event times come from
  // the writers' clocks, so they only interleave the two topics and never reorder one of them.
  const desiredEntries: HistoryEntry[] = [];
  const observedEntries: HistoryEntry[] = [];
  for (const { value } of store.history.getRange({ start: [key, 0, 0], end: [key, FOLDED_TOPICS.length, 0] })) {
    if (upTo && value.offset >= (upTo[value.topic][value.partition] ?? 0)) continue;
    (value.topic === 'desired' ? desiredEntries : observedEntries).push(value);
  }
  const entries: HistoryEntry[] = [];
  let d = 0;
  let o = 0;
  while (d < desiredEntries.length || o < observedEntries.length) {
    const nextDesired = desiredEntries[d];
    const nextObserved = observedEntries[o];
    if (nextDesired && (!nextObserved || nextDesired.time <= nextObserved.time)) {
      entries.push(nextDesired);
      d++;
    } else if (nextObserved) {
      entries.push(nextObserved);
      o++;
    }
  }
  return entries;
};

/** `positionAtTime` of one store, as `eventPosition` asks it. */
type PositionAtTime = (time: number) => PositionVector;

/** `positionAtTime`, remembering its answers: the versions of one reply often share their milliseconds. */
const rememberedPositions = (store: ProjectionStore, partitions: number): PositionAtTime => {
  const positions = new Map<number, PositionVector>();
  return (time) => {
    let found = positions.get(time);
    if (found === undefined) positions.set(time, (found = positionAtTime(store, time, partitions)));
    return found;
  };
};

/**
 * `eventPosition` formatted, for many events of one reply (they often share their
 * milliseconds, so the time index is read once per millisecond).
 */
export const eventPositions = (store: ProjectionStore, partitions: number): ((event: EventAddress) => string) => {
  const atTime = rememberedPositions(store, partitions);
  return (event) => formatVector(eventPosition(store, partitions, event, atTime));
};

/** One version of an object as the bulk history lists it: a `VersionView` without the diff. */
export type VersionSummary = Omit<VersionView, 'diff' | 'managers'>;

/**
 * The versions of an object's `entries` (all of them, oldest first) from index `from`, at
 * most `count`: each with the object as clients saw it after the event, and with the diff
 * it made when `withDiff` (the earlier entries are read for the state they left).
 */
function versionsOf(store: ProjectionStore, partitions: number, atTime: PositionAtTime, entries: readonly HistoryEntry[], from: number, count: number, withDiff: true): VersionView[];
function versionsOf(store: ProjectionStore, partitions: number, atTime: PositionAtTime, entries: readonly HistoryEntry[], from: number, count: number, withDiff: false): VersionSummary[];
function versionsOf(store: ProjectionStore, partitions: number, atTime: PositionAtTime, entries: readonly HistoryEntry[], from: number, count: number, withDiff: boolean): VersionSummary[] {
  let desired: HistoryEntry | undefined;
  let status: HistoryEntry | undefined;
  let previous: KubeObject | null = null;
  const versions: VersionSummary[] = [];
  const end = Math.min(entries.length, from + count);
  for (let index = 0; index < end; index++) {
    const entry = entries[index]!;
    if (entry.change !== null) {
      if (entry.topic === 'desired') desired = entry;
      else status = entry;
    }
    if (index < from && !withDiff) continue;
    const exists = desired && desired.change !== 'DELETED' && desired.object;
    const record = exists ? { object: desired!.object!, version: desired!.offset + 1 } : undefined;
    // A diff needs a copy of its own; a summary is serialized at once and may share the stored parts.
    const current = record ? (withDiff ? materialize(record, status?.status ?? undefined) : materializeShared(record, status?.status ?? undefined)) : null;
    const diff = withDiff && entry.change !== null ? diffObjects(withoutVersion(previous), withoutVersion(current)) : [];
    const managers = withDiff && entry.change !== null ? managersChanged(previous, current) : [];
    if (entry.change !== null) previous = current;
    if (index < from) continue;
    versions.push({
      position: formatVector(eventPosition(store, partitions, entry, atTime)),
      topic: entry.topic,
      partition: entry.partition,
      offset: entry.offset,
      time: entry.time,
      actor: entry.actor,
      eventId: entry.eventId,
      eventType: entry.eventType,
      verdict: entry.verdict,
      change: entry.change,
      object: current,
      ...(withDiff ? { diff, managers } : {}),
    });
  }
  return versions;
}

/** Every event that touched `key` (accepted or rejected), oldest first, each with the diff it made. */
export const objectHistory = (store: ProjectionStore, partitions: number, key: string): VersionView[] =>
  versionsOf(store, partitions, rememberedPositions(store, partitions), entriesOf(store, key), 0, Number.MAX_SAFE_INTEGER, true);

/** Where a page of the bulk history starts: at object `key`, after its first `skip` versions. */
export interface HistoryResume {
  readonly key: string;
  readonly skip: number;
}

export interface HistoryPageQuery {
  /** The objects of this namespace; undefined: every object (cluster-scoped ones among them). */
  readonly namespace?: string;
  /** Only the events this position holds: the pages of one listing all read the same moment. */
  readonly upTo: PositionVector;
  /** At most this many versions in the page (an object's versions may continue on the next). */
  readonly limit: number;
  /** Where the previous page stopped. */
  readonly resume?: HistoryResume;
}

export interface HistoryPage {
  /** Objects in key order, each with its versions in this page (oldest first, without diffs). */
  readonly items: readonly { readonly key: string; readonly versions: readonly VersionSummary[] }[];
  /** Where the next page starts; absent on the last page. */
  readonly next?: HistoryResume;
}

/**
 * The keys of the objects of `namespace` (every object when undefined) that have a history,
 * in key order from `from` on, read from the `heads` index by range scans: keys are
 * `Kind/namespace/name`, so each kind's objects of the namespace are one range, and the
 * scan jumps from one kind to the next without reading the other namespaces' keys.
 */
export function* historyKeys(store: ProjectionStore, namespace: string | undefined, from = ''): Generator<string> {
  if (namespace === undefined) {
    yield* store.heads.getKeys({ start: from });
    return;
  }
  let cursor = from;
  for (;;) {
    let first: string | undefined;
    for (const key of store.heads.getKeys({ start: cursor, limit: 1 })) first = key;
    if (first === undefined) return;
    const slash = first.indexOf('/');
    if (slash < 0) {
      cursor = `${first}\0`;
      continue;
    }
    const ref = first.slice(0, slash);
    const prefix = `${ref}/${namespace}/`;
    if (first < prefix) {
      cursor = prefix;
      continue;
    }
    for (const key of store.heads.getKeys({ start: first })) {
      if (!key.startsWith(prefix)) break;
      yield key;
    }
    // Past every key of this kind ('0' follows '/').
    cursor = `${ref}0`;
  }
}

/** One object's part of a page: its entries (all of them, oldest first) and the ones the page holds. */
export interface PageEntries {
  readonly key: string;
  readonly entries: readonly HistoryEntry[];
  /** The index of the page's first entry. */
  readonly from: number;
  /** How many entries from `from` the page holds (at least 1). */
  readonly count: number;
}

/**
 * Which entries a page of `query` holds: whole objects in key order until `limit` entries
 * are taken, the last object's continuing on the next page when they do not fit. Reads the
 * `heads` index by range and each object's chain of entries; never replays the log.
 */
export const historyPageEntries = (store: ProjectionStore, query: HistoryPageQuery): { readonly items: readonly PageEntries[]; readonly next?: HistoryResume } => {
  if (!Number.isInteger(query.limit) || query.limit < 1) throw new RangeError(`limit must be a positive integer, got ${query.limit}`);
  const items: PageEntries[] = [];
  let taken = 0;
  for (const key of historyKeys(store, query.namespace, query.resume?.key)) {
    if (taken === query.limit) return { items, next: { key, skip: 0 } };
    const skip = key === query.resume?.key ? query.resume.skip : 0;
    const entries = entriesOf(store, key, query.upTo);
    const count = Math.min(entries.length - skip, query.limit - taken);
    if (count > 0) {
      items.push({ key, entries, from: skip, count });
      taken += count;
      if (skip + count < entries.length) return { items, next: { key, skip: skip + count } };
    }
  }
  return { items };
};

/**
 * One page of the versions of many objects (a namespace's, or all): `historyPageEntries`,
 * each entry with its position and the object as clients saw it after it.
 */
export const historyPage = (store: ProjectionStore, partitions: number, query: HistoryPageQuery): HistoryPage => {
  const page = historyPageEntries(store, query);
  const atTime = rememberedPositions(store, partitions);
  return {
    items: page.items.map(({ key, entries, from, count }) => ({ key, versions: versionsOf(store, partitions, atTime, entries, from, count, false) })),
    ...(page.next ? { next: page.next } : {}),
  };
};

/**
 * The entries of `page` with the object as clients saw it after each (null once deleted,
 * or before it was created). The objects share their parts with the stored records: read
 * them at once, do not keep or change them.
 */
export function* entryStates(page: PageEntries): Generator<{ readonly entry: HistoryEntry; readonly object: KubeObject | null }> {
  let desired: HistoryEntry | undefined;
  let status: HistoryEntry | undefined;
  const end = page.from + page.count;
  for (let index = 0; index < end; index++) {
    const entry = page.entries[index]!;
    if (entry.change !== null) {
      if (entry.topic === 'desired') desired = entry;
      else status = entry;
    }
    if (index < page.from) continue;
    const exists = desired && desired.change !== 'DELETED' && desired.object;
    yield { entry, object: exists ? materializeShared({ object: desired!.object!, version: desired!.offset + 1 }, status?.status ?? undefined) : null };
  }
}

/** One link of a causation chain. */
export interface CauseLink {
  readonly event: PositionedEvent;
  /** The scheduler's reasons, for a binding. */
  readonly rationale?: BindingRationale;
  /** A one-line account of what happened ("bound to node-2 by controller scheduler"). */
  readonly summary: string;
  /** The scheduler's PodScheduled message, for its status write of a pod it could not bind (why it waits, whom it preempted). */
  readonly scheduling?: string;
  /** For a create or update: the field managers whose `managedFields` entries it wrote. */
  readonly managers?: readonly ManagerChange[];
}

/** Whether an event type creates an object (of a built-in kind, or a custom object). */
const isCreate = (eventType: string): boolean => eventType === 'ObjectCreated' || eventType === 'CustomObjectCreated';

/** Whether an event type updates an object (of a built-in kind, or a custom object, its status too). */
const isUpdate = (eventType: string): boolean => eventType === 'ObjectUpdated' || eventType === 'CustomObjectUpdated';

/** The field managers an accepted create or update of the desired object wrote (its entries new or changed against the version before). */
const managersOfEvent = (store: ProjectionStore, event: EventRecord): ManagerChange[] => {
  if (event.verdict.type !== 'accepted' || !(isCreate(event.eventType) || isUpdate(event.eventType))) return [];
  const topic = FOLDED_TOPICS.indexOf(event.topic);
  let previous: KubeObject | null = null;
  for (const { value } of store.history.getRange({ start: [event.key, topic, 0], end: [event.key, topic, event.offset + 1] })) {
    if (value.change === null) continue;
    if (value.offset === event.offset) return managersChanged(previous, value.object);
    previous = value.change === 'DELETED' ? null : value.object;
  }
  return [];
};

const readRationale = async (log: EventLog, event: EventRecord): Promise<BindingRationale | undefined> => {
  if (event.eventType !== 'PodBound') return undefined;
  const [record] = await log.read(event.topic, event.partition, event.offset, event.offset + 1);
  if (!record) return undefined;
  const decoded = decodeEvent(record.value);
  return decoded.body.type === 'PodBound' ? decoded.body.rationale : undefined;
};

/** The PodScheduled message of a pod status the scheduler wrote (read back from the log), if the event is one. */
const readSchedulingMessage = async (log: EventLog, event: EventRecord): Promise<string | undefined> => {
  if (event.eventType !== 'ObjectUpdated' || event.actor.type !== 'controller' || event.actor.name !== 'scheduler' || !event.key.startsWith('Pod/')) return undefined;
  const [record] = await log.read(event.topic, event.partition, event.offset, event.offset + 1);
  if (!record) return undefined;
  const body = decodeEvent(record.value).body;
  if (body.type !== 'ObjectUpdated' || body.object.kind !== 'Pod') return undefined;
  const condition = body.object.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  return condition?.message ?? undefined;
};

const describeActor = (actor: Actor): string => `${actor.type} "${actor.name}"`;

const summarize = (event: EventRecord, rationale: BindingRationale | undefined): string => {
  const [kind, namespace, name] = event.key.split('/');
  const what = namespace ? `${kind} ${namespace}/${name}` : `${kind} ${name}`;
  const verdict = event.verdict.type === 'rejected' ? ` (rejected: ${event.verdict.reason})` : '';
  switch (event.eventType) {
    case 'PodBound': {
      const best = rationale?.scores[0];
      const score = best ? ` to node "${best.node}" with score ${best.score}` : '';
      const filtered = rationale && rationale.filtered.length > 0 ? `, ${rationale.filtered.length} node(s) filtered out` : '';
      const preemption = rationale?.preemption;
      const preempted = preemption ? `, after preempting ${preemption.victims.length} pod(s) on node "${preemption.nominatedNode}"` : '';
      return `${what} bound${score} by ${describeActor(event.actor)}${filtered}${preempted}${verdict}`;
    }
    case 'ObjectCreated':
    case 'CustomObjectCreated':
      return `${what} created by ${describeActor(event.actor)}${verdict}`;
    case 'ObjectUpdated':
    case 'CustomObjectUpdated':
      return `${what} updated by ${describeActor(event.actor)}${verdict}`;
    case 'ObjectDeleted':
    case 'CustomObjectDeleted':
      return `${what} deleted by ${describeActor(event.actor)}${verdict}`;
    case 'PodStatusChanged':
    case 'NodeStatusChanged':
      return `${what} status reported by ${describeActor(event.actor)}${verdict}`;
    default:
      return `${event.eventType} on ${what} by ${describeActor(event.actor)}${verdict}`;
  }
};

/**
 * Why `key` is as it is: starting from the last events that changed it (its latest
 * status report, its binding, its creation), each followed back through `causationId` to
 * the request that started it. Returns chains, newest first.
 */
export const why = async (store: ProjectionStore, log: EventLog, partitions: number, key: string): Promise<CauseLink[][]> => {
  const entries = [...store.history.getRange({ start: [key, 0, 0], end: [key, FOLDED_TOPICS.length, 0] })].map((e) => e.value);
  const starts = new Map<string, HistoryEntry>();
  for (const entry of entries) {
    if (entry.verdict.type !== 'accepted') continue;
    starts.set(entry.eventType, entry); // the latest of each kind of event
  }
  const chains: CauseLink[][] = [];
  for (const entry of [...starts.values()].sort((a, b) => b.time - a.time)) {
    const chain: CauseLink[] = [];
    const seen = new Set<string>();
    let id: string | null = entry.eventId;
    for (let owners = 0; id && owners <= MAX_OWNER_HOPS; owners++) {
      let created: EventRecord | undefined;
      while (id && !seen.has(id)) {
        seen.add(id);
        const event = store.events.get(id);
        if (!event) break;
        const rationale = await readRationale(log, event);
        const scheduling = await readSchedulingMessage(log, event);
        const managers = managersOfEvent(store, event);
        chain.push({
          event: positioned(store, partitions, event),
          ...(rationale ? { rationale } : {}),
          summary: summarize(event, rationale),
          ...(scheduling ? { scheduling } : {}),
          ...(managers.length > 0 ? { managers } : {}),
        });
        if (!created && event.actor.type === 'controller' && isCreate(event.eventType)) created = event;
        id = event.causationId;
      }
      // A controller made this object because of its owner's spec, which the event that
      // merely woke the controller need not name: continue with the owner's change.
      const ownerEvent = created ? ownerCause(store, created) : undefined;
      id = ownerEvent && !seen.has(ownerEvent.eventId) ? ownerEvent.eventId : null;
    }
    chains.push(chain);
  }
  return chains;
};

const MAX_OWNER_HOPS = 4;

/**
 * The kind ref keys name objects of `kind` in `apiVersion` by (an owner reference's): a
 * registered kind's storage ref (`Deployment`, `Job.batch`), a custom kind's `Kind.group`.
 */
const storageRefOfType = (apiVersion: string, kind: string): string => {
  const slash = apiVersion.lastIndexOf('/');
  const ref = kindRefOf(slash < 0 ? '' : apiVersion.slice(0, slash), kind);
  return kindByRef(ref)?.storageRef ?? ref;
};

/**
 * For an object a controller created: the owner's last change before it that a
 * controller would act on (its creation, or a user's change of it).
 */
const ownerCause = (store: ProjectionStore, event: EventRecord): HistoryEntry | undefined => {
  if (event.actor.type !== 'controller' || !isCreate(event.eventType)) return undefined;
  const created = store.history.get([event.key, FOLDED_TOPICS.indexOf(event.topic), event.offset]);
  const owner = created?.object?.metadata.ownerReferences?.find((r) => r.controller) ?? created?.object?.metadata.ownerReferences?.[0];
  if (!created?.object || !owner) return undefined;
  const ownerKey = `${storageRefOfType(owner.apiVersion, owner.kind)}/${created.object.metadata.namespace ?? ''}/${owner.name}`;
  let cause: HistoryEntry | undefined;
  for (const { value } of store.history.getRange({ start: [ownerKey, 0, 0], end: [ownerKey, 1, 0] })) {
    if (value.time > event.time || value.verdict.type !== 'accepted' || value.change === null) continue;
    if (isCreate(value.eventType) || (isUpdate(value.eventType) && value.actor.type === 'user')) cause = value;
  }
  return cause;
};

export interface AuditQuery {
  readonly user?: string;
  /** Events stamped at or after this time (epoch ms). */
  readonly since?: number;
  /** Events stamped at or before this time (epoch ms). */
  readonly until?: number;
  /** Events that are not in this position (appended after it). */
  readonly after?: PositionVector;
  /** Events that are in this position. */
  readonly upTo?: PositionVector;
  /** Only events of objects of this kind: a stored kind (`Job`) or a kind ref as keys name it (`Job.batch`, `CronTab.stable.example.com`). */
  readonly kind?: KindOrRef;
  /** Most recent first, at most this many (default 1,000). */
  readonly limit?: number;
  /** Include controller and node actors (default: only users). */
  readonly allActors?: boolean;
}

/** Who changed what, when: events in time order (newest first) matching the query, each with its position. */
export const audit = (store: ProjectionStore, partitions: number, query: AuditQuery): PositionedEvent[] => {
  const since = query.since ?? 0;
  const until = query.until ?? Number.MAX_SAFE_INTEGER;
  const limit = query.limit ?? 1000;
  const keyPrefix = query.kind === undefined ? undefined : `${kindRef(query.kind)}/`;
  const found: EventRecord[] = [];
  for (let topic = 0; topic < FOLDED_TOPICS.length; topic++) {
    for (let partition = 0; partition < partitions; partition++) {
      for (const { value: id } of store.times.getRange({ start: [topic, partition, since, 0], end: [topic, partition, until, Number.MAX_SAFE_INTEGER] })) {
        const event = store.events.get(id);
        if (!event) continue;
        if (!query.allActors && event.actor.type !== 'user') continue;
        if (query.user && event.actor.name !== query.user) continue;
        if (keyPrefix !== undefined && !event.key.startsWith(keyPrefix)) continue;
        const topicName = FOLDED_TOPICS[topic]!;
        if (query.after && event.offset < (query.after[topicName][partition] ?? 0)) continue;
        if (query.upTo && event.offset >= (query.upTo[topicName][partition] ?? 0)) continue;
        found.push(event);
      }
    }
  }
  // Newest first, in the order positions count them: an observed event stamped in the same millisecond as a desired one is after it.
  found.sort((a, b) => b.time - a.time || topicIndex(b.topic) - topicIndex(a.topic) || b.offset - a.offset);
  return found.slice(0, limit).map((event) => positioned(store, partitions, event));
};

/** What differs between two moments. */
export interface ClusterDiff {
  readonly created: readonly KubeObject[];
  readonly deleted: readonly KubeObject[];
  readonly changed: readonly { readonly before: KubeObject; readonly after: KubeObject; readonly diff: readonly FieldChange[] }[];
}

/** Objects created, changed and deleted between positions `from` and `to`. */
export const diffPositions = (store: ProjectionStore, from: PositionVector, to: PositionVector): ClusterDiff => {
  const keys = new Set<string>();
  FOLDED_TOPICS.forEach((topic, topicIndex) => {
    from[topic].forEach((start, partition) => {
      const end = to[topic][partition] ?? start;
      for (const { value } of store.changes.getRange({ start: [topicIndex, partition, start], end: [topicIndex, partition, end] })) keys.add(value.key);
    });
  });
  const created: KubeObject[] = [];
  const deleted: KubeObject[] = [];
  const changed: { before: KubeObject; after: KubeObject; diff: FieldChange[] }[] = [];
  for (const key of [...keys].sort()) {
    const before = objectAt(store, key, from);
    const after = objectAt(store, key, to);
    if (!before && after) created.push(after);
    else if (before && !after) deleted.push(before);
    else if (before && after) {
      const diff = diffObjects(withoutVersion(before), withoutVersion(after));
      if (diff.length > 0) changed.push({ before, after, diff });
    }
  }
  return { created, deleted, changed };
};
