/**
 * fast-check arbitraries of custom object content valid under a CRD schema (as the apiserver
 * stores it: pruned, nulls only where nullable), for the round-trip tests.
 */
import fc from 'fast-check';
import type { StructuralSchema } from './content-schema.ts';
import { MAX_EXACT_LONG, MIN_EXACT_LONG } from './convert.ts';

const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const ENVELOPE: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/** Object keys as users write them (any Unicode) but never a prototype key. */
export const objectKey = (): fc.Arbitrary<string> => fc.string({ unit: 'grapheme', maxLength: 8 }).filter((key) => !PROTOTYPE_KEYS.has(key));

/** A number as JSON text carries it: finite, and 0 rather than -0 (JSON.stringify(-0) is "0"). */
const jsonNumber = (): fc.Arbitrary<number> => fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => (Object.is(value, -0) ? 0 : value));
const jsonInteger = (): fc.Arbitrary<number> => fc.maxSafeInteger().map((value) => (Object.is(value, -0) ? 0 : value));
/** An integer an `integer` property stores exactly (`MIN_EXACT_LONG` … `MAX_EXACT_LONG`). */
const storedInteger = (): fc.Arbitrary<number> => fc.integer({ min: MIN_EXACT_LONG, max: MAX_EXACT_LONG }).map((value) => (Object.is(value, -0) ? 0 : value));

/** Any JSON value: nested arrays and objects of any key, numbers integral or not, nulls. */
export const jsonValue = (): fc.Arbitrary<unknown> =>
  fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(null),
      fc.boolean(),
      jsonInteger(),
      jsonNumber(),
      fc.string({ unit: 'grapheme' }),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(objectKey(), tie('value'), { maxKeys: 4 }),
    ),
  })).value;

/** Content valid under a CRD version's `openAPIV3Schema` (every top-level property but apiVersion, kind and metadata). */
export function arbitraryContent(schema: StructuralSchema): fc.Arbitrary<Record<string, unknown>> {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
    return fc.dictionary(objectKey().filter((key) => !ENVELOPE.has(key)), jsonValue(), { maxKeys: 4 });
  }
  const properties = Object.entries(schema.properties ?? {}).filter(([name]) => !ENVELOPE.has(name));
  return fc.record(Object.fromEntries(properties.map(([name, property]) => [name, arbitraryValue(property)])), { requiredKeys: [] });
}

/** A value valid under one node of a structural schema. */
export function arbitraryValue(schema: StructuralSchema): fc.Arbitrary<unknown> {
  const nullable = <T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | null> => (schema.nullable === true ? fc.option(value, { nil: null }) : value);
  if (schema['x-kubernetes-preserve-unknown-fields'] === true || schema['x-kubernetes-embedded-resource'] === true || schema.type === undefined) {
    return schema['x-kubernetes-int-or-string'] === true ? nullable(fc.oneof(storedInteger(), fc.string())) : jsonValue();
  }
  switch (schema.type) {
    case 'string':
      return nullable(fc.string({ unit: 'grapheme' }));
    case 'integer':
      return nullable(storedInteger());
    case 'number':
      return nullable(jsonNumber());
    case 'boolean':
      return nullable(fc.boolean());
    case 'array':
      return nullable(fc.array(arbitraryValue(schema.items as StructuralSchema), { maxLength: 3 }));
    case 'object': {
      const { additionalProperties } = schema;
      if (additionalProperties === true) {
        return nullable(fc.dictionary(objectKey(), jsonValue(), { maxKeys: 3 }));
      }
      if (typeof additionalProperties === 'object') {
        return nullable(fc.dictionary(objectKey(), arbitraryValue(additionalProperties), { maxKeys: 3 }));
      }
      const properties = Object.entries(schema.properties ?? {});
      return nullable(fc.record(Object.fromEntries(properties.map(([name, property]) => [name, arbitraryValue(property)])), { requiredKeys: [] }));
    }
    default:
      throw new Error(`no arbitrary for type ${String(schema.type)}`);
  }
}
