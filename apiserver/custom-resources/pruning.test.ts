import { describe, expect, it } from 'vitest';
import { databaseObject, databaseSchema } from './crd-fixture.ts';
import { prune, pruned, unknownFieldMessage } from './pruning.ts';

describe('prune: kube structural pruning', () => {
  it('removes unknown fields at every level and reports their paths, sorted', () => {
    const object: Record<string, any> = databaseObject();
    object.spec.replica = 3;
    object.spec.users[1].role = 'admin';
    object.spec.backup.extra = { a: 1 };
    object.status.phase = 'Ready';
    object.unexpected = true;
    expect(prune(databaseSchema(), object)).toEqual(['spec.backup.extra', 'spec.replica', 'spec.users[1].role', 'status.phase', 'unexpected']);
    expect(object).toEqual(databaseObject());
  });

  it('keeps the root apiVersion, kind and metadata (metadata is not pruned here)', () => {
    const object = { apiVersion: 'db.example.com/v1', kind: 'DatabaseCluster', metadata: { name: 'x', whatever: 1 }, spec: { engine: 'mysql' } };
    expect(prune({ type: 'object', properties: { spec: { type: 'object', properties: { engine: { type: 'string' } } } } }, object)).toEqual([]);
    expect(object.metadata).toEqual({ name: 'x', whatever: 1 });
  });

  it.each<[string, Record<string, unknown>, unknown, unknown, string[]]>([
    ['x-kubernetes-preserve-unknown-fields keeps unknown fields but prunes inside known ones', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } }, { x: { y: 1 }, known: { a: 'a', b: 'b' } }, { x: { y: 1 }, known: { a: 'a' } }, ['known.b']],
    ['an embedded resource keeps apiVersion, kind and metadata', { type: 'object', properties: { t: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } } } }, { t: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { a: 1 }, other: 1 } }, { t: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} }, other: undefined }, ['t.other', 't.spec.a']],
    ['additionalProperties values are pruned by their schema', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'object', properties: { w: { type: 'integer' } } } } } }, { m: { a: { w: 1, z: 2 } } }, { m: { a: { w: 1 } } }, ['m.a.z']],
    ['an object without properties loses every field', { type: 'object', properties: { o: { type: 'object' } } }, { o: { a: 1, b: { c: 2 } } }, { o: {} }, ['o.a', 'o.b']],
    ['arrays of arrays are walked', { type: 'object', properties: { l: { type: 'array', items: { type: 'array', items: { type: 'object', properties: { k: { type: 'string' } } } } } } }, { l: [[{ k: 'v', x: 1 }], [{ y: 2 }]] }, { l: [[{ k: 'v' }], [{}]] }, ['l[0][0].x', 'l[1][0].y']],
    ['items of a preserving array keep unknown fields', { type: 'object', properties: { l: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'object', properties: { k: { type: 'string' } } } } } }, { l: [{ k: 'v', x: 1 }] }, { l: [{ k: 'v', x: 1 }] }, []],
    ['scalars in place of objects are left for validation', { type: 'object', properties: { o: { type: 'object', properties: { a: { type: 'string' } } } } }, { o: 5 }, { o: 5 }, []],
  ])('%s', (_case, schema, object, expected, paths) => {
    const result = pruned(schema, object);
    expect(result.unknownFields).toEqual(paths);
    expect(JSON.parse(JSON.stringify(result.object))).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it('pruned() leaves its argument untouched', () => {
    const object = { spec: { a: 1 } };
    expect(pruned({ type: 'object', properties: { spec: { type: 'object' } } }, object)).toEqual({ object: { spec: {} }, unknownFields: ['spec.a'] });
    expect(object).toEqual({ spec: { a: 1 } });
  });

  it('words the warning as kube does', () => {
    expect(unknownFieldMessage('spec.foo')).toBe('unknown field "spec.foo"');
  });

  it.each<[string, unknown, unknown]>([
    ['no schema', undefined, { a: 1 }],
    ['a scalar object', databaseSchema(), 'x'],
    ['odd schema members', { type: 'object', properties: { a: 1, b: { items: 3 } }, additionalProperties: 'x' }, { a: { q: 1 }, b: [1, { z: 1 }], c: 1 }],
    ['deep nesting without a schema', { type: 'object', properties: { a: { type: 'object', additionalProperties: true } } }, { a: { b: JSON.parse('['.repeat(5000) + '{"x":1}' + ']'.repeat(5000)) } }],
  ])('is total: %s', (_case, schema, object) => {
    expect(() => prune(schema, object)).not.toThrow();
  });

  it('prunes keys named __proto__, constructor and prototype like any other', () => {
    const object = JSON.parse('{"spec":{"__proto__":{"polluted":true},"constructor":1,"prototype":2,"known":"k"}}');
    expect(prune({ type: 'object', properties: { spec: { type: 'object', properties: { known: { type: 'string' }, constructor: { type: 'integer' } } } } }, object)).toEqual(['spec.__proto__', 'spec.prototype']);
    expect(JSON.stringify(object)).toBe('{"spec":{"constructor":1,"known":"k"}}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
