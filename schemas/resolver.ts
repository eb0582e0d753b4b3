/**
 * `reader.createResolver(writer)` without avsc 5.7.9's poisoned resolver cache.
 *
 * avsc registers a record-to-record resolver under `reader:writer` *before* checking that
 * the names match, and keeps it when the check throws. A wrapped union tries its branches
 * in order, so resolving the `KubeObject` union of ObjectCreated leaves broken entries
 * (`ConfigMap:logplane.k8s.Node`, no read function); the `KubeObject` union of
 * ObjectUpdated then finds them, takes the first branch, and decoding throws
 * `typeResolver._read is not a function`. The event codec (`codec.ts`) resolves every older
 * version through this: with avsc's own call, an ObjectUpdated of a Deployment written with
 * v1, v2 or v3 could not be read with the newest reader.
 *
 * Here the cache is a proxy that hands back a registered resolver only when the writer's
 * record name is the reader's name or one of its aliases, i.e. when avsc's own name check
 * would pass; otherwise avsc builds the resolver again and the name check throws, as it
 * should, so the union goes on to its next branch.
 */
import type avro from 'avsc';

type Resolver = ReturnType<avro.Type['createResolver']>;

/** A resolver from `writer` to `reader` that decodes every branch of their unions correctly. */
export function createResolver(reader: avro.Type, writer: avro.Type): Resolver {
  const readers = new Map<string, avro.Type>();
  collectNamed(reader, readers);
  const cache = new Map<string, unknown>();
  const registry = new Proxy({} as Record<string, unknown>, {
    get(_target, key) {
      if (typeof key !== 'string') {
        return undefined;
      }
      const colon = key.indexOf(':');
      const readerType = readers.get(key.slice(0, colon));
      const writerName = key.slice(colon + 1);
      const compatible = readerType !== undefined && (readerType.name === writerName || (readerType.aliases ?? []).includes(writerName));
      return compatible ? cache.get(key) : undefined;
    },
    set(_target, key, value) {
      cache.set(String(key), value);
      return true;
    },
  });
  return reader.createResolver(writer, { registry } as Parameters<avro.Type['createResolver']>[1]);
}

function collectNamed(type: avro.Type, into: Map<string, avro.Type>): void {
  if (type.name !== undefined) {
    if (into.has(type.name)) {
      return;
    }
    into.set(type.name, type);
  }
  const inner = type as { fields?: { type: avro.Type }[]; types?: avro.Type[]; itemsType?: avro.Type; valuesType?: avro.Type };
  inner.fields?.forEach((field) => collectNamed(field.type, into));
  inner.types?.forEach((branch) => collectNamed(branch, into));
  if (inner.itemsType !== undefined) {
    collectNamed(inner.itemsType, into);
  }
  if (inner.valuesType !== undefined) {
    collectNamed(inner.valuesType, into);
  }
}
