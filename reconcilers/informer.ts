/**
 * A shared informer over one projection (client-go's shared informer and indexer): every
 * current object kept in memory from the change feed, with the live view's indexes (kind,
 * owner, uid, node, unscheduled), shared by the reconciler runtimes on that projection.
 *
 * Rounds decide on it instead of the live view, which lists keys from LMDB and decodes
 * every object changed since it was last read; the change feed already carries each
 * changed object, materialized. It answers exactly as the live view does at the
 * projection's cursor (tests compare the two after random changes). The change feed is
 * emitted synchronously after each committed batch, so between batches, when rounds run,
 * the informer holds the state at the cursor.
 */
import { kindRef } from '../schemas/keys.ts';
import type { Subscription } from 'rxjs';
import { forEachIndexEntry, type IndexName, type Projection, type View } from '../projections/index.ts';
import { KINDS, objectKey, type CustomResourceDefinition, type KubeObject, type Pod } from '../schemas/index.ts';
import { kindRefOf } from '../schemas/kinds/refs.ts';

/** Keys in a set, listed in key order (sorted lazily after additions and removals). */
interface SortedKeys {
  readonly keys: Set<string>;
  sorted: string[] | undefined;
}

/**
 * The keys listed under one index value: most values list one key (every uid, the owner of
 * a lone object), which is kept as the key itself; a Set and its sorted copy come with the
 * second key (~250 bytes per value less at 10,000 pods).
 */
type Listed = string | SortedKeys;

const sortedOf = (entry: Listed | undefined): readonly string[] => {
  if (entry === undefined) return [];
  if (typeof entry === 'string') return [entry];
  entry.sorted ??= [...entry.keys].sort();
  return entry.sorted;
};

/** The first index of `sorted` whose key is not below `key`. */
const lowerBound = (sorted: readonly string[], key: string): number => {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as string) < key) low = middle + 1;
    else high = middle;
  }
  return low;
};

export interface Informer {
  /** A view of the current state, read from memory (its position is the projection's cursor). */
  readonly view: View;
  /** Stops following the change feed. */
  close(): void;
}

/** The index entries of an object: the same as the projection's index database. */
const entriesOf = (object: KubeObject): [IndexName, string][] => {
  const entries: [IndexName, string][] = [];
  forEachIndexEntry(object, (index, value) => entries.push([index, value]));
  return entries;
};

const listedIn = (list: readonly [IndexName, string][], [index, value]: [IndexName, string]): boolean =>
  list.some(([i, v]) => i === index && v === value);

/** Starts an informer on `projection`: loads the current objects, then follows the change feed. */
export const createInformer = (projection: Projection): Informer => {
  const objects = new Map<string, KubeObject>();
  const byKind = new Map<string, Listed>();
  const indexes: Record<IndexName, Map<string, Listed>> = { owner: new Map(), uid: new Map(), node: new Map(), unscheduled: new Map() };

  const add = (map: Map<string, Listed>, value: string, key: string): void => {
    const entry = map.get(value);
    if (entry === undefined) map.set(value, key);
    else if (typeof entry === 'string') {
      if (entry !== key) map.set(value, { keys: new Set([entry, key]), sorted: undefined });
    } else if (!entry.keys.has(key)) {
      entry.keys.add(key);
      entry.sorted = undefined;
    }
  };

  const remove = (map: Map<string, Listed>, value: string, key: string): void => {
    const entry = map.get(value);
    if (entry === undefined) return;
    if (typeof entry === 'string') {
      if (entry === key) map.delete(value);
      return;
    }
    if (!entry.keys.delete(key)) return;
    if (entry.keys.size === 1) map.set(value, entry.keys.values().next().value as string);
    else entry.sorted = undefined;
  };

  const kindOf = (key: string): string => key.slice(0, key.indexOf('/'));

  const drop = (key: string): void => {
    const object = objects.get(key);
    if (object === undefined) return;
    objects.delete(key);
    remove(byKind, kindOf(key), key);
    for (const [index, value] of entriesOf(object)) remove(indexes[index], value, key);
  };

  /**
   * Lists `object` under its index entries. The entries it was listed under come from the
   * object it replaces (kept anyway), not from a stored copy per key.
   */
  const put = (key: string, object: KubeObject): void => {
    const previous = objects.get(key);
    objects.set(key, object);
    if (previous === undefined) add(byKind, kindOf(key), key);
    const entries = entriesOf(object);
    // Only entries that come or go touch an index (most changes are status reports).
    const before = previous === undefined ? [] : entriesOf(previous);
    for (const entry of before) if (!listedIn(entries, entry)) remove(indexes[entry[0]], entry[1], key);
    for (const entry of entries) if (!listedIn(before, entry)) add(indexes[entry[0]], entry[1], key);
  };

  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (change.type === 'DELETED') drop(change.key);
    else put(change.key, change.object);
  });
  const live = projection.view();
  for (const kind of KINDS) {
    for (const object of live.list(kind)) put(objectKey(object), object);
  }
  // The objects of the custom resources the CRDs serve (keys `<Kind>.<group>/<namespace>/<name>`).
  for (const crd of live.list('CustomResourceDefinition') as CustomResourceDefinition[]) {
    const ref = kindRefOf(crd.spec.group, crd.spec.names.kind);
    for (const object of live.list(ref)) put(`${ref}/${object.metadata.namespace ?? ''}/${object.metadata.name}`, object);
  }

  const objectsOf = (keys: readonly string[]): KubeObject[] => {
    const found: KubeObject[] = [];
    for (const key of keys) {
      const object = objects.get(key);
      if (object) found.push(object);
    }
    return found;
  };

  const view: View = {
    get position() {
      return projection.cursor();
    },
    get: (key) => objects.get(key),
    list: (kind, namespace) => {
      const sorted = sortedOf(byKind.get(kindRef(kind)));
      if (namespace === undefined) return objectsOf(sorted);
      const prefix = `${kindRef(kind)}/${namespace}/`;
      const found: KubeObject[] = [];
      for (let index = lowerBound(sorted, prefix); index < sorted.length; index += 1) {
        const key = sorted[index] as string;
        if (!key.startsWith(prefix)) break;
        const object = objects.get(key);
        if (object) found.push(object);
      }
      return found;
    },
    keys: function* (kind, namespace, after) {
      const sorted = sortedOf(byKind.get(kindRef(kind)));
      const prefix = namespace === undefined ? `${kindRef(kind)}/` : `${kindRef(kind)}/${namespace}/`;
      let index = lowerBound(sorted, after !== undefined && after > prefix ? after : prefix);
      for (; index < sorted.length; index += 1) {
        const key = sorted[index] as string;
        if (!key.startsWith(prefix)) return;
        if (key !== after && objects.has(key)) yield key;
      }
    },
    podsOnNode: (node) => objectsOf(sortedOf(indexes.node.get(node))) as Pod[],
    ownedBy: (uid) => objectsOf(sortedOf(indexes.owner.get(uid))),
    unscheduledPods: () => objectsOf(sortedOf(indexes.unscheduled.get(''))) as Pod[],
    byUid: (uid) => objectsOf(sortedOf(indexes.uid.get(uid)))[0],
  };

  return { view, close: () => subscription.unsubscribe() };
};
