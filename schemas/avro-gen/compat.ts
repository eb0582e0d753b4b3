/**
 * What the generated records must keep so that every event written by a released
 * version (`schemas/avro/v1`…) resolves to them (Avro schema resolution, reader = the
 * generated schema). The released object records are walked beside the Kubernetes
 * definitions they were written after, starting from the kinds of the `KubeObject` union,
 * and each mismatch becomes a rule of a {@link Compatibility}:
 *
 * - a field that is nullable in a released record, or missing from it, but required by
 *   Kubernetes stays optional (`["null", T]`, default null): a null or missing value
 *   could not be read into a required field;
 * - an integer a released record wrote as `long` where Kubernetes says int32 is `long`
 *   (Avro cannot narrow);
 * - a field that every released record read into a definition writes as non-null stays
 *   required even where Kubernetes marks it optional (`spec` of a Pod: kube's Go struct
 *   is a value, always serialized, and logplane's types have always relied on it);
 * - every released record name becomes an alias of the record it is read into
 *   (`logplane.k8s.Pod` of `logplane.k8s.core.v1.Pod`, `logplane.k8s.PodTemplateMetadata`
 *   of `logplane.k8s.meta.v1.ObjectMeta`).
 *
 * Anything else (a released field Kubernetes does not have, an enum or a record where
 * Kubernetes has a string) cannot be fixed by the generator and fails it.
 */
import type avro from 'avsc';
import { SchemaError } from '../errors.ts';
import type { KindDescriptor } from '../kinds/descriptor.ts';
import type { SchemaVersion } from '../registry.ts';
import { isNullable, shortName, viewOf } from '../schema-view.ts';
import { avroNameOf, embeddedNameOf, fieldKey, isRecordDefinition, JSON_VALUE, scalarTypeOf, type AvroSchema, type Compatibility } from './generate.ts';
import { definitionOf, refName, type ApiDocument, type OpenApiSchema } from './openapi.ts';

/** A {@link Compatibility}, and the definition each released `logplane.k8s` record was read into. */
export interface CompatibilityAnalysis extends Compatibility {
  /** Released record full name → definition name. */
  readonly definitions: ReadonlyMap<string, string>;
}

/** The `logplane.union` name of the union of objects in released envelopes. */
const KUBE_OBJECT = 'KubeObject';

/**
 * Walks every released version's `KubeObject` union beside the Kubernetes definitions of
 * its kinds (found among `kinds` by record short name). Throws a `SchemaError` listing
 * every mismatch the generator cannot resolve.
 */
export function analyzeCompatibility(
  document: ApiDocument,
  versions: readonly SchemaVersion[],
  kinds: readonly KindDescriptor[],
): CompatibilityAnalysis {
  const optional = new Map<string, Map<string, string[]>>();
  const widenedToLong = new Map<string, Map<string, string[]>>();
  const aliases = new Map<string, Set<string>>();
  const definitions = new Map<string, string>();
  /** Per definition, the fields each released record paired with it writes as non-null. */
  const nonNullWritten = new Map<string, Set<string>[]>();
  const problems: string[] = [];
  /** Records a rule for `key` and why (`reason`, e.g. `… is nullable`), with the versions it holds for. */
  const note = (rules: Map<string, Map<string, string[]>>, key: string, reason: string, version: string): void => {
    const reasons = rules.get(key) ?? new Map<string, string[]>();
    reasons.set(reason, [...(reasons.get(reason) ?? []), version]);
    rules.set(key, reasons);
  };
  const summarize = (rules: Map<string, Map<string, string[]>>): Map<string, string[]> =>
    new Map([...rules].map(([key, reasons]) => [key, [...reasons].map(([reason, versions]) => `${reason} in ${versions.join(', ')}`)]));

  for (const version of versions) {
    const seen = new Set<string>();
    const pairRecord = (record: avro.Type, definition: string): void => {
      const recordName = record.name as string;
      const pair = `${recordName}|${definition}`;
      if (seen.has(pair)) {
        return;
      }
      seen.add(pair);
      const previous = definitions.get(recordName);
      if (previous !== undefined && previous !== definition) {
        problems.push(`${version.name}: ${recordName} is read as both ${previous} and ${definition}`);
      }
      definitions.set(recordName, definition);
      // A generated version's `Embedded<Kind>` has its namesake in every later one: no alias.
      if (recordName !== avroNameOf(definition) && recordName !== embeddedNameOf(avroNameOf(definition))) {
        aliases.set(definition, (aliases.get(definition) ?? new Set()).add(recordName));
      }
      const schema = definitionOf(document, definition);
      const view = viewOf(record);
      if (view.type !== 'record') {
        return;
      }
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const nonNull = new Set<string>();
      nonNullWritten.set(definition, [...(nonNullWritten.get(definition) ?? []), nonNull]);
      // A field is paired with the property of its JSON name (`_ref` was written for `$ref`).
      for (const field of view.fields) {
        const property = properties[field.jsonName];
        const where = `${version.name}: ${recordName}.${field.name}`;
        if (property === undefined) {
          problems.push(`${where} has no property in ${definition}`);
          continue;
        }
        const fieldView = viewOf(field.type);
        const nullable = fieldView.type === 'union' && isNullable(fieldView.branches);
        if (!nullable) {
          nonNull.add(field.jsonName);
        }
        if (nullable && required.has(field.jsonName)) {
          note(optional, fieldKey(definition, field.jsonName), `\`${recordName}.${field.name}\` is nullable`, version.name);
        }
        pairType(field.type, property, fieldKey(definition, field.jsonName), where);
      }
      const written = new Set(view.fields.map((field) => field.jsonName));
      for (const property of required) {
        if (!written.has(property) && property !== 'kind') {
          note(optional, fieldKey(definition, property), `\`${recordName}\` has no ${property}`, version.name);
        }
      }
    };

    const pairType = (type: avro.Type, schema: OpenApiSchema, key: string, where: string): void => {
      const view = viewOf(type);
      if (view.type === 'union' && !view.wrapped) {
        for (const branch of view.branches) {
          if (branch.typeName !== 'null') {
            pairType(branch, schema, key, where);
          }
        }
        return;
      }
      if (schema.$ref !== undefined) {
        const target = refName(schema.$ref);
        const definition = definitionOf(document, target);
        if (isRecordDefinition(definition)) {
          if (view.type === 'record') {
            pairRecord(type, target);
          } else {
            problems.push(`${where}: ${type.typeName} where Kubernetes has the object ${target}`);
          }
          return;
        }
        pairType(type, definition, key, where);
        return;
      }
      const scalar = scalarTypeOf(schema);
      // A version generated earlier wrote JSON values as the JSON value record itself.
      if (scalar === JSON_VALUE && view.type === 'record' && type.name === JSON_VALUE) {
        return;
      }
      switch (view.type) {
        case 'array':
          if (schema.type === 'array' && schema.items !== undefined) {
            pairType(view.items, schema.items, key, `${where}[]`);
          } else {
            problems.push(`${where}: an array where Kubernetes has ${describe(schema)}`);
          }
          return;
        case 'map':
          if (scalar === undefined && typeof schema.additionalProperties === 'object') {
            pairType(view.values, schema.additionalProperties, key, `${where}{}`);
          } else {
            problems.push(`${where}: a map where Kubernetes has ${describe(schema)}`);
          }
          return;
        case 'primitive': {
          const targets = scalar === undefined ? [] : Array.isArray(scalar) ? (scalar as readonly AvroSchema[]) : [scalar];
          if (targets.some((target) => promotes(view.primitive, target))) {
            return;
          }
          if (view.primitive === 'long' && targets.includes('int')) {
            note(widenedToLong, key, `\`${where.slice(where.indexOf(' ') + 1)}\` is a long`, version.name);
            return;
          }
          problems.push(`${where}: ${view.primitive} where Kubernetes has ${describe(schema)}`);
          return;
        }
        default:
          problems.push(`${where}: ${view.type} where Kubernetes has ${describe(schema)}`);
      }
    };

    for (const union of kubeObjectUnions(version.type)) {
      for (const branch of union) {
        const recordName = branch.name as string;
        const kind = shortName(recordName);
        const matches = kinds.filter((descriptor) => descriptor.kind === kind);
        const [descriptor] = matches;
        if (descriptor === undefined || matches.length !== 1) {
          problems.push(`${version.name}: the KubeObject branch ${recordName} names ${matches.length} kinds`);
          continue;
        }
        pairRecord(branch, descriptor.definition);
      }
    }
  }
  if (problems.length > 0) {
    throw new SchemaError(`the released schemas cannot be resolved to the generated ones:\n  ${problems.join('\n  ')}`);
  }
  const keptRequired = new Map<string, string[]>();
  for (const [definition, written] of nonNullWritten) {
    const [first, ...others] = written;
    const required = new Set(definitionOf(document, definition).required ?? []);
    for (const field of first ?? []) {
      if (!required.has(field) && others.every((fields) => fields.has(field))) {
        keptRequired.set(fieldKey(definition, field), [`non-null in every released record read into ${definition}`]);
      }
    }
  }
  return {
    optional: summarize(optional),
    keptRequired,
    widenedToLong: summarize(widenedToLong),
    aliases: new Map([...aliases].map(([definition, names]) => [definition, [...names].sort()])),
    definitions,
  };
}

/** The branches of every `KubeObject`-annotated union reachable from an envelope. */
function kubeObjectUnions(root: avro.Type): (readonly avro.Type[])[] {
  const found: (readonly avro.Type[])[] = [];
  const visited = new Set<avro.Type>();
  const visit = (type: avro.Type): void => {
    if (visited.has(type)) {
      return;
    }
    visited.add(type);
    const view = viewOf(type);
    switch (view.type) {
      case 'record':
        view.fields.forEach((field) => visit(field.type));
        return;
      case 'union':
        if (view.annotation?.name === KUBE_OBJECT) {
          found.push(view.branches);
          return;
        }
        view.branches.forEach(visit);
        return;
      case 'array':
        visit(view.items);
        return;
      case 'map':
        visit(view.values);
        return;
      default:
        return;
    }
  };
  visit(root);
  return found;
}

/** Whether Avro resolves a written primitive to `target` (same type or a promotion). */
function promotes(written: string, target: AvroSchema): boolean {
  if (written === target) {
    return true;
  }
  switch (written) {
    case 'int':
      return target === 'long' || target === 'double';
    case 'long':
      return target === 'double';
    case 'string':
      return target === 'bytes';
    default:
      return false;
  }
}

function describe(schema: OpenApiSchema): string {
  if (scalarTypeOf(schema) === JSON_VALUE) {
    return 'a JSON value';
  }
  return [schema.type ?? 'untyped', schema.format].filter((part) => part !== undefined).join('/');
}
