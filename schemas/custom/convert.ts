/**
 * Custom object content (plain JSON) ↔ avsc's representation of it under a content schema
 * parsed with wrapped unions (`{"string": "a"}`, `{"logplane.json.Null": {}}`), compiled
 * once per schema from the schema's JSON (which, unlike avsc's types, keeps the
 * `logplane.jsonName` attributes). The JSON → Avro direction checks every value and throws
 * a `CustomEncodeError` naming the JSON path of the first one that does not fit.
 */
import type { AvroField, AvroSchema } from '../avro-gen/generate.ts';
import { jsonFromAvro } from '../convert.ts';
import { JSON_NAME_ATTRIBUTE, JSON_VALUE_RECORD } from '../schema-view.ts';
import { EXPLICIT_NULL_RECORD, type CustomContentSchema } from './content-schema.ts';
import { CustomEncodeError, CustomSchemaError } from './errors.ts';
import { WHOLE_CONTENT_FIELD } from './names.ts';

/** JSON content → avsc value; throws `CustomEncodeError`. */
export type ToAvro = (content: unknown) => unknown;
/** avsc value (decoded with this schema as reader) → JSON content. */
export type FromAvro = (value: unknown) => Record<string, unknown>;

type Plain = Record<string, unknown>;
type Segment = string | number;

/** A value that does not fit, on its way up to the content root collecting its path. */
class Misfit extends Error {
  /** Path segments from the innermost outwards. */
  readonly segments: Segment[] = [];
}

interface Converter {
  toAvro(value: unknown): unknown;
  fromAvro(value: unknown): unknown;
  /** What the type accepts, for messages: `a string`, `an integer or a string` … */
  readonly expected: string;
}

/** Keys refused in content, as in schemas (DESIGN.md, Identities). */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Compiles both directions of a content schema. */
export function compileContentConverters(schema: CustomContentSchema): { toAvro: ToAvro; fromAvro: FromAvro } {
  const records = new Map<string, Plain>();
  const wholeContent = schema.fields.length === 1 && schema.fields[0]?.name === WHOLE_CONTENT_FIELD;
  if (wholeContent) {
    return {
      toAvro: (content) => atRoot(() => ({ [WHOLE_CONTENT_FIELD]: jsonValue.toAvro(expectPlain(content)) })),
      fromAvro: (value) => jsonValue.fromAvro((value as Plain)[WHOLE_CONTENT_FIELD]) as Plain,
    };
  }

  const compile = (type: AvroSchema): Converter => {
    if (typeof type === 'string') {
      return named(type);
    }
    if (Array.isArray(type)) {
      return union(type.map(compile), type as readonly AvroSchema[]);
    }
    const complex = type as unknown as Plain;
    switch (complex.type) {
      case 'array':
        return array(compile(complex.items as AvroSchema));
      case 'map':
        return map(compile(complex.values as AvroSchema));
      case 'record': {
        const name = complex.name as string;
        records.set(name, complex);
        return named(name);
      }
      default:
        throw new CustomSchemaError(`not a custom content schema: unexpected Avro type ${JSON.stringify(complex.type)}`);
    }
  };

  const named = (name: string): Converter => {
    switch (name) {
      case 'null':
        return { expected: 'nothing', toAvro: () => null, fromAvro: () => undefined };
      case 'string':
        return { expected: 'a string', toAvro: (value) => checkString(value), fromAvro: identity };
      case 'long':
        return { expected: 'an integer', toAvro: (value) => checkLong(value), fromAvro: identity };
      case 'double':
        return { expected: 'a number', toAvro: (value) => checkDouble(value), fromAvro: identity };
      case 'boolean':
        return { expected: 'a boolean', toAvro: (value) => (check(typeof value === 'boolean', 'a boolean', value), value), fromAvro: identity };
      case JSON_VALUE_RECORD:
        return jsonValue;
      case EXPLICIT_NULL_RECORD:
        return { expected: 'null', toAvro: (value) => (check(value === null, 'null', value), {}), fromAvro: () => null };
      default: {
        const definition = records.get(name);
        if (definition === undefined) {
          throw new CustomSchemaError(`not a custom content schema: ${name} is used before it is defined`);
        }
        return record(definition.fields as readonly AvroField[]);
      }
    }
  };

  const record = (fields: readonly AvroField[]): Converter => {
    const compiled = fields.map((field) => {
      const json = field[JSON_NAME_ATTRIBUTE];
      return { name: field.name, json: typeof json === 'string' ? json : field.name, convert: compile(field.type), optional: isOptional(field.type) };
    });
    const known = new Set(compiled.map((field) => field.json));
    return {
      expected: 'an object',
      toAvro: (value) => {
        const object = expectPlain(value);
        for (const key of Object.keys(object)) {
          if (!known.has(key) && object[key] !== undefined) {
            throw within(new Misfit('not a property of the schema'), key);
          }
        }
        const out: Plain = {};
        for (const field of compiled) {
          const inner = Object.hasOwn(object, field.json) ? object[field.json] : undefined;
          if (inner === undefined && !field.optional) {
            throw within(new Misfit('required, but absent'), field.json);
          }
          try {
            out[field.name] = field.convert.toAvro(inner);
          } catch (error) {
            throw within(error, field.json);
          }
        }
        return out;
      },
      fromAvro: (value) => {
        const out: Plain = {};
        for (const field of compiled) {
          const inner = field.convert.fromAvro((value as Plain)[field.name]);
          if (inner !== undefined) {
            out[field.json] = inner;
          }
        }
        return out;
      },
    };
  };

  const root = compile(schema as unknown as AvroSchema);
  return { toAvro: (content) => atRoot(() => root.toAvro(content)), fromAvro: (value) => root.fromAvro(value) as Plain };
}

/**
 * `logplane.json.JsonValue`: any JSON value, checked as it is converted (finite numbers,
 * well-formed strings, plain objects, no prototype keys). An integer is a `long` when avsc
 * writes it exactly, any other number a `double` (which holds every safe integer exactly).
 */
const jsonValue: Converter = {
  expected: 'a JSON value',
  toAvro: (value) => jsonToAvro(value),
  fromAvro: jsonFromAvro,
};

function jsonToAvro(value: unknown): unknown {
  if (value === null) {
    return { value: null };
  }
  switch (typeof value) {
    case 'boolean':
      return { value: { boolean: value } };
    case 'number':
      checkDouble(value);
      return { value: writesExactly(value) ? { long: value } : { double: value } };
    case 'string':
      return { value: { string: checkString(value) } };
    default:
      break;
  }
  if (Array.isArray(value)) {
    const items = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) {
      try {
        items[index] = jsonToAvro(value[index]);
      } catch (error) {
        throw within(error, index);
      }
    }
    return { value: { array: items } };
  }
  const object = expectPlain(value, 'a JSON value');
  const entries: Plain = {};
  for (const key of Object.keys(object)) {
    checkKey(key);
    try {
      entries[key] = jsonToAvro(object[key]);
    } catch (error) {
      throw within(error, key);
    }
  }
  return { value: { map: entries } };
}

function union(branches: readonly Converter[], types: readonly AvroSchema[]): Converter {
  const names = types.map(branchName);
  const absent = names.indexOf('null');
  const present = branches.flatMap((branch, index) => (index === absent ? [] : [{ name: names[index] as string, branch }]));
  const byName = new Map(present.map(({ name, branch }) => [name, branch]));
  /** The first present branch among the candidates, in the candidates' order of preference. */
  const find = (...candidates: string[]) => candidates.map((candidate) => present.find(({ name }) => name === candidate)).find((hit) => hit !== undefined);
  const choices = {
    null: find(EXPLICIT_NULL_RECORD, JSON_VALUE_RECORD),
    boolean: find('boolean', JSON_VALUE_RECORD),
    integer: find('long', 'double', JSON_VALUE_RECORD),
    number: find('double', JSON_VALUE_RECORD),
    string: find('string', JSON_VALUE_RECORD),
    array: find('array', JSON_VALUE_RECORD),
    object: present.find(({ name }) => name !== 'array' && !['null', 'boolean', 'long', 'double', 'string', EXPLICIT_NULL_RECORD].includes(name)),
  };
  const expected = present.map(({ branch }) => branch.expected).join(' or ');
  return {
    expected,
    toAvro: (value) => {
      if (value === undefined) {
        if (absent < 0) {
          throw new Misfit('required, but absent');
        }
        return null;
      }
      const choice = choices[jsonKindOf(value)];
      if (choice === undefined) {
        throw new Misfit(value === null ? `null, but the property is not nullable (expected ${expected})` : `expected ${expected}, got ${preview(value)}`);
      }
      return { [choice.name]: choice.branch.toAvro(value) };
    },
    fromAvro: (value) => {
      if (value === null) {
        return undefined;
      }
      const [name, inner] = Object.entries(value as Plain)[0] as [string, unknown];
      return (byName.get(name) as Converter).fromAvro(inner);
    },
  };
}

function array(items: Converter): Converter {
  return {
    expected: 'an array',
    toAvro: (value) => {
      check(Array.isArray(value), 'an array', value);
      const source = value as unknown[];
      const out = new Array<unknown>(source.length);
      for (let index = 0; index < source.length; index++) {
        try {
          out[index] = items.toAvro(source[index]);
        } catch (error) {
          throw within(error, index);
        }
      }
      return out;
    },
    fromAvro: (value) => (value as unknown[]).map((item) => items.fromAvro(item)),
  };
}

function map(values: Converter): Converter {
  return {
    expected: 'an object',
    toAvro: (value) => {
      const object = expectPlain(value);
      const out: Plain = {};
      for (const key of Object.keys(object)) {
        checkKey(key);
        try {
          out[key] = values.toAvro(object[key]);
        } catch (error) {
          throw within(error, key);
        }
      }
      return out;
    },
    fromAvro: (value) => {
      const out: Plain = {};
      for (const [key, inner] of Object.entries(value as Plain)) {
        out[key] = values.fromAvro(inner);
      }
      return out;
    },
  };
}

/** The name avsc gives a union branch of this type when it wraps the union. */
function branchName(type: AvroSchema): string {
  if (typeof type === 'string') {
    return type;
  }
  const complex = type as unknown as Plain;
  return complex.type === 'record' ? (complex.name as string) : (complex.type as string);
}

function isOptional(type: AvroSchema): boolean {
  return Array.isArray(type) && type.includes('null');
}

function jsonKindOf(value: unknown): 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object' {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'array';
  }
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    default:
      return 'object';
  }
}

function checkString(value: unknown): unknown {
  check(typeof value === 'string', 'a string', value);
  if (LONE_SURROGATE.test(value as string)) {
    throw new Misfit('a string with a lone UTF-16 surrogate, which Avro (UTF-8) cannot keep');
  }
  return value;
}

function checkLong(value: unknown): unknown {
  check(typeof value === 'number' && Number.isInteger(value), 'an integer', value);
  if (!writesExactly(value as number)) {
    throw new Misfit(`the integer ${String(value)} is outside the range of integers stored exactly (-2^52 to 2^53-2)`);
  }
  return value;
}

/**
 * Whether avsc 5.7.9 writes an integer as a `long` and reads it back exactly: from -2^52 (its
 * zig-zag step computes -2n-1 in floating point, which rounds below that) to 2^53-2 (the
 * largest it accepts).
 */
function writesExactly(value: number): boolean {
  return value >= MIN_EXACT_LONG && value <= MAX_EXACT_LONG && Number.isInteger(value);
}

/** The smallest integer avsc 5.7.9 writes exactly as a `long`. */
export const MIN_EXACT_LONG = -(2 ** 52);
/** The largest integer avsc 5.7.9 writes as a `long`. */
export const MAX_EXACT_LONG = 2 ** 53 - 2;

function checkDouble(value: unknown): unknown {
  check(typeof value === 'number' && Number.isFinite(value), 'a finite number', value);
  return value;
}

function checkKey(key: string): void {
  if (PROTOTYPE_KEYS.has(key)) {
    throw within(new Misfit(`the key ${key} is refused (it would reach an object's prototype)`), key);
  }
  if (LONE_SURROGATE.test(key)) {
    throw within(new Misfit('a key with a lone UTF-16 surrogate, which Avro (UTF-8) cannot keep'), key);
  }
}

function expectPlain(value: unknown, expected = 'an object'): Plain {
  const plain = typeof value === 'object' && value !== null && !Array.isArray(value) && [Object.prototype, null].includes(Object.getPrototypeOf(value));
  check(plain, expected, value);
  return value as Plain;
}

function check(ok: boolean, expected: string, value: unknown): void {
  if (!ok) {
    throw new Misfit(`expected ${expected}, got ${preview(value)}`);
  }
}

function within(error: unknown, segment: Segment): unknown {
  if (error instanceof Misfit) {
    error.segments.push(segment);
  }
  return error;
}

function atRoot<T>(convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof Misfit) {
      throw new CustomEncodeError(formatPath([...error.segments].reverse()), error.message);
    }
    throw error;
  }
}

/** `spec.ports[0].port`; keys that are not identifiers are quoted: `spec.labels["app.kubernetes.io/name"]`. */
function formatPath(segments: readonly Segment[]): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') {
      path += `[${segment}]`;
    } else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(segment)) {
      path += path === '' ? segment : `.${segment}`;
    } else {
      path += `[${JSON.stringify(segment)}]`;
    }
  }
  return path;
}

function preview(value: unknown): string {
  if (value === undefined) {
    return 'nothing';
  }
  if (typeof value === 'bigint') {
    return `the bigint ${value}`;
  }
  if (typeof value === 'function' || typeof value === 'symbol') {
    return `a ${typeof value}`;
  }
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const identity = (value: unknown): unknown => value;
