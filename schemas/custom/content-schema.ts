/**
 * A CustomResourceDefinition version's `openAPIV3Schema` → the Avro schema of the content of
 * its objects (every top-level property but `apiVersion`, `kind` and `metadata`, which the
 * event envelope carries). The mapping is in `README.md` beside this file.
 */
import { JSON_VALUE_SCHEMA, type AvroField, type AvroRecord, type AvroSchema } from '../avro-gen/generate.ts';
import { JSON_NAME_ATTRIBUTE, KIND_ATTRIBUTE } from '../schema-view.ts';
import { UnmappableSchemaError } from './errors.ts';
import { avroNameOf, ITEMS_SEGMENT, recordSegmentOf, VALUES_SEGMENT, WHOLE_CONTENT_FIELD } from './names.ts';

/**
 * The parts of a CRD's JSONSchemaProps (apiextensions.k8s.io/v1) that decide the shape of a
 * value. Every other keyword (`format`, `enum`, `pattern`, `default`, `allOf` …) only
 * validates or defaults and does not change the Avro type.
 */
export interface StructuralSchema {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, StructuralSchema>>;
  readonly additionalProperties?: StructuralSchema | boolean;
  readonly items?: StructuralSchema;
  readonly nullable?: boolean;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly [keyword: string]: unknown;
}

/** One version of a CRD: its group, the version's name, the kind, and the version's `schema.openAPIV3Schema`. */
export interface CustomResourceVersion {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly schema: StructuralSchema;
}

/** The Avro schema of a custom object's content, as plain JSON (what `JSON.stringify` writes to the log). */
export type CustomContentSchema = AvroRecord;

/** The Avro namespace under which every custom content record is named. */
export const CUSTOM_NAMESPACE = 'logplane.custom';

/** The record of an explicit JSON `null` in a `nullable: true` property (the union's `"null"` branch is *absent*). */
export const EXPLICIT_NULL_RECORD = 'logplane.json.Null';

const EXPLICIT_NULL_SCHEMA: AvroRecord = {
  type: 'record',
  name: EXPLICIT_NULL_RECORD,
  doc: 'An explicit JSON null in a nullable property; the null branch of an optional field is an absent property.',
  fields: [],
};

/** Top-level properties the event envelope carries, left out of the content. */
const ENVELOPE_PROPERTIES: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/** Property names refused wherever user keys become object keys (DESIGN.md, Identities). */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const ROOT_PATH = 'openAPIV3Schema';

/**
 * The Avro schema of the content of a CRD version's objects: a record named
 * `logplane.custom.<group>.<version>.<Kind>` (each part escaped as in `names.ts`) with one
 * optional field (`["null", T]`, default null) per top-level property but `apiVersion`,
 * `kind` and `metadata`, fields sorted by JSON name. It is standalone (it defines
 * `logplane.json.JsonValue` and `logplane.json.Null` where it first uses them) and a pure
 * function of the CRD schema's content, whatever the order of its keys, so its fingerprint
 * identifies it.
 *
 * When the root itself preserves unknown fields, the whole content is one JSON value: the
 * record `logplane.custom.<group>.<version>.<Kind>._xjson` with the single field `_xjson`.
 *
 * @throws UnmappableSchemaError naming the path of a node that is not a structural schema
 *   this mapping understands, or a group, version or kind that is empty.
 */
export function customContentSchema(source: CustomResourceVersion): CustomContentSchema {
  for (const part of ['group', 'version', 'kind'] as const) {
    if (typeof source[part] !== 'string' || source[part] === '') {
      throw new UnmappableSchemaError(part, `must be a non-empty string, got ${describe(source[part])}`);
    }
  }
  const { group, version, kind, schema } = source;
  const rootName = [CUSTOM_NAMESPACE, ...group.split('.').map(recordSegmentOf), recordSegmentOf(version), recordSegmentOf(kind)].join('.');
  const gvk = { group, version, kind };
  const mapper = createMapper();
  const root = expectSchema(schema, ROOT_PATH);
  if (preservesUnknownFields(root)) {
    return {
      type: 'record',
      name: `${rootName}.${WHOLE_CONTENT_FIELD}`,
      [KIND_ATTRIBUTE]: gvk,
      fields: [{ name: WHOLE_CONTENT_FIELD, type: mapper.jsonValue() }],
    };
  }
  if (root.type !== 'object') {
    throw new UnmappableSchemaError(`${ROOT_PATH}.type`, `the root must be type: object, got ${describe(root.type)}`);
  }
  if (root.additionalProperties !== undefined) {
    throw new UnmappableSchemaError(`${ROOT_PATH}.additionalProperties`, 'the root of a CRD schema cannot have additionalProperties');
  }
  return {
    type: 'record',
    name: rootName,
    [KIND_ATTRIBUTE]: gvk,
    fields: mapper.fields(root, ROOT_PATH, rootName, ENVELOPE_PROPERTIES),
  };
}

interface Mapper {
  /** The fields of the record of an object with properties, sorted by JSON name. */
  fields(schema: StructuralSchema, path: string, recordName: string, leftOut?: ReadonlySet<string>): AvroField[];
  /** `logplane.json.JsonValue`: its definition the first time, its name afterwards. */
  jsonValue(): AvroSchema;
}

/** The mapping of one schema: it tracks which named types are already defined. */
function createMapper(): Mapper {
  const defined = new Set<string>();
  const named = (definition: AvroRecord): AvroSchema => {
    if (defined.has(definition.name)) {
      return definition.name;
    }
    defined.add(definition.name);
    return structuredClone(definition) as AvroRecord;
  };
  const jsonValue = (): AvroSchema => named(JSON_VALUE_SCHEMA);
  const explicitNull = (schema: StructuralSchema): AvroSchema[] => (schema.nullable === true ? [named(EXPLICIT_NULL_SCHEMA)] : []);

  /** The branches of a value's type (without the absent `"null"`), in union order. */
  const branches = (schema: StructuralSchema, path: string, name: string): AvroSchema[] => {
    if ('$ref' in schema) {
      throw new UnmappableSchemaError(`${path}.$ref`, '$ref is not allowed in a CRD schema');
    }
    if (preservesUnknownFields(schema) || schema['x-kubernetes-embedded-resource'] === true) {
      return [jsonValue()];
    }
    if (schema['x-kubernetes-int-or-string'] === true) {
      return [...explicitNull(schema), 'long', 'string'];
    }
    switch (schema.type) {
      case undefined:
        return [jsonValue()];
      case 'string':
        return [...explicitNull(schema), 'string'];
      case 'integer':
        return [...explicitNull(schema), 'long'];
      case 'number':
        return [...explicitNull(schema), 'double'];
      case 'boolean':
        return [...explicitNull(schema), 'boolean'];
      case 'array': {
        const marker = explicitNull(schema);
        if (schema.items === undefined) {
          throw new UnmappableSchemaError(path, 'type: array without items');
        }
        if (Array.isArray(schema.items)) {
          throw new UnmappableSchemaError(`${path}.items`, 'items must be one schema (tuple arrays are not structural)');
        }
        const items = valueType(expectSchema(schema.items, `${path}.items`), `${path}.items`, `${name}.${ITEMS_SEGMENT}`);
        return [...marker, { type: 'array', items }];
      }
      case 'object': {
        const marker = explicitNull(schema);
        const { additionalProperties } = schema;
        if (additionalProperties === undefined) {
          const fields = mapFields(schema, path, name);
          return [...marker, { type: 'record', name, fields }];
        }
        if (schema.properties !== undefined) {
          throw new UnmappableSchemaError(path, 'properties and additionalProperties are mutually exclusive');
        }
        if (additionalProperties === true) {
          return [...marker, { type: 'map', values: jsonValue() }];
        }
        if (additionalProperties === false) {
          throw new UnmappableSchemaError(`${path}.additionalProperties`, 'additionalProperties: false is not allowed (leave it out)');
        }
        const valuesPath = `${path}.additionalProperties`;
        const values = valueType(expectSchema(additionalProperties, valuesPath), valuesPath, `${name}.${VALUES_SEGMENT}`);
        return [...marker, { type: 'map', values }];
      }
      default:
        throw new UnmappableSchemaError(`${path}.type`, `expected one of object, array, string, integer, number, boolean, got ${describe(schema.type)}`);
    }
  };

  /** The type of an array's items or a map's values: one branch, or a union of the explicit null and it. */
  const valueType = (schema: StructuralSchema, path: string, name: string): AvroSchema => {
    const union = branches(schema, path, name);
    return union.length === 1 ? (union[0] as AvroSchema) : union;
  };

  const mapFields = (schema: StructuralSchema, path: string, recordName: string, leftOut?: ReadonlySet<string>): AvroField[] => {
    const { properties } = schema;
    if (properties === undefined) {
      return [];
    }
    if (!isPlainObject(properties)) {
      throw new UnmappableSchemaError(`${path}.properties`, `must be an object, got ${describe(properties)}`);
    }
    return Object.keys(properties)
      .sort()
      .filter((property) => leftOut === undefined || !leftOut.has(property))
      .map((property) => {
        const propertyPath = `${path}.properties[${property}]`;
        if (PROTOTYPE_KEYS.has(property)) {
          throw new UnmappableSchemaError(propertyPath, `the property name ${property} is refused (it would reach an object's prototype)`);
        }
        const fieldName = avroNameOf(property);
        const propertySchema = expectSchema(properties[property], propertyPath);
        const type: AvroSchema = ['null', ...branches(propertySchema, propertyPath, `${recordName}.${recordSegmentOf(property)}`)];
        return fieldName === property ? { name: fieldName, type, default: null } : { name: fieldName, type, default: null, [JSON_NAME_ATTRIBUTE]: property };
      });
  };

  return { fields: mapFields, jsonValue };
}

function preservesUnknownFields(schema: StructuralSchema): boolean {
  return schema['x-kubernetes-preserve-unknown-fields'] === true;
}

function expectSchema(schema: unknown, path: string): StructuralSchema {
  if (!isPlainObject(schema)) {
    throw new UnmappableSchemaError(path, `expected a schema object, got ${describe(schema)}`);
  }
  return schema as StructuralSchema;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

