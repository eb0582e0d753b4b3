/** The JSON value types the patch formats share. */
/** Plain JSON data as the patch code handles it. */
export type Json = unknown;
export type JsonObject = Record<string, Json>;

/** True for a JSON object (not an array, not null). */
export const isObject = (value: Json): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The own member `key` of `object`; never one inherited from a prototype. */
export const own = (object: JsonObject, key: string): Json => (Object.hasOwn(object, key) ? object[key] : undefined);

/**
 * Sets `key` on `object` as an own data property. Unlike `object[key] = value` it cannot
 * change a prototype, whatever the key.
 */
export const setMember = (object: JsonObject, key: string, value: Json): void => {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
};

/**
 * Equality of two JSON values as JSON defines it: member order does not matter, array
 * order does, a member whose value is undefined is absent (it is not in the JSON text).
 */
export const jsonEqual = (a: Json, b: Json): boolean => {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keysOf = (o: JsonObject) => Object.keys(o).filter((k) => o[k] !== undefined);
  const aKeys = keysOf(a);
  const bKeys = keysOf(b);
  return aKeys.length === bKeys.length && aKeys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
};
