/**
 * Reads Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), which
 * kubectl's typed clients send (`kubectl create deployment|namespace|service …`) and
 * which client-go does not retry as JSON. The body is the `k8s\0` magic and a
 * `runtime.Unknown` {typeMeta, raw}; `raw` is the object in the wire format of
 * k8s.io/api's generated.proto, decoded here with tables of field numbers (`protobuf/`, one module per API group) into the
 * Kubernetes JSON shape, so admission treats it like any JSON body.
 *
 * The tables cover the kinds kubectl's typed clients send to logplane (plus Binding, Scale, DeleteOptions,
 * TokenRequest); a kind whose versions differ has one message per version. Fields
 * of message types logplane does not model decode to an opaque non-empty marker, so the
 * schema check reports them as unknown fields by their real names. Like gogo-protobuf
 * JSON, zero scalars of non-pointer fields mean "absent"; fields where zero is a value
 * (`replicas: 0`) are marked `keepZero`.
 */
import { apiErrors } from './errors.ts';
import { kindMessage, MESSAGES } from './protobuf/messages.ts';
import type { FieldSpec, Scalar } from './protobuf/spec.ts';

/** The first bytes of every Kubernetes protobuf body. */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const malformed = (detail: string) => apiErrors.badRequest(`the protobuf body cannot be read: ${detail}`);

/** A cursor over protobuf bytes. */
class Reader {
  offset = 0;
  constructor(readonly buf: Buffer) {}
  get done(): boolean {
    return this.offset >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.offset >= this.buf.length) throw malformed('truncated varint');
      const byte = this.buf[this.offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw malformed('varint too long');
    }
  }
  bytes(): Buffer {
    const length = Number(this.varint());
    if (this.offset + length > this.buf.length) throw malformed('truncated length-delimited field');
    const out = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.offset += 8;
        return;
      case 2:
        this.bytes();
        return;
      case 5:
        this.offset += 4;
        return;
      default:
        throw malformed(`unsupported wire type ${wireType}`);
    }
  }
}

/** Yields (field number, wire type, reader positioned at the value) for each field of a message. */
function* fields(buf: Buffer): Generator<{ number: number; wireType: number; reader: Reader }> {
  const reader = new Reader(buf);
  while (!reader.done) {
    const key = Number(reader.varint());
    yield { number: key >>> 3, wireType: key & 7, reader };
  }
}

/** Zero scalars, which gogo-protobuf writes for non-pointer fields that JSON would omit. */
const isZero = (value: unknown): boolean => value === '' || value === 0 || value === false;

const toTime = (message: Record<string, unknown>): string | undefined => {
  const seconds = Number(message['seconds'] ?? 0);
  if (seconds === 0 && Number(message['nanos'] ?? 0) === 0) return undefined;
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
};

/** Decodes one value of a scalar kind or message type from a field. */
const decodeValue = (spec: FieldSpec, wireType: number, reader: Reader): unknown => {
  const type = spec.type;
  if (type.startsWith('message:')) {
    if (wireType !== 2) throw malformed(`field ${spec.name}: expected a message`);
    return decodeMessage(reader.bytes(), type.slice('message:'.length));
  }
  switch (type as Scalar) {
    case 'string':
      if (wireType !== 2) throw malformed(`field ${spec.name}: expected a string`);
      return reader.bytes().toString('utf8');
    case 'bytes':
      if (wireType !== 2) throw malformed(`field ${spec.name}: expected bytes`);
      return reader.bytes().toString('base64');
    case 'int32':
      return Number(BigInt.asIntN(32, reader.varint()));
    case 'int64':
      return Number(BigInt.asIntN(64, reader.varint()));
    case 'bool':
      return reader.varint() !== 0n;
    case 'time':
      return toTime(decodeMessage(reader.bytes(), 'Time'));
    case 'quantity':
      return decodeMessage(reader.bytes(), 'Quantity')['string'] ?? '0';
    case 'intOrString': {
      const value = decodeMessage(reader.bytes(), 'IntOrString');
      return Number(value['type'] ?? 0) === 1 ? (value['strVal'] ?? '') : (value['intVal'] ?? 0);
    }
    case 'opaque': {
      const bytes = wireType === 2 ? reader.bytes() : (reader.skip(wireType), Buffer.alloc(1));
      return bytes.length === 0 ? {} : { '(protobuf)': `${bytes.length} bytes` };
    }
    default:
      throw malformed(`unknown field type ${type}`);
  }
};

/** Decodes a message of `name` into its Kubernetes JSON shape. */
const decodeMessage = (buf: Buffer, name: string): Record<string, unknown> => {
  const table = MESSAGES[name];
  if (!table) throw malformed(`no table for message ${name}`);
  const out: Record<string, unknown> = {};
  for (const { number, wireType, reader } of fields(buf)) {
    const spec = table[number];
    if (!spec) {
      const bytes = wireType === 2 ? reader.bytes().length : (reader.skip(wireType), 1);
      out[`protobufField${number}`] = bytes === 0 ? {} : true;
      continue;
    }
    if (spec.map) {
      const entry: Record<string, unknown> = {};
      for (const item of fields(reader.bytes())) {
        if (item.number === 1) entry['key'] = item.reader.bytes().toString('utf8');
        else if (item.number === 2) entry['value'] = decodeValue({ ...spec, map: false }, item.wireType, item.reader);
        else item.reader.skip(item.wireType);
      }
      const target = (out[spec.name] ??= {}) as Record<string, unknown>;
      // An own property whatever the key, so a key such as `__proto__` is data that the
      // body check after decoding rejects, never a prototype.
      Object.defineProperty(target, String(entry['key'] ?? ''), {
        value: entry['value'] ?? (spec.type === 'string' ? '' : undefined),
        writable: true,
        enumerable: true,
        configurable: true,
      });
      continue;
    }
    const scalarNumeric = spec.type === 'int32' || spec.type === 'int64' || spec.type === 'bool';
    if (spec.repeated && scalarNumeric && wireType === 2) {
      const packed = new Reader(reader.bytes());
      const values = (out[spec.name] ??= []) as unknown[];
      while (!packed.done) values.push(decodeValue(spec, 0, packed));
      continue;
    }
    const value = decodeValue(spec, wireType, reader);
    if (spec.inline && typeof value === 'object' && value !== null) {
      Object.assign(out, value);
    } else if (spec.repeated) {
      ((out[spec.name] ??= []) as unknown[]).push(value);
    } else if (value !== undefined && (spec.keepZero || !isZero(value))) {
      out[spec.name] = value;
    }
  }
  return out;
};

/**
 * Decodes a Kubernetes protobuf body into the JSON object it stands for (with apiVersion
 * and kind from its type meta). 415 for kinds without a table, 400 for malformed bytes.
 */
export const decodeKubernetesProtobuf = (body: Buffer): Record<string, unknown> => {
  if (!body.subarray(0, 4).equals(PROTOBUF_MAGIC)) throw malformed('missing the k8s\\0 prefix');
  let raw: Buffer | undefined;
  const typeMeta: Record<string, unknown> = {};
  for (const { number, wireType, reader } of fields(body.subarray(4))) {
    if (number === 1 && wireType === 2) Object.assign(typeMeta, decodeMessage(reader.bytes(), 'TypeMeta'));
    else if (number === 2 && wireType === 2) raw = reader.bytes();
    else reader.skip(wireType);
  }
  const kind = String(typeMeta['kind'] ?? '');
  const message = kindMessage(String(typeMeta['apiVersion'] ?? ''), kind);
  if (!message) {
    throw apiErrors.unsupportedMediaType(`logplane cannot read ${kind || 'this object'} as ${PROTOBUF_MEDIA_TYPE}; send application/json`);
  }
  const object = decodeMessage(raw ?? Buffer.alloc(0), message);
  return { ...(typeMeta['apiVersion'] ? { apiVersion: typeMeta['apiVersion'] } : {}), kind, ...object };
};

/** Encodes an object the way client-go does (tests build typed-client bodies with it). */
export const encodeKubernetesProtobuf = (apiVersion: string, kind: string, object: Record<string, unknown>): Buffer => {
  const typeMeta = encodeMessage({ apiVersion, kind }, 'TypeMeta');
  const message = kindMessage(apiVersion, kind);
  if (!message) throw new Error(`no protobuf table for ${apiVersion} ${kind}`);
  const raw = encodeMessage(object, message);
  return Buffer.concat([PROTOBUF_MAGIC, field(1, 2, typeMeta), field(2, 2, raw)]);
};

const varint = (value: bigint): Buffer => {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return Buffer.from(bytes);
};

const field = (number: number, wireType: number, payload: Buffer | bigint): Buffer =>
  Buffer.concat([varint(BigInt((number << 3) | wireType)), typeof payload === 'bigint' ? varint(payload) : Buffer.concat([varint(BigInt(payload.length)), payload])]);

const encodeValue = (spec: FieldSpec, number: number, value: unknown): Buffer => {
  if (spec.type.startsWith('message:')) return field(number, 2, encodeMessage(value as Record<string, unknown>, spec.type.slice(8)));
  switch (spec.type as Scalar) {
    case 'string':
      return field(number, 2, Buffer.from(String(value), 'utf8'));
    case 'bytes':
      return field(number, 2, Buffer.from(String(value), 'base64'));
    case 'int32':
    case 'int64':
      return field(number, 0, BigInt(value as number));
    case 'bool':
      return field(number, 0, value ? 1n : 0n);
    case 'time':
      return field(number, 2, encodeMessage({ seconds: Math.floor(Date.parse(String(value)) / 1000) }, 'Time'));
    case 'quantity':
      return field(number, 2, encodeMessage({ string: String(value) }, 'Quantity'));
    case 'intOrString':
      return field(number, 2, encodeMessage(typeof value === 'string' ? { type: 1, strVal: value } : { type: 0, intVal: value }, 'IntOrString'));
    case 'opaque':
      return field(number, 2, Buffer.from([0x0a, 0x00]));
    default:
      throw new Error(`cannot encode ${spec.type}`);
  }
};

const encodeMessage = (object: Record<string, unknown>, name: string): Buffer => {
  const table = MESSAGES[name]!;
  const parts: Buffer[] = [];
  for (const [numberText, spec] of Object.entries(table)) {
    const number = Number(numberText);
    if (spec.inline) {
      const inner = Object.fromEntries(Object.values(MESSAGES[spec.type.slice(8)]!).filter((s) => s.name in object).map((s) => [s.name, object[s.name]]));
      if (Object.keys(inner).length > 0) parts.push(field(number, 2, encodeMessage(inner, spec.type.slice(8))));
      continue;
    }
    const value = object[spec.name];
    if (value === undefined) continue;
    if (spec.map) {
      for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
        parts.push(field(number, 2, Buffer.concat([field(1, 2, Buffer.from(key)), encodeValue({ ...spec, map: false }, 2, entry)])));
      }
    } else if (spec.repeated) {
      for (const item of value as unknown[]) parts.push(encodeValue(spec, number, item));
    } else {
      parts.push(encodeValue(spec, number, value));
    }
  }
  return Buffer.concat(parts);
};
