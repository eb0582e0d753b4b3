/**
 * logplane's event and object schemas: Avro schemas of every released version under
 * `schemas/avro/`, TypeScript types generated from the newest, and the codec.
 */
export * from './generated/types.ts';
export { assertNever } from './assert-never.ts';
export { canonicalJson, sameJson } from './canonical-json.ts';
export { createEventCodec, type EventCodec, type ObjectShapeResult } from './codec.ts';
export {
  DecodeError,
  EncodeError,
  InvalidObjectKeyError,
  NotSingleObjectEncodingError,
  SchemaError,
  UnknownFingerprintError,
} from './errors.ts';
export { decodeEvent, encodeEvent, validateObjectShape } from './events.ts';
export { carriesTime, eventIdTime, newEventId } from './event-id.ts';
export { CLUSTER_SCOPED, isKind, kindOfRef, kindRef, KINDS, objectKey, parseObjectKey, type ObjectOfKind } from './keys.ts';
export { loadSchemaRegistry, type SchemaRegistry, type SchemaVersion } from './registry.ts';
