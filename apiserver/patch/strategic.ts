/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) for the built-in kinds:
 * lists merged as the API types' patch strategies say (`patch-meta.ts`: containers by
 * `name`, container ports by `containerPort`, service ports by `port`, …), and the `$patch`, `$setElementOrder/<list>`,
 * `$deleteFromPrimitiveList/<list>` and `$retainKeys` directives that `kubectl apply` emits.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import { assertNever, type Kind } from '../../schemas/index.ts';
import { apiErrors } from '../errors.ts';
import { isObject, own, setMember, type Json, type JsonObject } from './json.ts';
import { listStrategyOf } from './patch-meta.ts';

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
  const strategy = listStrategyOf(kind, path);
  const current = Array.isArray(original) ? original : [];
  switch (strategy.type) {
    case 'replace':
      return patch.filter((item) => !(isObject(item) && item[DIRECTIVE] === 'delete')).map((item) => strip(item));
    case 'mergePrimitives': {
      const merged = [...current];
      for (const item of patch) if (!merged.some((existing) => sameJson(existing, item))) merged.push(item);
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
      const list = own(out, field);
      if (Array.isArray(list) && Array.isArray(value)) {
        const remove = new Set(value.map((v) => JSON.stringify(v)));
        setMember(out, field, list.filter((v) => !remove.has(JSON.stringify(v))));
      }
      continue;
    }
    if (key === RETAIN_KEYS) continue;
    const childPath = [...path, key];
    if (value === null) {
      delete out[key];
    } else if (Array.isArray(value)) {
      setMember(out, key, mergeList(kind, childPath, own(out, key), value));
    } else if (isObject(value)) {
      const merged = strategicMerge(kind, childPath, own(out, key), value);
      if (merged === undefined) delete out[key];
      else setMember(out, key, merged);
    } else {
      setMember(out, key, value);
    }
  }
  for (const [field, order] of orders) {
    const list = own(out, field);
    if (!Array.isArray(list)) continue;
    const strategy = listStrategyOf(kind, [...path, field]);
    setMember(out, field, orderBy(list, order, strategy.type === 'mergeByKey' ? strategy.key : undefined));
  }
  const retain = patch[RETAIN_KEYS];
  if (Array.isArray(retain)) {
    const keep = new Set(retain.map(String));
    for (const key of Object.keys(out)) if (!keep.has(key)) delete out[key];
  }
  return out;
};
