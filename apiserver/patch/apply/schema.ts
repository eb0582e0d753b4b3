/**
 * The merge schema of every kind, derived from the vendored Kubernetes 1.32 API document
 * as kube-openapi's `schemaconv` derives structured-merge-diff's schema from it:
 * - `x-kubernetes-list-type`: `atomic` (replaced whole), `set` (scalars merged by value),
 *   `map` (items merged by `x-kubernetes-list-map-keys`); without it a list with
 *   `x-kubernetes-patch-strategy: merge` merges by `x-kubernetes-patch-merge-key` (a set
 *   without one), and any other list is atomic;
 * - `x-kubernetes-map-type`: `atomic` maps and structs are replaced whole, `granular`
 *   (the default) ones merge field by field;
 * - `x-kubernetes-preserve-unknown-fields`, RawExtension and untyped definitions are
 *   "deduced": maps merge by field, lists are atomic.
 * Types are built once per definition, on first use, and shared.
 */
import { vendoredApiDocument, refName, type ApiDocument, type OpenApiSchema } from '../../../schemas/avro-gen/openapi.ts';
import type { Json } from '../json.ts';

/** How an associative list identifies its items. */
export type ListRelationship = 'atomic' | 'set' | 'map';

/** One node of the merge schema. */
export type MergeType =
  | { readonly type: 'scalar' }
  | {
      readonly type: 'struct';
      /** The declared fields, resolved on first use. */
      readonly field: (name: string) => MergeType | undefined;
      /** The type of undeclared fields (`x-kubernetes-preserve-unknown-fields`), else none. */
      readonly extra: MergeType | undefined;
      readonly atomic: boolean;
    }
  | { readonly type: 'map'; readonly values: () => MergeType; readonly atomic: boolean }
  | {
      readonly type: 'list';
      readonly items: () => MergeType;
      readonly relationship: ListRelationship;
      readonly keys: readonly string[];
      /** Values of key fields an item may omit (`protocol` defaults to "TCP"). */
      readonly keyDefaults: Readonly<Record<string, Json>>;
    }
  /** Any JSON: maps merge by field, lists are atomic (SMD's `__untyped_deduced_`). */
  | { readonly type: 'deduced' };

const SCALAR: MergeType = { type: 'scalar' };
const DEDUCED: MergeType = { type: 'deduced' };

type Extensions = OpenApiSchema & {
  readonly 'x-kubernetes-list-type'?: string;
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: string;
  readonly 'x-kubernetes-patch-strategy'?: string;
  readonly 'x-kubernetes-patch-merge-key'?: string;
  readonly default?: Json;
};

/**
 * The default of a list-map key field: the schema's `default`, else the one its
 * description states (`Defaults to "TCP".`, `Default is TCP.`), which the v2 document
 * carries only in words while kube-apiserver reads it from its v3 document.
 */
const keyDefaultOf = (schema: Extensions | undefined): Json => {
  if (!schema) return undefined;
  if (schema.default !== undefined) return schema.default;
  const stated = /Defaults? (?:to|is) "?([A-Za-z0-9_.-]+?)"?\.(?:\s|$)/.exec(schema.description ?? '');
  return stated ? stated[1] : undefined;
};

/** Builds the merge types of one API document. */
export const createMergeSchema = (document: ApiDocument) => {
  const byDefinition = new Map<string, MergeType>();

  const definition = (name: string): MergeType => {
    let found = byDefinition.get(name);
    if (!found) {
      const schema = document.definitions[name];
      found = schema === undefined ? DEDUCED : typeOf(schema);
      byDefinition.set(name, found);
    }
    return found;
  };

  const resolveSchema = (schema: OpenApiSchema): OpenApiSchema => {
    if (schema.$ref) return document.definitions[refName(schema.$ref)] ?? {};
    const ref = schema.allOf?.find((s) => s.$ref)?.$ref;
    return ref ? (document.definitions[refName(ref)] ?? {}) : schema;
  };

  const lazy = (schema: OpenApiSchema): (() => MergeType) => {
    let memo: MergeType | undefined;
    return () => (memo ??= typeOf(schema));
  };

  const typeOf = (schema: Extensions): MergeType => {
    if (schema.$ref) return definition(refName(schema.$ref));
    const ref = schema.allOf?.find((s) => s.$ref)?.$ref;
    if (ref) return definition(refName(ref));
    if (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties) return DEDUCED;
    const atomicMap = schema['x-kubernetes-map-type'] === 'atomic';
    if (schema.type === 'array') {
      const items = schema.items ?? {};
      const listType = schema['x-kubernetes-list-type'];
      const mergeKey = schema['x-kubernetes-patch-merge-key'];
      const merges = (schema['x-kubernetes-patch-strategy'] ?? '').split(',').includes('merge');
      const relationship: ListRelationship =
        listType === 'map' || listType === 'set' || listType === 'atomic' ? listType : merges ? (mergeKey ? 'map' : 'set') : 'atomic';
      const keys = relationship === 'map' ? (schema['x-kubernetes-list-map-keys'] ?? (mergeKey ? [mergeKey] : [])) : [];
      const itemSchema = resolveSchema(items) as Extensions;
      const keyDefaults: Record<string, Json> = {};
      for (const key of keys) {
        const value = keyDefaultOf(itemSchema.properties?.[key] as Extensions | undefined);
        if (value !== undefined) keyDefaults[key] = value;
      }
      return { type: 'list', items: lazy(items), relationship, keys, keyDefaults };
    }
    if (schema.properties) {
      const properties = schema.properties;
      const fields = new Map<string, () => MergeType>(Object.entries(properties).map(([name, s]) => [name, lazy(s)]));
      return {
        type: 'struct',
        field: (name) => (Object.hasOwn(properties, name) ? fields.get(name)!() : undefined),
        extra: schema['x-kubernetes-preserve-unknown-fields'] ? DEDUCED : undefined,
        atomic: atomicMap,
      };
    }
    if (typeof schema.additionalProperties === 'object') {
      return { type: 'map', values: lazy(schema.additionalProperties), atomic: atomicMap };
    }
    if (schema.type === 'object' || schema.type === undefined) return DEDUCED;
    return SCALAR;
  };

  return {
    /** The merge type of a definition (`io.k8s.api.apps.v1.Deployment`). */
    definition,
    /** The merge type of a schema whose `$ref`s name this document's definitions. */
    schema: typeOf,
  };
};

let vendored: ReturnType<typeof createMergeSchema> | undefined;

/**
 * Builds the merge types of the vendored API document now (~0.3 s: the 3.3 MB document parsed
 * and walked), as kube-apiserver builds its OpenAPI models at start, instead of in the first
 * write that records managedFields.
 */
export const prepareMergeSchema = (): void => {
  vendored ??= createMergeSchema(vendoredApiDocument());
};

/** The merge type of a definition of the vendored 1.32 API document. */
export const mergeTypeOf = (definitionName: string): MergeType => {
  vendored ??= createMergeSchema(vendoredApiDocument());
  return vendored.definition(definitionName);
};

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const byCustomSchema = new WeakMap<object, MergeType>();

/**
 * The merge type of a custom resource's objects from its CRD version's `openAPIV3Schema`, as
 * apiextensions-apiserver builds its type converter (the CRD's OpenAPI: the schema's own
 * properties, `apiVersion` and `kind` strings, and `metadata` as ObjectMeta whatever the
 * schema says of it). Built once per schema object.
 */
export const customMergeType = (openAPIV3Schema: OpenApiSchema): MergeType => {
  let found = byCustomSchema.get(openAPIV3Schema);
  if (found === undefined) {
    vendored ??= createMergeSchema(vendoredApiDocument());
    found = vendored.schema({
      ...openAPIV3Schema,
      type: 'object',
      properties: {
        ...openAPIV3Schema.properties,
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { $ref: `#/definitions/${OBJECT_META}` },
      },
    });
    byCustomSchema.set(openAPIV3Schema, found);
  }
  return found;
};
