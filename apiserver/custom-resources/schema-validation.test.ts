import { describe, expect, it } from 'vitest';
import { databaseObject, databaseSchema } from './crd-fixture.ts';
import { checkFormat } from './formats.ts';
import { validateCustomObject } from './schema-validation.ts';

type Obj = Record<string, any>;

const problems = (object: unknown, schema: unknown = databaseSchema()): string[] =>
  validateCustomObject(schema, object).map((c) => `${c.field}: ${c.message}`);

const changed = (change: (object: Obj) => void): Obj => {
  const object = databaseObject();
  change(object);
  return object;
};

describe('validateCustomObject: a DatabaseCluster', () => {
  it('accepts a valid object (metadata other than name is the caller\'s)', () => {
    expect(problems(databaseObject())).toEqual([]);
    expect(problems(changed((o) => { o.metadata.labels = { 'not a label': 1 }; }))).toEqual([]);
  });

  it.each<[string, (object: Obj) => void, string[]]>([
    ['a string for an integer', (o) => { o.spec.replicas = 'three'; }, ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"']],
    ['a fraction for an integer', (o) => { o.spec.replicas = 1.5; }, ['spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"']],
    ['null for a field not nullable', (o) => { o.spec.version = null; }, ['spec.version: Invalid value: "null": spec.version in body must be of type string: "null"']],
    ['null for a nullable field', (o) => { o.spec.users[0].passwordSecret = null; }, []],
    ['a missing required field', (o) => { delete o.spec.engine; }, ['spec.engine: Required value']],
    ['a required field in an array item', (o) => { delete o.spec.users[1].name; }, ['spec.users[1].name: Required value']],
    ['a value outside the enum', (o) => { o.spec.engine = 'oracle'; }, ['spec.engine: Unsupported value: "oracle": supported values: "postgres", "mysql"']],
    ['below the minimum', (o) => { o.spec.replicas = 0; }, ['spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1']],
    ['above the maximum', (o) => { o.spec.replicas = 10; }, ['spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 9']],
    ['at the exclusive minimum', (o) => { o.spec.backup.ratio = 0; }, ['spec.backup.ratio: Invalid value: 0: spec.backup.ratio in body should be greater than 0']],
    ['at the exclusive maximum', (o) => { o.spec.backup.ratio = 1; }, ['spec.backup.ratio: Invalid value: 1: spec.backup.ratio in body should be less than 1']],
    ['not a multiple', (o) => { o.spec.backup.ratio = 0.3; }, ['spec.backup.ratio: Invalid value: 0.3: spec.backup.ratio in body should be a multiple of 0.25']],
    ['not matching the pattern', (o) => { o.spec.version = 'latest'; }, ["spec.version: Invalid value: \"latest\": spec.version in body should match '^[0-9]+\\.[0-9]+$'"]],
    ['shorter than minLength', (o) => { o.spec.storage.className = ''; }, ['spec.storage.className: Invalid value: "": spec.storage.className in body should be at least 1 chars long']],
    ['longer than maxLength', (o) => { o.spec.storage.className = 'x'.repeat(64); }, ['spec.storage.className: Too long: may not be more than 63 bytes']],
    ['more items than maxItems', (o) => { o.spec.users = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ name })); }, ['spec.users: Too many: 6: must have at most 5 items']],
    ['more properties than maxProperties', (o) => { o.spec.parameters = { a: '1', b: '2', c: '3', d: '4' }; }, ['spec.parameters: Too many: 4: must have at most 3 items']],
    ['a wrong type under additionalProperties', (o) => { o.spec.parameters = { max_connections: 200 }; }, ['spec.parameters.max_connections: Invalid value: "integer": spec.parameters.max_connections in body must be of type string: "integer"']],
    ['an int-or-string given a boolean', (o) => { o.spec.storage.size = true; }, ['spec.storage.size: Invalid value: "boolean": spec.storage.size in body must be of type integer,string: "boolean"']],
    ['an int-or-string given an integer', (o) => { o.spec.storage.size = 20; }, []],
    ['a date-time that is not one', (o) => { o.spec.backup.startAt = '2025-02-30T03:00:00Z'; }, ['spec.backup.startAt: Invalid value: "2025-02-30T03:00:00Z": spec.backup.startAt in body must be of type date-time: "2025-02-30T03:00:00Z"']],
    ['a duration that is not one', (o) => { o.spec.backup.retention = 'a week'; }, ['spec.backup.retention: Invalid value: "a week": spec.backup.retention in body must be of type duration: "a week"']],
    ['a duplicate in a set', (o) => { o.spec.users[0].roles = ['read', 'write', 'read']; }, ['spec.users[0].roles[2]: Duplicate value: "read"']],
    ['a duplicate key in a list map', (o) => { o.spec.users[1].name = 'app'; }, ['spec.users[1]: Duplicate value: {"name":"app"}']],
    ['a list map item that is not an object', (o) => { o.status.conditions = ['Ready']; }, [
      'status.conditions[0]: Invalid value: "string": status.conditions[0] in body must be of type object: "string"',
      'status.conditions[0]: Invalid value: "Ready": must be an object for an array of list-type map',
    ]],
    ['an object for an array', (o) => { o.spec.users = { app: {} }; }, ['spec.users: Invalid value: "object": spec.users in body must be of type array: "object"']],
    ['an embedded resource without apiVersion and kind', (o) => { o.spec.podTemplate = { metadata: { name: 'x' } }; }, [
      'spec.podTemplate.apiVersion: Required value: must not be empty', 'spec.podTemplate.kind: Required value: must not be empty',
    ]],
    ['an embedded resource with a bad kind', (o) => { o.spec.podTemplate.kind = 'Pod_Template'; }, [
      `spec.podTemplate.kind: Invalid value: "Pod_Template": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['metadata.name longer than the schema allows', (o) => { o.metadata.name = 'n'.repeat(41); }, ['metadata.name: Too long: may not be more than 40 bytes']],
    ['a condition status outside its enum, deep in status', (o) => { o.status.conditions[0].status = 'Yes'; }, ['status.conditions[0].status: Unsupported value: "Yes": supported values: "True", "False", "Unknown"']],
  ])('%s', (_case, change, expected) => {
    expect(problems(changed(change))).toEqual(expected);
  });
});

describe('validateCustomObject: junctors and other keywords', () => {
  const schema = (spec: Obj): Obj => ({ type: 'object', properties: { spec } });
  it.each<[string, Obj, unknown, string[]]>([
    ['anyOf: none matches', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] }, {}, [
      '<nil>: Invalid value: "": "spec" must validate at least one schema (anyOf)', 'spec.a: Required value',
    ]],
    ['anyOf: one matches', { type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] }, { a: 'x' }, []],
    ['oneOf: two match', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, oneOf: [{ required: ['a'] }, { required: ['b'] }] }, { a: 'x', b: 'y' }, [
      '<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    ]],
    ['oneOf: none matches', { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] }, {}, [
      '<nil>: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid', 'spec.a: Required value',
    ]],
    ['allOf: one fails', { type: 'integer', allOf: [{ minimum: 1 }, { maximum: 5 }] }, 7, [
      'spec: Invalid value: 7: spec in body should be less than or equal to 5', '<nil>: Invalid value: "": "spec" must validate all the schemas (allOf)',
    ]],
    ['not: matches', { type: 'string', not: { enum: ['root'] } }, 'root', ['<nil>: Invalid value: "": "spec" must not validate the schema (not)']],
    ['minItems', { type: 'array', minItems: 2, items: { type: 'string' } }, ['a'], ['spec: Invalid value: 1: spec in body should have at least 2 items']],
    ['uniqueItems', { type: 'array', uniqueItems: true, items: { type: 'object' } }, [{ a: 1, b: 2 }, { b: 2, a: 1 }], ['spec: Invalid value: "": spec in body shouldn\'t contain duplicates']],
    ['minProperties', { type: 'object', minProperties: 1, additionalProperties: { type: 'string' } }, {}, ['spec: Invalid value: 0: spec in body should have at least 1 properties']],
    ['additionalProperties: false', { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false }, { a: 'x', b: 'y' }, ['spec: Invalid value: "b": spec.b in body is a forbidden property']],
    ['a number for a number', { type: 'number' }, 3, []],
    ['nullable object given null', { type: 'object', nullable: true }, null, []],
    ['a list map with a defaulted key', { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port', 'protocol'], items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } } } }, [{ port: 80 }, { port: 80, protocol: 'TCP' }, { port: 80, protocol: 'UDP' }], [
      'spec[1]: Duplicate value: {"port":80,"protocol":"TCP"}',
    ]],
  ])('%s', (_case, spec, value, expected) => {
    expect(problems({ spec: value }, schema(spec))).toEqual(expected);
  });
});

describe('formats as kube checks them', () => {
  it.each<[string, string, boolean | undefined]>([
    ['date-time', '2025-01-31T03:00:00Z', true], ['date-time', '2025-01-31T03:00:00.123+01:00', true], ['date-time', '2025-01-31 03:00:00', false], ['date-time', '2025-01-31T24:00:00Z', false],
    ['date', '2024-02-29', true], ['date', '2023-02-29', false],
    ['duration', '1h30m', true], ['duration', '3 days', true], ['duration', 'soon', false],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', true], ['uuid', 'not-a-uuid', false],
    ['ipv4', '10.0.0.1', true], ['ipv4', '10.0.0.256', false], ['ipv6', '2001:db8::1', true], ['ipv6', '10.0.0.1', false],
    ['cidr', '10.0.0.0/8', true], ['cidr', '10.0.0.0/33', false],
    ['email', 'ops@example.com', true], ['email', 'ops', false],
    ['hostname', 'db-0.example.com', true], ['hostname', 'db_0!', false],
    ['byte', 'aGVsbG8=', true], ['byte', 'hello!', false],
    ['mac', '00:1a:2b:3c:4d:5e', true], ['uri', 'https://example.com/x', true], ['uri', 'example', false],
    ['int32', 'anything', undefined], ['int64', '99999999999999999999', undefined], ['my-format', 'x', undefined],
  ])('%s %j → %s', (format, value, expected) => {
    expect(checkFormat(format, value)).toBe(expected);
  });

  it('does not range-check int32/int64 integers (kube does not either)', () => {
    expect(problems({ spec: 2 ** 40 }, { type: 'object', properties: { spec: { type: 'integer', format: 'int32' } } })).toEqual([]);
  });
});

describe('total on any input, no prototype walks', () => {
  it.each<[string, unknown, unknown]>([
    ['null schema', null, { a: 1 }],
    ['schema as an array', [], { a: 1 }],
    ['null object', databaseSchema(), null],
    ['object as a string', databaseSchema(), 'x'],
    ['odd schema members', { type: 'object', properties: { a: { type: 'string', pattern: 5, enum: 'x', required: 'y', items: 3, minLength: 'z' } }, required: [null, 1] }, { a: 'b' }],
    ['a pattern JavaScript cannot compile', { type: 'object', properties: { a: { type: 'string', pattern: '(?P<name>x)' } } }, { a: 'b' }],
  ])('%s', (_case, schema, object) => {
    expect(() => validateCustomObject(schema, object)).not.toThrow();
  });

  it('validates keys named __proto__, constructor and prototype as data', () => {
    const schema = JSON.parse('{"type":"object","properties":{"spec":{"type":"object","required":["constructor"],"properties":{"__proto__":{"type":"integer"},"constructor":{"type":"string"}},"additionalProperties":false}}}');
    expect(problems(JSON.parse('{"spec":{"__proto__":"x","constructor":"c"}}'), schema)).toEqual(['spec.__proto__: Invalid value: "string": spec.__proto__ in body must be of type integer: "string"']);
    expect(problems(JSON.parse('{"spec":{"prototype":1}}'), schema)).toEqual(['spec.constructor: Required value', 'spec: Invalid value: "prototype": spec.prototype in body is a forbidden property']);
    expect(problems({ spec: {} }, { type: 'object', properties: { spec: { type: 'object', required: ['toString'] } } })).toEqual(['spec.toString: Required value']);
  });
});
