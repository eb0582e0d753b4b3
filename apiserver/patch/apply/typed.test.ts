/**
 * The field-set, merge, compare and remove operations against cases of
 * structured-merge-diff's `typed` tests (merge_test.go, toset_test.go, remove_test.go),
 * on schemas written in the API document's own markers, and the FieldsV1 format of
 * kube's managedfields tests.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDocument } from '../../../schemas/avro-gen/openapi.ts';
import { fromFieldsV1, leaves, pathString, setOf, toFieldsV1, fieldElement, keyElement, valueElement, sameSet } from './fieldpath.ts';
import { createMergeSchema, mergeTypeOf } from './schema.ts';
import { compareValues, ensureNamedFieldsAreMembers, mergeValues, removeItems, toFieldSet, TypedValueError } from './typed.ts';

/** SMD's merge_test "struct grab bag" and "associative list" schemas, in OpenAPI markers. */
const document = {
  definitions: {
    root: {
      type: 'object',
      properties: {
        numeric: { type: 'number' },
        string: { type: 'string' },
        bool: { type: 'boolean' },
        setStr: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        setNumeric: { type: 'array', items: { type: 'number' }, 'x-kubernetes-list-type': 'set' },
        list: { type: 'array', items: { $ref: '#/definitions/element' }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['key', 'id'] },
        merged: { type: 'array', items: { $ref: '#/definitions/element' }, 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'key' },
        atomicList: { type: 'array', items: { type: 'string' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        selector: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, 'x-kubernetes-map-type': 'atomic' },
        inner: { type: 'object', properties: { value: { type: 'string' }, other: { type: 'string' } } },
        raw: { $ref: '#/definitions/raw' },
      },
    },
    element: {
      type: 'object',
      properties: { key: { type: 'string' }, id: { type: 'number', description: 'Defaults to "1".' }, value: { type: 'object', additionalProperties: { type: 'string' } }, bv: { type: 'boolean' } },
    },
    raw: { type: 'object' },
  },
} as unknown as ApiDocument;

const root = createMergeSchema(document).definition('root');

describe('merge (SMD typed/merge_test.go)', () => {
  it.each([
    [{ numeric: 1 }, { numeric: 3.14159 }, { numeric: 3.14159 }],
    [{ string: 'aoeu' }, { bool: true }, { string: 'aoeu', bool: true }],
    [{ setStr: ['a', 'b', 'c'] }, { setStr: ['a', 'b'] }, { setStr: ['a', 'b', 'c'] }],
    [{ setStr: ['a', 'b'] }, { setStr: ['a', 'b', 'c'] }, { setStr: ['a', 'b', 'c'] }],
    [{ setStr: ['a', 'b', 'c'] }, { setStr: [] }, { setStr: ['a', 'b', 'c'] }],
    [{ setStr: [] }, { setStr: ['a', 'b', 'c'] }, { setStr: ['a', 'b', 'c'] }],
    [{ list: [{ key: 'a', id: 1, value: { a: 'a' } }] }, { list: [{ key: 'a', id: 1, value: { a: 'a' } }] }, { list: [{ key: 'a', id: 1, value: { a: 'a' } }] }],
    [{ list: [{ key: 'b', id: 2 }] }, { list: [{ key: 'a', id: 1 }, { key: 'b', id: 2 }, { key: 'c', id: 3 }] }, { list: [{ key: 'a', id: 1 }, { key: 'b', id: 2 }, { key: 'c', id: 3 }] }],
    [{ atomicList: ['a', 'a', 'a'] }, { atomicList: null }, { atomicList: null }],
    [{ atomicList: ['a', 'b', 'c'] }, { atomicList: [] }, { atomicList: [] }],
    [{ atomicList: ['a', 'a', 'a'] }, { atomicList: ['a', 'a'] }, { atomicList: ['a', 'a'] }],
    [{ inner: {} }, { inner: null }, { inner: null }],
    [{}, { inner: {} }, { inner: {} }],
    [{ selector: { a: 'x', b: 'y' } }, { selector: { a: 'z' } }, { selector: { a: 'z' } }],
    [{ labels: { a: 'x', b: 'y' } }, { labels: { a: 'z' } }, { labels: { a: 'z', b: 'y' } }],
    [{ raw: { a: { b: 1 }, c: [1, 2] } }, { raw: { a: { d: 2 }, c: [3] } }, { raw: { a: { b: 1, d: 2 }, c: [3] } }],
  ])('%j + %j = %j', (lhs, rhs, out) => {
    expect(mergeValues(root, lhs, rhs)).toEqual(out);
  });

  it("orders a merged list as SMD does: the configuration's order for shared items, live-only items where they were", () => {
    const items = (...keys: string[]) => ({ list: keys.map((key) => ({ key, id: 1 })) });
    expect(mergeValues(root, items('a', 'b', 'c'), items('c', 'a'))).toEqual(items('b', 'c', 'a'));
    expect(mergeValues(root, items('a', 'b'), items('a', 'x'))).toEqual(items('a', 'b', 'x'));
    expect(mergeValues(root, { setNumeric: [1, 2, 3.14159] }, { setNumeric: [1, 2, 3] })).toEqual({ setNumeric: [1, 2, 3.14159, 3] });
  });

  it('keys items by x-kubernetes-patch-merge-key when no list-type is given, and by stated key defaults', () => {
    expect(mergeValues(root, { merged: [{ key: 'a', bv: true }] }, { merged: [{ key: 'a', value: { x: 'y' } }] })).toEqual({ merged: [{ key: 'a', bv: true, value: { x: 'y' } }] });
    // `id` omitted: its stated default ("1") keys the item, so it merges with the live item that has it.
    expect(toFieldSet(root, { list: [{ key: 'a' }] })).toEqual(setOf([fieldElement('list'), keyElement([['key', 'a'], ['id', '1']])], [fieldElement('list'), keyElement([['key', 'a'], ['id', '1']]), fieldElement('key')]));
  });

  it('rejects what the schema does not declare, and duplicate keys, in an applied configuration', () => {
    expect(() => mergeValues(root, {}, { nope: 1 }, { strict: true })).toThrow(TypedValueError);
    expect(() => mergeValues(root, {}, { nope: 1 }, { strict: true })).toThrow('.nope: field not declared in schema');
    expect(() => toFieldSet(root, { list: [{ key: 'a', id: 2 }, { key: 'a', id: 2 }] }, { strict: true })).toThrow(/duplicate entries for key/);
    expect(() => toFieldSet(root, { merged: [{ value: {} }] }, { strict: true })).toThrow(/omits key field "key"/);
  });
});

describe('toFieldSet (SMD typed/toset_test.go)', () => {
  it('has every leaf, every list item, map entries, and atomic values whole', () => {
    const set = toFieldSet(root, {
      numeric: 1,
      setStr: ['a'],
      list: [{ key: 'k', id: 2, value: { x: 'y' } }],
      labels: { app: 'web' },
      selector: { a: 'b' },
      inner: {},
      atomicList: ['z'],
    });
    expect(leaves(set).map(pathString)).toEqual([
      '.atomicList',
      '.inner',
      '.labels.app',
      '.list[id=2,key="k"]',
      '.list[id=2,key="k"].id',
      '.list[id=2,key="k"].key',
      '.list[id=2,key="k"].value.x',
      '.numeric',
      '.selector',
      '.setStr[="a"]',
    ]);
  });
});

describe('compare and remove', () => {
  it('tells added, modified and removed fields; a newly added map is added as a whole', () => {
    const comparison = compareValues(root, { numeric: 1, string: 'a', labels: { a: 'x' } }, { numeric: 2, bool: true, labels: { a: 'x' }, inner: { value: 'v' } });
    expect(leaves(comparison.modified).map(pathString)).toEqual(['.numeric']);
    expect(leaves(comparison.added).map(pathString)).toEqual(['.bool', '.inner', '.inner.value']);
    expect(leaves(comparison.removed).map(pathString)).toEqual(['.string']);
  });

  it('removes members and everything below them (SMD typed/remove_test.go)', () => {
    const value = { list: [{ key: 'a', id: 1, bv: true }, { key: 'b', id: 1 }], labels: { a: 'x', b: 'y' }, numeric: 3 };
    const set = setOf([fieldElement('list'), keyElement([['key', 'b'], ['id', 1]])], [fieldElement('list'), keyElement([['key', 'a'], ['id', 1]]), fieldElement('bv')], [fieldElement('labels'), fieldElement('a')], [fieldElement('numeric')]);
    expect(removeItems(root, value, set)).toEqual({ list: [{ key: 'a', id: 1 }], labels: { b: 'y' } });
  });

  it('makes struct fields with members below them members, not map entries (EnsureNamedFieldsAreMembers)', () => {
    const set = setOf([fieldElement('inner'), fieldElement('value')], [fieldElement('labels'), fieldElement('a')]);
    const ensured = ensureNamedFieldsAreMembers(root, set);
    expect(leaves(ensured).map(pathString)).toEqual(['.inner', '.inner.value', '.labels', '.labels.a']);
    const deep = ensureNamedFieldsAreMembers(root, setOf([fieldElement('raw'), fieldElement('a'), fieldElement('b')]));
    expect(leaves(deep).map(pathString)).toEqual(['.raw', '.raw.a.b']);
  });
});

describe('FieldsV1 (kube managedfields fields_test.go)', () => {
  it('writes members as {} and a member with children with ".", and reads it back', () => {
    const set = setOf(
      [fieldElement('metadata'), fieldElement('labels')],
      [fieldElement('metadata'), fieldElement('labels'), fieldElement('app')],
      [fieldElement('spec'), fieldElement('containers'), keyElement([['name', 'c']])],
      [fieldElement('spec'), fieldElement('containers'), keyElement([['name', 'c']]), fieldElement('image')],
      [fieldElement('spec'), fieldElement('finalizers'), valueElement('x')],
    );
    const json = toFieldsV1(set);
    expect(JSON.stringify(json)).toBe(
      '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"c\\"}":{".":{},"f:image":{}}},"f:finalizers":{"v:\\"x\\"":{}}}}',
    );
    expect(sameSet(fromFieldsV1(json), set)).toBe(true);
    expect(() => fromFieldsV1({ 'x:bad': {} })).toThrow(/unknown FieldsV1 path element/);
  });

  it('derives the merge type of a built-in kind from the vendored document', () => {
    const deployment = mergeTypeOf('io.k8s.api.apps.v1.Deployment');
    const set = toFieldSet(deployment, {
      spec: {
        selector: { matchLabels: { app: 'x' } },
        template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80 }], args: ['a', 'b'] }] } },
      },
    });
    expect(leaves(set).map(pathString)).toEqual([
      '.spec.selector',
      '.spec.template.spec.containers[name="c"]',
      '.spec.template.spec.containers[name="c"].args',
      '.spec.template.spec.containers[name="c"].name',
      '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
      '.spec.template.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"].containerPort',
    ]);
    const service = toFieldSet(mergeTypeOf('io.k8s.api.core.v1.Service'), { spec: { ports: [{ port: 80 }] } }, { strict: true });
    expect(leaves(service).map(pathString)).toEqual(['.spec.ports[port=80,protocol="TCP"]', '.spec.ports[port=80,protocol="TCP"].port']);
  });
});
