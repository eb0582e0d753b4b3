import { readdirSync, readFileSync } from 'node:fs';
import avro from 'avsc';
import { SchemaError } from './errors.ts';
import { fingerprintHex, schemaFingerprint } from './fingerprint.ts';
import {
  annotateKind,
  annotateUnion,
  isKubernetesRecord,
  isNullable,
  JSON_NAME_ATTRIBUTE,
  K8S_NAMESPACE,
  KIND_ATTRIBUTE,
  markJsonName,
  markOptional,
  markQuantity,
  QUANTITY_ATTRIBUTE,
  type KindAnnotation,
  namespaceOf,
  OPTIONAL_ATTRIBUTE,
  UNION_ATTRIBUTE,
  viewOf,
  type UnionAnnotation,
} from './schema-view.ts';

/** One released version of the event schema (a directory `schemas/avro/v<N>/`). */
export type SchemaVersion = {
  /** The directory name, e.g. `v2`. */
  name: string;
  /** The root type: the event envelope. */
  type: avro.Type;
  /** Every named type of the version by full name (e.g. `logplane.k8s.Pod`). */
  types: Readonly<Record<string, avro.Type>>;
  /** CRC-64-AVRO fingerprint of the root type's Parsing Canonical Form. */
  fingerprint: bigint;
  /** The fingerprint as 16 hex digits. */
  fingerprintHex: string;
  /** The single-object encoding header: 0xC3 0x01, then the fingerprint little-endian. */
  header: Buffer;
};

/** Every released version, and which one a buffer was written with. */
export type SchemaRegistry = {
  /** Oldest first. */
  versions: readonly SchemaVersion[];
  /** The newest version: the writer schema for new events and the reader schema for all. */
  current: SchemaVersion;
  /** The version whose fingerprint is in bytes 2..9 of a single-object encoded buffer. */
  find(buf: Buffer): SchemaVersion | undefined;
};

/** Length of the single-object encoding header. */
export const HEADER_LENGTH = 10;

const DEFAULT_ROOT = new URL('./avro/', import.meta.url);
const VERSION_DIR = /^v([1-9][0-9]*)$/;

type Manifest = { root: string; files: readonly string[] };

/**
 * Loads every version directory under `root` (default: `schemas/avro/`). Throws a
 * `SchemaError` if a version does not parse, two versions share a fingerprint, or an
 * older version cannot be resolved to the newest one.
 */
export function loadSchemaRegistry(root: URL = DEFAULT_ROOT): SchemaRegistry {
  const versions = readdirSync(root, { withFileTypes: true })
    .flatMap((entry) => {
      const match = entry.isDirectory() ? VERSION_DIR.exec(entry.name) : null;
      return match ? [{ name: entry.name, number: Number(match[1]) }] : [];
    })
    .sort((a, b) => a.number - b.number)
    .map(({ name }) => loadSchemaVersion(new URL(`${name}/`, root), name));

  const current = versions.at(-1);
  if (current === undefined) {
    throw new SchemaError(`no schema versions (v1, v2, …) under ${root.pathname}`);
  }
  const seen = new Map<bigint, string>();
  for (const version of versions) {
    const clash = seen.get(version.fingerprint);
    if (clash !== undefined) {
      throw new SchemaError(`${version.name} has the same fingerprint as ${clash}: it changes nothing a reader sees`);
    }
    seen.set(version.fingerprint, version.name);
    try {
      current.type.createResolver(version.type);
    } catch (err) {
      throw new SchemaError(`${version.name} cannot be read with ${current.name}: ${(err as Error).message}`, { cause: err });
    }
  }

  const newestFirst = [...versions].reverse().map((version) => ({
    version,
    low: Number(version.fingerprint & 0xffffffffn),
    high: Number(version.fingerprint >> 32n),
  }));
  return {
    versions,
    current,
    find(buf) {
      const low = buf.readUInt32LE(2);
      const high = buf.readUInt32LE(6);
      for (const entry of newestFirst) {
        if (entry.low === low && entry.high === high) {
          return entry.version;
        }
      }
      return undefined;
    },
  };
}

/**
 * Parses one version directory: `manifest.json` names the root type and the `.avsc`
 * files in dependency order (a file may only reference types defined before it).
 */
export function loadSchemaVersion(dir: URL, name: string): SchemaVersion {
  const manifest = readManifest(new URL('manifest.json', dir));
  const registry: Record<string, avro.Type> = {};
  const unionFields: { record: string; field: string; annotation: UnionAnnotation }[] = [];
  const optionalFields: { record: string; field: string }[] = [];
  const attributes: CollectedAttributes = { jsonNames: [], quantities: [], kinds: [] };
  const typeHook = (schema: unknown, opts: { namespace?: string }): undefined => {
    collectFieldAttributes(schema, opts.namespace, unionFields, optionalFields, attributes);
    return undefined;
  };
  for (const file of manifest.files) {
    const url = new URL(file, dir);
    try {
      avro.Type.forSchema(JSON.parse(readFileSync(url, 'utf8')), { registry, typeHook });
    } catch (err) {
      throw new SchemaError(`${name}/${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  const type = registry[manifest.root];
  if (type === undefined) {
    throw new SchemaError(`${name}/manifest.json: root type ${manifest.root} is not defined by its files`);
  }
  for (const { record, field, annotation } of unionFields) {
    annotateUnion(checkedUnion(registry, record, field, annotation, name), annotation);
  }
  for (const { record, field } of optionalFields) {
    markOptional(checkedOptional(registry, record, field, name), field);
  }
  const recordOf = (record: string): avro.Type => {
    const found = registry[record];
    if (found === undefined) {
      throw new SchemaError(`${name}: ${record} is not defined`);
    }
    return found;
  };
  for (const { record, field, jsonName } of attributes.jsonNames) {
    markJsonName(recordOf(record), field, jsonName);
  }
  for (const { record, field } of attributes.quantities) {
    markQuantity(recordOf(record), field);
  }
  for (const { record, kind } of attributes.kinds) {
    annotateKind(recordOf(record), kind);
  }
  const fingerprint = schemaFingerprint(type);
  const header = Buffer.alloc(HEADER_LENGTH);
  header[0] = 0xc3;
  header[1] = 0x01;
  header.writeBigUInt64LE(fingerprint, 2);
  return { name, type, types: registry, fingerprint, fingerprintHex: fingerprintHex(fingerprint), header };
}

function readManifest(url: URL): Manifest {
  const manifest: unknown = JSON.parse(readFileSync(url, 'utf8'));
  if (
    typeof manifest !== 'object' || manifest === null ||
    !('root' in manifest) || typeof manifest.root !== 'string' ||
    !('files' in manifest) || !Array.isArray(manifest.files) ||
    !manifest.files.every((file): file is string => typeof file === 'string')
  ) {
    throw new SchemaError(`${url.pathname}: expected {"root": string, "files": string[]}`);
  }
  return { root: manifest.root, files: manifest.files };
}

/** The `logplane.jsonName`, `logplane.quantity` and `logplane.kind` attributes of a version's schemas. */
interface CollectedAttributes {
  jsonNames: { record: string; field: string; jsonName: string }[];
  quantities: { record: string; field: string }[];
  kinds: { record: string; kind: KindAnnotation }[];
}

function collectFieldAttributes(
  schema: unknown,
  enclosingNamespace: string | undefined,
  unions: { record: string; field: string; annotation: UnionAnnotation }[],
  optionals: { record: string; field: string }[],
  attributes: CollectedAttributes,
): void {
  if (typeof schema !== 'object' || schema === null || !('type' in schema) || schema.type !== 'record') {
    return;
  }
  const { name, namespace, fields } = schema as { name?: unknown; namespace?: unknown; fields?: unknown };
  if (typeof name !== 'string' || !Array.isArray(fields)) {
    return;
  }
  const ns = typeof namespace === 'string' ? namespace : enclosingNamespace;
  const record = name.includes('.') || !ns ? name : `${ns}.${name}`;
  const kind = (schema as Record<string, unknown>)[KIND_ATTRIBUTE];
  if (kind !== undefined) {
    const { group, version, kind: kindName } = (kind ?? {}) as Record<string, unknown>;
    if (typeof group !== 'string' || typeof version !== 'string' || typeof kindName !== 'string') {
      throw new SchemaError(`${record}: ${KIND_ATTRIBUTE} must be {"group": string, "version": string, "kind": string}`);
    }
    attributes.kinds.push({ record, kind: { group, version, kind: kindName } });
  }
  for (const field of fields as Record<string, unknown>[]) {
    const jsonName = field[JSON_NAME_ATTRIBUTE];
    if (jsonName !== undefined) {
      if (typeof jsonName !== 'string') {
        throw new SchemaError(`${record}.${String(field.name)}: ${JSON_NAME_ATTRIBUTE} must be a string`);
      }
      attributes.jsonNames.push({ record, field: String(field.name), jsonName });
    }
    const quantity = field[QUANTITY_ATTRIBUTE];
    if (quantity !== undefined) {
      if (quantity !== true) {
        throw new SchemaError(`${record}.${String(field.name)}: ${QUANTITY_ATTRIBUTE} must be true`);
      }
      attributes.quantities.push({ record, field: String(field.name) });
    }
    const optional = field[OPTIONAL_ATTRIBUTE];
    if (optional !== undefined) {
      if (optional !== true) {
        throw new SchemaError(`${record}.${String(field.name)}: ${OPTIONAL_ATTRIBUTE} must be true`);
      }
      optionals.push({ record, field: String(field.name) });
    }
    const annotation = field[UNION_ATTRIBUTE];
    if (annotation === undefined) {
      continue;
    }
    const { name: unionName, discriminator } = (annotation ?? {}) as Record<string, unknown>;
    if (typeof unionName !== 'string' || typeof discriminator !== 'string') {
      throw new SchemaError(`${record}.${String(field.name)}: ${UNION_ATTRIBUTE} must be {"name": string, "discriminator": string}`);
    }
    unions.push({ record, field: String(field.name), annotation: { name: unionName, discriminator } });
  }
}

function checkedUnion(
  registry: Record<string, avro.Type>,
  record: string,
  field: string,
  annotation: UnionAnnotation,
  version: string,
): avro.Type {
  const where = `${version}: ${record}.${field}`;
  const union = (registry[record] as avro.types.RecordType).field(field).type;
  const view = viewOf(union);
  if (view.type !== 'union' || !view.wrapped) {
    throw new SchemaError(`${where}: ${UNION_ATTRIBUTE} needs a union of two or more records`);
  }
  for (const branch of view.branches) {
    const branchView = viewOf(branch);
    if (branchView.type !== 'record') {
      throw new SchemaError(`${where}: ${UNION_ATTRIBUTE} branch ${branch.typeName} is not a record`);
    }
    if (branchView.fields.some((f) => f.name === annotation.discriminator)) {
      throw new SchemaError(`${where}: branch ${branchView.name} has a field named like the discriminator ${annotation.discriminator}`);
    }
  }
  return union;
}

function checkedOptional(registry: Record<string, avro.Type>, record: string, field: string, version: string): avro.Type {
  const where = `${version}: ${record}.${field}`;
  if (isKubernetesRecord(record)) {
    throw new SchemaError(`${where}: ${OPTIONAL_ATTRIBUTE} is implied for ${K8S_NAMESPACE} records`);
  }
  const recordType = registry[record] as avro.types.RecordType;
  const declared = recordType.field(field);
  const view = viewOf(declared.type);
  if (view.type !== 'union' || view.wrapped || !isNullable(view.branches) || declared.defaultValue() !== null) {
    throw new SchemaError(`${where}: ${OPTIONAL_ATTRIBUTE} needs a field of type ["null", T] with "default": null`);
  }
  return recordType;
}
