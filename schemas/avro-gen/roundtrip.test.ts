/**
 * Every kind, with every field set by walking the API document (`openapi-samples.ts`,
 * independent of the generator), survives encode → decode with the draft schema unchanged.
 */
import type avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/samples.ts';
import type { EventBody } from '../generated/types.ts';
import { STORED_KINDS } from '../kinds/registry.ts';
import { decodeEvent, encodeEvent } from '../events.ts';
import { EncodeError } from '../errors.ts';
import { compileDraftConverters, jsonFromAvro, jsonToAvro, loadDraftVersion } from './draft-convert.ts';
import { DRAFT_DIR, GENERATED_VERSION } from './draft.ts';
import { ARBITRARY_JSON, sampleObject } from './openapi-samples.ts';
import { loadApiDocument } from './openapi.ts';

const document = loadApiDocument();
const draft = loadDraftVersion(DRAFT_DIR, GENERATED_VERSION);
const { toAvro, fromAvro } = compileDraftConverters(draft, draft.version.type);

/** Counts the leaves (scalars, empty arrays and maps) of a value: how much a sample sets. */
function leaves(value: unknown): number {
  if (typeof value !== 'object' || value === null) {
    return 1;
  }
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.length === 0 ? 1 : children.reduce((sum: number, child) => sum + leaves(child), 0);
}

describe('round trip of objects built from the API document', () => {
  it.each(STORED_KINDS.map((kind) => ({ kind: kind.kind, group: kind.group, definition: kind.definition, ref: kind.ref })))(
    '$group/$kind with every field set, through the draft converters and through the codec',
    ({ kind, definition, ref }) => {
      const object = sampleObject(document, definition);
      expect(object.kind).toBe(kind);
      const event = envelope({ type: 'ObjectCreated', object } as unknown as EventBody, `${ref}/ns/name`);
      const buf = draft.version.type.toBuffer(toAvro(event));
      expect(fromAvro(draft.version.type.fromBuffer(buf))).toStrictEqual(event);
      expect(decodeEvent(encodeEvent(event))).toStrictEqual(event);
      expect(leaves(object)).toBeGreaterThan(2);
    },
  );

  it('keeps any JSON value in the JSON value type', () => {
    const type = draft.version.types['logplane.json.JsonValue'] as avro.Type;
    for (const value of [ARBITRARY_JSON, null, 0, -1.5, 'x', [], {}, [[[]]], { a: { b: null } }, Number.MAX_VALUE, 2 ** 53 + 2]) {
      expect(jsonFromAvro(type.fromBuffer(type.toBuffer(jsonToAvro(value))))).toStrictEqual(value);
    }
  });

  it('refuses a field the schema does not have', () => {
    const event = envelope({ type: 'ObjectCreated', object: { kind: 'ConfigMap', apiVersion: 'v1', dta: {} } } as unknown as EventBody);
    expect(() => toAvro(event)).toThrow(/ConfigMap has no field dta/);
    expect(() => encodeEvent(event)).toThrow(EncodeError);
    expect(() => encodeEvent(event)).toThrow(/body\.object\.dta/);
  });
});
