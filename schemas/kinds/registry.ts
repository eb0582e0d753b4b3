/**
 * The kind registry: every kind logplane knows, read by every layer (DESIGN: kinds, one
 * registry). Each entry is a generated descriptor (`generated.ts`, from the vendored
 * Kubernetes API document and kube-apiserver's own registry facts) with what the log adds:
 * the kind's ref in keys and its partition domain.
 */
import type { KindDescriptor, PartitionDomain } from './descriptor.ts';
import { partitionDomainOf } from './domains.ts';
import { KIND_DESCRIPTORS } from './generated.ts';
import { kindRefOf } from './refs.ts';
import { storageRefOf } from './storage.ts';

/** A kind as the registry holds it. */
export interface RegisteredKind extends KindDescriptor {
  /** How keys name the kind: `Pod`, `Deployment`, `Job.batch` (see refs.ts). */
  readonly ref: string;
  readonly partitionDomain: PartitionDomain;
  /** The ref of the kind whose records hold its objects: its own ref, but for a kind served from another's storage (storage.ts). */
  readonly storageRef: string;
}

const register = (descriptor: KindDescriptor): RegisteredKind => {
  const ref = kindRefOf(descriptor.group, descriptor.kind);
  const storageRef = storageRefOf(ref);
  return Object.freeze({ ...descriptor, ref, partitionDomain: partitionDomainOf(storageRef), storageRef });
};

/** Every registered kind, in kube-apiserver's discovery order. */
export const REGISTERED_KINDS: readonly RegisteredKind[] = Object.freeze(KIND_DESCRIPTORS.map(register));

/** The kinds with records of their own in the log (every registered kind not served from another's storage), in discovery order. */
export const STORED_KINDS: readonly RegisteredKind[] = Object.freeze(REGISTERED_KINDS.filter((kind) => kind.storageRef === kind.ref));

const byStoredKind: ReadonlyMap<string, RegisteredKind> = new Map(STORED_KINDS.map((kind) => [kind.kind, kind]));
if (byStoredKind.size !== STORED_KINDS.length) {
  // The log's object union is discriminated by kind name: two stored kinds may not share one.
  throw new Error(`two stored kinds share a kind name: ${STORED_KINDS.map((kind) => kind.ref).join(', ')}`);
}

/** The stored kind named `kind` (kind names are unique among stored kinds: the log's object union is keyed by them). */
export const storedKind = (kind: string): RegisteredKind | undefined => byStoredKind.get(kind);

const byRef: ReadonlyMap<string, RegisteredKind> = new Map(REGISTERED_KINDS.map((kind) => [kind.ref, kind]));
const byGroupKind: ReadonlyMap<string, RegisteredKind> = new Map(REGISTERED_KINDS.map((kind) => [`${kind.group}/${kind.kind}`, kind]));
const byResource: ReadonlyMap<string, RegisteredKind> = new Map(REGISTERED_KINDS.map((kind) => [`${kind.group}/${kind.plural}`, kind]));

/** The kind a key's ref names (`Pod`, `Job.batch`), if registered. */
export const kindByRef = (ref: string): RegisteredKind | undefined => byRef.get(ref);

/** The kind `kind` of `group` (`''` for core), if registered. */
export const kindByGroupKind = (group: string, kind: string): RegisteredKind | undefined => byGroupKind.get(`${group}/${kind}`);

/** The kind served as `plural` in `group`, if registered. */
export const kindByResource = (group: string, plural: string): RegisteredKind | undefined => byResource.get(`${group}/${plural}`);
