/**
 * Read access to a projection: the live view (current state, by index) and views of the
 * past (any position vector), which reconcilers and the apiserver read through one
 * `View` interface, so a decision can be re-run on the state it saw.
 */
import { kindRef } from '../schemas/keys.ts';
import { CLUSTER_SCOPED, KINDS, type Kind, type KubeObject, type Pod } from '../schemas/index.ts';

import type { DesiredRecord, StatusRecord } from './fold.ts';
import { FOLDED_TOPICS, formatObjectVersion, type PositionVector } from './positions.ts';
import { changesAt, deepFreeze, lowerBound, type Heads, type LogEntry, type ProjectionStore } from './store.ts';

/** The namespaced kinds the log stores (from the kind registry): the kinds whose objects have owners. */
const NAMESPACED_KINDS: readonly Kind[] = KINDS.filter((kind) => !CLUSTER_SCOPED.has(kind));

/** A stored kind (`Job`), or a kind ref as keys name kinds (`Job.batch`, a custom resource's `CronTab.stable.example.com`). */
export type KindOrRef = Kind | (string & {});

/** Objects as clients see them: desired part + status part, with resourceVersion. */
export interface View {
  /** The position this view reflects. */
  readonly position: PositionVector;
  get(key: string): KubeObject | undefined;
  /**
   * Objects of `kind`, in key order; in one namespace when given. `kind` is a stored kind or
   * a kind ref as keys name it (`Job.batch`; a custom resource's `CronTab.stable.example.com`).
   */
  list(kind: KindOrRef, namespace?: string): KubeObject[];
  /**
   * The keys of the objects of `kind` (in one namespace when given) that exist at this
   * view's position, in ascending key order, strictly after `after` when given: a page of
   * `list` without materializing the objects. Lazy: stop iterating to stop reading. Every
   * implementation yields exactly the keys `get` finds an object for (historical views
   * too: no key of an object created later or deleted before the position).
   */
  keys(kind: KindOrRef, namespace?: string, after?: string): Iterable<string>;
  /** Pods bound to `node`. */
  podsOnNode(node: string): Pod[];
  /** Objects whose ownerReferences name `uid`. */
  ownedBy(uid: string): KubeObject[];
  /** Pods not yet bound to a node. */
  unscheduledPods(): Pod[];
  /** The object with this uid, if it exists. */
  byUid(uid: string): KubeObject | undefined;
}

/** Merges the two parts of an object into what clients see (copies both, so the records stay untouched). */
export const materialize = (
  desired: DesiredRecord,
  status: StatusRecord | undefined,
): KubeObject =>
  materializeDecoded(
    { object: structuredClone(desired.object), version: desired.version },
    status && { ...status, status: structuredClone(status.status) },
  );

/**
 * `materialize` for records just decoded from the store, which nobody else holds: the
 * result is built in place from them, without copying (a copy per object read made
 * listing 10,000 pods twice as slow).
 */
export const materializeDecoded = (
  desired: DesiredRecord,
  status: StatusRecord | undefined,
): KubeObject => {
  const object = desired.object as KubeObject & { status?: unknown };
  const matches = status && (status.uid === null || status.uid === object.metadata.uid);
  if (matches) object.status = status.status;
  object.metadata.resourceVersion = formatObjectVersion({
    desired: desired.version,
    observed: matches ? status.version : 0,
  });
  if (object.kind === 'Pod') {
    const podStatus = (object.status ??= {}) as NonNullable<Pod['status']>;
    podStatus.phase ??= 'Pending';
    const conditions = (podStatus.conditions ??= []);
    if (object.spec?.nodeName && !conditions.some((c) => c.type === 'PodScheduled')) {
      conditions.unshift({ type: 'PodScheduled', status: 'True' });
    }
    if (conditions.length === 0) delete podStatus.conditions;
  }
  return object;
};

/**
 * `materialize` over shared, frozen records (the store's current ones): copies only the
 * top level, metadata and, for a pod, the status it completes; everything else is shared
 * with the records. The result equals `materializeDecoded` of copies of the records,
 * key order included.
 */
export const materializeShared = (desired: DesiredRecord, status: StatusRecord | undefined): KubeObject => {
  const source = desired.object;
  const matches = status && (status.uid === null || status.uid === source.metadata.uid);
  const object = { ...source, metadata: { ...source.metadata } } as KubeObject & { status?: unknown };
  if (matches) object.status = status.status;
  object.metadata.resourceVersion = formatObjectVersion({
    desired: desired.version,
    observed: matches ? status.version : 0,
  });
  if (object.kind === 'Pod') {
    const podStatus = { ...(object.status as Pod['status']) } as NonNullable<Pod['status']>;
    object.status = podStatus;
    podStatus.phase ??= 'Pending';
    const conditions = podStatus.conditions ?? [];
    if (podStatus.conditions === undefined) podStatus.conditions = conditions;
    if (object.spec?.nodeName && !conditions.some((c) => c.type === 'PodScheduled')) {
      podStatus.conditions = [{ type: 'PodScheduled', status: 'True' }, ...conditions];
    }
    if (podStatus.conditions.length === 0) delete podStatus.conditions;
  }
  return object;
};

const kindRange = (kind: KindOrRef, namespace?: string): { start: string; end: string } => {
  const prefix = namespace === undefined ? `${kindRef(kind)}/` : `${kindRef(kind)}/${namespace}/`;
  return { start: prefix, end: `${prefix}\uffff` };
};

/** `kindRange` starting at `after` when that is inside it (the caller skips `after` itself). */
const pageRange = (kind: KindOrRef, namespace: string | undefined, after: string | undefined): { start: string; end: string } => {
  const range = kindRange(kind, namespace);
  return after !== undefined && after > range.start ? { start: after, end: range.end } : range;
};


/**
 * Materialized current objects by key, shared by all readers of one projection (an
 * informer cache): the projection drops a key whenever an event changes it, so readers never
 * see a stale object, and objects are frozen, so no reader can change what others see.
 */
export type ObjectCache = Map<string, KubeObject>;

/** The live view over the store's current state, reading through `cache`. */
export const liveView = (store: ProjectionStore, position: () => PositionVector, cache: ObjectCache = new Map()): View => {
  const get = (key: string): KubeObject | undefined => {
    const cached = cache.get(key);
    if (cached) return cached;
    const desired = store.desiredOf(key);
    if (!desired) return undefined;
    const object = deepFreeze(materializeShared(desired, store.statusOf(key)));
    cache.set(key, object);
    return object;
  };
  const fromIndex = (kind: string, value: string): KubeObject[] => {
    const objects: KubeObject[] = [];
    for (const indexKey of store.index.getKeys({ start: [kind, value, ''], end: [kind, value, '\uffff'] })) {
      const object = get(indexKey[2]);
      if (object) objects.push(object);
    }
    return objects;
  };
  return {
    get position() {
      return position();
    },
    get,
    list: (kind, namespace) => {
      const objects: KubeObject[] = [];
      for (const key of store.objects.getKeys(kindRange(kind, namespace))) {
        const object = get(key);
        if (object) objects.push(object);
      }
      return objects;
    },
    keys: function* (kind, namespace, after) {
      for (const key of store.objects.getKeys(pageRange(kind, namespace, after))) if (key !== after) yield key;
    },
    podsOnNode: (node) => fromIndex('node', node) as Pod[],
    ownedBy: (uid) => fromIndex('owner', uid),
    unscheduledPods: () => fromIndex('unscheduled', '') as Pod[],
    byUid: (uid) => fromIndex('uid', uid)[0],
  };
};

/** The latest entry of `key` on `topicIndex` before `cursor` that changed it, walking its changes (small records) back from the newest. */
const lastChange = (store: ProjectionStore, head: Heads, topicIndex: number, cursor: number): { entry: LogEntry; offset: number } | undefined => {
  const partition = head[4];
  const link = (offset: number) => store.changes.get([topicIndex, partition, offset]);
  let offset = head[topicIndex * 2 + 1]!;
  if (offset >= cursor) {
    // Skip back by anchors while they are still at or after the cursor, then by single changes.
    for (let anchor = head[6 + topicIndex * 2]!; anchor >= cursor; anchor = link(anchor)?.anchor ?? -1) offset = anchor;
    while (offset >= cursor) {
      const change = link(offset);
      if (change?.prev === undefined) return undefined;
      offset = change.prev;
    }
  }
  const entry = offset < 0 ? undefined : store.entryAt(topicIndex, partition, offset);
  return entry && { entry, offset };
};

/** The object `key` as it was at `position` (undefined if it did not exist then). */
export const objectAt = (
  store: ProjectionStore,
  key: string,
  position: PositionVector,
): KubeObject | undefined => {
  const head = store.heads.get(key);
  if (!head) return undefined;
  const partition = head[4];
  const desired = lastChange(store, head, 0, position.desired[partition] ?? 0);
  if (!desired || desired.entry.change === 'DELETED' || !desired.entry.object) return undefined;
  const status = lastChange(store, head, 1, position.observed[partition] ?? 0);
  return materializeDecoded({ object: desired.entry.object, version: desired.offset + 1 }, status?.entry.status ?? undefined);
};

/**
 * A view of the cluster as it was at `position`, read from the store (no replay). A list
 * rolls each topic partition's nearest snapshot forward to the position (once per view) and
 * reads one entry per object and topic.
 */
export const historicalView = (store: ProjectionStore, position: PositionVector): View => {
  const get = (key: string): KubeObject | undefined => objectAt(store, key, position);
  /** Per partition: the latest desired and observed change of each object at `position` (computed once per view). */
  let latest: { desired: ReturnType<typeof changesAt>; observed: ReadonlyMap<string, number> }[] | undefined;
  const rolled = () =>
    (latest ??= position.desired.map((offset, partition) => ({
      desired: changesAt(store, 0, partition, offset),
      observed: changesAt(store, 1, partition, position.observed[partition] ?? 0).offsets,
    })));
  /** Keys in [start, end) of objects existing at `position` (merged across partitions, in order), strictly after `after`. */
  const keys = function* (kind: KindOrRef, namespace?: string, after?: string): Iterable<string> {
    const { start, end } = pageRange(kind, namespace, after);
    // One cursor per partition into its sorted keys (an object lives in one partition).
    const streams = rolled().map(({ desired }) => ({ ...desired, at: lowerBound(desired.keys, start) }));
    const current = (s: (typeof streams)[number]): string | undefined => {
      while (s.at < s.keys.length) {
        const key = s.keys[s.at]!;
        if (key >= end) return undefined;
        if (key !== after && s.offsets.has(key)) return key;
        s.at++;
      }
      return undefined;
    };
    for (;;) {
      let best: (typeof streams)[number] | undefined;
      let bestKey: string | undefined;
      for (const s of streams) {
        const key = current(s);
        if (key !== undefined && (bestKey === undefined || key < bestKey)) {
          best = s;
          bestKey = key;
        }
      }
      if (!best || bestKey === undefined) return;
      best.at++;
      yield bestKey;
    }
  };
  const list = (kind: KindOrRef, namespace?: string): KubeObject[] => {
    const latest = rolled();
    const { start, end } = kindRange(kind, namespace);
    const objects: KubeObject[] = [];
    latest.forEach(({ desired, observed }, partition) => {
      const { keys, offsets } = desired;
      for (let i = lowerBound(keys, start); i < keys.length && keys[i]! < end; i++) {
        const key = keys[i]!;
        const offset = offsets.get(key);
        if (offset === undefined) continue;
        const entry = store.entryAt(0, partition, offset);
        if (!entry?.object) continue;
        const seen = observed.get(key);
        const status = seen === undefined ? undefined : store.entryAt(1, partition, seen)?.status;
        objects.push(materializeDecoded({ object: entry.object, version: offset + 1 }, status ?? undefined));
      }
    });
    if (latest.length > 1) objects.sort((a, b) => (objectKey(a) < objectKey(b) ? -1 : 1));
    return objects;
  };
  const pods = (): Pod[] => list('Pod') as Pod[];
  return {
    position,
    get,
    list,
    keys,
    podsOnNode: (node) => pods().filter((p) => p.spec?.nodeName === node),
    ownedBy: (uid) =>
      NAMESPACED_KINDS.flatMap((kind) => list(kind))
        .filter((o) => (o.metadata.ownerReferences ?? []).some((r) => r.uid === uid)),
    unscheduledPods: () => pods().filter((p) => !p.spec?.nodeName),
    byUid: (uid) =>
      KINDS.flatMap((kind) => list(kind))
        .find((o) => o.metadata.uid === uid),
  };
};

/** The position of the cluster at wall-clock `time`: every event stamped ≤ time applied. */
export const positionAtTime = (store: ProjectionStore, time: number, partitions: number): PositionVector => {
  const cursorFor = (topicIndex: number, partition: number): number => {
    for (const key of store.times.getKeys({
      start: [topicIndex, partition, time, Number.MAX_SAFE_INTEGER],
      end: [topicIndex, partition, -1, -1],
      reverse: true,
    })) {
      return key[3] + 1;
    }
    return 0;
  };
  const vector = (topicIndex: number) => Array.from({ length: partitions }, (_, p) => cursorFor(topicIndex, p));
  return { desired: vector(FOLDED_TOPICS.indexOf('desired')), observed: vector(FOLDED_TOPICS.indexOf('observed')) };
};


const objectKey = (o: KubeObject): string => `${kindRef(o.kind)}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
