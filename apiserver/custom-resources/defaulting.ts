/**
 * kube's structural defaulting of custom objects (apiextensions-apiserver
 * `defaulting.PruneNonNullableNullsWithoutDefaults` followed by `defaulting.Default`, as
 * kube-apiserver 1.32 runs them when it reads a request body or a stored object):
 *
 * - a `null` under a property that is neither `nullable` nor defaulted is removed;
 * - an absent property with a `default` gets a copy of it, and so does a `null` under a
 *   non-nullable property with a default;
 * - recursively, through properties, `additionalProperties` values and array items (a
 *   non-nullable `null` item or map value is replaced by its schema's default).
 *
 * Defaults are applied top-down: a defaulted object is itself defaulted further.
 */
import { MAX_SCHEMA_DEPTH } from './schema-validation.ts';
import { additionalSchema, cloneJson, has, isObject, own, ownObject, ownTrue, properties, propertySchema, setOwn, type Schema } from './json.ts';

const hasDefault = (schema: Schema | undefined): schema is Schema => schema !== undefined && own(schema, 'default') !== undefined && own(schema, 'default') !== null;

const isNonNullableNull = (value: unknown, schema: Schema | undefined): schema is Schema =>
  value === null && schema !== undefined && !ownTrue(schema, 'nullable');

/** kube's `PruneNonNullableNullsWithoutDefaults` (properties only, as in kube). */
const dropNulls = (value: unknown, schema: Schema, depth: number): void => {
  if (depth > MAX_SCHEMA_DEPTH) return;
  if (Array.isArray(value)) {
    const items = ownObject(schema, 'items');
    if (items) value.forEach((item) => dropNulls(item, items, depth + 1));
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    const property = propertySchema(schema, key);
    if (property && isNonNullableNull(value[key], property) && !hasDefault(property)) delete value[key];
  }
  for (const key of Object.keys(value)) {
    const sub = propertySchema(schema, key) ?? additionalSchema(schema);
    if (sub) dropNulls(value[key], sub, depth + 1);
  }
};

/** kube's `Default`. */
const defaultNode = (value: unknown, schema: Schema, depth: number): void => {
  if (depth > MAX_SCHEMA_DEPTH) return;
  if (Array.isArray(value)) {
    const items = ownObject(schema, 'items');
    if (!items) return;
    value.forEach((item, i) => {
      if (isNonNullableNull(item, items) && hasDefault(items)) value[i] = cloneJson(items['default']);
      defaultNode(value[i], items, depth + 1);
    });
    return;
  }
  if (!isObject(value)) return;
  for (const [key, property] of properties(schema)) {
    if (!hasDefault(property)) continue;
    if (!has(value, key) || isNonNullableNull(value[key], property)) setOwn(value, key, cloneJson(property['default']));
  }
  const additional = additionalSchema(schema);
  for (const key of Object.keys(value)) {
    const property = propertySchema(schema, key);
    if (property) defaultNode(value[key], property, depth + 1);
    else if (additional) {
      if (isNonNullableNull(value[key], additional) && hasDefault(additional)) setOwn(value, key, cloneJson(additional['default']));
      defaultNode(value[key], additional, depth + 1);
    }
  }
};

/**
 * Returns a defaulted **copy** of `object` (the argument is not modified) per `schema`, a
 * version's `openAPIV3Schema`. Total on any input: a non-object schema returns a plain copy.
 */
export const applyDefaults = <T>(schema: unknown, object: T): T => {
  const copy = cloneJson(object);
  if (!isObject(schema)) return copy as T;
  dropNulls(copy, schema, 0);
  defaultNode(copy, schema, 0);
  return copy as T;
};
