/**
 * Every kind, with every field set by walking the API document (`openapi-samples.ts`,
 * independent of the generator), survives encode → decode with the draft schema unchanged.
 */
import type avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/samples.ts';
import type { EventBody } from '../generated/types.ts';
import { KIND_DESCRIPTORS } from '../kinds/generated.ts';
import { kindRefOf } from '../kinds/refs.ts';
import { compileDraftConverters, jsonFromAvro, jsonToAvro, loadDraftVersion } from './draft-convert.ts';
import { DRAFT_DIR } from './draft.ts';
import { ARBITRARY_JSON, sampleObject } from './openapi-samples.ts';
import { loadApiDocument } from './openapi.ts';

const document = loadApiDocument();
const draft = loadDraftVersion(DRAFT_DIR, 'v5');
const { toAvro, fromAvro } = compileDraftConverters(draft, draft.version.type);

/** Counts the leaves (scalars, empty arrays and maps) of a value: how much a sample sets. */
function leaves(value: unknown): number {
  if (typeof value !== 'object' || value === null) {
    return 1;
  }
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.length === 0 ? 1 : children.reduce((sum: number, child) => sum + leaves(child), 0);
}

describe('round trip through the draft of objects built from the API document', () => {
  it.each(KIND_DESCRIPTORS.map((kind) => ({ kind: kind.kind, group: kind.group, definition: kind.definition })))(
    '$group/$kind with every field set',
    ({ kind, group, definition }) => {
      const object = sampleObject(document, definition);
      expect(object.kind).toBe(kind);
      const event = envelope({ type: 'ObjectCreated', object } as unknown as EventBody, `${kindRefOf(group, kind)}/ns/name`);
      const buf = draft.version.type.toBuffer(toAvro(event));
      expect(fromAvro(draft.version.type.fromBuffer(buf))).toStrictEqual(event);
      expect(leaves(object)).toBeGreaterThan(2);
    },
  );

  it('tells core/v1 Event from events.k8s.io/v1 Event by apiVersion', () => {
    const required = { v1: { involvedObject: {} }, 'events.k8s.io/v1': { eventTime: '2026-01-05T10:00:00.000000Z' } };
    for (const [apiVersion, fields] of Object.entries(required)) {
      const object = { kind: 'Event', apiVersion, metadata: { name: 'e' }, ...fields };
      const event = envelope({ type: 'ObjectCreated', object } as unknown as EventBody);
      const avsc = toAvro(event) as { body: Record<string, { object: Record<string, unknown> }> };
      const branch = Object.keys(avsc.body['logplane.event.ObjectCreated']?.object ?? {})[0];
      expect(branch).toBe(apiVersion === 'v1' ? 'logplane.k8s.core.v1.Event' : 'logplane.k8s.events.v1.Event');
      expect(fromAvro(draft.version.type.fromBuffer(draft.version.type.toBuffer(avsc)))).toStrictEqual(event);
    }
  });

  it('keeps any JSON value in the JSON value type', () => {
    const type = draft.version.types['logplane.json.JsonValue'] as avro.Type;
    for (const value of [ARBITRARY_JSON, null, 0, -1.5, 'x', [], {}, [[[]]], { a: { b: null } }, Number.MAX_VALUE, 2 ** 53 + 2]) {
      expect(jsonFromAvro(type.fromBuffer(type.toBuffer(jsonToAvro(value))))).toStrictEqual(value);
    }
  });

  it('refuses a field the schema does not have', () => {
    const event = envelope({ type: 'ObjectCreated', object: { kind: 'ConfigMap', apiVersion: 'v1', dta: {} } } as unknown as EventBody);
    expect(() => toAvro(event)).toThrow(/ConfigMap has no field dta/);
  });
});
