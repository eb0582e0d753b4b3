/**
 * `metadata.managedFields` as kube-apiserver's field manager reads and writes it
 * (`k8s.io/apimachinery/pkg/util/managedfields/internal`): entries decoded into managers
 * keyed by their identifier (manager, operation, and for updates apiVersion, plus the
 * subresource), encoded back sorted (Apply before Update, then by time, manager,
 * apiVersion, subresource), with at most 10 update entries (the oldest merged into
 * `ancient-changes` per apiVersion).
 */
import type { Json } from '../json.ts';
import { fromFieldsV1, toFieldsV1, union } from './fieldpath.ts';
import type { ManagerFields } from './updater.ts';

/** kube's `DefaultMaxUpdateManagers`. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

export type Operation = 'Apply' | 'Update';

/** What a manager identifier names. */
export interface ManagerInfo {
  readonly manager: string;
  readonly operation: Operation;
  readonly apiVersion: string;
  readonly subresource: string;
}

/** An entry of `metadata.managedFields`. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Json;
  subresource?: string;
}

/** Decoded managed fields: sets, what each identifier names, and the entries' times. */
export interface Managed {
  readonly fields: Map<string, ManagerFields>;
  readonly info: Map<string, ManagerInfo>;
  readonly times: Map<string, string | undefined>;
}

/**
 * kube's `BuildManagerIdentifier`: the entry's JSON without fields and time, and for
 * appliers without the apiVersion, so an applier keeps its identity across versions.
 */
export const managerIdentifier = (info: ManagerInfo): string =>
  JSON.stringify({
    manager: info.manager,
    operation: info.operation,
    ...(info.operation === 'Update' && info.apiVersion !== '' ? { apiVersion: info.apiVersion } : {}),
    ...(info.subresource !== '' ? { subresource: info.subresource } : {}),
  });

export const emptyManaged = (): Managed => ({ fields: new Map(), info: new Map(), times: new Map() });

/** kube's `DecodeManagedFields`; throws on an entry it could not have written. */
export const decodeManagedFields = (entries: unknown): Managed => {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  for (const [index, raw] of entries.entries()) {
    const entry = raw as ManagedFieldsEntry;
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') throw new Error(`managedFields[${index}]: operation must be Apply or Update`);
    if (entry.fieldsType !== 'FieldsV1') throw new Error(`managedFields[${index}]: fieldsType must be FieldsV1`);
    const info: ManagerInfo = { manager: entry.manager ?? '', operation: entry.operation, apiVersion: entry.apiVersion ?? '', subresource: entry.subresource ?? '' };
    const id = managerIdentifier(info);
    if (managed.fields.has(id)) throw new Error(`managedFields[${index}]: duplicate entry for ${id}`);
    managed.fields.set(id, { set: fromFieldsV1(entry.fieldsV1 ?? {}), applied: entry.operation === 'Apply' });
    managed.info.set(id, info);
    managed.times.set(id, entry.time);
  }
  return managed;
};

const seconds = (time: string | undefined): number => (time === undefined ? 0 : Math.floor(Date.parse(time) / 1000));

/** The entries of `managed`, sorted as kube's `sortEncodedManagedFields`. */
export const encodeManagedFields = (managed: Managed): ManagedFieldsEntry[] => {
  const entries: ManagedFieldsEntry[] = [];
  for (const [id, fields] of managed.fields) {
    const info = managed.info.get(id);
    if (!info) continue;
    const time = managed.times.get(id);
    entries.push({
      manager: info.manager,
      operation: info.operation,
      apiVersion: info.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(fields.set),
      ...(info.subresource !== '' ? { subresource: info.subresource } : {}),
    });
  }
  const text = (s: string | undefined) => s ?? '';
  return entries.sort((p, q) => {
    if (p.operation !== q.operation) return text(p.operation) < text(q.operation) ? -1 : 1;
    const byTime = seconds(p.time) - seconds(q.time);
    if (byTime !== 0) return byTime;
    for (const field of ['manager', 'apiVersion', 'subresource'] as const) {
      if (text(p[field]) !== text(q[field])) return text(p[field]) < text(q[field]) ? -1 : 1;
    }
    return 0;
  });
};

/** kube's `capUpdateManagers`: merges the oldest update entries into `ancient-changes` until at most `max` remain. */
export const capUpdateManagers = (managed: Managed, max: number = MAX_UPDATE_MANAGERS): void => {
  const updaters = [...managed.fields].filter(([, fields]) => !fields.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || (a < b ? -1 : a > b ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i]!;
    const fields = managed.fields.get(id)!;
    const info = managed.info.get(id)!;
    const bucketInfo: ManagerInfo = { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: info.apiVersion, subresource: '' };
    const bucket = managerIdentifier(bucketInfo);
    const first = firstOfVersion.get(info.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(info.apiVersion, id);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      managed.fields.set(bucket, managed.fields.get(first)!);
      managed.info.set(bucket, bucketInfo);
      managed.fields.delete(first);
      managed.info.delete(first);
      managed.times.delete(first);
    }
    managed.fields.set(bucket, { set: union(fields.set, managed.fields.get(bucket)!.set), applied: false });
    managed.times.set(bucket, managed.times.get(id));
    managed.fields.delete(id);
    managed.info.delete(id);
    managed.times.delete(id);
    length--;
  }
};

/** kube's `isResetManagedFields`: an empty list, or one empty entry, asks to clear managedFields. */
export const isResetManagedFields = (entries: unknown): boolean =>
  Array.isArray(entries) && (entries.length === 0 || (entries.length === 1 && typeof entries[0] === 'object' && entries[0] !== null && Object.keys(entries[0] as object).length === 0));

/** A time as managedFields carries it (RFC 3339, seconds). */
export const managedTime = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, 'Z');
