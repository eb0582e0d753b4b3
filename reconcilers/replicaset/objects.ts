/**
 * Object helpers the workload controllers (replicaset, deployment, garbage-collector)
 * share: owner references, keys, commands, stable hashing and time, all pure.
 */
import { kindRef } from '../../schemas/keys.ts';
import { createHash } from 'node:crypto';
import type {
  KubeObject,
  ObjectDeleted,
  ObjectUpdated,
  OwnerReference,
  PropagationPolicy,
} from '../../schemas/index.ts';

/** The owner reference that marks `object`'s managing controller, if any. */
export const controllerRef = (object: KubeObject): OwnerReference | undefined =>
  (object.metadata.ownerReferences ?? []).find((ref) => ref.controller === true);

/** Whether `object` is controlled by the object with `uid`. */
export const isControlledBy = (object: KubeObject, uid: string | undefined): boolean =>
  uid !== undefined && controllerRef(object)?.uid === uid;

/** Whether a deletion of `object` has started (graceful termination or finalizers pending). */
export const isBeingDeleted = (object: KubeObject): boolean => Boolean(object.metadata.deletionTimestamp);

/** The owner reference a controller puts on what it creates (`controller` and `blockOwnerDeletion` true). */
export const controllerReferenceTo = (owner: KubeObject): OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid ?? '',
  controller: true,
  blockOwnerDeletion: true,
});

/** The projection key of a namespaced object (`Kind/namespace/name`). */
export const keyOf = (object: KubeObject): string => `${kindRef(object.kind)}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** The key of the object an owner reference names, in the dependent's namespace. */
export const ownerKey = (ref: OwnerReference, namespace: string | undefined): string => `${kindRef(ref.kind)}/${namespace ?? ''}/${ref.name}`;

/** The object as a desired-state write carries it: no status, no resourceVersion (the fold owns both). */
export const withoutStatus = <T extends KubeObject>(object: T): T => {
  const copy = structuredClone(object) as T & { status?: unknown };
  delete copy.status;
  delete copy.metadata.resourceVersion;
  return copy;
};

/** A delete of exactly this incarnation of `object` (uid precondition), with the default grace period. */
export const deleteCommand = (object: KubeObject, propagationPolicy: PropagationPolicy | null = null): ObjectDeleted => ({
  type: 'ObjectDeleted',
  kind: object.kind,
  namespace: object.metadata.namespace ?? null,
  name: object.metadata.name,
  expectedResourceVersion: null,
  uid: object.metadata.uid ?? null,
  propagationPolicy,
  gracePeriodSeconds: null,
});

/** A desired-state update of `next`, judged against the resourceVersion `current` was read at. */
export const updateCommand = (current: KubeObject, next: KubeObject): ObjectUpdated => ({
  type: 'ObjectUpdated',
  object: withoutStatus(next),
  expectedResourceVersion: current.metadata.resourceVersion ?? null,
  subresource: null,
});

/**
 * A status write (observed topic) of `object` with `status`. It carries no expected
 * resourceVersion: the controller is the status' only writer, and the fold compares the
 * status version even when the stored status belongs to an older incarnation of the name.
 */
export const statusCommand = (object: KubeObject, status: unknown): ObjectUpdated => {
  const copy = structuredClone(object) as KubeObject & { status?: unknown };
  delete copy.metadata.resourceVersion;
  copy.status = status;
  return { type: 'ObjectUpdated', object: copy, expectedResourceVersion: null, subresource: 'status' };
};

/** RFC 3339 without fractional seconds, as Kubernetes writes timestamps. */
export const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Epoch ms of an RFC 3339 timestamp; undefined when absent or unparseable. */
export const parseTime = (text: string | undefined): number | undefined => {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
};

/** Oldest first by creationTimestamp, then by name (a total, deterministic order). */
export const byCreation = (a: KubeObject, b: KubeObject): number => {
  const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
  return ta !== tb ? ta - tb : a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
};

/**
 * JSON with object keys sorted and null/undefined values and empty maps dropped, so two
 * values that mean the same (one decoded from Avro, one built in memory) print the same.
 */
export const canonicalJson = (value: unknown): string => JSON.stringify(canonicalize(value) ?? null);

const canonicalize = (value: unknown): unknown => {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) return value.map((item) => canonicalize(item) ?? null);
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => [key, canonicalize(item)] as const)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value;
};

/** The alphabet Kubernetes uses for generated name parts (no vowels, no look-alike digits). */
export const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `length` characters of {@link SAFE_ALPHABET} derived from the SHA-256 of `input`. */
export const safeHash = (input: string, length: number): string => {
  const digest = createHash('sha256').update(input).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += SAFE_ALPHABET[(digest[i] ?? 0) % SAFE_ALPHABET.length];
  return out;
};
