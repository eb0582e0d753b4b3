/**
 * The PATCH formats kubectl and controllers send:
 * - JSON merge patch (RFC 7386, `application/merge-patch+json`);
 * - strategic merge patch (`application/strategic-merge-patch+json`) for the built-in
 *   kinds: lists merged by their keys (containers by `name`, container ports by
 *   `containerPort`, service ports by `port`, env by `name`, …), the `$patch`,
 *   `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`
 *   directives that `kubectl apply` emits;
 * - JSON patch (RFC 6902, `application/json-patch+json`).
 * Server-side apply (`application/apply-patch+yaml`) is answered with 415.
 */
import { assertNever, type Kind } from '../schemas/index.ts';
import { apiErrors } from './errors.ts';

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = keyof typeof PATCH_TYPES;

/** The patch type of a Content-Type, or a 415 listing the accepted ones. */
export const patchTypeOf = (mediaType: string): PatchType => {
  const found = (Object.keys(PATCH_TYPES) as PatchType[]).find((t) => PATCH_TYPES[t] === mediaType);
  if (found) return found;
  throw apiErrors.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${Object.values(PATCH_TYPES).join(', ')}`,
  );
};

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (value: Json): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7386 JSON merge patch: objects merge recursively, `null` deletes, everything else replaces. */
export const mergePatch = (target: Json, patch: Json): Json => {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
};

// ---------------------------------------------------------------------------------------
// Strategic merge patch

/** How a list field merges: by a key field, as a set of primitives, or replaced whole. */
type ListStrategy = { type: 'mergeByKey'; key: string } | { type: 'mergePrimitives' } | { type: 'replace' };

/**
 * The patch strategies of the lists logplane stores, from the Kubernetes API types'
 * `patchStrategy`/`patchMergeKey` tags. `path` is the list's field path without indexes.
 */
const listStrategy = (kind: Kind, path: readonly string[]): ListStrategy => {
  const field = path[path.length - 1];
  switch (field) {
    case 'containers':
    case 'initContainers':
    case 'env':
    case 'volumes':
    case 'imagePullSecrets':
      return { type: 'mergeByKey', key: 'name' };
    case 'volumeMounts':
      return { type: 'mergeByKey', key: 'mountPath' };
    case 'ports':
      if (kind === 'Service' && path.length === 2 && path[0] === 'spec') return { type: 'mergeByKey', key: 'port' };
      if (path.includes('subsets')) return { type: 'replace' };
      return { type: 'mergeByKey', key: 'containerPort' };
    case 'conditions':
      return { type: 'mergeByKey', key: 'type' };
    case 'ownerReferences':
      return { type: 'mergeByKey', key: 'uid' };
    case 'finalizers':
      return path.length === 2 && path[0] === 'metadata' ? { type: 'mergePrimitives' } : { type: 'replace' };
    case 'addresses':
      return kind === 'Node' ? { type: 'mergeByKey', key: 'type' } : { type: 'replace' };
    default:
      return { type: 'replace' };
  }
};

const DIRECTIVE = '$patch';
const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVES = '$deleteFromPrimitiveList/';
const RETAIN_KEYS = '$retainKeys';

const badPatch = (message: string) => apiErrors.badRequest(`invalid strategic merge patch: ${message}`);

const orderBy = (list: Json[], order: Json[], key: string | undefined): Json[] => {
  const identity = (item: Json): string => JSON.stringify(key !== undefined && isObject(item) ? item[key] : item);
  const positions = new Map(order.map((item, index) => [identity(item), index]));
  const ordered = list.filter((item) => positions.has(identity(item))).sort((a, b) => positions.get(identity(a))! - positions.get(identity(b))!);
  const rest = list.filter((item) => !positions.has(identity(item)));
  return [...ordered, ...rest];
};

const mergeList = (kind: Kind, path: readonly string[], original: Json, patch: Json[]): Json[] => {
  const strategy = listStrategy(kind, path);
  const current = Array.isArray(original) ? original : [];
  switch (strategy.type) {
    case 'replace':
      return patch.filter((item) => !(isObject(item) && item[DIRECTIVE] === 'delete')).map((item) => strip(item));
    case 'mergePrimitives': {
      const merged = [...current];
      for (const item of patch) if (!merged.some((existing) => JSON.stringify(existing) === JSON.stringify(item))) merged.push(item);
      return merged;
    }
    case 'mergeByKey': {
      if (patch.some((item) => isObject(item) && item[DIRECTIVE] === 'replace')) {
        return patch.filter((item) => !(isObject(item) && item[DIRECTIVE] === 'replace')).map((item) => strip(item));
      }
      const merged = [...current];
      for (const item of patch) {
        if (!isObject(item)) throw badPatch(`${path.join('.')}: list items must be objects`);
        const keyValue = item[strategy.key];
        if (keyValue === undefined) throw badPatch(`${path.join('.')}: map: ${JSON.stringify(item)} does not contain declared merge key: ${strategy.key}`);
        const index = merged.findIndex((existing) => isObject(existing) && existing[strategy.key] === keyValue);
        if (item[DIRECTIVE] === 'delete') {
          if (index >= 0) merged.splice(index, 1);
        } else if (index >= 0) {
          merged[index] = strategicMerge(kind, path, merged[index], item);
        } else {
          merged.push(strategicMerge(kind, path, {}, item));
        }
      }
      return merged;
    }
    default:
      return assertNever(strategy, 'strategy');
  }
};

/** Removes directive keys from a value that is used as-is. */
const strip = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(strip);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !k.startsWith('$')).map(([k, v]) => [k, strip(v)]));
};

/**
 * Applies a strategic merge patch to `original` (an object of `kind`); `path` is where
 * in the object the two values sit (empty for the whole object).
 */
export const strategicMerge = (kind: Kind, path: readonly string[], original: Json, patch: Json): Json => {
  if (!isObject(patch)) return structuredClone(patch);
  const directive = patch[DIRECTIVE];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return strip(patch);
  if (directive !== undefined) throw badPatch(`unknown $patch directive ${JSON.stringify(directive)}`);
  const out: JsonObject = isObject(original) ? { ...original } : {};
  const orders: [string, Json[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(SET_ORDER)) {
      if (Array.isArray(value)) orders.push([key.slice(SET_ORDER.length), value]);
      continue;
    }
    if (key.startsWith(DELETE_PRIMITIVES)) {
      const field = key.slice(DELETE_PRIMITIVES.length);
      if (Array.isArray(out[field]) && Array.isArray(value)) {
        const remove = new Set(value.map((v) => JSON.stringify(v)));
        out[field] = (out[field] as Json[]).filter((v) => !remove.has(JSON.stringify(v)));
      }
      continue;
    }
    if (key === RETAIN_KEYS) continue;
    const childPath = [...path, key];
    if (value === null) {
      delete out[key];
    } else if (Array.isArray(value)) {
      out[key] = mergeList(kind, childPath, out[key], value);
    } else if (isObject(value)) {
      const merged = strategicMerge(kind, childPath, out[key], value);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else {
      out[key] = value;
    }
  }
  for (const [field, order] of orders) {
    if (!Array.isArray(out[field])) continue;
    const strategy = listStrategy(kind, [...path, field]);
    out[field] = orderBy(out[field] as Json[], order, strategy.type === 'mergeByKey' ? strategy.key : undefined);
  }
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    const keep = new Set(retain.map(String));
    for (const key of Object.keys(out)) if (!keep.has(key)) delete out[key];
  }
  return out;
};

// ---------------------------------------------------------------------------------------
// JSON patch

type Operation = { op: string; path: string; from?: string; value?: Json };

const pointer = (path: string): string[] => {
  if (path === '') return [];
  if (!path.startsWith('/')) throw apiErrors.badRequest(`invalid JSON patch path "${path}": must start with "/"`);
  return path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
};

const parentOf = (doc: Json, tokens: readonly string[], path: string): { parent: Json; last: string } => {
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
  }
  return { parent: node, last: tokens[tokens.length - 1]! };
};

const getAt = (doc: Json, path: string): Json => {
  let node = doc;
  for (const token of pointer(path)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
  }
  return node;
};

const removeAt = (doc: Json, path: string): Json => {
  const tokens = pointer(path);
  if (tokens.length === 0) throw apiErrors.unprocessablePatch('JSON patch: cannot remove the whole document');
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
    return parent.splice(index, 1)[0];
  }
  if (isObject(parent) && last in parent) {
    const value = parent[last];
    delete parent[last];
    return value;
  }
  throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
};

const addAt = (doc: Json, path: string, value: Json, replace: boolean): Json => {
  const tokens = pointer(path);
  if (tokens.length === 0) return structuredClone(value);
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length || (replace && index >= parent.length)) {
      throw apiErrors.unprocessablePatch(`JSON patch: index in "${path}" is out of range`);
    }
    parent.splice(index, replace ? 1 : 0, structuredClone(value));
  } else if (isObject(parent)) {
    if (replace && !(last in parent)) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
    parent[last] = structuredClone(value);
  } else {
    throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
  }
  return doc;
};

/** Applies an RFC 6902 JSON patch to a copy of `target`. */
export const jsonPatch = (target: Json, operations: Json): Json => {
  if (!Array.isArray(operations)) throw apiErrors.badRequest('a JSON patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of operations) {
    if (!isObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') {
      throw apiErrors.badRequest(`invalid JSON patch operation ${JSON.stringify(raw)}`);
    }
    const op = raw as Operation;
    switch (op.op) {
      case 'add':
        doc = addAt(doc, op.path, op.value, false);
        break;
      case 'replace':
        doc = addAt(doc, op.path, op.value, true);
        break;
      case 'remove':
        removeAt(doc, op.path);
        break;
      case 'move': {
        const value = removeAt(doc, op.from ?? '');
        doc = addAt(doc, op.path, value, false);
        break;
      }
      case 'copy':
        doc = addAt(doc, op.path, getAt(doc, op.from ?? ''), false);
        break;
      case 'test':
        if (JSON.stringify(getAt(doc, op.path)) !== JSON.stringify(op.value)) {
          throw apiErrors.unprocessablePatch(`JSON patch: test failed at "${op.path}"`);
        }
        break;
      default:
        throw apiErrors.badRequest(`unknown JSON patch operation "${op.op}"`);
    }
  }
  return doc;
};

/** Applies a patch of `type` to `original` (an object of `kind`). */
export const applyPatch = (type: PatchType, kind: Kind, original: Json, patch: Json): Json => {
  switch (type) {
    case 'merge':
      return mergePatch(original, patch);
    case 'strategic':
      if (!isObject(patch)) throw apiErrors.badRequest('a strategic merge patch must be a JSON object');
      return strategicMerge(kind, [], original, patch);
    case 'json':
      return jsonPatch(original, patch);
    case 'apply':
      throw apiErrors.unsupportedMediaType(
        'server-side apply (application/apply-patch+yaml) is not supported by logplane; use client-side `kubectl apply` (without --server-side), or a merge/strategic merge patch',
      );
    default:
      return assertNever(type, 'type');
  }
};
