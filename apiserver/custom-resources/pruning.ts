/**
 * kube's structural pruning (apiextensions-apiserver `pruning.PruneWithOptions`, 1.32):
 * removes every object field a custom object's schema does not specify, unless a node says
 * `x-kubernetes-preserve-unknown-fields: true`, and returns the removed fields' paths,
 * sorted, as kube reports them: with `fieldValidation=Strict` the request fails with
 * `unknown field "spec.foo"`, with `Warn` (kubectl's default) each is a warning
 * `unknown field "spec.foo"`, with `Ignore` they are dropped silently.
 *
 * `apiVersion`, `kind` and `metadata` are kept at the root and in every
 * `x-kubernetes-embedded-resource` object; the root's metadata is not pruned here.
 */
import { MAX_SCHEMA_DEPTH } from './schema-validation.ts';
import {
  additionalProperties,
  childPath,
  cloneJson,
  indexPath,
  isEmbedded,
  isObject,
  ownObject,
  preservesUnknown,
  propertySchema,
  type Schema,
} from './json.ts';

const META_FIELDS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'metadata']);

/** The schema for the value under `key`: a property's, additionalProperties' (null when a bare boolean), or undefined when the key is unknown. */
const schemaFor = (schema: Schema, key: string): Schema | null | undefined => {
  const property = propertySchema(schema, key);
  if (property) return property;
  const additional = additionalProperties(schema);
  if (additional === undefined) return undefined;
  return isObject(additional) ? additional : null;
};

/** kube's `prune(x, nil)`: every object field under a value without a schema is unknown (iterative). */
const pruneWithoutSchema = (value: unknown, path: string, pruned: string[]): void => {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length > 0) {
    const [node, at] = stack.pop()!;
    if (Array.isArray(node)) node.forEach((item, i) => stack.push([item, indexPath(at, i)]));
    else if (isObject(node)) {
      for (const key of Object.keys(node)) {
        pruned.push(childPath(at, key));
        delete node[key];
      }
    }
  }
};

/**
 * kube's `prune` (and `skipPrune` when `preserve`): items of a preserving array are
 * themselves walked as preserving, as kube's skipPrune does.
 */
const pruneNode = (value: unknown, schema: Schema | null, path: string, pruned: string[], depth: number, root: boolean, preserveItems = false): void => {
  if (schema === null) return pruneWithoutSchema(value, path, pruned);
  if (depth > MAX_SCHEMA_DEPTH) return;
  const preserve = preserveItems || preservesUnknown(schema);
  const embedded = root || isEmbedded(schema);
  if (Array.isArray(value)) {
    const items = ownObject(schema, 'items') ?? null;
    if (preserve && items === null) return;
    value.forEach((item, i) => pruneNode(item, items, indexPath(path, i), pruned, depth + 1, false, preserve));
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const sub = schemaFor(schema, key);
    if (sub !== undefined) pruneNode(value[key], sub, childPath(path, key), pruned, depth + 1, false);
    else if (!preserve) {
      pruned.push(childPath(path, key));
      delete value[key];
    }
  }
};

/**
 * Prunes `object` **in place** against `schema` (a version's `openAPIV3Schema`) and returns
 * the removed fields' paths, sorted (`spec.foo`, `spec.ports[0].bar`). Total on any input:
 * a non-object schema prunes nothing. `isResourceRoot` (default true) keeps the top
 * level's apiVersion, kind and metadata, as for a whole custom object.
 */
export const prune = (schema: unknown, object: unknown, isResourceRoot = true): string[] => {
  const pruned: string[] = [];
  if (!isObject(schema)) return pruned;
  pruneNode(object, schema, '', pruned, 0, isResourceRoot);
  return pruned.sort();
};

/** The pure form of {@link prune}: a pruned copy of `object` and the removed fields' paths; `object` is untouched. */
export const pruned = (schema: unknown, object: unknown, isResourceRoot = true): { readonly object: unknown; readonly unknownFields: string[] } => {
  const copy = cloneJson(object);
  return { object: copy, unknownFields: prune(schema, copy, isResourceRoot) };
};

/** kube's warning (and, with fieldValidation=Strict, error) text for a pruned field. */
export const unknownFieldMessage = (path: string): string => `unknown field "${path}"`;
