import { InvalidObjectKeyError } from './errors.ts';
import { KIND_VALUES, type Kind, type KubeObject } from './generated/types.ts';
import { kindByRef, storedKind } from './kinds/registry.ts';

/** The object type of a kind: `ObjectOfKind<'Pod'>` is `Pod`. */
export type ObjectOfKind<K extends Kind> = Extract<KubeObject, { kind: K }>;

/** Every kind logplane stores, in schema order. */
export const KINDS: readonly Kind[] = KIND_VALUES;

/** The kinds whose objects have no namespace (from the kind registry); their keys read `Kind//name`. */
export const CLUSTER_SCOPED: ReadonlySet<Kind> = new Set<Kind>(KINDS.filter((kind) => storedKind(kind)?.scope === 'Cluster'));

/** How keys name each stored kind: `Pod`, `Deployment`, `Job.batch` (the kind registry's refs). */
const REF_OF: ReadonlyMap<Kind, string> = new Map(KINDS.map((kind) => [kind, storedKind(kind)?.ref ?? kind]));

/** The ref that keys use for `kind` (`Job` → `Job.batch`). */
export const kindRef = (kind: string): string => REF_OF.get(kind as Kind) ?? kind;

/** The stored kind a key's ref names (`Job.batch` → `Job`), if any. */
export const kindOfRef = (ref: string): Kind | undefined => {
  const registered = kindByRef(ref);
  return registered !== undefined && registered.storageRef === registered.ref && isKind(registered.kind) ? registered.kind : undefined;
};

const KIND_SET: ReadonlySet<string> = new Set(KINDS);

/** Whether a value names a kind logplane stores. */
export function isKind(value: unknown): value is Kind {
  return typeof value === 'string' && KIND_SET.has(value);
}

/**
 * The key of an object in the log and the projections: `Kind/namespace/name`, or
 * `Kind//name` for cluster-scoped kinds (whose namespace, if any, is ignored).
 * Throws `InvalidObjectKeyError` for a namespaced kind without a namespace, an empty
 * name, or a name or namespace containing `/`.
 */
export function objectKey(object: { kind: Kind; metadata: { namespace?: string; name: string } }): string {
  const { kind, metadata } = object;
  const namespace = CLUSTER_SCOPED.has(kind) ? '' : (metadata.namespace ?? '');
  const key = `${kindRef(kind)}/${namespace}/${metadata.name}`;
  if (!CLUSTER_SCOPED.has(kind) && namespace === '') {
    throw new InvalidObjectKeyError(key, `${kind} is namespaced but the object has no metadata.namespace`);
  }
  checkSegments(key, namespace, metadata.name);
  return key;
}

/** Splits a key built by {@link objectKey}; throws `InvalidObjectKeyError` if it is not one. */
export function parseObjectKey(key: string): { kind: Kind; namespace: string | null; name: string } {
  const parts = key.split('/');
  if (parts.length !== 3) {
    throw new InvalidObjectKeyError(key, 'expected Kind/namespace/name or Kind//name');
  }
  const [ref = '', namespace = '', name = ''] = parts;
  const kind = kindOfRef(ref);
  if (kind === undefined) {
    throw new InvalidObjectKeyError(key, `unknown kind ${JSON.stringify(ref)} (expected one of ${KINDS.map(kindRef).join(', ')})`);
  }
  if (CLUSTER_SCOPED.has(kind) !== (namespace === '')) {
    throw new InvalidObjectKeyError(
      key,
      CLUSTER_SCOPED.has(kind) ? `${kind} is cluster-scoped: expected ${ref}//name` : `${kind} is namespaced: expected ${ref}/namespace/name`,
    );
  }
  checkSegments(key, namespace, name);
  return { kind, namespace: namespace === '' ? null : namespace, name };
}

function checkSegments(key: string, namespace: string, name: string): void {
  if (name === '') {
    throw new InvalidObjectKeyError(key, 'the name is empty');
  }
  if (name.includes('/') || namespace.includes('/')) {
    throw new InvalidObjectKeyError(key, 'names and namespaces cannot contain "/"');
  }
}
