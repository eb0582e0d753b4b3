import type avro from 'avsc';
import { SchemaError } from './errors.ts';

/**
 * Records in this Avro namespace follow Kubernetes JSON conventions: a null optional
 * field is absent in the TypeScript view (`field?: T`). Records elsewhere (the event
 * envelope and bodies) keep nulls (`field: T | null`).
 */
export const K8S_NAMESPACE = 'logplane.k8s';

/**
 * Whether a record follows Kubernetes JSON conventions: it is in `logplane.k8s` (the
 * hand-written versions, v1–v4) or in a namespace under it (the generated ones,
 * `logplane.k8s.core.v1`, `logplane.k8s.apps.v1` …).
 */
export const isKubernetesRecord = (fullName: string): boolean => {
  const namespace = namespaceOf(fullName);
  return namespace === K8S_NAMESPACE || namespace.startsWith(`${K8S_NAMESPACE}.`);
};

/**
 * The record of any JSON value (RawExtension, FieldsV1, `x-kubernetes-preserve-unknown-fields`):
 * `{value: null | boolean | long | double | string | [JsonValue] | {string: JsonValue}}`,
 * whose TypeScript view is the JSON value itself.
 */
export const JSON_VALUE_RECORD = 'logplane.json.JsonValue';

/** Field attribute: the JSON property name of a field whose name had to change for Avro (`$ref` → `_ref`). */
export const JSON_NAME_ATTRIBUTE = 'logplane.jsonName';

/** Field attribute: the field's strings (itself, its items or map values) are Kubernetes quantities, stored canonical. */
export const QUANTITY_ATTRIBUTE = 'logplane.quantity';

/** Record attribute on the record of a kind (generated versions): `{group, version, kind}`. */
export const KIND_ATTRIBUTE = 'logplane.kind';

/** What a `logplane.kind` attribute says. */
export type KindAnnotation = { group: string; version: string; kind: string };

/**
 * Field attribute naming a wrapped union of records and its discriminator, e.g.
 * `"logplane.union": {"name": "KubeObject", "discriminator": "kind"}`. The TypeScript view
 * of such a union is a plain object carrying `discriminator: <record short name>`.
 */
export const UNION_ATTRIBUTE = 'logplane.union';

/** What a `logplane.union` attribute says about a union. */
export type UnionAnnotation = { name: string; discriminator: string };

/**
 * Field attribute `"logplane.optional": true` on a nullable field (`["null", T]`, default
 * null) of a record outside `logplane.k8s`: the TypeScript view declares it optional
 * (`field?: T | null`) and decoding leaves it absent when null, so that values built
 * without it (by code older than the field) round-trip deep-equal. Other nullable
 * fields of such records are required and decoded as null (`field: T | null`).
 */
export const OPTIONAL_ATTRIBUTE = 'logplane.optional';

/** The Avro primitive type names. */
export type Primitive = 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'bytes' | 'string';

/** A field of a record, with its documentation. */
export type FieldView = {
  name: string;
  type: avro.Type;
  doc: string | undefined;
  /** Carries `"logplane.optional": true`: absent, not null, in the TypeScript view. */
  optional: boolean;
  /** The JSON property name (the Avro name unless `logplane.jsonName` says otherwise). */
  jsonName: string;
  /** Carries `"logplane.quantity": true`. */
  quantity: boolean;
};

/** A typed view of an avsc type, to switch over exhaustively. */
export type TypeView =
  | { type: 'primitive'; primitive: Primitive }
  | { type: 'enum'; name: string; symbols: readonly string[]; doc: string | undefined }
  | { type: 'array'; items: avro.Type }
  | { type: 'map'; values: avro.Type }
  | { type: 'record'; name: string; fields: readonly FieldView[]; doc: string | undefined; kind: KindAnnotation | undefined }
  | { type: 'union'; branches: readonly avro.Type[]; wrapped: boolean; annotation: UnionAnnotation | undefined };

const PRIMITIVES: ReadonlySet<string> = new Set<Primitive>([
  'null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string',
]);

const annotations = new WeakMap<avro.Type, UnionAnnotation>();
const optionalFields = new WeakMap<avro.Type, ReadonlySet<string>>();
const quantityFields = new WeakMap<avro.Type, ReadonlySet<string>>();
const jsonNames = new WeakMap<avro.Type, ReadonlyMap<string, string>>();
const kinds = new WeakMap<avro.Type, KindAnnotation>();

/** Attaches a `logplane.union` annotation to the union type of a parsed field. */
export function annotateUnion(union: avro.Type, annotation: UnionAnnotation): void {
  annotations.set(union, annotation);
}

/** Marks a field of a parsed record type as carrying `"logplane.optional": true`. */
export function markOptional(record: avro.Type, field: string): void {
  optionalFields.set(record, new Set([...(optionalFields.get(record) ?? []), field]));
}

/** Marks a field of a parsed record type as carrying `"logplane.quantity": true`. */
export function markQuantity(record: avro.Type, field: string): void {
  quantityFields.set(record, new Set([...(quantityFields.get(record) ?? []), field]));
}

/** Records the `logplane.jsonName` of a field of a parsed record type. */
export function markJsonName(record: avro.Type, field: string, jsonName: string): void {
  jsonNames.set(record, new Map([...(jsonNames.get(record) ?? []), [field, jsonName]]));
}

/** Attaches a `logplane.kind` annotation to a parsed record type. */
export function annotateKind(record: avro.Type, kind: KindAnnotation): void {
  kinds.set(record, kind);
}

/** Classifies an avsc type; throws for Avro features logplane's schemas do not use. */
export function viewOf(type: avro.Type): TypeView {
  const typeName = type.typeName;
  if (PRIMITIVES.has(typeName)) {
    return { type: 'primitive', primitive: typeName as Primitive };
  }
  switch (typeName) {
    case 'enum':
      return { type: 'enum', name: nameOf(type), symbols: (type as avro.types.EnumType).symbols, doc: type.doc };
    case 'array':
      return { type: 'array', items: (type as avro.types.ArrayType).itemsType };
    case 'map':
      return { type: 'map', values: (type as avro.types.MapType).valuesType as avro.Type };
    case 'record':
      return {
        type: 'record',
        name: nameOf(type),
        doc: type.doc,
        kind: kinds.get(type),
        fields: (type as avro.types.RecordType).fields.map((field) => ({
          name: field.name,
          type: field.type,
          doc: (field as { doc?: string }).doc,
          optional: optionalFields.get(type)?.has(field.name) ?? false,
          jsonName: jsonNames.get(type)?.get(field.name) ?? field.name,
          quantity: quantityFields.get(type)?.has(field.name) ?? false,
        })),
      };
    case 'union:wrapped':
    case 'union:unwrapped':
      return {
        type: 'union',
        branches: (type as avro.types.WrappedUnionType).types,
        wrapped: typeName === 'union:wrapped',
        annotation: annotations.get(type),
      };
    default:
      throw new SchemaError(`unsupported Avro type in logplane schemas: ${typeName}`);
  }
}

/** The full name of a named type (e.g. `logplane.k8s.Pod`). */
function nameOf(type: avro.Type): string {
  if (type.name === undefined) {
    throw new SchemaError(`expected a named type, got ${type.typeName}`);
  }
  return type.name;
}

/** The name without its namespace (`Pod` for `logplane.k8s.Pod`). */
export function shortName(fullName: string): string {
  return fullName.slice(fullName.lastIndexOf('.') + 1);
}

/** The namespace of a full name (`logplane.k8s` for `logplane.k8s.Pod`). */
export function namespaceOf(fullName: string): string {
  const dot = fullName.lastIndexOf('.');
  return dot < 0 ? '' : fullName.slice(0, dot);
}

/** Whether a union has a `null` branch, i.e. the field is optional. */
export function isNullable(branches: readonly avro.Type[]): boolean {
  return branches.some((branch) => branch.typeName === 'null');
}
