import avro from 'avsc';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from './avro-type.ts';
import { customContentSchema, type CustomContentSchema, type StructuralSchema } from './content-schema.ts';
import { UnmappableSchemaError } from './errors.ts';
import { DATABASE_CRD, DATABASE_V1_SCHEMA, SCHEMALESS_SCHEMA } from './test-fixtures.ts';

const GVK = { group: 'db.example.com', version: 'v1', kind: 'Database' } as const;
const ROOT = 'logplane.custom.db.example.com.v1.Database';

/** The content schema of a CRD whose only property is `spec: {properties: {field: <schema>}}`. */
const withField = (field: StructuralSchema): CustomContentSchema =>
  customContentSchema({ ...GVK, schema: { type: 'object', properties: { spec: { type: 'object', properties: { field } } } } });

/** The Avro type of `spec.field`, with named types as the canonical form writes them. */
const fieldType = (field: StructuralSchema): unknown => {
  const type = avro.Type.forSchema(withField(field) as unknown as avro.Schema, { wrapUnions: true });
  const spec = (type.schema() as { fields: { type: unknown[] }[] }).fields[0]?.type[1] as { fields: { type: unknown }[] };
  return spec.fields[0]?.type;
};

const JSON_VALUE = {
  type: 'record',
  name: 'logplane.json.JsonValue',
  fields: [
    {
      name: 'value',
      type: [
        'null',
        'boolean',
        'long',
        'double',
        'string',
        { type: 'array', items: 'logplane.json.JsonValue' },
        { type: 'map', values: 'logplane.json.JsonValue' },
      ],
    },
  ],
};
const NULL = { type: 'record', name: 'logplane.json.Null', fields: [] };
const FIELD = `${ROOT}.spec.field`;

describe('customContentSchema: the type of each kind of property', () => {
  it.each<[string, StructuralSchema, unknown]>([
    ['string', { type: 'string' }, ['null', 'string']],
    ['string date-time', { type: 'string', format: 'date-time' }, ['null', 'string']],
    ['string byte', { type: 'string', format: 'byte' }, ['null', 'string']],
    ['string enum', { type: 'string', enum: ['A', 'b-c'] }, ['null', 'string']],
    ['integer int32', { type: 'integer', format: 'int32' }, ['null', 'long']],
    ['integer', { type: 'integer' }, ['null', 'long']],
    ['number', { type: 'number' }, ['null', 'double']],
    ['boolean', { type: 'boolean' }, ['null', 'boolean']],
    ['int-or-string', { 'x-kubernetes-int-or-string': true }, ['null', 'long', 'string']],
    ['nullable string', { type: 'string', nullable: true }, ['null', NULL, 'string']],
    ['nullable int-or-string', { 'x-kubernetes-int-or-string': true, nullable: true }, ['null', NULL, 'long', 'string']],
    ['array of strings', { type: 'array', items: { type: 'string' } }, ['null', { type: 'array', items: 'string' }]],
    ['array of nullable integers', { type: 'array', items: { type: 'integer', nullable: true } }, ['null', { type: 'array', items: [NULL, 'long'] }]],
    ['map of strings', { type: 'object', additionalProperties: { type: 'string' } }, ['null', { type: 'map', values: 'string' }]],
    ['map of anything', { type: 'object', additionalProperties: true }, ['null', { type: 'map', values: JSON_VALUE }]],
    ['map of arrays', { type: 'object', additionalProperties: { type: 'array', items: { type: 'integer' } } }, ['null', { type: 'map', values: { type: 'array', items: 'long' } }]],
    ['array of maps', { type: 'array', items: { type: 'object', additionalProperties: { type: 'boolean' } } }, ['null', { type: 'array', items: { type: 'map', values: 'boolean' } }]],
    [
      'object with properties',
      { type: 'object', properties: { b: { type: 'integer' }, a: { type: 'string' } } },
      [
        'null',
        {
          type: 'record',
          name: FIELD,
          fields: [
            { name: 'a', type: ['null', 'string'] },
            { name: 'b', type: ['null', 'long'] },
          ],
        },
      ],
    ],
    ['object without properties (pruned to {})', { type: 'object' }, ['null', { type: 'record', name: FIELD, fields: [] }]],
    [
      'nullable object',
      { type: 'object', nullable: true, properties: { a: { type: 'string' } } },
      ['null', NULL, { type: 'record', name: FIELD, fields: [{ name: 'a', type: ['null', 'string'] }] }],
    ],
    [
      'array of objects',
      { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
      ['null', { type: 'array', items: { type: 'record', name: `${FIELD}._xitems`, fields: [{ name: 'a', type: ['null', 'string'] }] } }],
    ],
    [
      'map of objects',
      { type: 'object', additionalProperties: { type: 'object', properties: { a: { type: 'string' } } } },
      ['null', { type: 'map', values: { type: 'record', name: `${FIELD}._xvalues`, fields: [{ name: 'a', type: ['null', 'string'] }] } }],
    ],
    ['preserve-unknown-fields', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, ['null', JSON_VALUE]],
    [
      'preserve-unknown-fields with properties (the whole object)',
      { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } },
      ['null', JSON_VALUE],
    ],
    ['embedded resource', { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } }, ['null', JSON_VALUE]],
    ['no type', {}, ['null', JSON_VALUE]],
    ['nullable preserve-unknown-fields (JsonValue holds null)', { nullable: true, 'x-kubernetes-preserve-unknown-fields': true }, ['null', JSON_VALUE]],
  ])('%s', (_name, field, expected) => {
    expect(fieldType(field)).toEqual(expected);
  });

  it('makes every field optional with a null default', () => {
    const spec = (withField({ type: 'string' }).fields[0]?.type as unknown[])[1] as { fields: unknown[] };
    expect(spec.fields).toEqual([{ name: 'field', type: ['null', 'string'], default: null }]);
  });
});

describe('customContentSchema: the Database CRD', () => {
  const schema = customContentSchema({ ...GVK, schema: DATABASE_V1_SCHEMA });
  const spec = (schema.fields.find((field) => field.name === 'spec')?.type as unknown[])[1] as { name: string; fields: Record<string, unknown>[] };

  it('names the root record after group, version and kind, and marks it with them', () => {
    expect(schema.name).toBe(ROOT);
    expect(schema['logplane.kind']).toEqual(GVK);
  });

  it('leaves apiVersion, kind and metadata to the envelope', () => {
    expect(schema.fields.map((field) => field.name)).toEqual(['spec', 'status']);
  });

  it('sorts fields by JSON name and renames invalid names reversibly with logplane.jsonName', () => {
    const renamed = spec.fields.filter((field) => field['logplane.jsonName'] !== undefined).map((field) => [field.name, field['logplane.jsonName']]);
    expect(renamed).toEqual([
      ['_x24_ref', '$ref'],
      ['_x31_st', '1st'],
      ['a_x2d_b', 'a-b'],
      ['a_x2e_b', 'a.b'],
      ['a_x5f_x2d_x5f_b', 'a_x2d_b'],
      ['x_x2d_kubernetes_x2d_foo', 'x-kubernetes-foo'],
    ]);
    const jsonNames = spec.fields.map((field) => (field['logplane.jsonName'] as string | undefined) ?? (field.name as string));
    expect(jsonNames).toEqual([...jsonNames].sort());
    expect(spec.fields.find((field) => field.name === 'engine')).not.toHaveProperty('logplane.jsonName');
  });

  it('names nested records by property path, escaping a property named like a primitive type', () => {
    const names: string[] = [];
    avro.Type.forSchema(schema as unknown as avro.Schema, {
      wrapUnions: true,
      typeHook: (definition) => {
        if (typeof definition === 'object' && definition !== null && 'name' in definition && typeof definition.name === 'string') {
          names.push(definition.name);
        }
        return undefined;
      },
    });
    expect(names).toEqual(
      expect.arrayContaining([
        `${ROOT}.spec`,
        `${ROOT}.spec.backup`,
        `${ROOT}.spec.backup.destination`,
        `${ROOT}.spec.users._xitems`,
        `${ROOT}.spec.users._xitems.passwordSecretRef`,
        `${ROOT}.spec.endpointsByZone._xvalues`,
        `${ROOT}.spec._x73_tring`,
        `${ROOT}.status`,
        `${ROOT}.status.conditions._xitems`,
        'logplane.json.JsonValue',
        'logplane.json.Null',
      ]),
    );
    expect(new Set(names).size).toBe(names.length);
  });

  it('is standalone: avsc parses it with a fresh registry, JsonValue and Null defined once', () => {
    const text = JSON.stringify(schema);
    expect(text.match(/"name":"logplane\.json\.JsonValue"/g)).toHaveLength(1);
    expect(text.match(/"name":"logplane\.json\.Null"/g)).toHaveLength(1);
    expect(() => avro.Type.forSchema(JSON.parse(text) as avro.Schema, { registry: {} })).not.toThrow();
  });

  it('maps every version of the CRD, each in its own namespace', () => {
    const names = DATABASE_CRD.spec.versions.map(
      (version) => customContentSchema({ group: DATABASE_CRD.spec.group, version: version.name, kind: DATABASE_CRD.spec.names.kind, schema: version.schema.openAPIV3Schema }).name,
    );
    expect(names).toEqual(['logplane.custom.db.example.com.v1alpha1.Database', ROOT]);
  });

  it('escapes group labels that are not Avro names', () => {
    const certificate = customContentSchema({ group: 'cert-manager.io', version: 'v1', kind: 'Certificate', schema: { type: 'object' } });
    expect(certificate.name).toBe('logplane.custom.cert_x2d_manager.io.v1.Certificate');
    expect(customContentSchema({ group: '1password.com', version: 'v1', kind: 'Item', schema: { type: 'object' } }).name).toBe('logplane.custom._x31_password.com.v1.Item');
  });

  it('maps a root that preserves unknown fields to one JSON value, under a name no structural schema has', () => {
    const schemaless = customContentSchema({ ...GVK, schema: SCHEMALESS_SCHEMA });
    expect(schemaless).toEqual({ type: 'record', name: `${ROOT}._xjson`, 'logplane.kind': GVK, fields: [{ name: '_xjson', type: expect.objectContaining({ name: 'logplane.json.JsonValue' }) }] });
  });
});

describe('customContentSchema: determinism', () => {
  /** The same JSON with every object's keys in another order. */
  const reorder = (value: unknown, seed: number): unknown => {
    if (Array.isArray(value)) {
      return value.map((item) => reorder(item, seed));
    }
    if (typeof value !== 'object' || value === null) {
      return value;
    }
    const entries = Object.entries(value);
    const rotated = entries.map((_, index) => entries[(index + seed) % entries.length] as [string, unknown]);
    return Object.fromEntries((seed % 2 === 0 ? rotated : rotated.reverse()).map(([key, inner]) => [key, reorder(inner, seed * 7 + 3)]));
  };
  const reference = customContentSchema({ ...GVK, schema: DATABASE_V1_SCHEMA });
  const referenceText = JSON.stringify(reference);

  it('gives the same JSON text and fingerprint whatever the key order of the CRD schema', () => {
    const fingerprint = fingerprintOf(reference);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), (seed) => {
        const reordered = reorder(DATABASE_V1_SCHEMA, seed) as StructuralSchema;
        expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(DATABASE_V1_SCHEMA));
        const schema = customContentSchema({ ...GVK, schema: reordered });
        expect(JSON.stringify(schema)).toBe(JSON.stringify(reference));
        expect(fingerprintOf(schema)).toBe(fingerprint);
      }),
      { numRuns: 30 },
    );
  });

  it('gives another fingerprint when a type changes, not when only a description does', () => {
    const fingerprint = fingerprintOf(reference);
    const described = { ...DATABASE_V1_SCHEMA, description: 'another text', properties: { ...DATABASE_V1_SCHEMA.properties, status: { type: 'object', description: 'x' } } };
    const statusless = customContentSchema({ ...GVK, schema: described });
    expect(fingerprintOf(statusless)).not.toBe(fingerprint);
    expect(fingerprintOf(customContentSchema({ ...GVK, schema: { ...DATABASE_V1_SCHEMA, description: 'another text' } }))).toBe(fingerprint);
    expect(fingerprintOf(customContentSchema({ ...GVK, version: 'v2', schema: DATABASE_V1_SCHEMA }))).not.toBe(fingerprint);
  });

  it('does not share objects between two results (nor with the generator\'s JsonValue)', () => {
    const first = customContentSchema({ ...GVK, schema: DATABASE_V1_SCHEMA });
    const spec = (first.fields[0]?.type as unknown[])[1] as { fields: { name: string; type: unknown[] }[] };
    const jsonValue = spec.fields.find((field) => field.name === 'anything')?.type[1] as { name: string; fields: unknown[] };
    expect(jsonValue.name).toBe('logplane.json.JsonValue');
    jsonValue.fields.push({ name: 'extra', type: 'string' });
    expect(JSON.stringify(customContentSchema({ ...GVK, schema: DATABASE_V1_SCHEMA }))).toBe(referenceText);
    expect(JSON.stringify(reference)).toBe(referenceText);
  });
});

describe('customContentSchema: refusals name the path', () => {
  const spec = (properties: Record<string, unknown>): StructuralSchema => ({ type: 'object', properties: { spec: { type: 'object', properties } as StructuralSchema } });
  it.each<[string, StructuralSchema, string, RegExp]>([
    ['an unknown type', spec({ size: { type: 'float' } }), 'openAPIV3Schema.properties[spec].properties[size].type', /expected one of object, array, string, integer, number, boolean, got "float"/],
    ['an array without items', spec({ hosts: { type: 'array' } }), 'openAPIV3Schema.properties[spec].properties[hosts]', /type: array without items/],
    ['tuple items', spec({ pair: { type: 'array', items: [{ type: 'string' }] } }), 'openAPIV3Schema.properties[spec].properties[pair].items', /tuple/],
    [
      'properties beside additionalProperties',
      spec({ labels: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } } }),
      'openAPIV3Schema.properties[spec].properties[labels]',
      /mutually exclusive/,
    ],
    ['additionalProperties: false', spec({ closed: { type: 'object', additionalProperties: false } }), 'openAPIV3Schema.properties[spec].properties[closed].additionalProperties', /false/],
    ['a $ref', spec({ other: { $ref: '#/definitions/Other' } }), 'openAPIV3Schema.properties[spec].properties[other].$ref', /\$ref is not allowed/],
    ['a property named __proto__', spec(JSON.parse('{"__proto__": {"type": "string"}}') as Record<string, unknown>), 'openAPIV3Schema.properties[spec].properties[__proto__]', /prototype/],
    ['a property named constructor', spec({ constructor: { type: 'string' } }), 'openAPIV3Schema.properties[spec].properties[constructor]', /prototype/],
    ['a property schema that is not an object', spec({ port: 'integer' }), 'openAPIV3Schema.properties[spec].properties[port]', /expected a schema object, got "integer"/],
    ['a nested items schema', spec({ matrix: { type: 'array', items: { type: 'array', items: { type: 'bytes' } } } }), 'openAPIV3Schema.properties[spec].properties[matrix].items.items.type', /got "bytes"/],
    ['map values', spec({ m: { type: 'object', additionalProperties: { type: 'array' } } }), 'openAPIV3Schema.properties[spec].properties[m].additionalProperties', /without items/],
    ['properties that are not an object', spec({ o: { type: 'object', properties: [] } }), 'openAPIV3Schema.properties[spec].properties[o].properties', /must be an object/],
    ['a root that is not an object', { type: 'string' }, 'openAPIV3Schema.type', /root must be type: object/],
    ['a root with additionalProperties', { type: 'object', additionalProperties: { type: 'string' } }, 'openAPIV3Schema.additionalProperties', /additionalProperties/],
  ])('%s', (_name, schema, path, detail) => {
    const refusal = (() => {
      try {
        customContentSchema({ ...GVK, schema });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(UnmappableSchemaError);
    expect((refusal as UnmappableSchemaError).path).toBe(path);
    expect((refusal as UnmappableSchemaError).detail).toMatch(detail);
    expect((refusal as Error).message).toContain(path);
  });

  it.each(['group', 'version', 'kind'] as const)('refuses an empty %s', (part) => {
    expect(() => customContentSchema({ ...GVK, [part]: '', schema: { type: 'object' } })).toThrow(new UnmappableSchemaError(part, 'must be a non-empty string, got ""'));
  });
});
