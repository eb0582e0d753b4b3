import { describe, expect, it } from 'vitest';
import { databaseObject, databaseSchema } from './crd-fixture.ts';
import { applyDefaults } from './defaulting.ts';

describe('applyDefaults: kube structural defaulting', () => {
  it('fills absent fields, recursively, inside arrays, and returns a copy', () => {
    const object = { apiVersion: 'db.example.com/v1', kind: 'DatabaseCluster', metadata: { name: 'orders' }, spec: { engine: 'mysql', users: [{ name: 'app' }, { name: 'ro', connectionLimit: 2 }] } };
    const before = structuredClone(object);
    const defaulted = applyDefaults(databaseSchema(), object);
    expect(defaulted.spec).toEqual({
      engine: 'mysql',
      replicas: 3,
      version: '16.2',
      storage: { size: '10Gi' },
      users: [{ name: 'app', connectionLimit: 10 }, { name: 'ro', connectionLimit: 2 }],
    });
    expect(object).toEqual(before);
  });

  it.each<[string, Record<string, unknown>, unknown, unknown]>([
    ['a null for a non-nullable defaulted field is replaced', { type: 'object', properties: { a: { type: 'integer', default: 1 } } }, { a: null }, { a: 1 }],
    ['a null for a non-nullable field without default is removed', { type: 'object', properties: { a: { type: 'integer' } } }, { a: null }, {}],
    ['a null for a nullable field stays', { type: 'object', properties: { a: { type: 'integer', nullable: true, default: 1 } } }, { a: null }, { a: null }],
    ['a present value is kept', { type: 'object', properties: { a: { type: 'integer', default: 1 } } }, { a: 0 }, { a: 0 }],
    ['additionalProperties values are defaulted inside', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'object', properties: { w: { type: 'integer', default: 1 } } } } } }, { m: { x: {}, y: { w: 5 } } }, { m: { x: { w: 1 }, y: { w: 5 } } }],
    ['a null map value takes the additionalProperties default', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string', default: 'd' } } } }, { m: { x: null } }, { m: { x: 'd' } }],
    ['a null array item takes the items default', { type: 'object', properties: { l: { type: 'array', items: { type: 'object', default: { k: 'v' } } } } }, { l: [null, {}] }, { l: [{ k: 'v' }, {}] }],
    ['a defaulted object is defaulted further', { type: 'object', properties: { o: { type: 'object', default: {}, properties: { p: { type: 'string', default: 'q' } } } } }, {}, { o: { p: 'q' } }],
    ['defaults are copies, not shared', { type: 'object', properties: { a: { type: 'object', default: { x: [1] } }, b: { type: 'object', default: { x: [1] } } } }, {}, { a: { x: [1] }, b: { x: [1] } }],
    ['a null default means no default', { type: 'object', properties: { a: { type: 'string', default: null } } }, {}, {}],
  ])('%s', (_case, schema, object, expected) => {
    expect(applyDefaults(schema, object)).toEqual(expected);
  });

  it('does not share a default between two defaulted fields or with the schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'object', default: { x: [1] } } } };
    const first = applyDefaults(schema, {}) as { a: { x: number[] } };
    first.a.x.push(2);
    expect(schema.properties.a.default).toEqual({ x: [1] });
  });

  it('leaves a valid, complete object as it is', () => {
    expect(applyDefaults(databaseSchema(), databaseObject())).toEqual(databaseObject());
  });

  it.each<[string, unknown, unknown]>([
    ['no schema', null, { a: 1 }],
    ['a scalar object', databaseSchema(), 7],
    ['odd schema members', { type: 'object', properties: { a: 3, b: { items: 'x', default: 1 } }, additionalProperties: 4 }, { a: 1, c: [null] }],
  ])('is total: %s', (_case, schema, object) => {
    expect(() => applyDefaults(schema, object)).not.toThrow();
  });

  it('defaults keys named __proto__, constructor and prototype as own properties', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","default":{"polluted":true}},"constructor":{"type":"string","default":"c"},"prototype":{"type":"object","properties":{"x":{"type":"integer","default":1}}}}}');
    const defaulted = applyDefaults(schema, JSON.parse('{"prototype":{}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(defaulted)).toBe(Object.prototype);
    expect(Object.hasOwn(defaulted, '__proto__')).toBe(true);
    expect(JSON.stringify(defaulted)).toBe('{"prototype":{"x":1},"__proto__":{"polluted":true},"constructor":"c"}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
