/**
 * How each list of a kind merges under a strategic merge patch, from the vendored
 * Kubernetes 1.32 API document: `x-kubernetes-patch-strategy` and
 * `x-kubernetes-patch-merge-key`, which carry the Go types' `patchStrategy` and
 * `patchMergeKey` tags that kube-apiserver's strategic merge reads. A list with strategy
 * `merge` and a key merges item by item by that key (containers by `name`, Service ports
 * by `port`, webhooks by `name`, …), one with `merge` and no key is a set of primitives
 * (`finalizers`), any other list is replaced whole. Looked up per kind and field path
 * (field names; a list's items and a map's values continue the path) and cached.
 */
import { vendoredApiDocument, refName, type OpenApiSchema } from '../../schemas/avro-gen/openapi.ts';
import type { Kind } from '../../schemas/index.ts';
import { storedKind } from '../../schemas/kinds/registry.ts';

/** How a list field merges: by a key field, as a set of primitives, or replaced whole. */
export type ListStrategy = { type: 'mergeByKey'; key: string } | { type: 'mergePrimitives' } | { type: 'replace' };

type PatchSchema = OpenApiSchema & {
  readonly 'x-kubernetes-patch-strategy'?: string;
  readonly 'x-kubernetes-patch-merge-key'?: string;
};

const REPLACE: ListStrategy = { type: 'replace' };

/** A schema with its `$ref` (or a lone `allOf` of one, as the v2 document nests them) followed. */
const resolved = (schema: PatchSchema | undefined): PatchSchema | undefined => {
  let current = schema;
  for (let depth = 0; current && depth < 8; depth++) {
    const ref = current.$ref ?? (current.allOf?.length === 1 ? current.allOf[0]?.$ref : undefined);
    if (ref === undefined) return current;
    current = vendoredApiDocument().definitions[refName(ref)] as PatchSchema | undefined;
  }
  return current;
};

/** The schema at `path` below `root`: a field of an object, then the items of a list or the values of a map. */
const schemaAt = (root: PatchSchema | undefined, path: readonly string[]): PatchSchema | undefined => {
  let schema = resolved(root);
  for (let i = 0; schema && i < path.length; i++) {
    const segment = path[i] as string;
    // A list's items and a map's values carry on the path of the field that holds them.
    if (schema.type === 'array' && i > 0) schema = resolved(schema.items);
    if (!schema) return undefined;
    const property = schema.properties && Object.hasOwn(schema.properties, segment) ? schema.properties[segment] : undefined;
    if (property !== undefined) schema = property as PatchSchema;
    else if (typeof schema.additionalProperties === 'object') schema = schema.additionalProperties as PatchSchema;
    else return undefined;
    if (i < path.length - 1) schema = resolved(schema);
  }
  return schema;
};

const cache = new Map<string, ListStrategy>();

/** The strategy of the list at `path` (field names from the object's root) of a `kind` object. */
export const listStrategyOf = (kind: Kind, path: readonly string[]): ListStrategy => {
  const cacheKey = `${kind}|${path.join('\u0000')}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  const definition = storedKind(kind)?.definition;
  const root = definition === undefined ? undefined : (vendoredApiDocument().definitions[definition] as PatchSchema | undefined);
  const schema = schemaAt(root, path);
  const strategies = (schema?.['x-kubernetes-patch-strategy'] ?? '').split(',');
  const key = schema?.['x-kubernetes-patch-merge-key'];
  const strategy: ListStrategy = !strategies.includes('merge') ? REPLACE : key ? { type: 'mergeByKey', key } : { type: 'mergePrimitives' };
  cache.set(cacheKey, strategy);
  return strategy;
};
