/**
 * Validation of a custom object against its version's `openAPIV3Schema`, with the semantics
 * and messages of kube-openapi's schema validator as kube-apiserver 1.32 reports them for
 * custom resources (apiextensions-apiserver `ValidateCustomResource`), plus the list-type
 * uniqueness (`listtype`) and embedded-resource (`objectmeta`) checks that run beside it:
 *
 *   spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
 *   spec.mode: Unsupported value: "x": supported values: "a", "b"
 *   spec.ports[1]: Duplicate value: {"name":"http"}
 *
 * Errors kube-openapi reports without a field (allOf/anyOf/oneOf/not) carry the field
 * `<nil>` as kube's do, with the path inside the message.
 */
import { fieldErrors } from '../errors.ts';
import { dns1035LabelProblem } from '../validation/names.ts';
import { invalid, tooLong, tooMany, typeInvalid } from './causes.ts';
import { checkFormat } from './formats.ts';
import {
  additionalProperties,
  childPath,
  indexPath,
  isEmbedded,
  isObject,
  jsonEqual,
  jsonTypeOf,
  own,
  ownArray,
  ownNumber,
  ownObject,
  ownString,
  ownTrue,
  propertySchema,
  type Causes,
  type Schema,
} from './json.ts';

/** The deepest schema nesting followed; deeper parts are not validated (kube has no limit; CRD validation rejects such schemas). */
export const MAX_SCHEMA_DEPTH = 512;

const patternCache = new Map<string, RegExp | string>();

/**
 * A schema `pattern` (Go RE2 syntax) as a JavaScript RegExp, or the reason it does not
 * compile. `(?i)` at the start becomes the `i` flag, `\A` and `\z` become `^` and `$`.
 */
export const compilePattern = (pattern: string): RegExp | string => {
  const cached = patternCache.get(pattern);
  if (cached !== undefined) return cached;
  let source = pattern.replaceAll('\\A', '^').replaceAll('\\z', '$');
  let flags = '';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags = 'i';
  }
  let result: RegExp | string;
  try {
    result = new RegExp(source, `${flags}u`);
  } catch {
    try {
      result = new RegExp(source, flags);
    } catch (error) {
      result = error instanceof Error ? error.message : String(error);
    }
  }
  if (patternCache.size > 10_000) patternCache.clear();
  patternCache.set(pattern, result);
  return result;
};

/** The types a schema admits: `x-kubernetes-int-or-string` is `integer,string`. */
const schemaTypes = (schema: Schema): string[] => {
  if (ownTrue(schema, 'x-kubernetes-int-or-string')) return ['integer', 'string'];
  const type = ownString(schema, 'type');
  return type ? [type] : [];
};

const typeMatches = (types: readonly string[], actual: string): boolean =>
  types.includes(actual) || (actual === 'integer' && types.includes('number'));

/** Where a failure is reported: kube-openapi's name (`spec.replicas`) under the caller's base path. */
interface Place {
  /** The caller's field path (`…default` for a schema default); undefined for a custom object (kube's nil path). */
  readonly base: string | undefined;
  readonly causes: Causes;
}

const fieldOf = (place: Place, name: string): string =>
  place.base === undefined ? name || '<nil>' : name ? childPath(place.base, name) : place.base;

/** `spec.replicas in body` (or `in body` at the root, where kube-openapi's name is empty). */
const subject = (name: string): string => (name ? `${name} in body` : 'in body');

const composite = (place: Place, message: string): void => {
  place.causes.push(invalid(place.base ?? '<nil>', '', message));
};

const validateComposites = (schema: Schema, value: unknown, name: string, place: Place, depth: number): void => {
  const run = (sub: unknown): Causes => {
    const causes: Causes = [];
    if (isObject(sub)) validateNode(sub, value, name, { base: place.base, causes }, depth + 1);
    return causes;
  };
  const allOf = ownArray(schema, 'allOf');
  if (allOf.length > 0) {
    const results = allOf.map(run);
    const valid = results.filter((r) => r.length === 0).length;
    results.forEach((r) => place.causes.push(...r));
    if (valid !== allOf.length) composite(place, `${JSON.stringify(name)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}`);
  }
  const anyOf = ownArray(schema, 'anyOf');
  if (anyOf.length > 0) {
    const results = anyOf.map(run);
    if (!results.some((r) => r.length === 0)) {
      composite(place, `${JSON.stringify(name)} must validate at least one schema (anyOf)`);
      place.causes.push(...results.reduce((best, r) => (r.length < best.length ? r : best)));
    }
  }
  const oneOf = ownArray(schema, 'oneOf');
  if (oneOf.length > 0) {
    const results = oneOf.map(run);
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== 1) {
      composite(place, `${JSON.stringify(name)} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`);
      if (valid === 0) place.causes.push(...results.reduce((best, r) => (r.length < best.length ? r : best)));
    }
  }
  const not = ownObject(schema, 'not');
  if (not && run(not).length === 0) composite(place, `${JSON.stringify(name)} must not validate the schema (not)`);
};

const validateString = (schema: Schema, value: string, name: string, place: Place): void => {
  const field = fieldOf(place, name);
  const length = [...value].length;
  const maxLength = ownNumber(schema, 'maxLength');
  if (maxLength !== undefined && length > maxLength) place.causes.push(tooLong(field, maxLength));
  const minLength = ownNumber(schema, 'minLength');
  if (minLength !== undefined && length < minLength) place.causes.push(invalid(field, value, `${subject(name)} should be at least ${minLength} chars long`));
  const pattern = ownString(schema, 'pattern');
  if (pattern !== undefined) {
    const regex = compilePattern(pattern);
    if (typeof regex !== 'string' && !regex.test(value)) place.causes.push(invalid(field, value, `${subject(name)} should match '${pattern}'`));
  }
  const format = ownString(schema, 'format');
  if (format && checkFormat(format, value) === false) {
    place.causes.push(typeInvalid(field, value, `${subject(name)} must be of type ${format}: ${JSON.stringify(value)}`));
  }
};

const validateNumber = (schema: Schema, value: number, name: string, place: Place): void => {
  const field = fieldOf(place, name);
  const multipleOf = ownNumber(schema, 'multipleOf');
  if (multipleOf !== undefined && multipleOf > 0) {
    const quotient = value / multipleOf;
    if (quotient !== Math.trunc(quotient)) place.causes.push(invalid(field, value, `${subject(name)} should be a multiple of ${multipleOf}`));
  }
  const maximum = ownNumber(schema, 'maximum');
  if (maximum !== undefined) {
    const exclusive = ownTrue(schema, 'exclusiveMaximum');
    if (exclusive ? value >= maximum : value > maximum) {
      place.causes.push(invalid(field, value, `${subject(name)} should be less than ${exclusive ? '' : 'or equal to '}${maximum}`));
    }
  }
  const minimum = ownNumber(schema, 'minimum');
  if (minimum !== undefined) {
    const exclusive = ownTrue(schema, 'exclusiveMinimum');
    if (exclusive ? value <= minimum : value < minimum) {
      place.causes.push(invalid(field, value, `${subject(name)} should be greater than ${exclusive ? '' : 'or equal to '}${minimum}`));
    }
  }
};

/** Indexes of the items equal to an earlier one (kube's listtype `validateListSet`). */
const duplicateIndexes = (items: readonly unknown[], key: (item: unknown) => unknown = (item) => item): number[] => {
  const duplicates: number[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const id = JSON.stringify(canonical(key(item)));
    if (seen.has(id)) duplicates.push(i);
    seen.add(id);
  });
  return duplicates;
};

/** A JSON value with sorted object keys, so equal values stringify equally. */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isObject(value)) return value;
  return Object.keys(value)
    .sort()
    .map((key) => [key, canonical(value[key])]);
};

/** kube's listtype validation of one array: set items unique, map items unique by their keys. */
const validateListType = (schema: Schema, items: readonly unknown[], name: string, place: Place): void => {
  const listType = ownString(schema, 'x-kubernetes-list-type');
  const field = fieldOf(place, name);
  if (listType === 'set') {
    for (const i of duplicateIndexes(items)) place.causes.push(fieldErrors.duplicate(indexPath(field, i), items[i]));
  } else if (listType === 'map') {
    const bad = items.findIndex((item) => item !== null && !isObject(item));
    if (bad >= 0) {
      place.causes.push(invalid(indexPath(field, bad), items[bad], 'must be an object for an array of list-type map'));
      return;
    }
    const keys = ownArray(schema, 'x-kubernetes-list-map-keys').filter((k): k is string => typeof k === 'string');
    const itemSchema = ownObject(schema, 'items');
    const keyOf = (item: unknown): Record<string, unknown> =>
      Object.fromEntries(keys.map((k) => [k, own(item, k) ?? own(propertySchema(itemSchema, k), 'default') ?? null]));
    for (const i of duplicateIndexes(items, keyOf)) place.causes.push(fieldErrors.duplicate(indexPath(field, i), keyOf(items[i])));
  }
};

const validateArray = (schema: Schema, value: readonly unknown[], name: string, place: Place, depth: number): void => {
  const field = fieldOf(place, name);
  const minItems = ownNumber(schema, 'minItems');
  if (minItems !== undefined && value.length < minItems) place.causes.push(invalid(field, value.length, `${subject(name)} should have at least ${minItems} items`));
  const maxItems = ownNumber(schema, 'maxItems');
  if (maxItems !== undefined && value.length > maxItems) place.causes.push(tooMany(field, value.length, maxItems));
  if (ownTrue(schema, 'uniqueItems') && duplicateIndexes(value).length > 0) place.causes.push(invalid(field, '', `${subject(name)} shouldn't contain duplicates`));
  const items = ownObject(schema, 'items');
  if (items) value.forEach((item, i) => validateNode(items, item, indexPath(name, i), place, depth + 1));
  validateListType(schema, value, name, place);
};

/** kube's objectmeta `validateEmbeddedResource`: apiVersion and kind of an embedded object. */
const validateEmbeddedTypeMeta = (value: Record<string, unknown>, name: string, place: Place): void => {
  const field = fieldOf(place, name);
  const apiVersionField = childPath(field, 'apiVersion');
  const kindField = childPath(field, 'kind');
  if (!Object.hasOwn(value, 'apiVersion')) place.causes.push(fieldErrors.required(apiVersionField, 'must not be empty'));
  else if (typeof value['apiVersion'] !== 'string') place.causes.push(invalid(apiVersionField, value['apiVersion'], 'must be a string'));
  else if (value['apiVersion'] === '') place.causes.push(invalid(apiVersionField, '', 'must not be empty'));
  else if (value['apiVersion'].split('/').length > 2 || value['apiVersion'].startsWith('/') || value['apiVersion'].endsWith('/')) {
    place.causes.push(invalid(apiVersionField, value['apiVersion'], `unexpected GroupVersion string: ${value['apiVersion']}`));
  }
  if (!Object.hasOwn(value, 'kind')) place.causes.push(fieldErrors.required(kindField, 'must not be empty'));
  else if (typeof value['kind'] !== 'string') place.causes.push(invalid(kindField, value['kind'], 'must be a string'));
  else if (value['kind'] === '') place.causes.push(invalid(kindField, '', 'must not be empty'));
  else {
    const problem = dns1035LabelProblem(value['kind'].toLowerCase());
    if (problem) place.causes.push(invalid(kindField, value['kind'], `may have mixed case, but should otherwise match: ${problem}`));
  }
};

const validateObject = (schema: Schema, value: Record<string, unknown>, name: string, place: Place, depth: number, root: boolean): void => {
  const field = fieldOf(place, name);
  const count = Object.keys(value).length;
  const maxProperties = ownNumber(schema, 'maxProperties');
  if (maxProperties !== undefined && count > maxProperties) place.causes.push(tooMany(field, count, maxProperties));
  const minProperties = ownNumber(schema, 'minProperties');
  if (minProperties !== undefined && count < minProperties) place.causes.push(invalid(field, count, `${subject(name)} should have at least ${minProperties} properties`));
  for (const required of ownArray(schema, 'required')) {
    if (typeof required === 'string' && !Object.hasOwn(value, required) && !(root && required === 'metadata')) {
      place.causes.push(fieldErrors.required(fieldOf(place, childPath(name, required))));
    }
  }
  if (isEmbedded(schema)) validateEmbeddedTypeMeta(value, name, place);
  const additional = additionalProperties(schema);
  for (const key of Object.keys(value)) {
    if (root && key === 'metadata') continue;
    if (isEmbedded(schema) && key === 'metadata') continue;
    const sub = propertySchema(schema, key);
    if (sub) validateNode(sub, value[key], childPath(name, key), place, depth + 1);
    else if (isObject(additional)) validateNode(additional, value[key], childPath(name, key), place, depth + 1);
    else if (additional === false) place.causes.push(invalid(field, key, `${childPath(name, key)} in body is a forbidden property`));
  }
};

/** Validates one value against one schema node (kube-openapi's SchemaValidator order: type, composites, string, format, number, array, enum, object). */
const validateNode = (schema: Schema, value: unknown, name: string, place: Place, depth: number, root = false): void => {
  if (depth > MAX_SCHEMA_DEPTH) return;
  const field = fieldOf(place, name);
  const types = schemaTypes(schema);
  if (value === null || value === undefined) {
    if (ownTrue(schema, 'nullable')) return;
    if (types.length > 0) place.causes.push(typeInvalid(field, 'null', `${subject(name)} must be of type ${types.join(',')}: "null"`));
  } else if (types.length > 0 && !typeMatches(types, jsonTypeOf(value))) {
    const actual = jsonTypeOf(value);
    place.causes.push(typeInvalid(field, actual, `${subject(name)} must be of type ${types.join(',')}: ${JSON.stringify(actual)}`));
  }
  validateComposites(schema, value, name, place, depth);
  if (typeof value === 'string') validateString(schema, value, name, place);
  else if (typeof value === 'number') validateNumber(schema, value, name, place);
  else if (Array.isArray(value)) validateArray(schema, value, name, place, depth);
  const enumValues = own(schema, 'enum');
  if (Array.isArray(enumValues) && enumValues.length > 0 && !enumValues.some((allowed) => jsonEqual(allowed, value))) {
    const supported = enumValues.map((allowed) => (typeof allowed === 'string' ? allowed : JSON.stringify(allowed)));
    place.causes.push(fieldErrors.notSupported(field, value ?? null, supported));
  }
  if (isObject(value)) validateObject(schema, value, name, place, depth, root);
};

/**
 * Validates `value` against `schema` with kube's semantics, reporting under `basePath`
 * (e.g. a schema default is reported at `…properties[spec].default`).
 */
export const validateValue = (schema: unknown, value: unknown, basePath: string): Causes => {
  const causes: Causes = [];
  if (isObject(schema)) validateNode(schema, value, '', { base: basePath, causes }, 0);
  return causes;
};

/**
 * Validates a custom object against its version's `openAPIV3Schema`. The object's
 * `metadata` is the caller's to validate, except that a schema restricting
 * `metadata.name` or `metadata.generateName` (the only metadata a CRD schema may specify)
 * is applied here. Total on any input; returns the causes, empty when the object is valid.
 */
export const validateCustomObject = (schema: unknown, object: unknown): Causes => {
  const causes: Causes = [];
  if (!isObject(schema)) return causes;
  const place: Place = { base: undefined, causes };
  validateNode(schema, object, '', place, 0, true);
  const metadataSchema = propertySchema(schema, 'metadata');
  const metadata = own(object, 'metadata');
  if (metadataSchema && isObject(metadata)) {
    for (const key of ['name', 'generateName']) {
      const sub = propertySchema(metadataSchema, key);
      if (sub && Object.hasOwn(metadata, key)) validateNode(sub, metadata[key], childPath('metadata', key), place, 1);
    }
  }
  return causes;
};
