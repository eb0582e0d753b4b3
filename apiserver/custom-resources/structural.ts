/**
 * kube's structural-schema rules (apiextensions-apiserver `schema.ValidateStructural`, 1.32,
 * with its options at their CRD values: no additionalProperties and no
 * x-kubernetes-validations inside allOf/anyOf/oneOf/not), applied to a raw
 * `openAPIV3Schema`:
 *
 * - every node specifies a `type`, unless it is `x-kubernetes-int-or-string` or
 *   `x-kubernetes-preserve-unknown-fields` (an `x-kubernetes-embedded-resource` must be an
 *   object); arrays specify `items`; the root is an object without additionalProperties;
 * - inside allOf/anyOf/oneOf/not only value validations: no type, default, title,
 *   description, nullable, additionalProperties, no x-kubernetes-* extensions, no
 *   `metadata`; kube's two int-or-string patterns (`anyOf: [{type: integer}, {type: string}]`,
 *   also as the first `allOf`) are allowed;
 * - every property or items a junctor at the root mentions is also specified outside it;
 * - metadata at the root restricts only `name` and `generateName`; `kind` and `apiVersion`
 *   of a resource are strings.
 *
 * Causes come sorted by their text, as kube sorts them.
 */
import { fieldErrors } from '../errors.ts';
import { invalid } from './causes.ts';
import { compilePattern } from './schema-validation.ts';
import { childPath, has, indexPath, isEmbedded, isObject, jsonEqual, keyPath, own, ownArray, ownObject, ownString, ownTrue, properties, type Causes, type Schema } from './json.ts';

type Level = 'root' | 'item' | 'field';

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];

/** A schema member is set (kube's Go struct field differs from its zero value). */
const isSet = (schema: Schema, key: string): boolean => {
  const value = own(schema, key);
  if (value === undefined || value === null || value === false || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  return true;
};

const isIntOrStringAnyOf = (schema: unknown): boolean => jsonEqual(own(schema, 'anyOf'), INT_OR_STRING_ANY_OF);
const isIntOrStringAllOf = (schema: Schema): boolean => isIntOrStringAnyOf(ownArray(schema, 'allOf')[0]);

/** Members that a Structural node keeps besides name/generateName on root metadata (kube resets only type and default). */
const METADATA_ALLOWED = new Set(['type', 'default', 'properties']);

const checkRootMetadata = (causes: Causes, metadata: Schema, checkMetadata: boolean, level: Level, path: string): void => {
  const type = ownString(metadata, 'type') ?? '';
  if (checkMetadata && type !== 'object') causes.push(invalid(childPath(path, 'type'), type, 'must be object'));
  if (level !== 'root') return;
  const names = Object.keys(ownObject(metadata, 'properties') ?? {});
  const onlyNames = names.every((name) => name === 'name' || name === 'generateName');
  const restricted = Object.keys(metadata).some((key) => (key === 'properties' ? names.length > 0 && !onlyNames : !METADATA_ALLOWED.has(key) && isSet(metadata, key)));
  if (restricted) causes.push(fieldErrors.forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
};

/** kube's `validateNestedValueValidation`: a node under allOf/anyOf/oneOf/not. */
const checkNested = (causes: Causes, schema: unknown, path: string, skipAnyOf: boolean): void => {
  if (!isObject(schema)) return;
  checkValueValidation(causes, schema, path, skipAnyOf, false);
  checkNested(causes, own(schema, 'items'), childPath(path, 'items'), false);
  for (const [name, sub] of properties(schema)) checkNested(causes, sub, keyPath(childPath(path, 'properties'), name), false);
  const forbid = (key: string, detail: string): void => {
    if (isSet(schema, key)) causes.push(fieldErrors.forbidden(childPath(path, key), detail));
  };
  forbid('type', 'must be empty to be structural');
  if (own(schema, 'additionalProperties') !== undefined) causes.push(fieldErrors.forbidden(childPath(path, 'additionalProperties'), 'must be undefined to be structural'));
  if (own(schema, 'default') !== undefined && own(schema, 'default') !== null) causes.push(fieldErrors.forbidden(childPath(path, 'default'), 'must be undefined to be structural'));
  forbid('title', 'must be empty to be structural');
  forbid('description', 'must be empty to be structural');
  forbid('nullable', 'must be false to be structural');
  forbid('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  forbid('x-kubernetes-embedded-resource', 'must be false to be structural');
  forbid('x-kubernetes-int-or-string', 'must be false to be structural');
  forbid('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (own(schema, 'x-kubernetes-list-type') !== undefined) causes.push(fieldErrors.forbidden(childPath(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (own(schema, 'x-kubernetes-map-type') !== undefined) causes.push(fieldErrors.forbidden(childPath(path, 'x-kubernetes-map-type'), 'must be undefined to be structural'));
  forbid('x-kubernetes-validations', 'must be empty to be structural');
  if (has(ownObject(schema, 'properties'), 'metadata')) {
    causes.push(fieldErrors.forbidden(keyPath(childPath(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
  }
};

/** kube's `validateValueValidation`: the junctors of a node and its pattern. */
const checkValueValidation = (causes: Causes, schema: Schema, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): void => {
  if (!skipAnyOf) ownArray(schema, 'anyOf').forEach((sub, i) => checkNested(causes, sub, indexPath(childPath(path, 'anyOf'), i), false));
  ownArray(schema, 'allOf').forEach((sub, i) => checkNested(causes, sub, indexPath(childPath(path, 'allOf'), i), skipFirstAllOfAnyOf && i === 0));
  ownArray(schema, 'oneOf').forEach((sub, i) => checkNested(causes, sub, indexPath(childPath(path, 'oneOf'), i), false));
  checkNested(causes, own(schema, 'not'), childPath(path, 'not'), false);
  const pattern = ownString(schema, 'pattern');
  if (pattern) {
    const compiled = compilePattern(pattern);
    if (typeof compiled === 'string') causes.push(invalid(childPath(path, 'pattern'), pattern, `must be a valid regular expression, but isn't: ${compiled}`));
  }
};

const REQUIRED_TYPE: Readonly<Record<Level, string>> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

/** kube's `validateStructuralInvariants`. */
const checkInvariants = (causes: Causes, schema: unknown, level: Level, path: string): void => {
  if (!isObject(schema)) return;
  const type = ownString(schema, 'type') ?? '';
  const intOrString = ownTrue(schema, 'x-kubernetes-int-or-string');
  const preserve = ownTrue(schema, 'x-kubernetes-preserve-unknown-fields');
  const embedded = isEmbedded(schema);
  if (type === 'array' && own(schema, 'items') === undefined) causes.push(fieldErrors.required(childPath(path, 'items'), 'must be specified'));
  checkInvariants(causes, own(schema, 'items'), 'item', childPath(path, 'items'));
  for (const [name, sub] of properties(schema)) checkInvariants(causes, sub, 'field', keyPath(childPath(path, 'properties'), name));
  const additional = own(schema, 'additionalProperties');
  if (additional !== undefined) {
    if (level === 'root') causes.push(fieldErrors.forbidden(childPath(path, 'additionalProperties'), 'must not be used at the root'));
    checkInvariants(causes, additional, 'field', childPath(path, 'additionalProperties'));
  }
  if (intOrString && preserve) causes.push(invalid(childPath(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) causes.push(invalid(childPath(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  checkValueValidation(causes, schema, path, isIntOrStringAnyOf(schema), isIntOrStringAllOf(schema));
  const checkMetadata = level === 'root' || embedded;
  if (embedded && type !== 'object') {
    if (type === '') causes.push(fieldErrors.required(childPath(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else causes.push(invalid(childPath(path, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (type === '' && !intOrString && !preserve) {
    causes.push(fieldErrors.required(childPath(path, 'type'), REQUIRED_TYPE[level]));
  }
  if (embedded && additional !== undefined) causes.push(fieldErrors.forbidden(childPath(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (level === 'root' && type !== '' && type !== 'object') causes.push(invalid(childPath(path, 'type'), type, 'must be object at the root'));
  const props = ownObject(schema, 'properties');
  for (const meta of ['kind', 'apiVersion']) {
    const sub = ownObject(props, meta);
    if (sub && checkMetadata && ownString(sub, 'type') !== 'string') {
      causes.push(invalid(childPath(keyPath(childPath(path, 'properties'), meta), 'type'), ownString(sub, 'type') ?? '', 'must be string'));
    }
  }
  const metadata = ownObject(props, 'metadata');
  if (metadata) checkRootMetadata(causes, metadata, checkMetadata, level, keyPath(childPath(path, 'properties'), 'metadata'));
  if (embedded && !preserve && properties(schema).length === 0) {
    causes.push(fieldErrors.required(childPath(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
};

/** kube's completeness of one junctor node `value` against the structural node `schema`. */
const checkComplete = (causes: Causes, value: unknown, schema: unknown, sPath: string, vPath: string): void => {
  if (!isObject(value)) return;
  if (!isObject(schema)) {
    causes.push(fieldErrors.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  checkJunctorsComplete(causes, value, schema, sPath, vPath);
  checkComplete(causes, own(value, 'items'), own(schema, 'items'), childPath(sPath, 'items'), childPath(vPath, 'items'));
  for (const [name, sub] of properties(value)) {
    const sProperty = ownObject(ownObject(schema, 'properties'), name);
    const sPropertyPath = keyPath(childPath(sPath, 'properties'), name);
    const vPropertyPath = keyPath(childPath(vPath, 'properties'), name);
    if (!sProperty) causes.push(fieldErrors.required(sPropertyPath, `because it is defined in ${vPropertyPath}`));
    else checkComplete(causes, sub, sProperty, sPropertyPath, vPropertyPath);
  }
};

const checkJunctorsComplete = (causes: Causes, value: Schema, schema: Schema, sPath: string, vPath: string): void => {
  checkComplete(causes, own(value, 'not'), schema, sPath, childPath(vPath, 'not'));
  for (const junctor of ['allOf', 'anyOf', 'oneOf']) {
    ownArray(value, junctor).forEach((sub, i) => checkComplete(causes, sub, schema, sPath, indexPath(childPath(vPath, junctor), i)));
  }
};

/**
 * The structural-schema violations of `schema` (an `openAPIV3Schema`) reported under `path`
 * (e.g. `spec.versions[0].schema.openAPIV3Schema`), sorted as kube sorts them.
 */
export const structuralProblems = (schema: unknown, path: string): Causes => {
  const causes: Causes = [];
  if (!isObject(schema)) return causes;
  checkInvariants(causes, schema, 'root', path);
  checkJunctorsComplete(causes, schema, schema, path, path);
  const text = (cause: Causes[number]): string => `${cause.field}: ${cause.message}`;
  return causes.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
};
