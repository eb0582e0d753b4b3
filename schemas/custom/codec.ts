/**
 * Encodes and decodes the content of custom objects with a content schema.
 */
import type { CustomContentSchema } from './content-schema.ts';
import { compileContentConverters } from './convert.ts';
import { fingerprintOf, parseContentSchema, resolverFrom, type Resolver } from './avro-type.ts';
import { CustomDecodeError } from './errors.ts';

/** The content of a custom object: the object without `apiVersion`, `kind` and `metadata`. */
export type CustomContent = Record<string, unknown>;

/** A compiled content schema. */
export interface CustomObjectCodec {
  /** The schema it was compiled from (the reader schema of `decodeResolved`). */
  readonly schema: CustomContentSchema;
  /** The schema's CRC-64-AVRO fingerprint, 16 lower-case hex digits. */
  readonly fingerprint: string;
  /**
   * The Avro binary encoding of the content (no header, no fingerprint).
   *
   * @throws CustomEncodeError naming the JSON path of the first value that does not fit.
   */
  encode(content: CustomContent): Buffer;
  /**
   * The content back from bytes written with this schema: absent properties are absent,
   * an explicit null of a nullable property is null, integers are JavaScript numbers.
   *
   * @throws CustomDecodeError when the bytes are not an encoding under this schema.
   */
  decode(bytes: Buffer): CustomContent;
  /**
   * The content from bytes written with `writer`, an older schema of the same kind, read
   * into this schema by Avro resolution (see `canResolve`). Resolvers are kept per writer
   * schema object and per writer fingerprint, so pass the same object for the same schema.
   *
   * @throws CustomDecodeError when the writer does not resolve to this schema or the bytes are corrupt.
   */
  decodeResolved(writer: CustomContentSchema, bytes: Buffer): CustomContent;
}

/**
 * Compiles a content schema (from `customContentSchema`, or read back from the log) once;
 * encoding and decoding then only walk values.
 *
 * @throws CustomSchemaError when the schema is not a content schema avsc accepts.
 */
export function createCustomObjectCodec(schema: CustomContentSchema): CustomObjectCodec {
  const type = parseContentSchema(schema);
  const { toAvro, fromAvro } = compileContentConverters(schema);
  const fingerprint = fingerprintOf(schema);
  const name = type.name ?? 'the content schema';
  const resolvers = new Map<string, Resolver | null>();
  const resolversBySchema = new WeakMap<CustomContentSchema, Resolver | null>();

  /** The resolver from a writer schema, null when it is this schema. */
  const resolverOf = (writer: CustomContentSchema): Resolver | null => {
    const known = resolversBySchema.get(writer);
    if (known !== undefined) {
      return known;
    }
    const writerFingerprint = fingerprintOf(writer);
    let resolver = resolvers.get(writerFingerprint);
    if (resolver === undefined) {
      try {
        resolver = writerFingerprint === fingerprint ? null : resolverFrom(type, writer);
      } catch (error) {
        throw new CustomDecodeError(writerNameOf(writer), (error as Error).message, { cause: error });
      }
      resolvers.set(writerFingerprint, resolver);
    }
    resolversBySchema.set(writer, resolver);
    return resolver;
  };

  const read = (bytes: Buffer, writerName: string, resolver?: Resolver): CustomContent => {
    let value: unknown;
    try {
      value = resolver === undefined ? type.fromBuffer(bytes) : type.fromBuffer(bytes, resolver);
    } catch (error) {
      throw new CustomDecodeError(writerName, (error as Error).message, { cause: error });
    }
    return fromAvro(value);
  };

  return {
    schema,
    fingerprint,
    encode: (content) => type.toBuffer(toAvro(content)),
    decode: (bytes) => read(bytes, name),
    decodeResolved: (writer, bytes) => {
      const resolver = resolverOf(writer);
      return resolver === null ? read(bytes, name) : read(bytes, writerNameOf(writer), resolver);
    },
  };
}

function writerNameOf(writer: CustomContentSchema): string {
  return typeof writer.name === 'string' ? writer.name : 'the writer schema';
}
