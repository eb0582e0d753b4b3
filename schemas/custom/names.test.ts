import avro from 'avsc';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { avroNameOf, isAvroName, ITEMS_SEGMENT, jsonNameOf, recordSegmentOf, VALUES_SEGMENT, WHOLE_CONTENT_FIELD } from './names.ts';

/** Strings of every kind: ASCII punctuation, any Unicode (astral too), lone surrogates, and the escape's own characters. */
const anyName = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: fc.constantFrom('_', 'x', '2', 'd', 'a', '-', '.', '$', '1') }),
);

describe('avroNameOf', () => {
  it.each([
    ['spec', 'spec'],
    ['max_connections', 'max_connections'],
    ['_private', '_private'],
    ['string', 'string'],
    ['$ref', '_x24_ref'],
    ['x-kubernetes-foo', 'x_x2d_kubernetes_x2d_foo'],
    ['a-b', 'a_x2d_b'],
    ['a.b', 'a_x2e_b'],
    ['1st', '_x31_st'],
    ['a_x2d_b', 'a_x5f_x2d_x5f_b'],
    ['my_xyz', 'my_x5f_xyz'],
    ['', '_x_'],
    ['größe', 'gr_xf6__xdf_e'],
    ['😀', '_x1f600_'],
  ])('%j → %j', (json, avroName) => {
    expect(avroNameOf(json)).toBe(avroName);
    expect(jsonNameOf(avroName)).toBe(json);
  });

  it('keeps the names of a collision pair apart: a-b and a_x2d_b', () => {
    expect(avroNameOf('a-b')).not.toBe(avroNameOf('a_x2d_b'));
  });

  it('is a valid Avro name for every string, and jsonNameOf undoes it', () => {
    fc.assert(
      fc.property(anyName, (name) => {
        const mapped = avroNameOf(name);
        expect(isAvroName(mapped)).toBe(true);
        expect(jsonNameOf(mapped)).toBe(name);
      }),
      { numRuns: 2000 },
    );
  });

  it('never maps two different strings to one name', () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => {
        fc.pre(a !== b);
        expect(avroNameOf(a)).not.toBe(avroNameOf(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every valid Avro name without _x as it is', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/), (name) => {
        fc.pre(!name.includes('_x'));
        expect(avroNameOf(name)).toBe(name);
      }),
    );
  });

  it('never produces a marker name', () => {
    const markers = [ITEMS_SEGMENT, VALUES_SEGMENT, WHOLE_CONTENT_FIELD];
    for (const marker of markers) {
      expect(isAvroName(marker)).toBe(true);
      expect(jsonNameOf(marker)).toBe(marker);
      expect(avroNameOf(marker)).not.toBe(marker);
    }
    fc.assert(
      fc.property(anyName, (name) => {
        expect(markers).not.toContain(avroNameOf(name));
        expect(markers).not.toContain(recordSegmentOf(name));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('recordSegmentOf', () => {
  it.each(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])('escapes the primitive type name %s, which avsc refuses as a record name', (primitive) => {
    expect(() => avro.Type.forSchema({ type: 'record', name: `a.${primitive}`, fields: [] })).toThrow(/primitive/);
    const segment = recordSegmentOf(primitive);
    expect(segment).not.toBe(primitive);
    expect(jsonNameOf(segment)).toBe(primitive);
    expect(avro.Type.forSchema({ type: 'record', name: `a.${segment}`, fields: [] }).name).toBe(`a.${segment}`);
  });

  it('is injective and reversible like avroNameOf', () => {
    fc.assert(
      fc.property(anyName, anyName, (a, b) => {
        expect(jsonNameOf(recordSegmentOf(a))).toBe(a);
        expect(isAvroName(recordSegmentOf(a))).toBe(true);
        if (a !== b) {
          expect(recordSegmentOf(a)).not.toBe(recordSegmentOf(b));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
