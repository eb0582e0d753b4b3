/**
 * JSON patch (RFC 6902, `application/json-patch+json`) over JSON pointers (RFC 6901).
 *
 * Written here rather than taken from a library: the two maintained ones tried
 * (fast-json-patch 3.1.1, rfc6902 5.4.0) both look members up through the prototype chain
 * (`replace /a/constructor` succeeds on `{a: {}}`, `remove /a/toString` too), fast-json-patch
 * accepts the index `01` and copies a missing `from` as `null`, and rfc6902 applies
 * `/__proto__/x` to the parent object and lets `replace` create a member. The RFC's own
 * test vectors (json-patch-test-suite) run against this file in the suite.
 *
 * Members are read only when they are own properties, array indexes follow RFC 6901's
 * grammar (`0` or no leading zero, `-` only where an element may be appended), the
 * reserved member names are never created, `test` compares JSON values (member order
 * does not matter), and the patch works on a copy: a failing operation leaves nothing
 * changed. Errors follow kube-apiserver: a body that is not a list of operations is 400,
 * an operation that cannot be applied is 422, more than 10,000 operations is 413.
 */
import { apiErrors, type ApiError } from '../errors.ts';
import { assertPlainData, isReservedKey } from '../plain-data.ts';
import { assertNever } from '../../schemas/index.ts';
import { isObject, jsonEqual, setMember, type Json, type JsonObject } from './json.ts';

/** kube-apiserver's limit on the operations of one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/**
 * The most bytes (as JSON text) that the `copy` operations of one patch may duplicate, so
 * a patch of a few bytes cannot double the document thousands of times.
 */
export const MAX_COPIED_BYTES = 3 * 1024 * 1024;

const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;
type OpName = (typeof OPS)[number];

/** One decoded operation. */
type Operation =
  | { readonly op: 'add' | 'replace' | 'test'; readonly path: string; readonly value: Json }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'move' | 'copy'; readonly path: string; readonly from: string };

const unprocessable = (message: string): ApiError => apiErrors.unprocessablePatch(message);

const missingPath = (op: OpName, path: string): ApiError => unprocessable(`${op} operation does not apply: doc is missing path: ${JSON.stringify(path)}`);

/** Decodes an RFC 6901 pointer into its reference tokens. */
const tokensOf = (op: OpName, field: 'path' | 'from', pointer: string): string[] => {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw unprocessable(`${op} operation: ${field} ${JSON.stringify(pointer)} is not a JSON pointer: it must be empty or start with "/"`);
  }
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token)) {
        throw unprocessable(`${op} operation: ${field} ${JSON.stringify(pointer)} is not a JSON pointer: "~" must be followed by 0 or 1`);
      }
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
};

const INDEX = /^(0|[1-9][0-9]*)$/;

/** The array index a token names, or undefined when it is not one (RFC 6901 §4). */
const indexOf = (token: string): number | undefined => {
  if (!INDEX.test(token)) return undefined;
  const index = Number(token);
  return Number.isSafeInteger(index) ? index : undefined;
};

/** The value at `tokens`, reading own members only; `found: false` when there is none. */
const lookup = (doc: Json, tokens: readonly string[]): { found: true; value: Json } | { found: false } => {
  let node = doc;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      const index = indexOf(token);
      if (index === undefined || index >= node.length) return { found: false };
      node = node[index];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, token)) return { found: false };
      node = node[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: node };
};

/** The container that holds the last token of `tokens`, or a 422. */
const parentOf = (op: OpName, path: string, doc: Json, tokens: readonly string[]): Json[] | JsonObject => {
  const parent = lookup(doc, tokens.slice(0, -1));
  if (!parent.found || !(Array.isArray(parent.value) || isObject(parent.value))) throw missingPath(op, path);
  return parent.value;
};

const add = (op: OpName, path: string, doc: Json, value: Json): Json => {
  const tokens = tokensOf(op, 'path', path);
  if (tokens.length === 0) return value;
  const parent = parentOf(op, path, doc, tokens);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : indexOf(last);
    if (index === undefined) throw unprocessable(`${op} operation: ${JSON.stringify(last)} in ${JSON.stringify(path)} is not an array index`);
    if (index > parent.length) throw unprocessable(`${op} operation: index ${index} in ${JSON.stringify(path)} is out of bounds (the array has ${parent.length} elements)`);
    parent.splice(index, 0, value);
    return doc;
  }
  if (isReservedKey(last)) {
    throw unprocessable(`${op} operation: ${JSON.stringify(path)} names the member "${last}", which logplane does not accept in any object`);
  }
  setMember(parent, last, value);
  return doc;
};

const remove = (op: OpName, path: string, doc: Json): Json => {
  const tokens = tokensOf(op, 'path', path);
  if (tokens.length === 0) throw unprocessable(`${op} operation does not apply: the whole document cannot be removed`);
  const parent = parentOf(op, path, doc, tokens);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const index = indexOf(last);
    if (index === undefined || index >= parent.length) throw missingPath(op, path);
    return parent.splice(index, 1)[0];
  }
  if (!Object.hasOwn(parent, last)) throw missingPath(op, path);
  const value = parent[last];
  delete parent[last];
  return value;
};

const replace = (path: string, doc: Json, value: Json): Json => {
  const tokens = tokensOf('replace', 'path', path);
  if (tokens.length === 0) return value;
  const parent = parentOf('replace', path, doc, tokens);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const index = indexOf(last);
    if (index === undefined || index >= parent.length) throw missingPath('replace', path);
    parent[index] = value;
  } else {
    if (!Object.hasOwn(parent, last)) throw missingPath('replace', path);
    setMember(parent, last, value);
  }
  return doc;
};

const valueAt = (op: OpName, pointer: string, field: 'path' | 'from', doc: Json): Json => {
  const found = lookup(doc, tokensOf(op, field, pointer));
  if (!found.found) throw missingPath(op, pointer);
  return found.value;
};

const isProperPrefix = (prefix: readonly string[], tokens: readonly string[]): boolean =>
  prefix.length < tokens.length && prefix.every((token, i) => tokens[i] === token);

/** Validates the shape of one operation (400 for what is not an operation at all, 422 for a bad one). */
const decode = (raw: Json, index: number): Operation => {
  if (!isObject(raw)) throw apiErrors.badRequest(`json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into a JSON patch operation (operation ${index})`);
  const { op, path } = raw;
  if (typeof op !== 'string' || !(OPS as readonly string[]).includes(op)) {
    throw unprocessable(`Unexpected kind: ${JSON.stringify(op ?? null)} (operation ${index}: op must be one of ${OPS.join(', ')})`);
  }
  const name = op as OpName;
  if (typeof path !== 'string') throw unprocessable(`${name} operation ${index}: "path" is missing or not a string`);
  switch (name) {
    case 'add':
    case 'replace':
    case 'test':
      if (!Object.hasOwn(raw, 'value')) throw unprocessable(`${name} operation ${index}: "value" is missing`);
      return { op: name, path, value: raw['value'] };
    case 'remove':
      return { op: name, path };
    case 'move':
    case 'copy': {
      const from = raw['from'];
      if (typeof from !== 'string') throw unprocessable(`${name} operation ${index}: "from" is missing or not a string`);
      return { op: name, path, from };
    }
    default:
      throw unprocessable(`Unexpected kind: ${JSON.stringify(op)}`);
  }
};

/** Applies an RFC 6902 JSON patch to a copy of `target`; `target` is never changed. */
export const jsonPatch = (target: Json, operations: Json): Json => {
  if (!Array.isArray(operations)) throw apiErrors.badRequest('json: cannot unmarshal the request body into a JSON patch: it must be an array of operations');
  if (operations.length > MAX_JSON_PATCH_OPERATIONS) {
    throw apiErrors.entityTooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${operations.length}`);
  }
  assertPlainData(operations, 'the JSON patch');
  const decoded = operations.map(decode);
  let doc = structuredClone(target);
  let copied = 0;
  for (const operation of decoded) {
    switch (operation.op) {
      case 'add':
        doc = add('add', operation.path, doc, structuredClone(operation.value));
        break;
      case 'replace':
        doc = replace(operation.path, doc, structuredClone(operation.value));
        break;
      case 'remove':
        remove('remove', operation.path, doc);
        break;
      case 'test':
        if (!jsonEqual(valueAt('test', operation.path, 'path', doc), operation.value)) {
          throw unprocessable(`testing value ${JSON.stringify(operation.path)} failed: test operation failed`);
        }
        break;
      case 'move': {
        if (operation.from === operation.path) {
          valueAt('move', operation.from, 'from', doc);
          break;
        }
        if (isProperPrefix(tokensOf('move', 'from', operation.from), tokensOf('move', 'path', operation.path))) {
          throw unprocessable(`move operation: ${JSON.stringify(operation.from)} cannot be moved into its own child ${JSON.stringify(operation.path)}`);
        }
        valueAt('move', operation.from, 'from', doc);
        doc = add('move', operation.path, doc, remove('move', operation.from, doc));
        break;
      }
      case 'copy': {
        const value = valueAt('copy', operation.from, 'from', doc);
        copied += JSON.stringify(value ?? null).length;
        if (copied > MAX_COPIED_BYTES) {
          throw apiErrors.entityTooLarge(`the copy operations of this JSON patch duplicate more than ${MAX_COPIED_BYTES} bytes`);
        }
        doc = add('copy', operation.path, doc, structuredClone(value));
        break;
      }
      default:
        return assertNever(operation, 'operation');
    }
  }
  return doc;
};
