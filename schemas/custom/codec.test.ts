import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCustomObjectCodec } from './codec.ts';
import { customContentSchema, type StructuralSchema } from './content-schema.ts';
import { CustomDecodeError, CustomEncodeError, CustomSchemaError } from './errors.ts';
import { DATABASE_CONTENT, DATABASE_V1_SCHEMA, DATABASE_V1ALPHA1_SCHEMA, SCHEMALESS_SCHEMA } from './test-fixtures.ts';
import { arbitraryContent } from './testing.ts';

const GVK = { group: 'db.example.com', version: 'v1', kind: 'Database' } as const;
const database = createCustomObjectCodec(customContentSchema({ ...GVK, schema: DATABASE_V1_SCHEMA }));

/** What `encode` threw, or undefined. */
const encodeError = (content: Record<string, unknown>): CustomEncodeError | undefined => {
  try {
    database.encode(content);
  } catch (error) {
    return error as CustomEncodeError;
  }
  return undefined;
};

describe('createCustomObjectCodec: round trips', () => {
  it('round-trips an object that uses every shape to the same JSON', () => {
    const bytes = database.encode(DATABASE_CONTENT);
    expect(database.decode(bytes)).toEqual(DATABASE_CONTENT);
    expect(JSON.stringify(database.decode(bytes))).toBe(JSON.stringify(JSON.parse(JSON.stringify(database.decode(bytes)))));
  });

  it('writes Avro binary without a header: an empty content is one byte per top-level field', () => {
    expect([...database.encode({})]).toEqual([0, 0]);
  });

  it('keeps an absent property absent and an explicit null of a nullable property null', () => {
    const absent = database.decode(database.encode({ spec: { storage: {} } }));
    const nulls = database.decode(database.encode({ spec: { storage: { storageClassName: null, encrypted: null }, backup: null, notes: null } }));
    expect(absent).toEqual({ spec: { storage: {} } });
    expect(Object.keys(absent.spec as object)).toEqual(['storage']);
    expect(nulls).toEqual({ spec: { storage: { storageClassName: null, encrypted: null }, backup: null, notes: null } });
    expect(database.encode({ spec: { backup: null } })).not.toEqual(database.encode({ spec: {} }));
  });

  it('treats a property set to undefined as absent, as JSON.stringify does', () => {
    expect(database.decode(database.encode({ spec: { version: undefined, engine: 'mysql' } }))).toEqual({ spec: { engine: 'mysql' } });
  });

  it('brings integers back as JavaScript numbers, and int-or-string as it was written', () => {
    const decoded = database.decode(database.encode({ spec: { replicas: 2, port: 5432, storage: { size: '1Gi' }, 'x-kubernetes-foo': -(2 ** 52) }, status: { observedGeneration: 2 ** 53 - 2 } })) as {
      spec: Record<string, unknown> & { storage: { size: unknown } };
      status: { observedGeneration: unknown };
    };
    expect(decoded.spec.replicas).toBe(2);
    expect(decoded.spec.port).toBe(5432);
    expect(decoded.spec.storage.size).toBe('1Gi');
    expect(decoded.spec['x-kubernetes-foo']).toBe(-(2 ** 52));
    expect(decoded.status.observedGeneration).toBe(2 ** 53 - 2);
  });

  it('keeps JSON values exactly: integers as integers, other numbers as doubles, empty objects and arrays, nulls', () => {
    const config = { a: 1, b: 1.5, c: [], d: {}, e: null, f: [null, [[]], { g: Number.MAX_VALUE, h: -1e-300 }], big: 2 ** 60, safe: [2 ** 53 - 1, -(2 ** 53 - 1), -(2 ** 52) - 1] };
    expect(database.decode(database.encode({ spec: { config } }))).toEqual({ spec: { config } });
  });

  it('compiles a schema read back from its JSON text (as the log carries it)', () => {
    const fromLog = createCustomObjectCodec(JSON.parse(JSON.stringify(database.schema)));
    expect(fromLog.fingerprint).toBe(database.fingerprint);
    expect(fromLog.decode(database.encode(DATABASE_CONTENT))).toEqual(DATABASE_CONTENT);
    expect(database.decode(fromLog.encode(DATABASE_CONTENT))).toEqual(DATABASE_CONTENT);
  });

  it.each<[string, StructuralSchema]>([
    ['Database v1', DATABASE_V1_SCHEMA],
    ['Database v1alpha1', DATABASE_V1ALPHA1_SCHEMA],
    ['a schemaless CRD', SCHEMALESS_SCHEMA],
  ])('round-trips every valid object of %s (fast-check)', (_name, schema) => {
    const codec = createCustomObjectCodec(customContentSchema({ ...GVK, schema }));
    fc.assert(
      fc.property(arbitraryContent(schema), (content) => {
        expect(codec.decode(codec.encode(content))).toEqual(content);
      }),
      { numRuns: 300 },
    );
  });

  it('decodes a schemaless object to the content it was given', () => {
    const schemaless = createCustomObjectCodec(customContentSchema({ ...GVK, schema: SCHEMALESS_SCHEMA }));
    const content = { spec: { anything: [1, 'x'] }, status: null, data: 'text' };
    expect(schemaless.decode(schemaless.encode(content))).toEqual(content);
  });
});

describe('createCustomObjectCodec: encode names the first value that does not fit', () => {
  it.each<[string, Record<string, unknown>, string, RegExp]>([
    ['a string where an integer is', { spec: { replicas: '3' } }, 'spec.replicas', /expected an integer, got "3"/],
    ['a fraction where an integer is', { spec: { replicas: 1.5 } }, 'spec.replicas', /expected an integer, got 1.5/],
    ['an unsafe integer', { spec: { replicas: 2 ** 60 } }, 'spec.replicas', /outside the range/],
    ['an integer avsc would write inexactly', { spec: { replicas: -(2 ** 52) - 1 } }, 'spec.replicas', /outside the range of integers stored exactly \(-2\^52 to 2\^53-2\)/],
    ['an integer avsc refuses', { status: { readyReplicas: 2 ** 53 - 1 } }, 'status.readyReplicas', /outside the range/],
    ['a fraction in int-or-string', { spec: { port: 80.5 } }, 'spec.port', /expected an integer or a string, got 80.5/],
    ['null where not nullable', { spec: { engine: null } }, 'spec.engine', /not nullable/],
    ['an unknown property', { spec: { engin: 'postgres' } }, 'spec.engin', /not a property of the schema/],
    ['an unknown property with a dot', { spec: { storage: { 'size.limit': 1 } } }, 'spec.storage["size.limit"]', /not a property/],
    ['an item of an array of records', { spec: { users: [{ name: 'a' }, { name: 7 }] } }, 'spec.users[1].name', /expected a string, got 7/],
    ['a map value', { spec: { parameters: { work_mem: 64 } } }, 'spec.parameters.work_mem', /expected a string/],
    ['an item in a map of arrays', { spec: { shards: { east: [1, true] } } }, 'spec.shards.east[1]', /expected an integer, got true/],
    ['a value in an array of maps', { spec: { nodeSelectorTerms: [{}, { 'kubernetes.io/os': 1 }] } }, 'spec.nodeSelectorTerms[1]["kubernetes.io/os"]', /expected a string/],
    ['a renamed property', { spec: { 'a-b': false } }, 'spec["a-b"]', /expected a string, got false/],
    ['a condition', { status: { conditions: [{ type: 'Ready', status: 'True', observedGeneration: 'x' }] } }, 'status.conditions[0].observedGeneration', /expected an integer/],
    ['an array where an object is', { spec: { storage: [] } }, 'spec.storage', /expected an object, got \[\]/],
    ['a number that is not finite in a JSON value', { spec: { config: { ratio: Number.NaN } } }, 'spec.config.ratio', /finite/],
    ['undefined in a JSON value', { spec: { config: { list: [1, undefined] } } }, 'spec.config.list[1]', /got nothing/],
    ['a class instance in a JSON value', { spec: { config: { when: new Date(0) } } }, 'spec.config.when', /expected a JSON value/],
    ['a lone surrogate', { spec: { version: 'a\uD800' } }, 'spec.version', /lone UTF-16 surrogate/],
    ['a __proto__ key in a map', { spec: { parameters: JSON.parse('{"__proto__": "x"}') as unknown } }, 'spec.parameters.__proto__', /prototype/],
    ['a constructor key in a JSON value', { spec: { config: { a: { constructor: 1 } } } }, 'spec.config.a.constructor', /prototype/],
    ['a top-level property', { spec: 'big' }, 'spec', /expected an object, got "big"/],
  ])('%s', (_name, content, path, detail) => {
    const error = encodeError(content);
    expect(error).toBeInstanceOf(CustomEncodeError);
    expect(error?.path).toBe(path);
    expect(error?.detail).toMatch(detail);
    expect(error?.message).toContain(path);
  });

  it('refuses content that is not a plain object', () => {
    expect(encodeError([] as unknown as Record<string, unknown>)).toMatchObject({ path: '', detail: 'expected an object, got []' });
  });
});

describe('createCustomObjectCodec: decode', () => {
  it('refuses bytes that are not an encoding under the schema', () => {
    const bytes = database.encode(DATABASE_CONTENT);
    expect(() => database.decode(bytes.subarray(0, bytes.length - 3))).toThrow(CustomDecodeError);
    expect(() => database.decode(Buffer.concat([bytes, Buffer.from([0])]))).toThrow(/logplane\.custom\.db\.example\.com\.v1\.Database/);
  });

  it('refuses a schema that is not a content schema', () => {
    expect(() => createCustomObjectCodec({ type: 'record', name: 'x', fields: [{ name: 'a', type: 'int' }] })).toThrow(CustomSchemaError);
    expect(() => createCustomObjectCodec({ type: 'record', name: 'x', fields: [{ name: 'a', type: 'y' }] })).toThrow(CustomSchemaError);
  });
});
