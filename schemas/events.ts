import { createEventCodec, type EventCodec, type ObjectShapeResult } from './codec.ts';
import type { EventEnvelope } from './generated/types.ts';
import { loadSchemaRegistry } from './registry.ts';

let defaultCodec: EventCodec | undefined;

/** The codec over `schemas/avro/`, writing the newest version; built on first use. */
function codec(): EventCodec {
  defaultCodec ??= createEventCodec({ registry: loadSchemaRegistry() });
  return defaultCodec;
}

/**
 * Encodes an event with Avro single-object encoding (0xC3 0x01, the 8-byte little-endian
 * CRC-64-AVRO fingerprint of the newest schema, the Avro body). Absent optional fields are
 * written as null. Throws `EncodeError` naming the first field that does not fit the
 * schema; fields the schema does not declare are rejected, never dropped.
 */
export function encodeEvent(event: EventEnvelope): Buffer {
  return codec().encode(event);
}

/**
 * Decodes an event written with any released schema version (found by fingerprint) into
 * the newest schema's shape. Null optional fields of objects and statuses, and null
 * `"logplane.optional"` envelope fields (`decidedAt`), come back absent, so
 * `decodeEvent(encodeEvent(e))` deep-equals an `e` that omits them.
 * Accepts any `Uint8Array` view (e.g. from LMDB), not only Buffers, without copying.
 * Throws `NotSingleObjectEncodingError`, `UnknownFingerprintError` or `DecodeError`.
 */
export function decodeEvent(buf: Uint8Array): EventEnvelope {
  return codec().decode(buf);
}

/**
 * Whether a would-be object (e.g. a request body) fits the schema of its `kind`, and if
 * not, the path of the first bad field (`spec.containers[0].ports[0].containerPort`) —
 * including fields logplane does not support, which `encodeEvent` would reject.
 */
export function validateObjectShape(object: unknown): ObjectShapeResult {
  return codec().validateObject(object);
}
