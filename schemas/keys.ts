import { InvalidObjectKeyError } from './errors.ts';
import { KIND_VALUES, type Kind } from './generated/types.ts';
import { kindByRef } from './kinds/registry.ts';

/** Every kind logplane stores, in schema order. */
export const KINDS: readonly Kind[] = KIND_VALUES;

/** The kinds whose objects have no namespace (from the kind registry); their keys read `Kind//name`. */
export const CLUSTER_SCOPED: ReadonlySet<Kind> = new Set<Kind>(KINDS.filter((kind) => kindByRef(kind)?.scope === 'Cluster'));

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
  const key = `${kind}/${namespace}/${metadata.name}`;
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
  const [kind = '', namespace = '', name = ''] = parts;
  if (!isKind(kind)) {
    throw new InvalidObjectKeyError(key, `unknown kind ${JSON.stringify(kind)} (expected one of ${KINDS.join(', ')})`);
  }
  if (CLUSTER_SCOPED.has(kind) !== (namespace === '')) {
    throw new InvalidObjectKeyError(
      key,
      CLUSTER_SCOPED.has(kind) ? `${kind} is cluster-scoped: expected ${kind}//name` : `${kind} is namespaced: expected ${kind}/namespace/name`,
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
