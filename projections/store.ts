/**
 * The LMDB layout of a projection, and the `FoldState` it gives the fold.
 *
 * Everything one event changes and the applied cursor are written in one LMDB transaction,
 * so a crash at any point resumes without loss or double apply (DESIGN invariant 4).
 *
 * Layout (version 4). Current state: `objects`, `status`, `usage`, `allocations`, `index`.
 * `objects` holds only each current object's desired version: the desired record is the
 * object the `log` entry of that version left (as the status is the one its latest observed
 * change left), so a desired change encodes its object once, not twice.
 * The past is ONE record per folded event in `log`, keyed by its position (topic,
 * partition, offset packed into one number, so the keys of a replay arrive in order and are
 * appended): what the event was, the fold's verdict and change, and the object (desired) or
 * status (observed) it left. Small secondary indexes point into it:
 * - `heads`: per object key, the offsets of its latest entry and latest change on each topic;
 *   every `log` entry links to the previous entry and previous change of its object on its
 *   topic, so an object's history is a chain walked back from its head. Written once per
 *   object per transaction, when the cursor is (`writeCursor`), however many of its events
 *   the transaction folds;
 * - `eventIds`: event id → position, for the ids that do not carry their event's time (a
 *   UUIDv7 stamped with the event's `time`, as logplane's writers make them, is found through
 *   `timeIndex` instead: one put fewer per event);
 * - `timeIndex`: [topic, partition, time, offset] of the LAST event of every run of
 *   consecutive events of a topic partition stamped with the same time (one key per run, not
 *   per event: runs that a batch boundary splits are merged when the next batch continues
 *   them, so the keys do not depend on batching). The `times` facade expands each run
 *   by walking `log` back from its last event while the time stays the same, so it still
 *   lists every event; `positionAtTime` needs only the last event of the latest run;
 * - `changes`: [topic, partition, offset] → {key, type} (the watch feed, and what the
 *   snapshots are rolled forward with);
 * - `snapshots`: per topic partition, now and then (see `snapshotInterval`), the offset of the
 *   latest change of every object on it, so "the whole cluster at P" reads one snapshot, the
 *   changes since, and one `log` entry per object, instead of seeking every object's history.
 *   A snapshot keyed at offset o holds the state before o.
 * `history`, `events` and `times` are read-only views over this layout in the shape of the
 * version 1 databases, so readers of those keep working.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { open, type Database, type Key, type RangeOptions, type RootDatabase } from 'lmdb';
import { Packr } from 'msgpackr';
import { partitionOfKey } from '../log/partitioner.ts';
import { canonicalJson } from '../schemas/canonical-json.ts';
import { carriesTime, eventIdTime, type Actor, type KubeObject } from '../schemas/index.ts';
import { DamagedStoreError } from './errors.ts';
import type { DesiredRecord, FoldState, StatusRecord, ChangeType, Verdict } from './fold.ts';
import { FOLDED_TOPICS, type FoldedTopic, type PositionVector, zeroVector } from './positions.ts';
import type { NodeUsage } from './resources.ts';

/*
 * msgpackr (lmdb-js's encoder) packs every database's values into one buffer of its module
 * and replaces it with a larger one when a value does not fit. When that happens after V8
 * has optimized the packing code, every later pack in the process runs several times slower,
 * for good: a fold of pod events ran at 50–57 µs per event instead of 30–39 after one
 * 600 KB object was folded (a 100-byte record: 0.8 → 3.5 µs per put). So the buffer is grown
 * once here, at load, before anything is packed, to 8 MiB (4× the 2 MiB packed; 2 MiB of it
 * touched): every later value up to the apiserver's 3 MiB body limit fits in it.
 */
new Packr().pack('x'.repeat(2 * 1024 * 1024));

/**
 * The layout this code writes; a directory with another one is rebuilt from the log.
 * 6: snapshots are placed by `snapshotInterval` (5: every 4,096 offsets); 7: they are
 * stored in their own binary format (`encodeSnapshot`), not msgpack.
 */
export const LAYOUT_VERSION = 7;
/** The fewest offsets between two snapshots of one topic partition. */
export const SNAPSHOT_INTERVAL = 4_096;
/**
 * Offsets from a topic partition's last snapshot until the next is due, when `objects`
 * objects live on it: `SNAPSHOT_INTERVAL`, or half the objects when that is more. A snapshot
 * writes every object's key, so it costs at most two keys per folded event however large
 * the cluster (at a fixed interval, a cluster ten times larger pays ten times more per
 * event), and a view of the past rolls at most objects / 2 changes forward, in proportion
 * to the objects it reads anyway. Where snapshots fall is a function of the log alone.
 */
export const snapshotInterval = (objects: number): number => Math.max(SNAPSHOT_INTERVAL, Math.ceil(objects / 2));
/** Object heads the fold keeps in memory. */
const HEADS_CACHED = 50_000;
/** Current desired and status records kept in memory (each map dropped whole past this size). */
const RECORDS_CACHED = 50_000;

/** Address space of the projection's memory map (see `openProjectionStore`); past it, lmdb-js grows the map. */
const MAP_SIZE = 2 ** 34;

/** Freezes `value` and everything in it (plain JSON data: objects and arrays). */
export const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    } else {
      for (const name in value) deepFreeze((value as Record<string, unknown>)[name]);
    }
  }
  return value;
};

/** One version of one object: what an event did to it (also kept when rejected). */
export interface HistoryEntry {
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
  readonly time: number;
  readonly eventId: string;
  readonly eventType: string;
  readonly actor: Actor;
  readonly causationId: string | null;
  readonly correlationId: string;
  readonly verdict: Verdict;
  readonly change: ChangeType | null;
  /** Desired part after the event (desired topic, not DELETED). */
  readonly object: KubeObject | null;
  /** Status part after the event (observed topic). */
  readonly status: StatusRecord | null;
}

/** Where an event landed and what the fold said about it. */
export interface EventRecord {
  readonly id: string;
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
  readonly eventType: string;
  readonly time: number;
  readonly actor: Actor;
  readonly causationId: string | null;
  readonly correlationId: string;
  /** For controller decisions: the position of the view the decision read. */
  readonly decidedAt: string | null;
  readonly verdict: Verdict;
}

/** The stored record of one folded event (the value of `log`). */
export interface LogEntry {
  readonly key: string;
  readonly time: number;
  readonly id: string;
  readonly type: string;
  readonly actor: Actor;
  readonly causationId: string | null;
  readonly correlationId: string;
  readonly decidedAt: string | null;
  readonly verdict: Verdict;
  readonly change: ChangeType | null;
  readonly object: KubeObject | null;
  readonly status: StatusRecord | null;
  /** Offset of the previous entry of the same object on the same topic (-1: none). */
  readonly prev: number;
  /** Offset of the previous entry of the same object on the same topic that changed it (-1: none). */
  readonly prevChange: number;
}

/**
 * Per object: [last entry, last change] offsets on desired, then on observed (-1: none),
 * its partition, then [changes so far, last anchor] on desired and on observed: every
 * `ANCHOR_EVERY`-th change of an object on a topic is an anchor, and each change record
 * links to the anchor before it, so a walk back to an old position skips ahead by anchors.
 */
export type Heads = [number, number, number, number, number, number, number, number, number];
/** Changes between two anchors of one object on one topic. */
export const ANCHOR_EVERY = 32;

/** Per topic partition, at a snapshot offset: the latest change offset of each object, by key. */
export interface Snapshot {
  /** Sorted. */
  readonly keys: string[];
  /** `offsets[i]`: the latest change of `keys[i]`. */
  readonly offsets: ArrayLike<number>;
}

/**
 * A snapshot's stored bytes: `1`, the number of keys (uint32), their offsets (float64 each),
 * then the keys joined by NUL (UTF-8); or `0` and the snapshot as JSON when a key holds a NUL.
 * Not msgpack: a snapshot holds every object's key (≈ 3 MB at 100,000 objects), and packing
 * one value that large grows msgpackr's write buffer, which is shared by every msgpack
 * database of the process; after that, every later pack ran several times slower (a 100k-
 * object replay: 5–8 → 19–35 µs per log entry put; one 3 MB value in a bare loop: 0.7 → 6 µs
 * per pack).
 */
export const encodeSnapshot = (snapshot: Snapshot): Buffer => {
  const { keys, offsets } = snapshot;
  if (keys.some((key) => key.includes('\0'))) {
    return Buffer.concat([Buffer.of(0), Buffer.from(JSON.stringify({ keys, offsets: Array.from(offsets) }))]);
  }
  const text = Buffer.from(keys.join('\0'));
  const bytes = Buffer.allocUnsafe(5 + keys.length * 8 + text.length);
  bytes[0] = 1;
  bytes.writeUInt32LE(keys.length, 1);
  for (let i = 0; i < keys.length; i++) bytes.writeDoubleLE(offsets[i]!, 5 + i * 8);
  text.copy(bytes, 5 + keys.length * 8);
  return bytes;
};

/**
 * The snapshot `encodeSnapshot` made `bytes` of (copied out: lmdb-js may reuse the buffer).
 * `size`: how many of `bytes` are the record (lmdb-js passes it when reading a range).
 */
export const decodeSnapshot = (bytes: Uint8Array, size?: unknown): Snapshot => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, typeof size === 'number' ? size : bytes.byteLength);
  if (buffer[0] === 0) return JSON.parse(buffer.toString('utf8', 1)) as Snapshot;
  if (buffer[0] !== 1) throw new DamagedStoreError(`snapshot record of unknown format ${String(buffer[0])}: the projection directory is damaged; remove it to refold it from the log`, { format: buffer[0] });
  const count = buffer.readUInt32LE(1);
  const offsets = new Float64Array(count);
  new Uint8Array(offsets.buffer).set(buffer.subarray(5, 5 + count * 8));
  const keys = count === 0 ? [] : buffer.toString('utf8', 5 + count * 8).split('\0');
  if (keys.length !== count) throw new DamagedStoreError(`snapshot record holds ${keys.length} keys for ${count} offsets: the projection directory is damaged; remove it to refold it from the log`, { keys: keys.length, offsets: count });
  return { keys, offsets };
};

/** One entry of the change feed, in log position order per partition. */
export interface ChangeRecord {
  readonly key: string;
  readonly type: ChangeType;
  /** Offset of the previous change of the same object on this topic (-1: none). */
  readonly prev?: number;
  /** Offset of the anchor change of the same object on this topic before this one (-1: none; see `Heads`). */
  readonly anchor?: number;
}

export interface QuarantineRecord {
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
  readonly error: string;
}

type IndexKey = [string, string, string];
interface Tracked {
  readonly offsets: Map<string, number>;
  /** The keys of `offsets`, sorted. */
  readonly keys: string[];
}
type TimeKey = [number, number, number, number];
type HistoryKey = [string, number, number];

/** The read side of a database, as the history readers use it. */
export interface ReadIndex<K, V> {
  get(key: K): V | undefined;
  getRange(options?: RangeOptions): Iterable<{ key: K; value: V }>;
  getKeys(options?: RangeOptions): Iterable<K>;
}

const TOPIC_FACTOR = 2 ** 52;
const PARTITION_FACTOR = 2 ** 40;
/** The most partitions a position key can hold. */
export const MAX_PARTITIONS = 4096;

/** (topic index, partition, offset) as one ordered number: the key of `log`. */
export const positionKey = (topic: number, partition: number, offset: number): number => topic * TOPIC_FACTOR + partition * PARTITION_FACTOR + offset;
export const splitPositionKey = (position: number): { topic: number; partition: number; offset: number } => {
  const topic = position >= TOPIC_FACTOR ? 1 : 0;
  const rest = position - topic * TOPIC_FACTOR;
  const partition = Math.floor(rest / PARTITION_FACTOR);
  return { topic, partition, offset: rest - partition * PARTITION_FACTOR };
};

/** The opened databases of one projection directory. */
export interface ProjectionStore {
  readonly root: RootDatabase;
  /** Current objects: key → desired version (1 + offset of the `log` entry holding the object; read records with `desiredOf`). */
  readonly objects: Database<number, string>;
  /** The status part of each object: the one its latest observed change left in `log`. */
  readonly status: ReadIndex<string, StatusRecord>;
  readonly usage: Database<NodeUsage, string>;
  readonly allocations: Database<string, string>;
  readonly index: Database<number, IndexKey>;
  readonly log: Database<LogEntry, number>;
  readonly heads: Database<Heads, string>;
  readonly eventIds: Database<number, string>;
  readonly timeIndex: Database<number, TimeKey>;
  readonly changes: Database<ChangeRecord, [number, number, number]>;
  readonly snapshots: Database<Snapshot, [number, number, number]>;
  readonly quarantine: Database<QuarantineRecord, [number, number, number]>;
  readonly meta: Database<unknown, string>;
  /** Every event that touched an object, keyed [object key, topic index, offset]. */
  readonly history: ReadIndex<HistoryKey, HistoryEntry>;
  /** Events by id (`getRange` yields them in position order). */
  readonly events: ReadIndex<string, EventRecord>;
  /** [topic, partition, event time, offset] → event id: time → position, and the audit trail. */
  readonly times: ReadIndex<TimeKey, string>;
  /**
   * The current desired record of `key`, deep-frozen and shared (kept in memory from the
   * fold's writes and reads; a miss decodes it once). Never change what it returns.
   */
  desiredOf(key: string): DesiredRecord | undefined;
  /** The current status record of `key`, deep-frozen and shared, like `desiredOf`. */
  statusOf(key: string): StatusRecord | undefined;
  /** The stored entry of the event at a position, if it was folded. */
  entryAt(topic: number, partition: number, offset: number): LogEntry | undefined;
  /**
   * The event `id`, which was appended at (topic, partition, offset): read at that position
   * (one get), or by id (`events.get`) if the entry there is another event.
   */
  eventAt(topic: FoldedTopic, partition: number, offset: number, id: string): EventRecord | undefined;
  readCursor(partitions: number): PositionVector;
  /** Writes the cursor and what the transaction kept back until its end (heads, time runs): call it last in every transaction that records events. */
  writeCursor(cursor: PositionVector): void;
  /** A `FoldState` over the store; use it only inside `root.transactionSync`. */
  foldState(partitions: number): FoldState;
  /**
   * Records a folded event (inside the transaction that folded it); takes `entry` over and
   * completes it: sets its `prev` and `prevChange` (the caller puts placeholders there, so
   * that the entry has its final shape from the start instead of growing two properties
   * per event). `keepStatus`: keep the status an observed change leaves in memory
   * (frozen) for the readers about to read it; false (nobody reads, e.g. a replay) only
   * forgets the one kept before.
   */
  recordEvent(topic: FoldedTopic, partition: number, offset: number, entry: LogEntry, keepStatus?: boolean): void;
  /** Writes the snapshot of (topic, partition) due before `offset` is folded, if one is due. */
  snapshotBefore(topic: FoldedTopic, partition: number, offset: number, cursor: number): void;
  /** Drops what this process holds in memory about the store (after an aborted transaction). */
  forgetMemory(): void;
  /** SHA-256 over every state database, in key order: equal for equal logs. */
  stateHash(): string;
  close(): Promise<void>;
}

/** The secondary indexes an object is listed in (the `index` database, and the informer's in memory). */
export type IndexName = 'uid' | 'owner' | 'node' | 'unscheduled';

/** Calls `list` with each (index, value) an object is listed under: its uid, its owners, a pod's node (or unscheduled). */
export const forEachIndexEntry = (object: KubeObject, list: (index: IndexName, value: string) => void): void => {
  if (object.metadata.uid) list('uid', object.metadata.uid);
  for (const owner of object.metadata.ownerReferences ?? []) list('owner', owner.uid);
  if (object.kind === 'Pod') {
    const node = object.spec?.nodeName;
    if (node) list('node', node);
    else list('unscheduled', '');
  }
};

const podIndexKeys = (key: string, object: KubeObject): IndexKey[] => {
  const keys: IndexKey[] = [];
  forEachIndexEntry(object, (index, value) => keys.push([index, value, key]));
  return keys;
};

const hasIndexKey = (keys: readonly IndexKey[], key: IndexKey): boolean => {
  for (const k of keys) if (k[0] === key[0] && k[1] === key[1] && k[2] === key[2]) return true;
  return false;
};

/** Whether a time key lies in a range given as lmdb-js does (start inclusive, end exclusive; reversed when `reverse`). */
const inTimeRange = (key: TimeKey, options: RangeOptions | undefined): boolean => {
  const compare = (bound: Key): number => {
    const other = bound as readonly number[];
    for (let i = 0; i < other.length; i++) {
      if (i >= key.length) return -1;
      if (key[i]! !== other[i]!) return key[i]! < other[i]! ? -1 : 1;
    }
    return key.length > other.length ? 1 : 0;
  };
  const start = options?.start;
  const end = options?.end;
  if (options?.reverse) return (start === undefined || compare(start) <= 0) && (end === undefined || compare(end) > 0);
  return (start === undefined || compare(start) >= 0) && (end === undefined || compare(end) < 0);
};

const lessNumbers = (a: readonly number[], b: readonly number[]): boolean => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
};

/** Databases of layout version 1, dropped when such a directory is rebuilt. */
const LAYOUT_1_DATABASES = ['history', 'events', 'times', 'known', 'status'];
const LAYOUT_2_DATABASES = ['objects', 'usage', 'allocations', 'index', 'log', 'heads', 'eventIds', 'timeIndex', 'changes', 'snapshots', 'quarantine'];

/** This boot of the machine (Linux), or undefined where the system does not tell. */
const readBootId = (): string | undefined => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
};

/** Why an opened projection directory was emptied, to be refolded from offset 0. */
export type RebuildReason = { readonly type: 'layout'; readonly found: unknown } | { readonly type: 'unflushed'; readonly bootId: string };

/**
 * Opens (creating if needed) the projection databases in `dir`.
 *
 * Commits do not wait for the disk (LMDB `noSync`) where the machine has a boot id: the
 * directory carries a mark with this boot's id from opening until a clean close has
 * flushed everything. A process that dies leaves its committed transactions in the page
 * cache, which the kernel still writes, so the next process of the same boot resumes from
 * the stored cursor; if the machine itself went down with the mark set, the directory is
 * emptied and refolded from the log (a projection is a cache of the log). Without a boot id
 * every commit is flushed.
 */
export const openProjectionStore = (dir: string, onRebuild?: (reason: RebuildReason) => void): ProjectionStore => {
  const bootId = readBootId();
  // mapSize: address space reserved up front (not disk: the file grows as pages are written).
  // Started small, lmdb-js doubles the map as the file grows and keeps every previous map
  // mapped until close (for readers still on it), so each page read before a resize stays
  // resident once per map: 126 MiB resident for a 48 MiB file at 10,000 pods.
  const root = open({ path: dir, maxDbs: 24, compression: false, commitDelay: 0, mapSize: MAP_SIZE, ...(bootId ? { noSync: true } : { overlappingSync: false }) });
  const db = <V, K extends Key>(name: string): Database<V, K> =>
    root.openDB<V, K>({ name, encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
  const meta = db<unknown, string>('meta');
  const layout = meta.get('layout');
  const unflushed = meta.get('unflushed') as string | undefined;
  const hasData = meta.get('cursor') !== undefined;
  const reason: RebuildReason | undefined = !hasData
    ? undefined
    : layout !== LAYOUT_VERSION
      ? { type: 'layout', found: layout }
      : unflushed !== undefined && unflushed !== bootId
        ? { type: 'unflushed', bootId: unflushed }
        : undefined;
  root.transactionSync(() => {
    if (reason) {
      // A projection is a cache of the log: one that cannot be trusted is emptied and refolded from offset 0.
      for (const name of [...LAYOUT_1_DATABASES, ...LAYOUT_2_DATABASES]) db<unknown, Key>(name).clearSync();
      meta.removeSync('cursor');
    }
    meta.putSync('layout', LAYOUT_VERSION);
    if (bootId) meta.putSync('unflushed', bootId);
    else meta.removeSync('unflushed');
  });
  /** Flushes every commit to disk (lmdb-js `env.sync()` without a callback: a synchronous mdb_env_sync). */
  const flush = (): void => (root as unknown as { env: { sync(): void } }).env.sync();
  // The mark is on disk before any unflushed commit.
  if (bootId) flush();
  if (reason) onRebuild?.(reason);
  let closed = false;
  const objects = db<number, string>('objects');
  const usage = db<NodeUsage, string>('usage');
  const allocations = db<string, string>('allocations');
  const index = db<number, IndexKey>('index');
  const log = db<LogEntry, number>('log');
  const heads = db<Heads, string>('heads');
  const eventIds = db<number, string>('eventIds');
  const timeIndex = db<number, TimeKey>('timeIndex');
  const changes = db<ChangeRecord, [number, number, number]>('changes');
  // lmdb-js takes a custom `encoder` for any database; its types declare it for the root only.
  const snapshotOptions = { name: 'snapshots', encoder: { encode: encodeSnapshot, decode: decodeSnapshot } };
  const snapshots = root.openDB<Snapshot, [number, number, number]>(snapshotOptions);
  const quarantine = db<QuarantineRecord, [number, number, number]>('quarantine');

  const lastKey = <K extends Key>(database: Database<unknown, K>): K | undefined => {
    for (const key of database.getKeys({ reverse: true, limit: 1 })) return key;
    return undefined;
  };
  /** The greatest key of the append-mostly databases: a put above it is an append. */
  let last: { log: number; times: TimeKey | undefined; changes: [number, number, number] | undefined } | undefined;
  const lastKeys = () =>
    (last ??= { log: lastKey(log) ?? -1, times: lastKey(timeIndex), changes: lastKey(changes) });

  /**
   * Per topic index and partition, the latest change offset of each object, as the next
   * snapshot will hold it (loaded on first use), with its keys kept sorted: objects are
   * added and removed far less often than they change.
   */
  const tracked: (Tracked | undefined)[][] = [[], []];
  const trackedChanges = (topicIndex: number, partition: number, cursor: number): Tracked => {
    let stream = tracked[topicIndex]![partition];
    if (!stream) {
      const rolled = rollChanges(snapshots, changes, topicIndex, partition, cursor);
      stream = { offsets: rolled.offsets, keys: rolled.keys.filter((k) => rolled.offsets.has(k)) };
      tracked[topicIndex]![partition] = stream;
    }
    return stream;
  };

  const foldState = (partitions: number): FoldState => ({
    sharesPartition: (a, b) => partitionOfKey(a, partitions) === partitionOfKey(b, partitions),
    getDesired: (key) => {
      const record = desiredOf(key);
      // The record as read, before the fold works on the object: its index keys are the stored ones.
      indexed.set(key, record ?? null);
      return record;
    },
    putDesired: (key, record) => {
      const read = indexed.get(key);
      const before = read === undefined ? storedIndexKeys(key) : read === null ? [] : podIndexKeys(key, read.object);
      const after = podIndexKeys(key, record.object);
      for (const k of before) if (!hasIndexKey(after, k)) index.removeSync(k);
      for (const k of after) if (!hasIndexKey(before, k)) index.putSync(k, 1);
      indexed.set(key, record);
      // The object itself is stored once, in this event's log entry (`recordEvent`).
      objects.putSync(key, record.version);
      // The fold hands the record over (it does not touch it afterwards): kept, frozen, as the current one.
      remember(desiredCache, key, deepFreeze(record));
    },
    deleteDesired: (key) => {
      const read = indexed.get(key);
      for (const k of read === undefined ? storedIndexKeys(key) : read === null ? [] : podIndexKeys(key, read.object)) index.removeSync(k);
      indexed.set(key, null);
      objects.removeSync(key);
      desiredCache.delete(key);
    },
    getStatus: (key) => (key === pendingKey ? pendingStatus : pendingMore?.get(key)) ?? statusOf(key),
    // Stored by `recordEvent` in the event's log entry (the fold's caller hands it over).
    putStatus: (key, record) => {
      if (pendingKey === undefined || pendingKey === key) {
        pendingKey = key;
        pendingStatus = record;
      } else (pendingMore ??= new Map()).set(key, record);
    },
    getNodeUsage: (node) => usage.get(node),
    putNodeUsage: (node, value) => usage.putSync(node, value),
    getAllocation: (resource) => allocations.get(resource),
    putAllocation: (resource, owner) => {
      if (owner === undefined) allocations.removeSync(resource);
      else allocations.putSync(resource, owner);
    },
    desiredKeys: (prefix) => objects.getKeys({ start: prefix, end: `${prefix}\uffff` }),
  });

  /**
   * The stored records (null: none) of the objects the fold read or wrote for the current
   * event: their index keys are in `index`. This map and `pendingMore` live for one event
   * and are replaced, never cleared: V8's `Map.prototype.clear` gives a map in the old
   * generation a new table in the old generation and leaves the entries in the old one, so
   * every record put in a long-lived map survived the young-generation GCs until the next
   * full GC (a replay promoted ~1 KB per status event).
   */
  let indexed = new Map<string, DesiredRecord | null>();
  const storedIndexKeys = (key: string): IndexKey[] => {
    const stored = desiredOf(key);
    return stored ? podIndexKeys(key, stored.object) : [];
  };
  /** Current desired and status records by key, deep-frozen (see `desiredOf`); dropped with the rest of memory on an abort. */
  let desiredCache = new Map<string, DesiredRecord>();
  let statusCache = new Map<string, StatusRecord>();
  const remember = <V>(cache: Map<string, V>, key: string, value: V): void => {
    if (cache.size >= RECORDS_CACHED && !cache.has(key)) cache.clear();
    cache.set(key, value);
  };
  const desiredOf = (key: string): DesiredRecord | undefined => {
    let found = desiredCache.get(key);
    if (found === undefined) {
      const version = objects.get(key);
      const head = version === undefined ? undefined : headsOf(key);
      const object = head && entryAt(0, head[4], version! - 1)?.object;
      if (!object) return undefined;
      found = { object, version: version! };
      remember(desiredCache, key, deepFreeze(found));
    }
    return found;
  };
  /**
   * Statuses the fold put for the event being folded, until `recordEvent` stores them: the
   * first object's in `pendingKey`/`pendingStatus` (an event's fold puts one), any others
   * in `pendingMore` (replaced per event, as `indexed`).
   */
  let pendingKey: string | undefined;
  let pendingStatus: StatusRecord | undefined;
  let pendingMore: Map<string, StatusRecord> | undefined;
  /** Cache of `heads` (bounded: dropped whole when it grows past HEADS_CACHED). */
  let headsCache = new Map<string, Heads>();
  /**
   * The heads the current transaction changed, written to `heads` once per object when it
   * commits (`writeCursor`), not once per event: a transaction that folds many events of an
   * object (a replay's, a burst's) writes its heads once. Replaced, not cleared (see `indexed`).
   */
  let dirtyHeads = new Map<string, Heads>();
  const headsOf = (key: string): Heads | undefined => {
    let found = headsCache.get(key);
    if (found === undefined) {
      found = dirtyHeads.get(key) ?? heads.get(key);
      if (found === undefined) return undefined;
      if (headsCache.size >= HEADS_CACHED) headsCache = new Map();
      headsCache.set(key, found);
    }
    return found;
  };

  const APPEND = { append: true };
  const recordEvent: ProjectionStore['recordEvent'] = (topic, partition, offset, entry, keepStatus = true) => {
    const topicIndex = topic === 'desired' ? 0 : 1;
    const keys = lastKeys();
    const previous = headsOf(entry.key);
    const at = topicIndex * 2;
    const prev = previous ? previous[at]! : -1;
    const prevChange = previous ? previous[at + 1]! : -1;
    const position = positionKey(topicIndex, partition, offset);
    const value = entry as { -readonly [K in keyof LogEntry]: LogEntry[K] };
    value.prev = prev;
    value.prevChange = prevChange;
    // The status an observed change leaves is the object's status from now on (see `status`).
    if (topicIndex === 1 && entry.change) {
      if (!entry.status) value.status = statusOf(entry.key) ?? null;
      else if (keepStatus) remember(statusCache, entry.key, deepFreeze(entry.status));
      else statusCache.delete(entry.key);
    }
    pendingKey = pendingStatus = pendingMore = undefined;
    if (indexed.size > 0) indexed = new Map();
    if (position > keys.log) {
      log.putSync(position, value, APPEND);
      keys.log = position;
    } else log.putSync(position, value);
    // Updated in place: the cached array is this object's heads (forgotten if the transaction aborts).
    const updated: Heads = previous ?? [-1, -1, -1, -1, partition, 0, -1, 0, -1];
    updated[at] = offset;
    const anchorBefore = updated[6 + at]!;
    if (entry.change) {
      updated[at + 1] = offset;
      const count = updated[5 + at]! + 1;
      updated[5 + at] = count;
      if (count % ANCHOR_EVERY === 0) updated[6 + at] = offset;
    }
    // Written when the transaction commits (see `dirtyHeads`); `previous` is in `headsCache` already.
    dirtyHeads.set(entry.key, updated);
    if (!previous && headsCache.size < HEADS_CACHED) headsCache.set(entry.key, updated);
    // An id that carries its event's time is found through the time index (see `events`).
    if (!carriesTime(entry.id, entry.time)) eventIds.putSync(entry.id, position);
    noteTime(topicIndex, partition, offset, entry.time);
    if (!entry.change) return;
    const changeKey: [number, number, number] = [topicIndex, partition, offset];
    const change: ChangeRecord = { key: entry.key, type: entry.change, prev: prevChange, anchor: anchorBefore };
    if (!keys.changes || lessNumbers(keys.changes, changeKey)) {
      changes.putSync(changeKey, change, APPEND);
      keys.changes = changeKey;
    } else changes.putSync(changeKey, change);
    const stream = tracked[topicIndex]![partition];
    if (!stream) return;
    if (entry.change === 'DELETED') {
      if (stream.offsets.delete(entry.key)) stream.keys.splice(lowerBound(stream.keys, entry.key), 1);
    } else {
      const size = stream.offsets.size;
      stream.offsets.set(entry.key, offset);
      if (stream.offsets.size > size) stream.keys.splice(lowerBound(stream.keys, entry.key), 0, entry.key);
    }
  };

  /**
   * Per topic index and partition, the run of same-time events the last recorded event
   * belongs to (see `timeIndex`); `written`: its key is in `timeIndex` (always so at the end
   * of a transaction, which `writeCursor` ensures).
   */
  let runs: ({ time: number; offset: number; written: boolean } | undefined)[][] = [[], []];
  const putTimeKey = (timeKey: TimeKey): void => {
    const keys = lastKeys();
    if (!keys.times || lessNumbers(keys.times, timeKey)) {
      timeIndex.putSync(timeKey, 1, APPEND);
      keys.times = timeKey;
    } else timeIndex.putSync(timeKey, 1);
  };
  const noteTime = (topicIndex: number, partition: number, offset: number, time: number): void => {
    let run = runs[topicIndex]![partition];
    if (run === undefined && offset > 0) {
      // First event since opening (or an abort): the committed run, if any, ends at the event before, with its key.
      const previous = entryAt(topicIndex, partition, offset - 1);
      if (previous) run = { time: previous.time, offset: offset - 1, written: true };
    }
    if (run && run.time === time && run.offset === offset - 1) {
      // The run goes on: its key moves to this event.
      if (run.written) timeIndex.removeSync([topicIndex, partition, time, run.offset]);
      run.offset = offset;
      run.written = false;
      runs[topicIndex]![partition] = run; // a run read back from the log is not in `runs` yet
      return;
    }
    if (run && !run.written) putTimeKey([topicIndex, partition, run.time, run.offset]);
    runs[topicIndex]![partition] = { time, offset, written: false };
  };
  /** Writes the key of every run whose key is not written yet (before a transaction commits). */
  const flushTimes = (): void => {
    runs.forEach((byPartition, topicIndex) =>
      byPartition.forEach((run, partition) => {
        if (run && !run.written) {
          putTimeKey([topicIndex, partition, run.time, run.offset]);
          run.written = true;
        }
      }),
    );
  };

  /** Writes the heads the transaction changed (before it commits). */
  const flushHeads = (): void => {
    if (dirtyHeads.size === 0) return;
    for (const [key, value] of dirtyHeads) heads.putSync(key, value);
    dirtyHeads = new Map();
  };

  /** Per topic index and partition, the offset of its latest snapshot (0: none; loaded on first use). */
  let lastSnapshots: (number | undefined)[][] = [[], []];
  const lastSnapshotOf = (topicIndex: number, partition: number): number => {
    let found = lastSnapshots[topicIndex]![partition];
    if (found === undefined) {
      found = 0;
      for (const key of snapshots.getKeys({ start: [topicIndex, partition, Number.MAX_SAFE_INTEGER], end: [topicIndex, partition, -1], reverse: true, limit: 1 })) found = key[2];
      lastSnapshots[topicIndex]![partition] = found;
    }
    return found;
  };
  const snapshotBefore: ProjectionStore['snapshotBefore'] = (topic, partition, offset, cursor) => {
    if (offset < cursor) return;
    const topicIndex = topic === 'desired' ? 0 : 1;
    const last = lastSnapshotOf(topicIndex, partition);
    if (offset - last < SNAPSHOT_INTERVAL) return;
    // No record lies in [cursor, offset): the stream (the state before `cursor`) is the state before `offset`.
    const { offsets, keys } = trackedChanges(topicIndex, partition, cursor);
    if (offset - last < snapshotInterval(offsets.size)) return;
    snapshots.putSync([topicIndex, partition, offset], { keys, offsets: keys.map((k) => offsets.get(k)!) });
    lastSnapshots[topicIndex]![partition] = offset;
  };

  const entryAt = (topic: number, partition: number, offset: number): LogEntry | undefined => log.get(positionKey(topic, partition, offset));

  const statusAtHead = (head: Heads | undefined): StatusRecord | undefined =>
    head && head[3] >= 0 ? (entryAt(1, head[4], head[3])?.status ?? undefined) : undefined;
  function statusOf(key: string): StatusRecord | undefined {
    let found = statusCache.get(key);
    if (found === undefined) {
      found = statusAtHead(headsOf(key));
      if (found === undefined) return undefined;
      remember(statusCache, key, deepFreeze(found));
    }
    return found;
  }
  const status: ReadIndex<string, StatusRecord> = {
    get: (key) => statusAtHead(headsOf(key)),
    getRange: function* (options) {
      for (const { key, value } of heads.getRange(options)) {
        const found = statusAtHead(value);
        if (found) yield { key, value: found };
      }
    },
    getKeys: function* (options) {
      for (const { key, value } of heads.getRange(options)) if (statusAtHead(value)) yield key;
    },
  };

  const historyEntry = (topic: number, partition: number, offset: number, entry: LogEntry): HistoryEntry => ({
    topic: FOLDED_TOPICS[topic]!,
    partition,
    offset,
    time: entry.time,
    eventId: entry.id,
    eventType: entry.type,
    actor: entry.actor,
    causationId: entry.causationId,
    correlationId: entry.correlationId,
    verdict: entry.verdict,
    change: entry.change,
    object: entry.object,
    status: entry.status,
  });
  const eventRecord = (position: number, entry: LogEntry): EventRecord => {
    const { topic, partition, offset } = splitPositionKey(position);
    return {
      id: entry.id,
      topic: FOLDED_TOPICS[topic]!,
      partition,
      offset,
      key: entry.key,
      eventType: entry.type,
      time: entry.time,
      actor: entry.actor,
      causationId: entry.causationId,
      correlationId: entry.correlationId,
      decidedAt: entry.decidedAt,
      verdict: entry.verdict,
    };
  };

  /** Every entry of `key` on `topic` (oldest first), walking its chain back from the head. */
  const objectEntries = (key: string, topic: number, head = heads.get(key)): HistoryEntry[] => {
    if (!head) return [];
    let offset = head[topic * 2]!;
    const partition = head[4];
    const entries: HistoryEntry[] = [];
    while (offset >= 0) {
      const entry = entryAt(topic, partition, offset);
      if (!entry) break;
      entries.push(historyEntry(topic, partition, offset, entry));
      offset = entry.prev;
    }
    return entries.reverse();
  };
  const inRange = (key: HistoryKey, options: RangeOptions | undefined): boolean => {
    const compare = (a: HistoryKey, b: readonly unknown[]): number => {
      for (let i = 0; i < b.length; i++) {
        const x = a[i]!;
        const y = b[i] as string | number;
        if (x < y) return -1;
        if (x > y) return 1;
      }
      return 0;
    };
    const start = options?.start as unknown[] | undefined;
    const end = options?.end as unknown[] | undefined;
    if (options?.reverse) return (!start || compare(key, start) <= 0) && (!end || compare(key, end) > 0);
    return (!start || compare(key, start) >= 0) && (!end || compare(key, end) < 0);
  };
  const historyRange = function* (options?: RangeOptions): Iterable<{ key: HistoryKey; value: HistoryEntry }> {
    const start = (options?.start as unknown[] | undefined)?.[0] as string | undefined;
    const end = (options?.end as unknown[] | undefined)?.[0] as string | undefined;
    const [low, high] = options?.reverse ? [end, start] : [start, end];
    const keys: string[] = [];
    for (const key of heads.getKeys({ ...(low !== undefined ? { start: low } : {}) })) {
      if (high !== undefined && key > high) break;
      keys.push(key);
    }
    if (options?.reverse) keys.reverse();
    for (const key of keys) {
      const head = heads.get(key);
      const all = [...objectEntries(key, 0, head), ...objectEntries(key, 1, head)];
      if (options?.reverse) all.reverse();
      for (const value of all) {
        const k: HistoryKey = [key, FOLDED_TOPICS.indexOf(value.topic), value.offset];
        if (inRange(k, options)) yield { key: k, value };
      }
    }
  };
  const history: ReadIndex<HistoryKey, HistoryEntry> = {
    get: ([key, topic, offset]) => {
      const head = heads.get(key);
      const entry = head && entryAt(topic, head[4], offset);
      return head && entry && entry.key === key ? historyEntry(topic, head[4], offset, entry) : undefined;
    },
    getRange: historyRange,
    getKeys: function* (options) {
      for (const { key } of historyRange(options)) yield key;
    },
  };

  /** The event folded at `position`, if any. */
  const recordAt = (position: number): EventRecord | undefined => {
    const entry = log.get(position);
    return entry ? eventRecord(position, entry) : undefined;
  };
  const eventsRange = function* (): Iterable<{ key: string; value: EventRecord }> {
    for (const { key, value } of log.getRange()) yield { key: value.id, value: eventRecord(key, value) };
  };
  /** The event with `id` among those stamped `time`, on any folded topic and partition (read through the time index). */
  const eventAtTime = (id: string, time: number): EventRecord | undefined => {
    const stored = meta.get('cursor') as PositionVector | undefined;
    const partitions = stored ? Math.max(stored.desired.length, stored.observed.length) : 0;
    for (let topic = 0; topic < FOLDED_TOPICS.length; topic++) {
      for (let partition = 0; partition < partitions; partition++) {
        for (const { key, value } of times.getRange({ start: [topic, partition, time, 0], end: [topic, partition, time, Number.MAX_SAFE_INTEGER] })) {
          if (value !== id) continue;
          const found = recordAt(positionKey(topic, partition, key[3]));
          if (found) return found;
        }
      }
    }
    return undefined;
  };
  const events: ReadIndex<string, EventRecord> = {
    get: (id) => {
      const position = eventIds.get(id);
      if (position === undefined) {
        // Not indexed: an id that carries its event's time (`recordEvent`).
        const time = eventIdTime(id);
        return time === undefined ? undefined : eventAtTime(id, time);
      }
      return recordAt(position);
    },
    getRange: eventsRange,
    getKeys: function* () {
      for (const { key } of eventsRange()) yield key;
    },
  };

  /**
   * Every event's time key in `options`' range: each stored key (the last event of a run)
   * expanded into its run, walking `log` back while the time stays the same. The stored
   * range is widened to whole times, so a run whose last key lies past an offset bound
   * still yields its events inside it. Reverse ranges yield as they walk (the newest event
   * of a run first, without reading it when its id is not wanted).
   */
  const timesRange = function* <T>(options: RangeOptions | undefined, item: (key: TimeKey, id: () => string | undefined) => T | undefined): Iterable<T> {
    const widen = (bound: Key | undefined): Key | undefined =>
      Array.isArray(bound) && bound.length === 4 ? [bound[0] as number, bound[1] as number, bound[2] as number, Number.MAX_SAFE_INTEGER] : bound;
    const reverse = options?.reverse === true;
    const { limit, ...rest } = options ?? {};
    const stored: RangeOptions = { ...rest };
    const widened = widen(reverse ? rest.start : rest.end);
    if (widened !== undefined) stored[reverse ? 'start' : 'end'] = widened;
    let left = limit ?? Number.POSITIVE_INFINITY;
    for (const last of timeIndex.getKeys(stored)) {
      const [topic, partition, time, offset] = last;
      const run: T[] = [];
      for (let at = offset; at >= 0 && left > 0; at--) {
        const entry = at === offset ? undefined : entryAt(topic, partition, at);
        if (at !== offset && (!entry || entry.time !== time)) break;
        const key: TimeKey = at === offset ? last : [topic, partition, time, at];
        if (!inTimeRange(key, options)) continue;
        const value = item(key, () => (entry ?? entryAt(topic, partition, at))?.id);
        if (value === undefined) continue;
        if (reverse) {
          left--;
          yield value;
        } else run.push(value);
      }
      if (reverse) continue;
      for (let i = run.length - 1; i >= 0; i--) {
        if (left-- <= 0) return;
        yield run[i]!;
      }
    }
  };
  const times: ReadIndex<TimeKey, string> = {
    get: (key) => {
      const entry = entryAt(key[0], key[1], key[3]);
      return entry && entry.time === key[2] ? entry.id : undefined;
    },
    getRange: (options) =>
      timesRange(options, (key, id) => {
        const value = id();
        return value === undefined ? undefined : { key, value };
      }),
    getKeys: (options) => timesRange(options, (key) => key),
  };

  // Values are hashed as canonical JSON (object members in key order): the state, not the
  // member order a schema version decodes objects in (v5's generated records order fields
  // as the API document does, v4's hand-written ones did not).
  const stateHash = (): string => {
    const hash = createHash('sha256');
    const databases: [string, Database<unknown, Key>][] = [
      ['objects', objects],
      ['usage', usage],
      ['allocations', allocations],
      ['index', index],
      ['log', log],
      ['heads', heads],
      ['eventIds', eventIds],
      ['timeIndex', timeIndex],
      ['changes', changes],
      ['snapshots', snapshots],
      ['quarantine', quarantine],
    ];
    for (const [name, database] of databases) {
      hash.update(`#${name}\n`);
      for (const { key, value } of database.getRange()) {
        hash.update(JSON.stringify(key));
        hash.update('=');
        hash.update(database === snapshots ? encodeSnapshot(value as Snapshot) : canonicalJson(value));
        hash.update('\n');
      }
    }
    return hash.digest('hex');
  };

  return {
    root,
    objects,
    status,
    usage,
    allocations,
    index,
    log,
    heads,
    eventIds,
    timeIndex,
    changes,
    snapshots,
    quarantine,
    meta,
    history,
    events,
    times,
    desiredOf,
    statusOf,
    entryAt,
    eventAt: (topic, partition, offset, id) => {
      const atPosition = recordAt(positionKey(topicNumber(topic), partition, offset));
      return atPosition?.id === id ? atPosition : events.get(id);
    },
    readCursor: (partitions) => {
      const stored = meta.get('cursor') as PositionVector | undefined;
      if (!stored) return zeroVector(partitions);
      const fresh = zeroVector(partitions);
      return {
        desired: fresh.desired.map((_, p) => stored.desired[p] ?? 0),
        observed: fresh.observed.map((_, p) => stored.observed[p] ?? 0),
      };
    },
    writeCursor: (cursor) => {
      flushTimes();
      flushHeads();
      meta.putSync('cursor', { desired: [...cursor.desired], observed: [...cursor.observed] });
    },
    foldState,
    recordEvent,
    snapshotBefore,
    forgetMemory: () => {
      last = undefined;
      headsCache = new Map();
      dirtyHeads = new Map();
      desiredCache = new Map();
      statusCache = new Map();
      pendingKey = pendingStatus = pendingMore = undefined;
      indexed = new Map();
      tracked[0] = [];
      tracked[1] = [];
      lastSnapshots = [[], []];
      runs = [[], []];
    },
    stateHash,
    close: async () => {
      if (closed) return;
      closed = true;
      if (bootId) {
        flush();
        root.transactionSync(() => meta.removeSync('unflushed'));
        flush();
      }
      await root.close();
    },
  };
};

/**
 * The latest change offset of each object on (topic, partition) before `offset`: the
 * snapshot at or before it plus the changes since. `keys` are sorted (and may name objects
 * deleted since the snapshot: `offsets` has no entry for those).
 */
const rollChanges = (
  snapshots: Database<Snapshot, [number, number, number]>,
  changes: Database<ChangeRecord, [number, number, number]>,
  topicIndex: number,
  partition: number,
  offset: number,
): Tracked => {
  const offsets = new Map<string, number>();
  let keys: string[] = [];
  let from = 0;
  for (const { key, value } of snapshots.getRange({ start: [topicIndex, partition, offset], end: [topicIndex, partition, -1], reverse: true, limit: 1 })) {
    from = key[2];
    keys = value.keys;
    for (let i = 0; i < keys.length; i++) offsets.set(keys[i]!, value.offsets[i]!);
  }
  const added: string[] = [];
  for (const { key, value } of changes.getRange({ start: [topicIndex, partition, from], end: [topicIndex, partition, offset] })) {
    if (value.type === 'DELETED') offsets.delete(value.key);
    else {
      if (!offsets.has(value.key)) added.push(value.key);
      offsets.set(value.key, key[2]);
    }
  }
  if (added.length > 0) keys = mergeSorted(keys, [...new Set(added)].sort());
  return { offsets, keys };
};

const mergeSorted = (a: readonly string[], b: readonly string[]): string[] => {
  const merged: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! <= b[j]!)) {
      if (merged[merged.length - 1] !== a[i]) merged.push(a[i]!);
      i++;
    } else {
      if (merged[merged.length - 1] !== b[j]) merged.push(b[j]!);
      j++;
    }
  }
  return merged;
};

/** The latest change offset of each object on (topic, partition) before `offset`, read from the store (sorted keys; see `rollChanges`). */
export const changesAt = (store: ProjectionStore, topicIndex: number, partition: number, offset: number): { readonly offsets: ReadonlyMap<string, number>; readonly keys: readonly string[] } =>
  rollChanges(store.snapshots, store.changes, topicIndex, partition, offset);

/** The topic index used in LMDB keys. */
export const topicNumber = (topic: FoldedTopic): number => FOLDED_TOPICS.indexOf(topic);

/** The first index of sorted `keys` whose key is ≥ `value`. */
export const lowerBound = (keys: readonly string[], value: string): number => {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keys[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
};

