/**
 * JSON text independent of object member order: objects decoded from different schema
 * versions (v5's generated records order fields as the API document does, v4's did not)
 * or built in memory print the same when they hold the same values.
 */

/** JSON text of `value` with every object's members sorted by key (undefined members left out, as JSON.stringify does). */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
};

/** Whether two values are the same JSON, whatever their members' order. */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);
