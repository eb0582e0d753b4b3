/** JSON patch (RFC 6902, `application/json-patch+json`). */
import { apiErrors } from '../errors.ts';
import { isObject, type Json } from './json.ts';

type Operation = { op: string; path: string; from?: string; value?: Json };

const pointer = (path: string): string[] => {
  if (path === '') return [];
  if (!path.startsWith('/')) throw apiErrors.badRequest(`invalid JSON patch path "${path}": must start with "/"`);
  return path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
};

const parentOf = (doc: Json, tokens: readonly string[], path: string): { parent: Json; last: string } => {
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
  }
  return { parent: node, last: tokens[tokens.length - 1]! };
};

const getAt = (doc: Json, path: string): Json => {
  let node = doc;
  for (const token of pointer(path)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else node = undefined;
    if (node === undefined) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
  }
  return node;
};

const removeAt = (doc: Json, path: string): Json => {
  const tokens = pointer(path);
  if (tokens.length === 0) throw apiErrors.unprocessablePatch('JSON patch: cannot remove the whole document');
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
    return parent.splice(index, 1)[0];
  }
  if (isObject(parent) && last in parent) {
    const value = parent[last];
    delete parent[last];
    return value;
  }
  throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
};

const addAt = (doc: Json, path: string, value: Json, replace: boolean): Json => {
  const tokens = pointer(path);
  if (tokens.length === 0) return structuredClone(value);
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length || (replace && index >= parent.length)) {
      throw apiErrors.unprocessablePatch(`JSON patch: index in "${path}" is out of range`);
    }
    parent.splice(index, replace ? 1 : 0, structuredClone(value));
  } else if (isObject(parent)) {
    if (replace && !(last in parent)) throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
    parent[last] = structuredClone(value);
  } else {
    throw apiErrors.unprocessablePatch(`JSON patch: path "${path}" does not exist`);
  }
  return doc;
};

/** Applies an RFC 6902 JSON patch to a copy of `target`. */
export const jsonPatch = (target: Json, operations: Json): Json => {
  if (!Array.isArray(operations)) throw apiErrors.badRequest('a JSON patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of operations) {
    if (!isObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') {
      throw apiErrors.badRequest(`invalid JSON patch operation ${JSON.stringify(raw)}`);
    }
    const op = raw as Operation;
    switch (op.op) {
      case 'add':
        doc = addAt(doc, op.path, op.value, false);
        break;
      case 'replace':
        doc = addAt(doc, op.path, op.value, true);
        break;
      case 'remove':
        removeAt(doc, op.path);
        break;
      case 'move': {
        const value = removeAt(doc, op.from ?? '');
        doc = addAt(doc, op.path, value, false);
        break;
      }
      case 'copy':
        doc = addAt(doc, op.path, getAt(doc, op.from ?? ''), false);
        break;
      case 'test':
        if (JSON.stringify(getAt(doc, op.path)) !== JSON.stringify(op.value)) {
          throw apiErrors.unprocessablePatch(`JSON patch: test failed at "${op.path}"`);
        }
        break;
      default:
        throw apiErrors.badRequest(`unknown JSON patch operation "${op.op}"`);
    }
  }
  return doc;
};
