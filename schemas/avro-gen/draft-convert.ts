/**
 * Kubernetes JSON ↔ avsc values for the generated draft, driven by the parsed avsc types
 * (not by the OpenAPI mapping that produced them): what `convert.ts` will have to do once
 * the draft is the current version. Beyond `convert.ts` it handles
 *
 * - `logplane.json.JsonValue`: any JSON value ↔ `{value: {long: 1}}`, `{value: {map: …}}` …;
 * - every `logplane.k8s.*` namespace (not only `logplane.k8s`): nulls are absent;
 * - fields renamed for Avro (`logplane.jsonName`: `$ref` ↔ `_ref`);
 * - kind unions whose branches share a kind name (core/v1 and events.k8s.io/v1 Event):
 *   the branch is the one whose group is `apiVersion`'s.
 *
 * Written for the draft's tests and measurements, as plain closures (convert.ts compiles
 * straight-line code per record, which a replay needs).
 */
import { readFileSync } from 'node:fs';
import type avro from 'avsc';
import { assertNever } from '../assert-never.ts';
import { SchemaError } from '../errors.ts';
import { loadSchemaVersion, type SchemaVersion } from '../registry.ts';
import { shortName, viewOf } from '../schema-view.ts';
import { JSON_NAME_ATTRIBUTE, JSON_VALUE, K8S_PREFIX, KIND_ATTRIBUTE } from './generate.ts';
import type { GroupVersionKind } from './openapi.ts';

/** Maps one value between the avsc representation and Kubernetes JSON. */
export type Convert = (value: unknown) => unknown;

/** The attributes of generated records that avsc does not keep on its types. */
export interface DraftAttributes {
  /** The group/version/kind of each kind record, by record full name. */
  readonly kinds: ReadonlyMap<string, GroupVersionKind>;
  /** Per record full name: Avro field name → JSON property name, for renamed fields. */
  readonly jsonNames: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

/** A loaded draft version, with the attributes avsc does not keep. */
export interface DraftVersion extends DraftAttributes {
  readonly version: SchemaVersion;
}

type Plain = Record<string, unknown>;

/** Loads a version directory and reads its `logplane.kind` and `logplane.jsonName` attributes. */
export function loadDraftVersion(dir: URL, name: string): DraftVersion {
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { files: string[] };
  const schemas = manifest.files.map((file) => JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as unknown);
  return { version: loadSchemaVersion(dir, name), ...readAttributes(schemas) };
}

/** Collects the `logplane.kind` and `logplane.jsonName` attributes of schemas (as JSON). */
export function readAttributes(schemas: readonly unknown[]): DraftAttributes {
  const kinds = new Map<string, GroupVersionKind>();
  const jsonNames = new Map<string, Map<string, string>>();
  const visit = (schema: unknown, namespace: string | undefined): void => {
    if (Array.isArray(schema)) {
      schema.forEach((branch) => visit(branch, namespace));
      return;
    }
    if (typeof schema !== 'object' || schema === null) {
      return;
    }
    const object = schema as Plain;
    if (object.type === 'array') {
      visit(object.items, namespace);
    } else if (object.type === 'map') {
      visit(object.values, namespace);
    } else if (object.type === 'record' && typeof object.name === 'string') {
      const ns = object.name.includes('.') ? object.name.slice(0, object.name.lastIndexOf('.')) : (object.namespace as string | undefined) ?? namespace;
      const fullName = object.name.includes('.') || ns === undefined ? object.name : `${ns}.${object.name}`;
      const gvk = object[KIND_ATTRIBUTE] as GroupVersionKind | undefined;
      if (gvk !== undefined) {
        kinds.set(fullName, gvk);
      }
      for (const field of object.fields as Plain[]) {
        const jsonName = field[JSON_NAME_ATTRIBUTE];
        if (typeof jsonName === 'string') {
          jsonNames.set(fullName, (jsonNames.get(fullName) ?? new Map()).set(field.name as string, jsonName));
        }
        visit(field.type, ns);
      }
    }
  };
  schemas.forEach((schema) => visit(schema, undefined));
  return { kinds, jsonNames };
}

/** The JsonValue conversions are convert.ts's (one implementation for the codec and this second reader). */
export { jsonFromAvro, jsonToAvro } from '../convert.ts';
import { jsonFromAvro, jsonToAvro } from '../convert.ts';

const isK8s = (name: string | undefined): boolean => name !== undefined && name.startsWith(`${K8S_PREFIX}.`);
const groupOf = (apiVersion: unknown): string | undefined =>
  typeof apiVersion === 'string' ? (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '') : undefined;

/** The converters of a draft: avsc value → Kubernetes JSON (`fromAvro`) and back (`toAvro`). */
export function compileDraftConverters(draft: DraftAttributes, root: avro.Type): { fromAvro: Convert; toAvro: Convert } {
  const discriminantOf = (branch: avro.Type): string => draft.kinds.get(branch.name as string)?.kind ?? shortName(branch.name as string);
  const fromCache = new Map<avro.Type, Convert>();
  const toCache = new Map<avro.Type, Convert>();

  const from = (type: avro.Type): Convert => {
    const cached = fromCache.get(type);
    if (cached !== undefined) {
      return cached;
    }
    let convert: Convert = (value) => value;
    fromCache.set(type, (value) => convert(value));
    convert = fromUncached(type);
    fromCache.set(type, convert);
    return convert;
  };
  const fromUncached = (type: avro.Type): Convert => {
    if (type.name === JSON_VALUE) {
      return jsonFromAvro;
    }
    const view = viewOf(type);
    switch (view.type) {
      case 'primitive':
      case 'enum':
        return (value) => value;
      case 'array': {
        const item = from(view.items);
        return (value) => (value as unknown[]).map(item);
      }
      case 'map': {
        const entry = from(view.values);
        return (value) => Object.fromEntries(Object.entries(value as Plain).map(([key, inner]) => [key, entry(inner)]));
      }
      case 'record': {
        const omitNull = isK8s(view.name);
        const renamed = draft.jsonNames.get(view.name);
        const fields = view.fields.map((field) => ({
          name: field.name,
          json: renamed?.get(field.name) ?? field.name,
          convert: from(field.type),
          omitNull: omitNull || field.optional,
        }));
        return (value) => {
          const out: Plain = {};
          for (const field of fields) {
            const inner = (value as Plain)[field.name];
            if (inner === null || inner === undefined) {
              if (!field.omitNull) {
                out[field.json] = null;
              }
            } else {
              out[field.json] = field.convert(inner);
            }
          }
          return out;
        };
      }
      case 'union': {
        if (!view.wrapped) {
          const complex = view.branches.filter((branch) => !['primitive', 'enum'].includes(viewOf(branch).type));
          const [only] = complex;
          if (only === undefined) {
            return (value) => value;
          }
          const convert = from(only);
          return (value) => (typeof value === 'object' && value !== null ? convert(value) : value);
        }
        const { annotation } = view;
        if (annotation === undefined) {
          throw new SchemaError(`wrapped union without a logplane.union annotation: ${view.branches.map((b) => b.branchName).join(', ')}`);
        }
        const branches = new Map(view.branches.map((branch) => [branch.branchName as string, { convert: from(branch), discriminant: discriminantOf(branch) }]));
        return (value) => {
          const [branchName, inner] = Object.entries(value as Plain)[0] as [string, unknown];
          const branch = branches.get(branchName);
          if (branch === undefined) {
            throw new SchemaError(`unknown union branch ${branchName}`);
          }
          return { [annotation.discriminator]: branch.discriminant, ...(branch.convert(inner) as Plain) };
        };
      }
      default:
        return assertNever(view, 'Avro type view');
    }
  };

  const to = (type: avro.Type): Convert => {
    const cached = toCache.get(type);
    if (cached !== undefined) {
      return cached;
    }
    let convert: Convert = (value) => value;
    toCache.set(type, (value) => convert(value));
    convert = toUncached(type);
    toCache.set(type, convert);
    return convert;
  };
  const toUncached = (type: avro.Type): Convert => {
    if (type.name === JSON_VALUE) {
      return jsonToAvro;
    }
    const view = viewOf(type);
    switch (view.type) {
      case 'primitive':
      case 'enum':
        return (value) => value;
      case 'array': {
        const item = to(view.items);
        return (value) => (Array.isArray(value) ? value.map(item) : value);
      }
      case 'map': {
        const entry = to(view.values);
        return (value) => (isPlain(value) ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, entry(inner)])) : value);
      }
      case 'record': {
        const renamed = draft.jsonNames.get(view.name);
        const fields = view.fields.map((field) => ({ name: field.name, json: renamed?.get(field.name) ?? field.name, convert: to(field.type) }));
        const known = new Set(fields.map((field) => field.json));
        return (value) => {
          if (!isPlain(value)) {
            return value;
          }
          const unknown = Object.keys(value).filter((key) => !known.has(key));
          if (unknown.length > 0) {
            throw new SchemaError(`${view.name} has no field ${unknown.join(', ')}`);
          }
          const out: Plain = {};
          for (const field of fields) {
            const inner = value[field.json];
            if (inner !== undefined) {
              out[field.name] = inner === null ? null : field.convert(inner);
            }
          }
          return out;
        };
      }
      case 'union': {
        if (!view.wrapped) {
          const complex = view.branches.filter((branch) => !['primitive', 'enum'].includes(viewOf(branch).type));
          const [only] = complex;
          if (only === undefined) {
            return (value) => value;
          }
          const convert = to(only);
          if (only.name === JSON_VALUE) {
            return (value) => (value === null ? null : convert(value));
          }
          return (value) => (typeof value === 'object' && value !== null ? convert(value) : value);
        }
        const { annotation } = view;
        if (annotation === undefined) {
          throw new SchemaError(`wrapped union without a logplane.union annotation: ${view.branches.map((b) => b.branchName).join(', ')}`);
        }
        const candidates = new Map<string, { branchName: string; group: string | undefined; convert: Convert }[]>();
        for (const branch of view.branches) {
          const discriminant = discriminantOf(branch);
          candidates.set(discriminant, [
            ...(candidates.get(discriminant) ?? []),
            { branchName: branch.branchName as string, group: draft.kinds.get(branch.name as string)?.group, convert: to(branch) },
          ]);
        }
        return (value) => {
          if (!isPlain(value)) {
            return value;
          }
          const { [annotation.discriminator]: discriminant, ...fields } = value;
          const matching = candidates.get(String(discriminant)) ?? [];
          const branch = matching.length === 1 ? matching[0] : matching.find((candidate) => candidate.group === groupOf(fields.apiVersion));
          if (branch === undefined) {
            throw new SchemaError(`no ${annotation.name} branch for ${annotation.discriminator} ${String(discriminant)} (apiVersion ${String(fields.apiVersion)})`);
          }
          return { [branch.branchName]: branch.convert(fields) };
        };
      }
      default:
        return assertNever(view, 'Avro type view');
    }
  };

  return { fromAvro: from(root), toAvro: to(root) };
}

function isPlain(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
