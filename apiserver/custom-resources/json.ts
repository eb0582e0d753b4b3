/**
 * Prototype-safe access to JSON data and to OpenAPI v3 schemas (a CRD version's
 * `openAPIV3Schema`) as they arrive from a client: plain data of any shape. Every lookup is
 * an own-property lookup (a key named `__proto__`, `constructor` or `prototype` is data,
 * never a walk into a prototype) and every write defines an own property.
 */
import type { StatusCause } from '../status.ts';

/** Causes collected by a validator, in the order found. */
export type Causes = StatusCause[];

/** A JSON object as parsed from a request (any keys, including reserved ones, are data). */
export type JsonObject = Record<string, unknown>;

/** An OpenAPI v3 schema node (`JSONSchemaProps`); read only through the helpers below. */
export type Schema = JsonObject;

/** True for a JSON object (not null, not an array). */
export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `object[key]` when `object` is a JSON object that owns `key`, else undefined. */
export const own = (object: unknown, key: string): unknown => (isObject(object) && Object.hasOwn(object, key) ? object[key] : undefined);

/** True when `object` is a JSON object that owns `key`. */
export const has = (object: unknown, key: string): boolean => isObject(object) && Object.hasOwn(object, key);

/** Sets an own, enumerable property, also for keys such as `__proto__`. */
export const setOwn = (object: JsonObject, key: string, value: unknown): void => {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
};

/** A string member, or undefined. */
export const ownString = (object: unknown, key: string): string | undefined => {
  const value = own(object, key);
  return typeof value === 'string' ? value : undefined;
};

/** A number member, or undefined. */
export const ownNumber = (object: unknown, key: string): number | undefined => {
  const value = own(object, key);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
};

/** True when the member is the boolean `true`. */
export const ownTrue = (object: unknown, key: string): boolean => own(object, key) === true;

/** An object member (a sub-schema), or undefined. */
export const ownObject = (object: unknown, key: string): JsonObject | undefined => {
  const value = own(object, key);
  return isObject(value) ? value : undefined;
};

/** An array member, or an empty array. */
export const ownArray = (object: unknown, key: string): readonly unknown[] => {
  const value = own(object, key);
  return Array.isArray(value) ? value : [];
};

/** The `properties` of a schema as [name, schema] pairs (non-object entries are skipped). */
export const properties = (schema: unknown): [string, Schema][] => {
  const props = ownObject(schema, 'properties');
  if (!props) return [];
  return Object.keys(props).flatMap((name) => {
    const sub = props[name];
    return isObject(sub) ? [[name, sub] as [string, Schema]] : [];
  });
};

/** The schema of property `name`, if the schema declares it. */
export const propertySchema = (schema: unknown, name: string): Schema | undefined => ownObject(ownObject(schema, 'properties'), name);

/** True when the schema declares property `name`. */
export const declaresProperty = (schema: unknown, name: string): boolean => has(ownObject(schema, 'properties'), name);

/**
 * `additionalProperties`: absent (undefined), a schema, or a boolean (`true` allows any
 * value without a schema; kube's `StructuralOrBool{Bool}`).
 */
export const additionalProperties = (schema: unknown): Schema | boolean | undefined => {
  const value = own(schema, 'additionalProperties');
  return isObject(value) || typeof value === 'boolean' ? value : undefined;
};

/** The schema that applies to an unlisted key under `additionalProperties`, if it is a schema. */
export const additionalSchema = (schema: unknown): Schema | undefined => {
  const value = additionalProperties(schema);
  return isObject(value) ? value : undefined;
};

/** True for `x-kubernetes-preserve-unknown-fields: true`. */
export const preservesUnknown = (schema: unknown): boolean => ownTrue(schema, 'x-kubernetes-preserve-unknown-fields');

/** True for `x-kubernetes-embedded-resource: true`. */
export const isEmbedded = (schema: unknown): boolean => ownTrue(schema, 'x-kubernetes-embedded-resource');

/** `a.b` (a JSON field path as the apiserver prints them: `spec.ports[0].port`). */
export const childPath = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

/** `a[3]`. */
export const indexPath = (path: string, index: number): string => `${path}[${index}]`;

/** kube's `field.Path.Key`: `a[key]`. */
export const keyPath = (path: string, key: string): string => `${path}[${key}]`;

/** Deep equality of JSON values (object key order does not matter). */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
};

/**
 * A deep copy of JSON data into fresh plain objects and arrays; iterative, so nesting depth
 * cannot exhaust the stack. Reserved keys are copied as own properties.
 */
export const cloneJson = (value: unknown): unknown => {
  const copy = (node: unknown): unknown => (Array.isArray(node) ? new Array<unknown>(node.length) : isObject(node) ? {} : node);
  const root = copy(value);
  const stack: [unknown, unknown][] = [[value, root]];
  while (stack.length > 0) {
    const [from, to] = stack.pop()!;
    if (Array.isArray(from)) {
      from.forEach((item, i) => {
        const next = copy(item);
        (to as unknown[])[i] = next;
        if (next !== item) stack.push([item, next]);
      });
    } else if (isObject(from)) {
      for (const key of Object.keys(from)) {
        const item = from[key];
        const next = copy(item);
        setOwn(to as JsonObject, key, next);
        if (next !== item) stack.push([item, next]);
      }
    }
  }
  return root;
};

/** The JSON type name of a value as kube-openapi infers it (`integer` for whole numbers). */
export const jsonTypeOf = (value: unknown): string => {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    case 'object':
      return 'object';
    default:
      return typeof value;
  }
};
