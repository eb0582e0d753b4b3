/**
 * The LMDB layout of a projection, and the `FoldState` it gives the fold.
 *
 * Everything one event changes (state, indexes, history, the event's verdict, the change
 * feed, the time index) and the applied cursor are written in one LMDB transaction, so a
 * crash at any point resumes without loss or double apply (DESIGN invariant 4).
 */
import { createHash } from 'node:crypto';
import { open, type Database, type RootDatabase } from 'lmdb';
import { partitionOfKey } from '../log/partitioner.ts';
import type { Actor, KubeObject } from '../schemas/index.ts';
import type { DesiredRecord, FoldState, StatusRecord, ChangeType, Verdict } from './fold.ts';
import { FOLDED_TOPICS, type FoldedTopic, type PositionVector, zeroVector } from './positions.ts';
import type { NodeUsage } from './resources.ts';

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

/** One entry of the change feed, in log position order per partition. */
export interface ChangeRecord {
  readonly key: string;
  readonly type: ChangeType;
}

export interface QuarantineRecord {
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
  readonly error: string;
}

type IndexKey = [string, string, string];

/** The opened databases of one projection directory. */
export interface ProjectionStore {
  readonly root: RootDatabase;
  readonly objects: Database<DesiredRecord, string>;
  readonly status: Database<StatusRecord, string>;
  readonly usage: Database<NodeUsage, string>;
  readonly allocations: Database<string, string>;
  readonly index: Database<number, IndexKey>;
  readonly history: Database<HistoryEntry, [string, number, number]>;
  readonly events: Database<EventRecord, string>;
  readonly changes: Database<ChangeRecord, [number, number, number]>;
  /** [topic, partition, event time, offset] → event id: time → position, and the audit trail. */
  readonly times: Database<string, [number, number, number, number]>;
  readonly quarantine: Database<QuarantineRecord, [number, number, number]>;
  /** Every object key that ever existed (for whole-cluster time travel). */
  readonly known: Database<number, string>;
  readonly meta: Database<unknown, string>;
  readCursor(partitions: number): PositionVector;
  writeCursor(cursor: PositionVector): void;
  /** A `FoldState` over the store; use it only inside `root.transactionSync`. */
  foldState(partitions: number): FoldState;
  /** SHA-256 over every state database, in key order: equal for equal logs. */
  stateHash(): string;
  close(): Promise<void>;
}

const podIndexKeys = (key: string, object: KubeObject): IndexKey[] => {
  const keys: IndexKey[] = [];
  if (object.metadata.uid) keys.push(['uid', object.metadata.uid, key]);
  for (const owner of object.metadata.ownerReferences ?? []) keys.push(['owner', owner.uid, key]);
  if (object.kind === 'Pod') {
    const node = object.spec?.nodeName;
    keys.push(node ? ['node', node, key] : ['unscheduled', '', key]);
  }
  return keys;
};

/** Opens (creating if needed) the projection databases in `dir`. */
export const openProjectionStore = (dir: string): ProjectionStore => {
  const root = open({ path: dir, maxDbs: 16, compression: false, commitDelay: 0 });
  const db = <V, K extends import('lmdb').Key>(name: string): Database<V, K> =>
    root.openDB<V, K>({ name, encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
  const objects = db<DesiredRecord, string>('objects');
  const status = db<StatusRecord, string>('status');
  const usage = db<NodeUsage, string>('usage');
  const allocations = db<string, string>('allocations');
  const index = db<number, IndexKey>('index');
  const history = db<HistoryEntry, [string, number, number]>('history');
  const events = db<EventRecord, string>('events');
  const changes = db<ChangeRecord, [number, number, number]>('changes');
  const times = db<string, [number, number, number, number]>('times');
  const quarantine = db<QuarantineRecord, [number, number, number]>('quarantine');
  const known = db<number, string>('known');
  const meta = db<unknown, string>('meta');

  const foldState = (partitions: number): FoldState => ({
    sharesPartition: (a, b) => partitionOfKey(a, partitions) === partitionOfKey(b, partitions),
    getDesired: (key) => objects.get(key),
    putDesired: (key, record) => {
      const previous = objects.get(key);
      if (previous) for (const k of podIndexKeys(key, previous.object)) index.removeSync(k);
      for (const k of podIndexKeys(key, record.object)) index.putSync(k, 1);
      objects.putSync(key, record);
      if (!previous) known.putSync(key, 1);
    },
    deleteDesired: (key) => {
      const previous = objects.get(key);
      if (previous) for (const k of podIndexKeys(key, previous.object)) index.removeSync(k);
      objects.removeSync(key);
    },
    getStatus: (key) => status.get(key),
    putStatus: (key, record) => status.putSync(key, record),
    getNodeUsage: (node) => usage.get(node),
    putNodeUsage: (node, value) => usage.putSync(node, value),
    getAllocation: (resource) => allocations.get(resource),
    putAllocation: (resource, owner) => {
      if (owner === undefined) allocations.removeSync(resource);
      else allocations.putSync(resource, owner);
    },
  });

  const stateHash = (): string => {
    const hash = createHash('sha256');
    const databases: [string, Database<unknown, import('lmdb').Key>][] = [
      ['objects', objects],
      ['status', status],
      ['usage', usage],
      ['allocations', allocations],
      ['index', index],
      ['history', history],
      ['events', events],
      ['changes', changes],
      ['times', times],
      ['quarantine', quarantine],
      ['known', known],
    ];
    for (const [name, database] of databases) {
      hash.update(`#${name}\n`);
      for (const { key, value } of database.getRange()) {
        hash.update(JSON.stringify(key));
        hash.update('=');
        hash.update(JSON.stringify(value));
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
    history,
    events,
    changes,
    times,
    quarantine,
    known,
    meta,
    readCursor: (partitions) => {
      const stored = meta.get('cursor') as PositionVector | undefined;
      if (!stored) return zeroVector(partitions);
      const fresh = zeroVector(partitions);
      return {
        desired: fresh.desired.map((_, p) => stored.desired[p] ?? 0),
        observed: fresh.observed.map((_, p) => stored.observed[p] ?? 0),
      };
    },
    writeCursor: (cursor) => meta.putSync('cursor', { desired: [...cursor.desired], observed: [...cursor.observed] }),
    foldState,
    stateHash,
    close: () => root.close(),
  };
};

/** The topic index used in LMDB keys. */
export const topicNumber = (topic: FoldedTopic): number => FOLDED_TOPICS.indexOf(topic);
