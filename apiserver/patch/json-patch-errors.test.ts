/**
 * Every error JSON patch can answer, with its code and its exact message (what a client
 * shows its user), and the edges next to them that must still apply: written against the
 * survivors of a StrykerJS run on json-patch.ts (mutated messages and bounds no test noticed).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import type { Json } from './json.ts';
import { jsonPatch } from './json-patch.ts';

const answer = (doc: unknown, operations: unknown) => {
  try {
    return { applied: jsonPatch(doc as Json, operations as Json) };
  } catch (error) {
    if (error instanceof ApiError) return { code: error.status.code, message: error.status.message };
    throw error;
  }
};

describe('JSON patch: every error, with its code and message', () => {
  it.each<[string, unknown, unknown, number, string]>([
    ['replace past the end of an array', { a: [1, 2] }, [{ op: 'replace', path: '/a/2', value: 9 }], 422, 'replace operation does not apply: doc is missing path: "/a/2"'],
    ['replace of a missing member', { a: {} }, [{ op: 'replace', path: '/a/b', value: 9 }], 422, 'replace operation does not apply: doc is missing path: "/a/b"'],
    ['remove past the end of an array', { a: [1] }, [{ op: 'remove', path: '/a/1' }], 422, 'remove operation does not apply: doc is missing path: "/a/1"'],
    ['remove of the whole document', { a: 1 }, [{ op: 'remove', path: '' }], 422, 'remove operation does not apply: the whole document cannot be removed'],
    ['add past the end of an array', { a: [1] }, [{ op: 'add', path: '/a/2', value: 3 }], 422, 'add operation: index 2 in "/a/2" is out of bounds (the array has 1 elements)'],
    ['add at a token that is not an index', { a: [1] }, [{ op: 'add', path: '/a/x', value: 3 }], 422, 'add operation: "x" in "/a/x" is not an array index'],
    ['add under a missing parent', { a: 1 }, [{ op: 'add', path: '/x/y', value: 3 }], 422, 'add operation does not apply: doc is missing path: "/x/y"'],
    ['a path without its leading slash', { a: 1 }, [{ op: 'add', path: 'a', value: 3 }], 422, 'add operation: path "a" is not a JSON pointer: it must be empty or start with "/"'],
    ['a "~" escape other than ~0 and ~1', { a: 1 }, [{ op: 'add', path: '/a~2', value: 3 }], 422, 'add operation: path "/a~2" is not a JSON pointer: "~" must be followed by 0 or 1'],
    ['an unknown op', { a: 1 }, [{ op: 'merge', path: '/a', value: 3 }], 422, 'Unexpected kind: "merge" (operation 0: op must be one of add, remove, replace, move, copy, test)'],
    ['an op that is not a string', { a: 1 }, [{ op: 7, path: '/a', value: 3 }], 422, 'Unexpected kind: 7 (operation 0: op must be one of add, remove, replace, move, copy, test)'],
    ['a missing op', { a: 1 }, [{ path: '/a', value: 3 }], 422, 'Unexpected kind: null (operation 0: op must be one of add, remove, replace, move, copy, test)'],
    ['a missing path', { a: 1 }, [{ op: 'add', value: 3 }], 422, 'add operation 0: "path" is missing or not a string'],
    ['a missing value', { a: 1 }, [{ op: 'test', path: '/a' }], 422, 'test operation 0: "value" is missing'],
    ['a missing from', { a: 1 }, [{ op: 'copy', path: '/a' }], 422, 'copy operation 0: "from" is missing or not a string'],
    ['a move into its own child', { a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b/c' }], 422, 'move operation: "/a" cannot be moved into its own child "/a/b/c"'],
    ['a move onto itself from a missing path', { a: 1 }, [{ op: 'move', from: '/x', path: '/x' }], 422, 'move operation does not apply: doc is missing path: "/x"'],
    ['a copy from a missing path', { a: 1 }, [{ op: 'copy', from: '/x', path: '/y' }], 422, 'copy operation does not apply: doc is missing path: "/x"'],
    ['a failed test', { a: 1 }, [{ op: 'test', path: '/a', value: 2 }], 422, 'testing value "/a" failed: test operation failed'],
    ['a test of a missing path', { a: 1 }, [{ op: 'test', path: '/b', value: 1 }], 422, 'test operation does not apply: doc is missing path: "/b"'],
    ['a reserved member name', { a: {} }, [{ op: 'add', path: '/a/__proto__', value: 3 }], 422, 'add operation: "/a/__proto__" names the member "__proto__", which logplane does not accept in any object'],
    ['an operation that is not an object', { a: 1 }, [5], 400, 'json: cannot unmarshal number into a JSON patch operation (operation 0)'],
    ['an operation that is a list', { a: 1 }, [[]], 400, 'json: cannot unmarshal array into a JSON patch operation (operation 0)'],
    ['a body that is not a list', { a: 1 }, { op: 'add' }, 400, 'json: cannot unmarshal the request body into a JSON patch: it must be an array of operations'],
  ])('%s', (_title, doc, operations, code, message) => {
    expect(answer(doc, operations)).toEqual({ code, message });
  });
});

describe('JSON patch: the edges next to those errors apply', () => {
  it.each<[string, unknown, unknown, unknown]>([
    ['replace of the last array element', { a: [1, 2] }, [{ op: 'replace', path: '/a/1', value: 9 }], { a: [1, 9] }],
    ['remove of the last array element', { a: [1, 2] }, [{ op: 'remove', path: '/a/1' }], { a: [1] }],
    ['add at the end index of an array', { a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }], { a: [1, 2] }],
    ['a move onto itself', { a: 1 }, [{ op: 'move', from: '/a', path: '/a' }], { a: 1 }],
    ['a move to a sibling whose name starts with the source', { a: 1 }, [{ op: 'move', from: '/a', path: '/ab' }], { ab: 1 }],
    ['a move into a sibling sharing a parent', { a: { x: 1, y: {} } }, [{ op: 'move', from: '/a/x', path: '/a/y/z' }], { a: { y: { z: 1 } } }],
    ['a move of a child up to its parent', { a: { b: { c: 1 } } }, [{ op: 'move', from: '/a/b/c', path: '/a/b' }], { a: { b: 1 } }],
    ['a test of a member whose value is null', { a: null }, [{ op: 'test', path: '/a', value: null }], { a: null }],
  ])('%s', (_title, doc, operations, expected) => {
    expect(answer(doc, operations)).toEqual({ applied: expected });
  });
});
