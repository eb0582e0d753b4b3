/**
 * The checks kube-apiserver 1.32 makes of one CRD version's `schema`
 * (apiextensions-apiserver `validateCustomResourceDefinitionValidation` and
 * `ValidateCustomResourceDefinitionOpenAPISchema` with the options of a create): the
 * OpenAPI constructs a CRD may not use, the x-kubernetes-* extension rules, the structural
 * schema (structural.ts), and the defaults (each must validate against its schema, carry
 * no pruned fields, and is forbidden in top-level metadata).
 */
import { fieldErrors } from '../errors.ts';
import { invalid } from './causes.ts';
import { pruned } from './pruning.ts';
import { MAX_SCHEMA_DEPTH, validateValue } from './schema-validation.ts';
import { structuralProblems } from './structural.ts';
import { childPath, has, indexPath, isEmbedded, isObject, jsonEqual, keyPath, own, ownArray, ownObject, ownString, ownTrue, properties, type Causes, type Schema } from './json.ts';

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS: ReadonlySet<string> = new Set(['metadata', 'kind', 'apiVersion']);
const VALIDATION_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

/** The members allowed at the root of a schema when the status subresource is enabled (kube's allowedFieldsAtRootSchema). */
const ROOT_WITH_STATUS = new Set([
  'description', 'type', 'format', 'title', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'required', 'items', 'properties', 'externalDocs', 'example',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-validations',
]);
const ROOT_WITH_STATUS_TEXT =
  '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]';

/** kube's specStandardValidatorV3 state. */
interface Walk {
  readonly causes: Causes;
  readonly defaultsForbidden?: string;
  readonly insideResourceMeta: boolean;
}

const isZero = (value: unknown): boolean =>
  value === undefined || value === null || value === false || value === '' || value === 0 || (Array.isArray(value) && value.length === 0) || (isObject(value) && Object.keys(value).length === 0);

/** kube's `specStandardValidatorV3.validate`. */
const checkConstructs = (walk: Walk, schema: Schema, path: string): void => {
  const { causes } = walk;
  const type = ownString(schema, 'type') ?? '';
  if (type !== '' && !OPENAPI_V3_TYPES.includes(type)) causes.push(fieldErrors.notSupported(childPath(path, 'type'), type, OPENAPI_V3_TYPES));
  if (own(schema, 'default') !== undefined && own(schema, 'default') !== null && walk.defaultsForbidden !== undefined) {
    causes.push(fieldErrors.forbidden(childPath(path, 'default'), `must not be set ${walk.defaultsForbidden}`));
  }
  if (ownString(schema, 'id')) causes.push(fieldErrors.forbidden(childPath(path, 'id'), 'id is not supported'));
  if (own(schema, 'additionalItems') !== undefined) causes.push(fieldErrors.forbidden(childPath(path, 'additionalItems'), 'additionalItems is not supported'));
  if (!isZero(own(schema, 'patternProperties'))) causes.push(fieldErrors.forbidden(childPath(path, 'patternProperties'), 'patternProperties is not supported'));
  if (!isZero(own(schema, 'definitions'))) causes.push(fieldErrors.forbidden(childPath(path, 'definitions'), 'definitions is not supported'));
  if (own(schema, 'dependencies') !== undefined) causes.push(fieldErrors.forbidden(childPath(path, 'dependencies'), 'dependencies is not supported'));
  if (own(schema, '$ref') !== undefined) causes.push(fieldErrors.forbidden(childPath(path, '$ref'), '$ref is not supported'));
  if (type === 'null') causes.push(fieldErrors.forbidden(childPath(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(own(schema, 'items')) && ownArray(schema, 'items').length > 0) causes.push(fieldErrors.forbidden(childPath(path, 'items'), 'items must be a schema object and not an array'));
  if (walk.insideResourceMeta && isEmbedded(schema)) causes.push(fieldErrors.forbidden(childPath(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
};

/** kube's list-type and map-type rules of one node (and `validateMapListKeysMapSet`). */
const checkListAndMapTypes = (causes: Causes, schema: Schema, path: string): void => {
  const type = ownString(schema, 'type') ?? '';
  const mapType = own(schema, 'x-kubernetes-map-type');
  if (mapType !== undefined && type !== 'object') {
    if (type === '') causes.push(fieldErrors.required(childPath(path, 'type'), 'must be object if x-kubernetes-map-type is specified'));
    else causes.push(invalid(childPath(path, 'type'), type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') causes.push(fieldErrors.notSupported(childPath(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  const listType = own(schema, 'x-kubernetes-list-type');
  const items = ownObject(schema, 'items');
  if (listType !== undefined && type !== 'array') {
    if (type === '') causes.push(fieldErrors.required(childPath(path, 'type'), 'must be array if x-kubernetes-list-type is specified'));
    else causes.push(invalid(childPath(path, 'type'), type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && items) {
    const itemType = ownString(items, 'type');
    const itemListType = own(items, 'x-kubernetes-list-type');
    if (itemType === 'array' && itemListType !== undefined && itemListType !== 'atomic') {
      causes.push(invalid(childPath(childPath(path, 'items'), 'x-kubernetes-list-type'), itemListType, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
    if (itemType === 'object' && own(items, 'x-kubernetes-map-type') !== 'atomic') {
      causes.push(invalid(childPath(childPath(path, 'items'), 'x-kubernetes-map-type'), itemListType ?? null, 'must be atomic as item of a list with x-kubernetes-list-type=set'));
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    causes.push(fieldErrors.notSupported(childPath(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  const mapKeys = ownArray(schema, 'x-kubernetes-list-map-keys');
  if (mapKeys.length > 0) {
    if (listType === undefined) causes.push(fieldErrors.required(childPath(path, 'x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map') causes.push(invalid(childPath(path, 'x-kubernetes-list-type'), listType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) causes.push(fieldErrors.required(childPath(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (own(schema, 'items') === undefined) causes.push(fieldErrors.required(childPath(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    else if (!items) causes.push(invalid(childPath(path, 'items'), own(schema, 'items'), 'must only have a single schema if x-kubernetes-list-type is map'));
    else if (ownString(items, 'type') !== 'object') causes.push(invalid(childPath(childPath(path, 'items'), 'type'), ownString(items, 'type') ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    else {
      const seen = new Set<unknown>();
      for (const key of mapKeys) {
        const keySchema = typeof key === 'string' ? ownObject(ownObject(items, 'properties'), key) : undefined;
        if (!keySchema) causes.push(invalid(childPath(path, 'x-kubernetes-list-map-keys'), mapKeys, 'entries must all be names of item properties'));
        else if (['array', 'object'].includes(ownString(keySchema, 'type') ?? '')) {
          causes.push(invalid(childPath(keyPath(childPath(childPath(path, 'items'), 'properties'), String(key)), 'type'), 'object', "must be a scalar type if parent array's x-kubernetes-list-type is map"));
        }
        if (seen.has(key)) causes.push(invalid(childPath(path, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'));
        seen.add(key);
      }
    }
  }
  if ((listType === 'set' || listType === 'map') && items) {
    if (ownTrue(items, 'nullable')) causes.push(fieldErrors.forbidden(childPath(childPath(path, 'items'), 'nullable'), `cannot be nullable when x-kubernetes-list-type is ${listType}`));
    if (listType === 'map') {
      const required = ownArray(items, 'required');
      for (const key of mapKeys) {
        const keySchema = typeof key === 'string' ? ownObject(ownObject(items, 'properties'), key) : undefined;
        if (!keySchema) continue;
        const keyPathText = keyPath(childPath(childPath(path, 'items'), 'properties'), String(key));
        if (!required.includes(key) && (own(keySchema, 'default') === undefined || own(keySchema, 'default') === null)) {
          causes.push(fieldErrors.required(childPath(keyPathText, 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
        }
        if (ownTrue(keySchema, 'nullable')) causes.push(fieldErrors.forbidden(childPath(keyPathText, 'nullable'), 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
      }
    }
  }
};

/** kube's static checks of `x-kubernetes-validations` rules (compiling CEL is not done: see crdWarnings). */
const checkValidationRules = (causes: Causes, schema: Schema, path: string): void => {
  ownArray(schema, 'x-kubernetes-validations').forEach((rule, i) => {
    const at = indexPath(childPath(path, 'x-kubernetes-validations'), i);
    const text = ownString(rule, 'rule') ?? '';
    const message = ownString(rule, 'message') ?? '';
    if (text.trim() === '') causes.push(fieldErrors.required(childPath(at, 'rule'), 'rule is not specified'));
    else if (message.length > 0 && message.trim() === '') causes.push(invalid(childPath(at, 'message'), message, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(message.trim())) causes.push(invalid(childPath(at, 'message'), message, 'message must not contain line breaks'));
    else if (/[\n\r]/.test(text.trim()) && message.trim() === '') causes.push(fieldErrors.required(childPath(at, 'message'), 'message must be specified if rule contains line breaks'));
    const messageExpression = ownString(rule, 'messageExpression') ?? '';
    if (messageExpression.length > 0 && messageExpression.trim() === '') causes.push(fieldErrors.required(childPath(at, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    const reason = own(rule, 'reason');
    if (reason !== undefined && reason !== null && !VALIDATION_REASONS.includes(String(reason))) causes.push(fieldErrors.notSupported(childPath(at, 'reason'), reason, VALIDATION_REASONS));
    const fieldPath = ownString(rule, 'fieldPath') ?? '';
    if (fieldPath.length > 0 && fieldPath.trim() === '') causes.push(invalid(childPath(at, 'fieldPath'), fieldPath, 'fieldPath must be non-empty if specified'));
    if (/[\n\r]/.test(fieldPath)) causes.push(invalid(childPath(at, 'fieldPath'), fieldPath, 'fieldPath must not contain line breaks'));
  });
};

/** kube's `ValidateCustomResourceDefinitionOpenAPISchema` (the recursion and per-node rules). */
const checkSchemaNode = (walk: Walk, schema: unknown, path: string, root: boolean, depth: number): void => {
  if (!isObject(schema)) return;
  if (depth > MAX_SCHEMA_DEPTH) {
    walk.causes.push(fieldErrors.forbidden(path, `logplane does not accept schemas nested deeper than ${MAX_SCHEMA_DEPTH} levels`));
    return;
  }
  const { causes } = walk;
  checkConstructs(walk, schema, path);
  if (ownTrue(schema, 'uniqueItems')) causes.push(fieldErrors.forbidden(childPath(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const additional = own(schema, 'additionalProperties');
  if (additional !== undefined) {
    if (properties(schema).length > 0 && (additional === false || isObject(additional))) {
      causes.push(fieldErrors.forbidden(childPath(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    const sub = walk.insideResourceMeta ? { ...walk, defaultsForbidden: 'inside additionalProperties applying to object metadata' } : walk;
    checkSchemaNode(sub, additional, childPath(path, 'additionalProperties'), false, depth + 1);
  }
  for (const [name, property] of properties(schema)) {
    let sub = walk;
    if ((root || isEmbedded(schema)) && META_FIELDS.has(name)) {
      sub = { ...sub, insideResourceMeta: true };
      if (root) sub = { ...sub, defaultsForbidden: `in top-level ${name}` };
    }
    checkSchemaNode(sub, property, keyPath(childPath(path, 'properties'), name), false, depth + 1);
  }
  checkSchemaNode(walk, own(schema, 'not'), childPath(path, 'not'), false, depth + 1);
  for (const junctor of ['allOf', 'oneOf', 'anyOf']) {
    ownArray(schema, junctor).forEach((sub, i) => checkSchemaNode(walk, sub, indexPath(childPath(path, junctor), i), false, depth + 1));
  }
  checkSchemaNode(walk, own(schema, 'items'), childPath(path, 'items'), false, depth + 1);
  if (own(schema, 'x-kubernetes-preserve-unknown-fields') === false) {
    causes.push(invalid(childPath(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  checkListAndMapTypes(causes, schema, path);
  checkValidationRules(causes, schema, path);
};

/** kube's `defaulting.ValidateDefaults`: defaults outside resource metadata must validate and be pruned. */
const checkDefaults = (causes: Causes, schema: unknown, path: string, insideMeta: boolean, depth: number): void => {
  if (!isObject(schema) || depth > MAX_SCHEMA_DEPTH) return;
  const value = own(schema, 'default');
  if (value !== undefined && value !== null && !insideMeta) {
    const at = childPath(path, 'default');
    if (!jsonEqual(pruned(schema, value, isEmbedded(schema)).object, value)) causes.push(invalid(at, value, 'must not have unknown fields'));
    causes.push(...validateValue(schema, value, at));
  }
  checkDefaults(causes, own(schema, 'items'), childPath(path, 'items'), insideMeta, depth + 1);
  const embedded = depth === 0 || isEmbedded(schema);
  for (const [name, property] of properties(schema)) {
    const meta = embedded ? META_FIELDS.has(name) : insideMeta;
    checkDefaults(causes, property, keyPath(childPath(path, 'properties'), name), meta, depth + 1);
  }
};

/**
 * Validates one version's `schema` (`{ openAPIV3Schema }`) reported under `path`
 * (`spec.versions[0].schema`); `statusEnabled` when the version has the status subresource.
 */
export const validateVersionSchema = (causes: Causes, validation: unknown, path: string, statusEnabled: boolean): void => {
  const schema = own(validation, 'openAPIV3Schema');
  if (!isObject(schema)) return;
  const schemaPath = childPath(path, 'openAPIV3Schema');
  const found: Causes = [];
  if (statusEnabled) {
    for (const key of Object.keys(schema)) {
      if (isZero(schema[key])) continue;
      if (key === 'type') {
        if (schema[key] !== 'object') {
          found.push(invalid(childPath(schemaPath, 'type'), schema[key], 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'));
          break;
        }
        continue;
      }
      if (!ROOT_WITH_STATUS.has(key)) {
        found.push(invalid(schemaPath, schema, `only ${ROOT_WITH_STATUS_TEXT} fields are allowed at the root of the schema if the status subresource is enabled`));
        break;
      }
    }
  }
  if (ownTrue(schema, 'nullable')) found.push(fieldErrors.forbidden(childPath(schemaPath, 'nullable'), 'nullable cannot be true at the root'));
  const structural = structuralProblems(schema, schemaPath);
  found.push(...structural);
  if (structural.length === 0) checkDefaults(found, schema, schemaPath, false, 0);
  checkSchemaNode({ causes: found, insideResourceMeta: false }, schema, schemaPath, true, 0);
  causes.push(...found);
};

/** Paths (`spec.versions[0].schema.openAPIV3Schema.properties[spec]`) of every node carrying `x-kubernetes-validations` rules. */
export const celRulePaths = (schema: unknown, path: string): string[] => {
  const paths: string[] = [];
  const walk = (node: unknown, at: string, depth: number): void => {
    if (!isObject(node) || depth > MAX_SCHEMA_DEPTH) return;
    if (ownArray(node, 'x-kubernetes-validations').length > 0) paths.push(childPath(at, 'x-kubernetes-validations'));
    for (const [name, sub] of properties(node)) walk(sub, keyPath(childPath(at, 'properties'), name), depth + 1);
    walk(own(node, 'items'), childPath(at, 'items'), depth + 1);
    walk(own(node, 'additionalProperties'), childPath(at, 'additionalProperties'), depth + 1);
    for (const junctor of ['allOf', 'anyOf', 'oneOf']) ownArray(node, junctor).forEach((sub, i) => walk(sub, indexPath(childPath(at, junctor), i), depth + 1));
    walk(own(node, 'not'), childPath(at, 'not'), depth + 1);
  };
  walk(schema, path, 0);
  return paths;
};

/** True when any node of the schema has a member `key` (kube's SchemaHas). */
export const schemaHas = (schema: unknown, predicate: (node: Schema) => boolean): boolean => {
  const stack: [unknown, number][] = [[schema, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!isObject(node) || depth > MAX_SCHEMA_DEPTH) continue;
    if (predicate(node)) return true;
    for (const [, sub] of properties(node)) stack.push([sub, depth + 1]);
    for (const key of ['items', 'additionalProperties', 'not']) if (has(node, key)) stack.push([node[key], depth + 1]);
    for (const junctor of ['allOf', 'anyOf', 'oneOf']) for (const sub of ownArray(node, junctor)) stack.push([sub, depth + 1]);
  }
  return false;
};
