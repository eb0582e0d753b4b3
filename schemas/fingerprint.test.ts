import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { canonicalForm, crc64Avro, schemaFingerprint } from './fingerprint.ts';

// Vectors from the Avro project's schema fingerprint tests (signed 64-bit values).
const VECTORS: readonly [schema: unknown, fingerprint: bigint][] = [
  ['null', 7195948357588979594n],
  ['boolean', -6970731678124411036n],
  ['int', 8247732601305521295n],
  ['long', -3434872931120570953n],
  ['float', 5583340709985441680n],
  ['double', -8181574048448539266n],
  ['bytes', 5746618253357095269n],
  ['string', -8142146995180207161n],
  [['int'], -5232228896498058493n],
  [['int', 'boolean'], 5392556393470105090n],
  [{ name: 'x.y.foo', type: 'record', fields: [] }, 5916914534497305771n],
  [{ name: 'foo', type: 'record', fields: [{ name: 'f1', type: 'boolean' }, { name: 'f2', type: 'int' }] }, -4860222112080293046n],
  [{ name: 'x.y.z.foo', type: 'enum', symbols: ['A1', 'A2'] }, -4448647247586288245n],
  [{ name: 'x.y.z.foo', type: 'fixed', size: 32 }, -3064184465700546786n],
  [{ type: 'array', items: 'null' }, -589620603366471059n],
  [{ type: 'map', values: 'string' }, -8732877298790414990n],
  [
    { name: 'PigValue', type: 'record', fields: [{ name: 'value', type: ['null', 'int', 'long', 'PigValue'] }] },
    -1759257747318642341n,
  ],
];

describe('CRC-64-AVRO', () => {
  it.each(VECTORS.map(([schema, fingerprint]) => [JSON.stringify(schema), schema, fingerprint] as const))(
    '%s',
    (_name, schema, fingerprint) => {
      const type = avro.Type.forSchema(schema as avro.Schema, { wrapUnions: 'always' });
      expect(BigInt.asIntN(64, schemaFingerprint(type))).toBe(fingerprint);
    },
  );

  it('fingerprints the Parsing Canonical Form, not docs, defaults or logical types', () => {
    const documented = avro.Type.forSchema({
      type: 'record',
      name: 'R',
      namespace: 'a.b',
      doc: 'about R',
      fields: [{ name: 't', type: { type: 'long', logicalType: 'timestamp-millis' }, default: 0, doc: 'when' }],
    });
    expect(canonicalForm(documented)).toBe('{"name":"a.b.R","type":"record","fields":[{"name":"t","type":"long"}]}');
  });

  it('of no bytes is the seed', () => {
    expect(crc64Avro(new Uint8Array(0))).toBe(0xc15d213aa4d7a795n);
  });
});
