import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { jsonPatch, MAX_COPIED_BYTES, MAX_JSON_PATCH_OPERATIONS } from './json-patch.ts';

/** One vector of json-patch-test-suite (the RFC 6902 test vectors of json-patch/json-patch-tests). */
interface Vector {
  readonly comment?: string;
  readonly doc: unknown;
  readonly patch: unknown;
  readonly expected?: unknown;
  readonly error?: string;
  readonly disabled?: boolean;
}

const suiteDir = dirname(createRequire(import.meta.url).resolve('json-patch-test-suite/package.json'));
const vectors = (file: string): [string, Vector][] =>
  (JSON.parse(readFileSync(join(suiteDir, file), 'utf8')) as Vector[])
    // Two vectors test duplicate members in the raw patch text ("two 'op' members"); parsed
    // into a value, as the suite's file already is, the duplicates are gone, so they say
    // nothing here. The other disabled vectors (scalar and whole-document roots) are valid
    // RFC 6902 and run.
    .filter((vector) => !/two 'op' members/.test(vector.error ?? ''))
    .map((vector, index) => [`${file} #${index}: ${vector.comment ?? vector.error ?? 'no comment'}`, vector]);

const statusOf = (action: () => unknown): { code: number; message: string } => {
  try {
    action();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.status.code, message: error.message };
  }
  throw new Error('expected the patch to be refused');
};

describe('JSON patch: the RFC 6902 test vectors (json-patch-test-suite)', () => {
  const all = [...vectors('tests.json'), ...vectors('spec_tests.json')];

  it('has the vectors', () => {
    expect(all.length).toBeGreaterThan(90);
  });

  it.each(all)('%s', (_title, vector) => {
    const before = structuredClone(vector.doc);
    if (vector.error !== undefined) {
      expect([400, 422]).toContain(statusOf(() => jsonPatch(vector.doc, vector.patch)).code);
    } else {
      expect(jsonPatch(vector.doc, vector.patch)).toEqual(vector.expected ?? vector.doc);
    }
    expect(vector.doc).toEqual(before);
  });
});

describe('JSON patch: what the audit found', () => {
  afterEach(() => {
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it.each([
    ['/__proto__/polluted', { op: 'add', path: '/__proto__/polluted', value: 'yes' }],
    ['/metadata/__proto__/polluted', { op: 'add', path: '/metadata/__proto__/polluted', value: 'yes' }],
    ['replace /__proto__', { op: 'replace', path: '/__proto__', value: { polluted: 'yes' } }],
    ['replace /metadata/__proto__', { op: 'replace', path: '/metadata/__proto__', value: { polluted: 'yes' } }],
    ['copy into /__proto__/polluted', { op: 'copy', from: '/metadata/name', path: '/__proto__/polluted' }],
    ['copy into /metadata/__proto__', { op: 'copy', from: '/metadata/labels', path: '/metadata/__proto__' }],
    ['move into /metadata/__proto__', { op: 'move', from: '/metadata/labels', path: '/metadata/__proto__' }],
    ['add /metadata/__proto__', { op: 'add', path: '/metadata/__proto__', value: { polluted: 'yes' } }],
    ['add /metadata/labels/constructor', { op: 'add', path: '/metadata/labels/constructor', value: 'x' }],
    ['add /metadata/constructor/prototype/polluted', { op: 'add', path: '/metadata/constructor/prototype/polluted', value: 'yes' }],
    ['replace /metadata/constructor', { op: 'replace', path: '/metadata/constructor', value: 'x' }],
    ['remove /metadata/toString', { op: 'remove', path: '/metadata/toString' }],
    ['copy from /metadata/constructor', { op: 'copy', from: '/metadata/constructor', path: '/x' }],
    ['test /metadata/hasOwnProperty', { op: 'test', path: '/metadata/hasOwnProperty', value: null }],
  ])('%s is refused with 422 and reaches no prototype', (_title, operation) => {
    const pod = { metadata: { name: 'p', labels: { app: 'web' } } };
    expect(statusOf(() => jsonPatch(pod, [operation])).code).toBe(422);
    expect(pod).toEqual({ metadata: { name: 'p', labels: { app: 'web' } } });
  });

  it('compares JSON values in test: member order does not matter, array order does', () => {
    const doc = { a: { x: 1, y: [1, { p: 1, q: 2 }] } };
    expect(jsonPatch(doc, [{ op: 'test', path: '/a', value: { y: [1, { q: 2, p: 1 }], x: 1 } }])).toEqual(doc);
    expect(statusOf(() => jsonPatch(doc, [{ op: 'test', path: '/a/y', value: [{ q: 2, p: 1 }, 1] }])).code).toBe(422);
    expect(statusOf(() => jsonPatch(doc, [{ op: 'test', path: '/a', value: { x: 1 } }])).code).toBe(422);
  });

  it.each([
    ['remove /list/ (an empty token is not index 0)', { op: 'remove', path: '/list/' }],
    ['remove /list/01 (leading zero)', { op: 'remove', path: '/list/01' }],
    ['add /list/01', { op: 'add', path: '/list/01', value: 9 }],
    ['add /list/1e0', { op: 'add', path: '/list/1e0', value: 9 }],
    ['add /list/-1', { op: 'add', path: '/list/-1', value: 9 }],
    ['add /list/ 1', { op: 'add', path: '/list/ 1', value: 9 }],
    ['replace /list/- (no element there)', { op: 'replace', path: '/list/-', value: 9 }],
    ['remove /list/2 (past the end)', { op: 'remove', path: '/list/2' }],
    ['add /list/3 (beyond the end)', { op: 'add', path: '/list/3', value: 9 }],
    ['add /list/99999999999999999999', { op: 'add', path: '/list/99999999999999999999', value: 9 }],
    ['a path without a leading slash', { op: 'add', path: 'list', value: 9 }],
    ['a bad escape', { op: 'add', path: '/a~2b', value: 9 }],
    ['move a value into its own child', { op: 'move', from: '/obj', path: '/obj/inner' }],
    ['remove the whole document', { op: 'remove', path: '' }],
    ['an unknown op', { op: 'frob', path: '/list' }],
    ['add without value', { op: 'add', path: '/x' }],
    ['copy without from', { op: 'copy', path: '/x' }],
    ['a path that is not a string', { op: 'add', path: 7, value: 1 }],
  ])('%s: 422, nothing changed', (_title, operation) => {
    const doc = { list: [1, 2], obj: { inner: 1 } };
    expect(statusOf(() => jsonPatch(doc, [operation])).code).toBe(422);
    expect(doc).toEqual({ list: [1, 2], obj: { inner: 1 } });
  });

  it('applies ~0 and ~1 escapes and the "-" index', () => {
    expect(jsonPatch({ 'a/b': 1, list: [1] }, [
      { op: 'add', path: '/m~0n', value: 2 },
      { op: 'replace', path: '/a~1b', value: 3 },
      { op: 'add', path: '/list/-', value: 4 },
      { op: 'add', path: '/list/0', value: 0 },
    ])).toEqual({ 'a/b': 3, 'm~n': 2, list: [0, 1, 4] });
  });

  it('fails the whole patch when one operation fails, leaving the target as it was', () => {
    const doc = { a: 1 };
    expect(statusOf(() => jsonPatch(doc, [{ op: 'add', path: '/b', value: 2 }, { op: 'remove', path: '/missing' }])).code).toBe(422);
    expect(doc).toEqual({ a: 1 });
  });

  it('answers 400 when the body is not a list of operation objects', () => {
    expect(statusOf(() => jsonPatch({}, { op: 'add', path: '/a', value: 1 })).code).toBe(400);
    expect(statusOf(() => jsonPatch({}, [1])).code).toBe(400);
    expect(statusOf(() => jsonPatch({}, [[{ op: 'add' }]])).code).toBe(400);
  });

  it('refuses more than 10,000 operations and copies that would blow the document up, with 413', () => {
    const many = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '', value: {} }));
    expect(statusOf(() => jsonPatch({}, many))).toMatchObject({ code: 413, message: expect.stringContaining('10000') });
    expect(jsonPatch({}, many.slice(1))).toEqual({});
    // Each copy appends the whole document to its own list: the size doubles per operation.
    const doubling = Array.from({ length: 40 }, () => ({ op: 'copy', from: '', path: '/list/-' }));
    expect(statusOf(() => jsonPatch({ seed: 'x'.repeat(1000), list: [] }, doubling))).toMatchObject({
      code: 413,
      message: expect.stringContaining(String(MAX_COPIED_BYTES)),
    });
  });
});

describe('JSON patch: fuzzed paths', () => {
  const RESERVED = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
  const token = fc.oneof(
    fc.constantFrom(...RESERVED, '-', '0', '1', '01', '', '~0', '~1', '~', 'metadata', 'labels', 'spec', 'list'),
    fc.string({ maxLength: 4 }),
    fc.nat({ max: 5 }).map(String),
  );
  const pointer = fc.array(token, { maxLength: 5 }).map((tokens) => (tokens.length === 0 ? '' : `/${tokens.join('/')}`));
  const json = fc.jsonValue({ maxDepth: 3 });
  const operation = fc.oneof(
    fc.record({ op: fc.constantFrom('add', 'replace', 'test'), path: pointer, value: json }),
    fc.record({ op: fc.constant('remove'), path: pointer }),
    fc.record({ op: fc.constantFrom('move', 'copy'), path: pointer, from: pointer }),
    fc.record({ op: fc.string({ maxLength: 6 }), path: fc.oneof(pointer, fc.integer()) }, { requiredKeys: [] }),
  );
  const doc = fc.record({
    metadata: fc.record({ name: fc.string(), labels: fc.dictionary(fc.string({ maxLength: 5 }), fc.string()) }),
    list: fc.array(json, { maxLength: 4 }),
    spec: json,
  });

  it('never throws anything but a 4xx ApiError, never changes its input, never creates a reserved member or touches a prototype', () => {
    fc.assert(
      fc.property(doc, fc.array(operation, { maxLength: 6 }), (target, operations) => {
        const before = structuredClone(target);
        let result: unknown;
        try {
          result = jsonPatch(target, operations);
        } catch (error) {
          expect(error).toBeInstanceOf(ApiError);
          expect((error as ApiError).status.code).toBeGreaterThanOrEqual(400);
          expect((error as ApiError).status.code).toBeLessThan(500);
        }
        expect(target).toEqual(before);
        expect(Object.prototype).not.toHaveProperty('yes');
        const stack = [result];
        while (stack.length > 0) {
          const node = stack.pop();
          if (typeof node !== 'object' || node === null) continue;
          if (!Array.isArray(node)) {
            expect(Object.getPrototypeOf(node)).toBe(Object.prototype);
            for (const key of ['__proto__', 'constructor', 'prototype']) expect(Object.hasOwn(node, key)).toBe(false);
          }
          stack.push(...Object.values(node));
        }
      }),
      { numRuns: 2_000, seed: 6902 },
    );
  });
});
