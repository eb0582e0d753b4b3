import type avro from 'avsc';
import { assertNever } from './assert-never.ts';
import { SchemaError } from './errors.ts';
import { isKubernetesRecord, JSON_VALUE_RECORD, shortName, viewOf, type FieldView, type TypeView } from './schema-view.ts';

/** Maps one value between the avsc representation and the TypeScript view. */
export type Convert = (value: unknown) => unknown;

type Plain = Record<string, unknown>;
type Discriminant = { key: string; value: string };

/**
 * Compiles the function that turns a value decoded by avsc into the TypeScript view:
 * plain objects; nulls dropped from `logplane.k8s` records (Kubernetes JSON: absent, not
 * null) and from fields marked `"logplane.optional": true`, and kept elsewhere; annotated wrapped unions (`{"logplane.k8s.Pod": {...}}`)
 * flattened into the branch record plus its discriminator (`{kind: 'Pod', ...}`).
 * Compiled once per reader type; the returned function only walks values.
 */
export function compileFromAvro(root: avro.Type): Convert {
  const records = new Map<string, Convert>();

  const record = (type: avro.Type, fields: readonly FieldView[], discriminant?: Discriminant): Convert => {
    const cacheKey = `${type.name}|${discriminant?.key ?? ''}`;
    const cached = records.get(cacheKey);
    if (cached) {
      return cached;
    }
    const k8s = isKubernetesRecord(type.name ?? '');
    // A record that refers to itself (JSONSchemaProps of a CustomResourceDefinition) meets
    // itself while its fields compile: it gets this forward reference, resolved below.
    let compiled: Convert | undefined;
    records.set(cacheKey, (value) => (compiled as Convert)(value));
    compiled = compileRecord(
      fields.map((field) => ({ name: field.name, json: field.jsonName, convert: compile(field.type), omitNull: k8s || field.optional })),
      discriminant,
    );
    records.set(cacheKey, compiled);
    return compiled;
  };

  const compile = (type: avro.Type): Convert | null => {
    if (type.name === JSON_VALUE_RECORD) {
      return jsonFromAvro;
    }
    const view = viewOf(type);
    switch (view.type) {
      case 'primitive':
      case 'enum':
        return null;
      case 'array': {
        const item = compile(view.items);
        return item === null ? null : (value) => mapItems(value as unknown[], item);
      }
      case 'map': {
        const entry = compile(view.values);
        return entry === null ? null : (value) => mapValues(value as Plain, entry);
      }
      case 'record':
        return record(type, view.fields);
      case 'union': {
        if (!view.wrapped) {
          return unwrappedUnion(view.branches, compile);
        }
        const { annotation } = view;
        if (annotation === undefined) {
          throw new SchemaError(`wrapped union without a logplane.union annotation: ${JSON.stringify(type.schema())}`);
        }
        const branches = new Map<string, Convert>();
        for (const branch of view.branches) {
          const branchView = viewOf(branch);
          if (branchView.type === 'record' && branch.branchName !== undefined) {
            const discriminant = { key: annotation.discriminator, value: discriminantOf(branchView) };
            branches.set(branch.branchName, record(branch, branchView.fields, discriminant));
          }
        }
        return (value) => {
          const wrapped = value as Plain;
          const branchName = Object.keys(wrapped)[0] as string;
          return (branches.get(branchName) as Convert)(wrapped[branchName]);
        };
      }
      default:
        return assertNever(view, 'Avro type view');
    }
  };

  return compile(root) ?? ((value) => value);
}

/**
 * Compiles the function that turns a TypeScript view into what avsc writes: annotated
 * unions wrapped again (`{kind: 'Pod', ...}` → `{"logplane.k8s.Pod": {...}}`, without the
 * discriminator). Everything else passes through unchanged: avsc fills absent optional
 * fields with their null default. Returns null when the type holds no annotated union.
 * A value with an unknown discriminator is left as is, so that validation reports it.
 */
export function compileToAvro(root: avro.Type): Convert | null {
  const cache = new Map<avro.Type, Convert | null>();
  /** Types being compiled: a recursive type (JSONSchemaProps) meets itself while its fields compile. */
  const compiling = new Map<avro.Type, { convert: Convert | null | undefined }>();

  const compile = (type: avro.Type): Convert | null => {
    if (cache.has(type)) {
      return cache.get(type) ?? null;
    }
    const pending = compiling.get(type);
    if (pending !== undefined) {
      // A forward reference, resolved once the type is compiled (identity if it needs no conversion).
      return (value) => (pending.convert ? pending.convert(value) : value);
    }
    const slot: { convert: Convert | null | undefined } = { convert: undefined };
    compiling.set(type, slot);
    const convert = compileUncached(type);
    slot.convert = convert;
    compiling.delete(type);
    cache.set(type, convert);
    return convert;
  };

  const compileUncached = (type: avro.Type): Convert | null => {
    if (type.name === JSON_VALUE_RECORD) {
      return jsonToAvro;
    }
    const view = viewOf(type);
    switch (view.type) {
      case 'primitive':
      case 'enum':
        return null;
      case 'array': {
        const item = compile(view.items);
        return item === null ? null : (value) => (Array.isArray(value) ? mapItems(value, item) : value);
      }
      case 'map': {
        const entry = compile(view.values);
        return entry === null ? null : (value) => (isPlain(value) ? mapValues(value, entry) : value);
      }
      case 'record': {
        const converted = view.fields.flatMap((field) => {
          const convert = compile(field.type);
          return convert === null && field.jsonName === field.name ? [] : [{ name: field.name, json: field.jsonName, convert }];
        });
        if (converted.length === 0) {
          return null;
        }
        return (value) => {
          if (!isPlain(value)) {
            return value;
          }
          const out: Plain = { ...value };
          for (const { name, json, convert } of converted) {
            const fieldValue = out[json];
            if (json !== name) {
              delete out[json];
              if (fieldValue !== undefined) {
                out[name] = fieldValue;
              }
            }
            if (fieldValue !== undefined && fieldValue !== null && convert !== null) {
              out[name] = convert(fieldValue);
            }
          }
          return out;
        };
      }
      case 'union': {
        if (!view.wrapped) {
          return unwrappedUnion(view.branches, compile);
        }
        const { annotation } = view;
        if (annotation === undefined) {
          throw new SchemaError(`wrapped union without a logplane.union annotation: ${JSON.stringify(type.schema())}`);
        }
        const branches = new Map<string, { name: string; convert: Convert | null }>();
        for (const branch of view.branches) {
          const branchView = viewOf(branch);
          if (branchView.type === 'record' && branch.branchName !== undefined) {
            const discriminant = discriminantOf(branchView);
            if (branches.has(discriminant)) {
              throw new SchemaError(`two branches of the union ${annotation.name} are both ${annotation.discriminator}: ${discriminant}`);
            }
            branches.set(discriminant, { name: branch.branchName, convert: compile(branch) });
          }
        }
        const key = annotation.discriminator;
        return (value) => {
          if (!isPlain(value)) {
            return value;
          }
          const discriminator = value[key];
          const branch = typeof discriminator === 'string' ? branches.get(discriminator) : undefined;
          if (branch === undefined) {
            return value;
          }
          const { [key]: _discriminator, ...fields } = value;
          return { [branch.name]: branch.convert === null ? fields : branch.convert(fields) };
        };
      }
      default:
        return assertNever(view, 'Avro type view');
    }
  };

  return compile(root);
}

/**
 * Builds the converter of one record as straight-line code (one statement per field with
 * constant property names), which V8 runs several times faster than a loop over field
 * names: decoding is the hot path of a replay. Field names are Avro names
 * (`[A-Za-z_][A-Za-z0-9_]*`) and are embedded as JSON string literals.
 */
function compileRecord(
  fields: readonly { name: string; json: string; convert: Convert | null; omitNull: boolean }[],
  discriminant: Discriminant | undefined,
): Convert {
  const head = discriminant ? `{ ${JSON.stringify(discriminant.key)}: ${JSON.stringify(discriminant.value)} }` : '{}';
  const statements = fields.map(({ name, json, convert, omitNull }, index) => {
    const from = `[${JSON.stringify(name)}]`;
    const to = `[${JSON.stringify(json)}]`;
    const value = convert === null ? 'x' : `c${index}(x)`;
    return omitNull
      ? `x = v${from}; if (x !== null) o${to} = ${value};`
      : `x = v${from}; o${to} = x === null ? null : ${value};`;
  });
  const source = `return function convertRecord(v) { var o = ${head}; var x; ${statements.join(' ')} return o; };`;
  const factory = new Function(...fields.map((_, index) => `c${index}`), source) as (...converters: unknown[]) => Convert;
  return factory(...fields.map(({ convert }) => convert));
}

/** The discriminator value of a union branch: its `logplane.kind` kind, else its short name. */
function discriminantOf(record: Extract<TypeView, { type: 'record' }>): string {
  return record.kind?.kind ?? shortName(record.name);
}

/**
 * A JSON value → avsc's representation of `logplane.json.JsonValue`: `{value: null}`,
 * `{value: {boolean: true}}`, `{value: {long: 1}}` (a safe integer), `{value: {double: 1.5}}`,
 * `{value: {string: "a"}}`, `{value: {array: [...]}}`, `{value: {map: {...}}}`. A value that
 * is not JSON (undefined, a function, a bigint) is left as is, so that validation names it.
 */
export function jsonToAvro(value: unknown): unknown {
  if (value === null) {
    return { value: null };
  }
  switch (typeof value) {
    case 'boolean':
      return { value: { boolean: value } };
    case 'number':
      return { value: Number.isSafeInteger(value) ? { long: value } : { double: value } };
    case 'string':
      return { value: { string: value } };
    case 'object': {
      if (Array.isArray(value)) {
        return { value: { array: mapItems(value, jsonToAvro) } };
      }
      return { value: { map: mapValues(value as Plain, jsonToAvro) } };
    }
    default:
      return value;
  }
}

/** avsc's representation of `logplane.json.JsonValue` → the JSON value. */
export function jsonFromAvro(wrapped: unknown): unknown {
  const { value } = wrapped as { value: Plain | null };
  if (value === null) {
    return null;
  }
  const array = value['array'];
  if (array !== undefined) {
    return mapItems(array as unknown[], jsonFromAvro);
  }
  const map = value['map'];
  if (map !== undefined) {
    return mapValues(map as Plain, jsonFromAvro);
  }
  for (const key in value) {
    return value[key];
  }
  return null;
}

function unwrappedUnion(branches: readonly avro.Type[], compile: (type: avro.Type) => Convert | null): Convert | null {
  if (branches.some((branch) => branch.name === JSON_VALUE_RECORD)) {
    // ["null", JsonValue]: every JSON value but null (absent) is the record's.
    const json = compile(branches.find((branch) => branch.name === JSON_VALUE_RECORD) as avro.Type) as Convert;
    return (value) => (value === null || value === undefined ? value : json(value));
  }
  const converting = branches.flatMap((branch) => {
    const convert = compile(branch);
    return convert === null ? [] : [convert];
  });
  const [convert, ...others] = converting;
  if (convert === undefined) {
    return null;
  }
  if (others.length > 0) {
    throw new SchemaError('an unwrapped union may hold at most one record, array or map branch');
  }
  return (value) => (typeof value === 'object' && value !== null ? convert(value) : value);
}

function mapItems(source: readonly unknown[], convert: Convert): unknown[] {
  const out = new Array<unknown>(source.length);
  for (let index = 0; index < source.length; index++) {
    out[index] = convert(source[index]);
  }
  return out;
}

function mapValues(source: Plain, convert: Convert): Plain {
  const out: Plain = {};
  for (const key of Object.keys(source)) {
    out[key] = convert(source[key]);
  }
  return out;
}

function isPlain(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
