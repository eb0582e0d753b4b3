import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canResolve, fingerprintOf } from './avro-type.ts';
import { createCustomObjectCodec } from './codec.ts';
import { customContentSchema, type StructuralSchema } from './content-schema.ts';
import { CustomDecodeError } from './errors.ts';
import { DATABASE_CONTENT, DATABASE_V1_SCHEMA, DATABASE_V1_VERSION_AS_INTEGER, DATABASE_V1_WITH_MAINTENANCE, DATABASE_V1ALPHA1_SCHEMA, SCHEMALESS_SCHEMA } from './test-fixtures.ts';
import { arbitraryContent } from './testing.ts';

const GVK = { group: 'db.example.com', version: 'v1', kind: 'Database' } as const;
const contentSchema = (schema: StructuralSchema, version: string = GVK.version) => customContentSchema({ ...GVK, version, schema });

const v1 = contentSchema(DATABASE_V1_SCHEMA);
const withMaintenance = contentSchema(DATABASE_V1_WITH_MAINTENANCE);
const versionAsInteger = contentSchema(DATABASE_V1_VERSION_AS_INTEGER);

/** A CRD with one property `spec.field` of the given schema. */
const oneField = (field: StructuralSchema) => contentSchema({ type: 'object', properties: { spec: { type: 'object', properties: { field } } } });

describe('canResolve', () => {
  it('resolves a schema to itself', () => {
    expect(canResolve(v1, v1)).toEqual({ resolvable: true });
  });

  it('resolves an older revision to one that adds an optional field, and back', () => {
    expect(canResolve(v1, withMaintenance)).toEqual({ resolvable: true });
    expect(canResolve(withMaintenance, v1)).toEqual({ resolvable: true });
  });

  it('does not resolve a field whose type changed from string to integer, and says why', () => {
    const resolution = canResolve(v1, versionAsInteger);
    expect(resolution.resolvable).toBe(false);
    expect(resolution).toEqual({ resolvable: false, reason: 'spec.version: string cannot be read as null | long' });
  });

  it.each<[string, StructuralSchema, StructuralSchema, boolean]>([
    ['integer → number (long widens to double)', { type: 'integer' }, { type: 'number' }, true],
    ['number → integer', { type: 'number' }, { type: 'integer' }, false],
    ['string → int-or-string', { type: 'string' }, { 'x-kubernetes-int-or-string': true }, true],
    ['int-or-string → string', { 'x-kubernetes-int-or-string': true }, { type: 'string' }, false],
    ['not nullable → nullable', { type: 'string' }, { type: 'string', nullable: true }, true],
    ['nullable → not nullable (a stored null has nowhere to go)', { type: 'string', nullable: true }, { type: 'string' }, false],
    ['object → preserve-unknown-fields', { type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, false],
    ['preserve-unknown-fields → object', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, { type: 'object', properties: { a: { type: 'string' } } }, false],
    ['array items string → integer', { type: 'array', items: { type: 'string' } }, { type: 'array', items: { type: 'integer' } }, false],
    ['map → array', { type: 'object', additionalProperties: { type: 'string' } }, { type: 'array', items: { type: 'string' } }, false],
    ['a nested property added', { type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } }, true],
    ['a nested property removed', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } } }, { type: 'object', properties: { a: { type: 'string' } } }, true],
  ])('%s', (_name, writer, reader, resolvable) => {
    expect(canResolve(oneField(writer), oneField(reader)).resolvable).toBe(resolvable);
  });

  it.each<[string, StructuralSchema, StructuralSchema, string]>([
    ['nullable → not nullable', { type: 'string', nullable: true }, { type: 'string' }, 'spec.field: logplane.json.Null cannot be read as null | string'],
    ['array items', { type: 'array', items: { type: 'string' } }, { type: 'array', items: { type: 'integer' } }, 'spec.field[*]: string cannot be read as long'],
    ['map values', { type: 'object', additionalProperties: { type: 'number' } }, { type: 'object', additionalProperties: { type: 'integer' } }, 'spec.field.*: double cannot be read as long'],
    [
      'a renamed property deep inside',
      { type: 'object', properties: { 'a-b': { type: 'boolean' } } },
      { type: 'object', properties: { 'a-b': { type: 'string' } } },
      'spec.field.a-b: boolean cannot be read as null | string',
    ],
  ])('names the JSON path that does not resolve: %s', (_name, writer, reader, reason) => {
    expect(canResolve(oneField(writer), oneField(reader))).toEqual({ resolvable: false, reason });
  });

  it('does not resolve across API versions (another record name) nor from a schemaless revision', () => {
    expect(canResolve(contentSchema(DATABASE_V1ALPHA1_SCHEMA, 'v1alpha1'), contentSchema(DATABASE_V1ALPHA1_SCHEMA, 'v1')).resolvable).toBe(false);
    expect(canResolve(contentSchema(SCHEMALESS_SCHEMA), v1).resolvable).toBe(false);
    expect(canResolve(v1, contentSchema(SCHEMALESS_SCHEMA)).resolvable).toBe(false);
  });
});

describe('decodeResolved', () => {
  const writer = createCustomObjectCodec(v1);

  it('reads an object written with an older revision into the newer one: the added field is absent', () => {
    const reader = createCustomObjectCodec(withMaintenance);
    expect(reader.decodeResolved(v1, writer.encode(DATABASE_CONTENT))).toEqual(DATABASE_CONTENT);
    const newer = { spec: { engine: 'postgres', maintenanceWindow: { day: 'Sunday', startHour: 3 } } };
    expect(reader.decode(reader.encode(newer))).toEqual(newer);
  });

  it('reads every valid object of the older revision (fast-check)', () => {
    const reader = createCustomObjectCodec(withMaintenance);
    fc.assert(
      fc.property(arbitraryContent(DATABASE_V1_SCHEMA), (content) => {
        expect(reader.decodeResolved(v1, writer.encode(content))).toEqual(content);
      }),
      { numRuns: 200 },
    );
  });

  it('drops the fields the newer revision removed, as kube prunes on read', () => {
    const reader = createCustomObjectCodec(v1);
    const older = createCustomObjectCodec(withMaintenance);
    const bytes = older.encode({ spec: { engine: 'mysql', maintenanceWindow: { day: 'Monday' } }, status: { phase: 'Ready' } });
    expect(reader.decodeResolved(withMaintenance, bytes)).toEqual({ spec: { engine: 'mysql' }, status: { phase: 'Ready' } });
  });

  it('widens integers to numbers', () => {
    const bytes = createCustomObjectCodec(oneField({ type: 'integer' })).encode({ spec: { field: 42 } });
    expect(createCustomObjectCodec(oneField({ type: 'number' })).decodeResolved(oneField({ type: 'integer' }), bytes)).toEqual({ spec: { field: 42 } });
  });

  it('decodes with its own schema when the writer is the same schema (another object, same fingerprint)', () => {
    const copy = JSON.parse(JSON.stringify(v1)) as typeof v1;
    expect(writer.decodeResolved(copy, writer.encode(DATABASE_CONTENT))).toEqual(DATABASE_CONTENT);
  });

  it('refuses an incompatible writer, while the writer schema itself still reads the object as stored', () => {
    const bytes = writer.encode(DATABASE_CONTENT);
    const reader = createCustomObjectCodec(versionAsInteger);
    expect(() => reader.decodeResolved(v1, bytes)).toThrow(CustomDecodeError);
    expect(() => reader.decodeResolved(v1, bytes)).toThrow(/logplane\.custom\.db\.example\.com\.v1\.Database/);
    const stored = createCustomObjectCodec(JSON.parse(JSON.stringify(v1)));
    expect(stored.decode(bytes)).toEqual(DATABASE_CONTENT);
    expect(() => reader.encode({ spec: { version: '16.2' } })).toThrow(/spec\.version: expected an integer/);
    expect(reader.decode(reader.encode({ spec: { engine: 'postgres', version: 16 } }))).toEqual({ spec: { engine: 'postgres', version: 16 } });
  });

  it('keeps one resolver per writer and still refuses corrupt bytes', () => {
    const reader = createCustomObjectCodec(withMaintenance);
    const bytes = writer.encode(DATABASE_CONTENT);
    expect(reader.decodeResolved(v1, bytes)).toEqual(reader.decodeResolved(v1, bytes));
    expect(() => reader.decodeResolved(v1, bytes.subarray(0, 10))).toThrow(CustomDecodeError);
  });
});

describe('fingerprintOf', () => {
  it('is the CRC-64-AVRO of the Parsing Canonical Form: 16 hex digits, the same for the same types', () => {
    expect(fingerprintOf(v1)).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprintOf(JSON.parse(JSON.stringify(v1)))).toBe(fingerprintOf(v1));
    expect(createCustomObjectCodec(v1).fingerprint).toBe(fingerprintOf(v1));
    expect(new Set([v1, withMaintenance, versionAsInteger].map(fingerprintOf)).size).toBe(3);
  });

  it('ignores what is not part of the canonical form: docs, attributes, field defaults', () => {
    const annotated = JSON.parse(JSON.stringify(v1).replaceAll('"logplane.jsonName"', '"logplane.other"')) as typeof v1;
    expect(fingerprintOf({ ...annotated, doc: 'described' })).toBe(fingerprintOf(v1));
  });

  it('matches a known value for a minimal schema (CRC-64-AVRO of its canonical form)', () => {
    // The canonical form of this schema is {"name":"logplane.custom.a.io.v1.K","type":"record","fields":[]}.
    expect(fingerprintOf(customContentSchema({ group: 'a.io', version: 'v1', kind: 'K', schema: { type: 'object' } }))).toBe(crc64AvroReference('{"name":"logplane.custom.a.io.v1.K","type":"record","fields":[]}'));
  });
});

/** CRC-64-AVRO as the Avro specification writes it, bit by bit (independent of fingerprint.ts's table). */
function crc64AvroReference(text: string): string {
  const EMPTY = 0xc15d213aa4d7a795n;
  let fp = EMPTY;
  for (const byte of Buffer.from(text, 'utf8')) {
    fp ^= BigInt(byte);
    for (let bit = 0; bit < 8; bit++) {
      fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n));
    }
  }
  return fp.toString(16).padStart(16, '0');
}
