import type avro from 'avsc';
import { compileFromAvro, compileToAvro } from './convert.ts';
import { DecodeError, EncodeError, NotSingleObjectEncodingError, SchemaError, UnknownFingerprintError } from './errors.ts';
import { compileFastCheck } from './fast-check.ts';
import type { EventEnvelope, KubeObject } from './generated/types.ts';
import { isKind, KINDS } from './keys.ts';
import { HEADER_LENGTH, type SchemaRegistry, type SchemaVersion } from './registry.ts';
import { createResolver } from './resolver.ts';
import { shortName, viewOf } from './schema-view.ts';
import { findProblem } from './validate.ts';

/** Whether an object fits the writer schema of its kind; if not, the first bad field. */
export type ObjectShapeResult =
  | { valid: true; object: KubeObject }
  | {
      valid: false;
      /** Relative to the object, e.g. `spec.containers[0].ports[0].containerPort`. */
      path: string;
      /** What is wrong, e.g. `expected int, got "80"`. */
      detail: string;
    };

/** Encodes events with one writer schema and decodes events written with any registered one. */
export type EventCodec = {
  /**
   * Avro single-object encoding of an event: 0xC3 0x01, the writer schema's CRC-64-AVRO
   * fingerprint (8 bytes, little-endian), the Avro binary body. Absent optional fields are
   * written as null. Throws `EncodeError` naming the first field that does not fit,
   * including fields the schema does not declare (nothing is dropped silently).
   */
  encode(event: EventEnvelope): Buffer;
  /**
   * Decodes an event written with any registered version, resolved to the newest schema.
   * Optional fields of Kubernetes objects and statuses that are null come back absent,
   * and so do null fields marked `"logplane.optional"` (`decidedAt`); other null event
   * fields (`causationId`) come back null.
   * Throws `NotSingleObjectEncodingError`, `UnknownFingerprintError` or `DecodeError`.
   */
  decode(buf: Uint8Array): EventEnvelope;
  /** Checks a would-be object against the writer schema of its `kind`, without encoding it. */
  validateObject(object: unknown): ObjectShapeResult;
};

type Resolver = ReturnType<avro.Type['createResolver']>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INITIAL_SCRATCH_BYTES = 16 * 1024;

/**
 * Creates a codec over a registry. Everything per schema (avsc types, resolvers from each
 * older version to the newest, value converters) is built here, once; `encode` and
 * `decode` only walk values.
 *
 * @param options.writer - the version to write; default the newest. Only fixtures and
 *   compatibility tests write older versions.
 */
export function createEventCodec(options: { registry: SchemaRegistry; writer?: SchemaVersion }): EventCodec {
  const { registry } = options;
  const writer = options.writer ?? registry.current;
  const reader = registry.current;
  const resolvers = new Map<SchemaVersion, Resolver | undefined>(
    registry.versions.map((version) => [
      version,
      version === reader ? undefined : createResolver(reader.type, version.type),
    ]),
  );
  const fromAvro = compileFromAvro(reader.type);
  const toAvro = compileToAvro(writer.type) ?? ((value: unknown) => value);
  const objectTypes = kindRecords(writer);
  // Valid values (all of them, but for bugs and bad requests) pass the compiled check; avsc
  // judges and describes the rest (see `compileFastCheck`).
  const fitsWriter = compileFastCheck(writer.type);
  const fitsObject = new Map([...objectTypes].map(([kind, type]) => [kind, compileFastCheck(type)]));
  // Objects are checked in avsc's representation, as they are encoded: JSON values
  // (RawExtension, FieldsV1 of managedFields) are records there.
  const objectToAvro = new Map([...objectTypes].map(([kind, type]) => [kind, compileToAvro(type) ?? ((value: unknown) => value)]));
  let scratch = withHeader(Buffer.allocUnsafe(INITIAL_SCRATCH_BYTES), writer);

  const encode = (event: EventEnvelope): Buffer => {
    const value = toAvro(event);
    const problem = (fitsWriter(value) ? undefined : findProblem(writer.type, value)) ?? findIdProblem(event);
    if (problem !== undefined) {
      throw new EncodeError(problem.path, problem.detail);
    }
    let end = writer.type.encode(value, scratch, HEADER_LENGTH);
    if (end < 0) {
      scratch = withHeader(Buffer.allocUnsafe(2 * (scratch.length - end)), writer);
      end = writer.type.encode(value, scratch, HEADER_LENGTH);
    }
    const out = Buffer.allocUnsafe(end);
    scratch.copy(out, 0, 0, end);
    return out;
  };

  const decode = (bytes: Uint8Array): EventEnvelope => {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buf.length < HEADER_LENGTH || buf[0] !== 0xc3 || buf[1] !== 0x01) {
      throw new NotSingleObjectEncodingError(buf.length, buf.subarray(0, HEADER_LENGTH).toString('hex'));
    }
    const version = registry.find(buf);
    if (version === undefined) {
      throw new UnknownFingerprintError(
        buf.readBigUInt64LE(2).toString(16).padStart(16, '0'),
        registry.versions.map((known) => `${known.name} ${known.fingerprintHex}`),
      );
    }
    let decoded: { value: unknown; offset: number };
    try {
      decoded = reader.type.decode(buf, HEADER_LENGTH, resolvers.get(version));
    } catch (err) {
      throw new DecodeError(version.name, (err as Error).message, { cause: err });
    }
    if (decoded.offset !== buf.length) {
      throw new DecodeError(
        version.name,
        decoded.offset < 0 ? 'the body is truncated' : `${buf.length - decoded.offset} trailing byte(s) after the body`,
      );
    }
    return fromAvro(decoded.value) as EventEnvelope;
  };

  const validateObject = (object: unknown): ObjectShapeResult => {
    if (typeof object !== 'object' || object === null || Array.isArray(object)) {
      return { valid: false, path: '', detail: 'expected an object' };
    }
    const { kind, ...fields } = object as Record<string, unknown>;
    const type = isKind(kind) ? objectTypes.get(kind) : undefined;
    if (type === undefined) {
      return { valid: false, path: 'kind', detail: `expected one of ${[...objectTypes.keys()].join(', ')}, got ${JSON.stringify(kind) ?? 'nothing'}` };
    }
    const value = (objectToAvro.get(kind as string) as (value: unknown) => unknown)(fields);
    const problem = (fitsObject.get(kind as string) as (value: unknown) => boolean)(value) ? undefined : findProblem(type, value);
    return problem === undefined ? { valid: true, object: object as KubeObject } : { valid: false, ...problem };
  };

  return { encode, decode, validateObject };
}

function findIdProblem(event: EventEnvelope): { path: string; detail: string } | undefined {
  if (!UUID.test(event.id)) {
    return { path: 'id', detail: `expected a UUID, got ${JSON.stringify(event.id)}` };
  }
  if (event.causationId != null && !UUID.test(event.causationId)) {
    return { path: 'causationId', detail: `expected a UUID or null, got ${JSON.stringify(event.causationId)}` };
  }
  return undefined;
}

/** The record of each kind in a version: the branches of ObjectCreated's `KubeObject` union, by kind. */
function kindRecords(version: SchemaVersion): Map<string, avro.Type> {
  const created = version.types['logplane.event.ObjectCreated'];
  if (created === undefined) {
    throw new SchemaError(`schema ${version.name} does not define logplane.event.ObjectCreated`);
  }
  const union = viewOf((created as avro.types.RecordType).field('object').type);
  if (union.type !== 'union') {
    throw new SchemaError(`schema ${version.name}: ObjectCreated.object is not a union`);
  }
  const records = new Map<string, avro.Type>();
  for (const branch of union.branches) {
    const view = viewOf(branch);
    if (view.type === 'record') {
      records.set(view.kind?.kind ?? shortName(view.name), branch);
    }
  }
  return records;
}

function withHeader(buf: Buffer, writer: SchemaVersion): Buffer {
  writer.header.copy(buf, 0);
  return buf;
}
