/**
 * Maps the definitions of the Kubernetes OpenAPI document to Avro record schemas: every
 * property of every definition reachable from the given roots, optional (`["null", T]`,
 * default null) unless the definition lists it in `required`. The rules are in
 * `schemas/avro-draft/README.md`; `compat.ts` says which required fields must stay
 * optional so that events written by older schema versions resolve.
 */
import { SchemaError } from '../errors.ts';
import { JSON_NAME_ATTRIBUTE, JSON_VALUE_RECORD, KIND_ATTRIBUTE, QUANTITY_ATTRIBUTE } from '../schema-view.ts';
import { definitionOf, refName, type ApiDocument, type GroupVersionKind, type OpenApiSchema } from './openapi.ts';

/** An Avro schema as JSON: a type name, a union, or a complex type. */
export type AvroSchema = string | readonly AvroSchema[] | AvroRecord | AvroArray | AvroMap;

/** An Avro array schema. */
export interface AvroArray {
  readonly type: 'array';
  readonly items: AvroSchema;
}

/** An Avro map schema (string keys). */
export interface AvroMap {
  readonly type: 'map';
  readonly values: AvroSchema;
}

/** A field of an Avro record, with logplane's attributes. */
export interface AvroField {
  readonly name: string;
  readonly type: AvroSchema;
  readonly default?: null;
  readonly doc?: string;
  /** The JSON property name when it is not a valid Avro name (`$ref`, `x-kubernetes-…`). */
  readonly [JSON_NAME_ATTRIBUTE]?: string;
  /** The field holds Kubernetes quantities (itself, or its items or map values): stored in canonical form. */
  readonly [QUANTITY_ATTRIBUTE]?: true;
}

/** An Avro record schema, with logplane's attributes. */
export interface AvroRecord {
  readonly type: 'record';
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly doc?: string;
  /** On the record of a kind: its group, version and kind (the `kind` field itself is the union branch). */
  readonly [KIND_ATTRIBUTE]?: GroupVersionKind;
  readonly fields: readonly AvroField[];
}

/**
 * The one Avro type of every value that holds arbitrary JSON (RawExtension, FieldsV1,
 * apiextensions JSON, `x-kubernetes-preserve-unknown-fields`, objects without properties).
 */
export const JSON_VALUE = JSON_VALUE_RECORD;

/**
 * `{"value": null | boolean | long | double | string | [JsonValue] | {string: JsonValue}}`:
 * a record (Avro can only name records, and recursion needs a name) around a union. avsc
 * wraps the union (long and double are both JavaScript numbers), so in avsc's
 * representation `{"a": [1, 1.5]}` is `{value: {map: {a: {value: {array: [{value: {long: 1}},
 * {value: {double: 1.5}}]}}}}}`. Integers that are safe JavaScript integers are `long`,
 * every other number `double`. Outside `logplane.k8s`, so that a JSON null is kept as null.
 */
export const JSON_VALUE_SCHEMA: AvroRecord = {
  type: 'record',
  name: JSON_VALUE,
  doc: 'Any JSON value: null, a boolean, an integer (long), another number (double), a string, an array or an object.',
  fields: [
    {
      name: 'value',
      type: [
        'null',
        'boolean',
        'long',
        'double',
        'string',
        { type: 'array', items: 'JsonValue' },
        { type: 'map', values: 'JsonValue' },
      ],
    },
  ],
};

export { JSON_NAME_ATTRIBUTE, KIND_ATTRIBUTE, QUANTITY_ATTRIBUTE };

const QUANTITY_DEFINITION = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** Whether a property schema holds quantities: a Quantity, or an array or map of them. */
export function holdsQuantities(schema: OpenApiSchema): boolean {
  if (schema.$ref !== undefined) {
    return refName(schema.$ref) === QUANTITY_DEFINITION;
  }
  if (schema.items !== undefined) {
    return holdsQuantities(schema.items);
  }
  return typeof schema.additionalProperties === 'object' && holdsQuantities(schema.additionalProperties);
}


/** The Avro namespace prefix of every record generated from the API document. */
export const K8S_PREFIX = 'logplane.k8s';

/**
 * What the generator does differently from the plain rules so that old events resolve,
 * keyed by `definition#property` (fields) or definition name (aliases). `compat.ts`
 * derives it from the released versions.
 */
export interface Compatibility {
  /** Fields Kubernetes requires that are optional here, each with the reasons. */
  readonly optional: ReadonlyMap<string, readonly string[]>;
  /** Fields Kubernetes marks optional that are required here, because every released record wrote them. */
  readonly keptRequired: ReadonlyMap<string, readonly string[]>;
  /** Fields whose integers are `long` (not `int`) because an older version wrote longs. */
  readonly widenedToLong: ReadonlyMap<string, readonly string[]>;
  /** Older record names of a definition's record (Avro aliases). */
  readonly aliases: ReadonlyMap<string, readonly string[]>;
}

/** No adjustments: the plain mapping. */
export const NO_COMPATIBILITY: Compatibility = { optional: new Map(), keptRequired: new Map(), widenedToLong: new Map(), aliases: new Map() };

/** One generated schema file. */
export interface GeneratedFile {
  /** Relative to the version directory, e.g. `k8s/core/v1/PodSpec.avsc`. */
  readonly path: string;
  readonly schema: AvroRecord;
}

/** The records of a set of roots, in dependency order. */
export interface GeneratedObjects {
  /** `json/JsonValue.avsc` first (when used), then one file per definition or recursive group. */
  readonly files: readonly GeneratedFile[];
  /** The Avro full name of each root, in the order given. */
  readonly roots: readonly { readonly definition: string; readonly name: string; readonly gvk: GroupVersionKind }[];
}

/**
 * Record ids of kind definitions nested in another definition (StatefulSet's
 * `volumeClaimTemplates` are PersistentVolumeClaims): such a use gets a record of its own,
 * `Embedded<Kind>`, which keeps the `kind` field the kind's own record leaves to the union.
 */
const EMBEDDED = 'embedded:';

const definitionOfId = (id: string): string => (id.startsWith(EMBEDDED) ? id.slice(EMBEDDED.length) : id);

const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DEFINITION_MODULE = /^io\.k8s\.(?:api\.|[a-z0-9-]+\.pkg\.(?:apis\.)?)(.+)$/;

/**
 * The Avro full name of a definition: the module prefix is dropped and `logplane.k8s.`
 * put in its place, keeping group, version and name:
 * `io.k8s.api.core.v1.PodSpec` → `logplane.k8s.core.v1.PodSpec`,
 * `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` → `logplane.k8s.meta.v1.ObjectMeta`,
 * `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps` →
 * `logplane.k8s.apiextensions.v1.JSONSchemaProps`.
 */
export function avroNameOf(definition: string): string {
  const match = DEFINITION_MODULE.exec(definition);
  if (match === null) {
    throw new SchemaError(`definition ${definition} is not named io.k8s.api.… or io.k8s.<module>.pkg.…`);
  }
  const rest = match[1] as string;
  if (!rest.split('.').every((part) => AVRO_NAME.test(part))) {
    throw new SchemaError(`definition ${definition} does not map to a valid Avro name (${rest})`);
  }
  return `${K8S_PREFIX}.${rest}`;
}

/**
 * The Avro field name of a property: itself when valid, else every character outside
 * `[A-Za-z0-9_]` replaced by `_` (`$ref` → `_ref`, `x-kubernetes-list-type` →
 * `x_kubernetes_list_type`); the JSON name is kept in `logplane.jsonName`.
 */
export function avroFieldName(property: string): string {
  if (AVRO_NAME.test(property)) {
    return property;
  }
  const replaced = property.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(replaced) ? `_${replaced}` : replaced;
}

/** The record name of a kind nested in another definition: `logplane.k8s.core.v1.EmbeddedPersistentVolumeClaim`. */
export function embeddedNameOf(kindRecordName: string): string {
  const dot = kindRecordName.lastIndexOf('.');
  return `${kindRecordName.slice(0, dot)}.Embedded${kindRecordName.slice(dot + 1)}`;
}

/** The key of a property in a {@link Compatibility}: `definition#property`. */
export const fieldKey = (definition: string, property: string): string => `${definition}#${property}`;

/**
 * The Avro type of a schema that is not a record: the primitive (or int-or-string
 * union) it maps to, or `JSON_VALUE`; undefined for a reference to a definition with
 * properties, an array or a map (the caller follows those).
 */
export function scalarTypeOf(schema: OpenApiSchema): AvroSchema | undefined {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
    return JSON_VALUE;
  }
  if (schema.$ref !== undefined || schema.type === 'array') {
    return undefined;
  }
  if (schema.allOf !== undefined || schema.oneOf !== undefined || schema.anyOf !== undefined) {
    throw new SchemaError(`allOf/oneOf/anyOf are not mapped (${JSON.stringify(schema).slice(0, 120)})`);
  }
  switch (schema.type) {
    case 'string':
      // byte: base64 text, as in kube JSON; date-time (Time, MicroTime): RFC 3339 text.
      return schema.format === 'int-or-string' ? ['long', 'string'] : 'string';
    case 'integer':
      return schema.format === 'int32' ? 'int' : 'long';
    case 'number':
      return 'double';
    case 'boolean':
      return 'boolean';
    case 'object':
      return schema.properties === undefined && schema.additionalProperties === undefined ? JSON_VALUE : undefined;
    case undefined:
      return schema.properties === undefined ? JSON_VALUE : undefined;
    default:
      throw new SchemaError(`unknown OpenAPI type ${schema.type}`);
  }
}

/** Whether a definition becomes a record (it has properties and does not keep unknown fields). */
export function isRecordDefinition(definition: OpenApiSchema): boolean {
  return definition.properties !== undefined && definition['x-kubernetes-preserve-unknown-fields'] !== true;
}

/**
 * Generates the records of every definition reachable from `roots` (kind definitions:
 * their `kind` property is left out, since the union branch names the kind). Files come
 * in dependency order; the definitions of one reference cycle share a file, the first
 * defining the others inline where it first meets them.
 */
export function generateObjectSchemas(
  document: ApiDocument,
  roots: readonly string[],
  compatibility: Compatibility = NO_COMPATIBILITY,
): GeneratedObjects {
  const rootSet = new Set(roots);
  const records = new Set<string>();
  const edges = new Map<string, string[]>();
  const collect = (definition: string): void => {
    if (edges.has(definition)) {
      return;
    }
    const targets: string[] = [];
    edges.set(definition, targets);
    records.add(definition);
    for (const property of Object.values(definitionOf(document, definitionOfId(definition)).properties ?? {})) {
      for (const target of referencedRecords(document, property)) {
        targets.push(rootSet.has(target) ? `${EMBEDDED}${target}` : target);
      }
    }
    for (const target of targets) {
      collect(target);
    }
  };
  for (const root of roots) {
    if (!isRecordDefinition(definitionOf(document, root))) {
      throw new SchemaError(`root ${root} has no properties`);
    }
    collect(root);
  }

  const defined = new Set<string>();
  let usesJson = false;
  const names = new Map<string, string>();
  const nameOf = (id: string): string => {
    const name = names.get(id) ?? (id.startsWith(EMBEDDED) ? embeddedNameOf(avroNameOf(definitionOfId(id))) : avroNameOf(id));
    names.set(id, name);
    return name;
  };
  const clash = new Map<string, string>();
  for (const definition of records) {
    const name = nameOf(definition);
    const other = clash.get(name);
    if (other !== undefined) {
      throw new SchemaError(`${definition} and ${other} both map to the Avro name ${name}`);
    }
    clash.set(name, definition);
  }

  const typeOf = (schema: OpenApiSchema, where: string): AvroSchema => {
    const scalar = scalarTypeOf(schema);
    if (scalar !== undefined) {
      usesJson ||= scalar === JSON_VALUE;
      return scalar;
    }
    if (schema.$ref !== undefined) {
      const target = refName(schema.$ref);
      const definition = definitionOf(document, target);
      if (!isRecordDefinition(definition)) {
        return typeOf(definition, target);
      }
      const id = rootSet.has(target) ? `${EMBEDDED}${target}` : target;
      return defined.has(id) ? nameOf(id) : recordOf(id);
    }
    if (schema.type === 'array') {
      if (schema.items === undefined) {
        throw new SchemaError(`${where}: an array without items`);
      }
      return { type: 'array', items: typeOf(schema.items, `${where}[]`) };
    }
    if (schema.type === 'object' && schema.additionalProperties !== undefined) {
      const values = schema.additionalProperties === true ? {} : schema.additionalProperties;
      if (values === false) {
        throw new SchemaError(`${where}: additionalProperties: false without properties`);
      }
      return { type: 'map', values: typeOf(values, `${where}{}`) };
    }
    throw new SchemaError(`${where}: an inline object schema with properties is not mapped; use a definition`);
  };

  const recordOf = (id: string): AvroRecord => {
    defined.add(id);
    const definition = definitionOfId(id);
    const schema = definitionOf(document, definition);
    const required = new Set(schema.required ?? []);
    const isRoot = id === definition && rootSet.has(definition);
    const fieldNames = new Set<string>();
    const fields = Object.entries(schema.properties ?? {})
      .filter(([property]) => !(isRoot && property === 'kind'))
      .map(([property, propertySchema]): AvroField => {
        const name = avroFieldName(property);
        if (fieldNames.has(name)) {
          throw new SchemaError(`${definition}: two properties map to the Avro field ${name}`);
        }
        fieldNames.add(name);
        const key = fieldKey(definition, property);
        let type = typeOf(propertySchema, key);
        if (compatibility.widenedToLong.has(key)) {
          type = widenToLong(type);
        }
        // A stored object always has metadata (its key is built from metadata.name) and its apiVersion.
        const keptRequired = compatibility.keptRequired.has(key) || (isRoot && (property === 'metadata' || property === 'apiVersion'));
        const optional = (!required.has(property) && !keptRequired) || compatibility.optional.has(key);
        const doc = firstParagraph(propertySchema.description);
        return {
          name,
          type: optional ? nullable(type) : type,
          ...(optional ? { default: null } : {}),
          ...(doc === undefined ? {} : { doc }),
          ...(name === property ? {} : { [JSON_NAME_ATTRIBUTE]: property }),
          ...(holdsQuantities(propertySchema) ? { [QUANTITY_ATTRIBUTE]: true as const } : {}),
        };
      });
    const aliases = isRoot || !rootSet.has(definition) ? compatibility.aliases.get(definition) : undefined;
    const doc = firstParagraph(schema.description);
    return {
      type: 'record',
      name: nameOf(id),
      ...(aliases === undefined || aliases.length === 0 ? {} : { aliases }),
      ...(doc === undefined ? {} : { doc }),
      ...(isRoot ? { [KIND_ATTRIBUTE]: gvkOf(definition, schema) } : {}),
      fields,
    };
  };

  const files: GeneratedFile[] = [];
  for (const component of stronglyConnected(roots, edges)) {
    const [first] = component;
    if (first === undefined || defined.has(first)) {
      continue;
    }
    const schema = recordOf(first);
    const missing = component.filter((member) => !defined.has(member));
    if (missing.length > 0) {
      throw new SchemaError(`${missing.join(', ')} of the cycle through ${first} were not defined by its file`);
    }
    files.push({ path: `k8s/${schema.name.slice(K8S_PREFIX.length + 1).split('.').join('/')}.avsc`, schema });
  }
  return {
    files: usesJson ? [{ path: 'json/JsonValue.avsc', schema: JSON_VALUE_SCHEMA }, ...files] : files,
    roots: roots.map((definition) => ({ definition, name: nameOf(definition), gvk: gvkOf(definition, definitionOf(document, definition)) })),
  };
}

function gvkOf(definition: string, schema: OpenApiSchema): GroupVersionKind {
  const gvks = schema['x-kubernetes-group-version-kind'] ?? [];
  const [gvk] = gvks;
  if (gvk === undefined || gvks.length !== 1) {
    throw new SchemaError(`kind definition ${definition} has ${gvks.length} x-kubernetes-group-version-kind entries, expected 1`);
  }
  return { group: gvk.group, version: gvk.version, kind: gvk.kind };
}

/** The record definitions a property schema refers to (through arrays and maps). */
function referencedRecords(document: ApiDocument, schema: OpenApiSchema): string[] {
  if (schema.$ref !== undefined) {
    const target = refName(schema.$ref);
    return isRecordDefinition(definitionOf(document, target)) ? [target] : [];
  }
  if (scalarTypeOf(schema) !== undefined) {
    return [];
  }
  const nested = schema.items ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
  return nested === undefined ? [] : referencedRecords(document, nested);
}

/**
 * Tarjan's strongly connected components, visiting roots and edges in order: each
 * component comes after every component it refers to, so referenced names are defined
 * first; a component's first member is the one first reached.
 */
function stronglyConnected(roots: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      // The member reached first (the component's root, popped last) defines the others.
      components.push(component.reverse());
    }
  };
  for (const root of roots) {
    if (!index.has(root)) {
      visit(root);
    }
  }
  return components;
}

function nullable(type: AvroSchema): AvroSchema {
  return Array.isArray(type) ? ['null', ...(type as readonly AvroSchema[])] : ['null', type];
}

function widenToLong(type: AvroSchema): AvroSchema {
  if (type === 'int') {
    return 'long';
  }
  if (Array.isArray(type)) {
    return (type as readonly AvroSchema[]).map(widenToLong);
  }
  if (typeof type === 'object' && 'type' in type && type.type === 'array') {
    return { type: 'array', items: widenToLong(type.items) };
  }
  if (typeof type === 'object' && 'type' in type && type.type === 'map') {
    return { type: 'map', values: widenToLong(type.values) };
  }
  return type;
}

/** The first paragraph of a description, as the field's or record's Avro doc. */
function firstParagraph(description: string | undefined): string | undefined {
  const paragraph = description?.split('\n\n')[0]?.trim();
  return paragraph === undefined || paragraph === '' ? undefined : paragraph;
}
