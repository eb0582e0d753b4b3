/**
 * Parsing content schemas with avsc, their fingerprints, and whether one resolves to another.
 */
import avro from 'avsc';
import { fingerprintHex, schemaFingerprint } from '../fingerprint.ts';
import { createResolver } from '../resolver.ts';
import type { CustomContentSchema } from './content-schema.ts';
import { CustomSchemaError } from './errors.ts';
import { jsonNameOf } from './names.ts';

/** avsc's resolver from a writer type to a reader type. */
export type Resolver = ReturnType<typeof createResolver>;

/**
 * The avsc type of a content schema: unions wrapped (`{"long": 1}`; a JSON number could be
 * either branch of int-or-string's `["long", "string"]` otherwise … and of JsonValue's
 * `long`/`double`), records as plain objects without avsc's methods.
 *
 * @throws CustomSchemaError when avsc refuses the schema.
 */
export function parseContentSchema(schema: CustomContentSchema): avro.Type {
  try {
    return avro.Type.forSchema(schema as unknown as avro.Schema, { wrapUnions: true, omitRecordMethods: true });
  } catch (error) {
    throw new CustomSchemaError(`not a valid Avro schema: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * The CRC-64-AVRO fingerprint of a content schema's Parsing Canonical Form, as 16 lower-case
 * hex digits: what identifies the schema in the log (attributes, docs and defaults are not
 * part of it).
 */
export function fingerprintOf(schema: CustomContentSchema): string {
  return fingerprintHex(schemaFingerprint(parseContentSchema(schema)));
}

/** Whether objects written with one schema read with another, and if not, why. */
export type Resolution = { readonly resolvable: true } | { readonly resolvable: false; readonly reason: string };

/**
 * Whether every object written with `writer` reads with `reader` by Avro schema resolution:
 * fields added to the reader (all optional, default null) are absent, fields the reader
 * lacks are dropped, `long` widens to `double`; a changed type (`string` → `integer`), a
 * property that is no longer nullable, a record that became a JSON value or another kind
 * of record (another name) does not resolve. A CRD change that does not resolve is still
 * accepted (as kube does): its old objects are read with their own writer schema.
 */
export function canResolve(writer: CustomContentSchema, reader: CustomContentSchema): Resolution {
  const readerType = parseContentSchema(reader);
  const writerType = parseContentSchema(writer);
  try {
    createResolver(readerType, writerType);
    return { resolvable: true };
  } catch (error) {
    return { resolvable: false, reason: whyNot(readerType, writerType, '') ?? (error as Error).message };
  }
}

/**
 * Why `writer` does not resolve to `reader`, naming the JSON path of the first value that
 * does not (`spec.version: string cannot be read as long`); undefined when it resolves.
 * avsc's own message names only the outermost union that failed.
 */
function whyNot(reader: avro.Type, writer: avro.Type, path: string): string | undefined {
  if (resolves(reader, writer)) {
    return undefined;
  }
  const writerBranches = branchesOf(writer);
  if (writerBranches !== undefined) {
    for (const branch of writerBranches) {
      if (!resolves(reader, branch)) {
        const readerBranches = branchesOf(reader);
        const counterpart = readerBranches === undefined ? reader : readerBranches.find((candidate) => sameKind(candidate, branch));
        return (counterpart === undefined ? undefined : whyNot(counterpart, branch, path)) ?? mismatch(reader, branch, path);
      }
    }
  }
  if (reader instanceof avro.types.RecordType && writer instanceof avro.types.RecordType && reader.name === writer.name) {
    for (const field of reader.fields) {
      const written = writer.fields.find((candidate) => candidate.name === field.name);
      const fieldPath = path === '' ? jsonNameOf(field.name) : `${path}.${jsonNameOf(field.name)}`;
      if (written === undefined && field.defaultValue() === undefined) {
        return `${fieldPath}: the reader requires it and the writer has no such field`;
      }
      const reason = written === undefined ? undefined : whyNot(field.type, written.type, fieldPath);
      if (reason !== undefined) {
        return reason;
      }
    }
  }
  if (reader instanceof avro.types.ArrayType && writer instanceof avro.types.ArrayType) {
    return whyNot(reader.itemsType, writer.itemsType, `${path}[*]`) ?? mismatch(reader, writer, path);
  }
  if (reader instanceof avro.types.MapType && writer instanceof avro.types.MapType) {
    return whyNot(reader.valuesType, writer.valuesType, `${path}.*`) ?? mismatch(reader, writer, path);
  }
  return mismatch(reader, writer, path);
}

function resolves(reader: avro.Type, writer: avro.Type): boolean {
  try {
    createResolver(reader, writer);
    return true;
  } catch {
    return false;
  }
}

/** Whether two types are the same kind of type: the same named type, or both arrays, maps, or one primitive. */
function sameKind(a: avro.Type, b: avro.Type): boolean {
  return a.name !== undefined || b.name !== undefined ? a.name === b.name : a.typeName === b.typeName;
}

function mismatch(reader: avro.Type, writer: avro.Type, path: string): string {
  return `${path || '(root)'}: ${describeType(writer)} cannot be read as ${describeType(reader)}`;
}

function describeType(type: avro.Type): string {
  return branchesOf(type)?.map(describeType).join(' | ') ?? type.name ?? type.typeName;
}

/** The branches of a union type, undefined for any other type. */
function branchesOf(type: avro.Type): readonly avro.Type[] | undefined {
  return avro.Type.isType(type, 'union') ? (type as unknown as { types: readonly avro.Type[] }).types : undefined;
}

/**
 * The resolver from `writer` to the parsed `reader`.
 *
 * @throws CustomSchemaError naming why, when the writer does not resolve.
 */
export function resolverFrom(reader: avro.Type, writer: CustomContentSchema): Resolver {
  const writerType = parseContentSchema(writer);
  try {
    return createResolver(reader, writerType);
  } catch (error) {
    throw new CustomSchemaError(`objects written with ${writerType.name ?? 'the writer schema'} do not resolve to ${reader.name ?? 'the reader schema'}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
