import { describe, expect, it } from 'vitest';
import { findResults, GoByte, goFloatText, goJson, goText, parseJsonPathTemplate } from './jsonpath.ts';

/** client-go's `Execute`: each top-level node's values, space-separated, nodes concatenated. */
const execute = (template: string, data: unknown, allowMissingKeys = false): string => {
  const parsed = parseJsonPathTemplate(template);
  if (parsed.type === 'invalid') throw new Error(`parse: ${parsed.message}`);
  const found = findResults(parsed.template, data, { allowMissingKeys });
  if (found.type === 'error') return `error: ${found.message}`;
  return found.results.map((values) => values.map(goText).join(' ')).join('');
};

const types = {
  bools: [true, false, true, false],
  integers: [1, 2, 3, 4],
  floats: [1.5, 2.2, 3.3, 4.25],
  strings: ['one', 'two', 'three', 'four'],
  interfaces: [true, 'one', 1, 1.1],
  maps: [
    { name: 'one', value: 1 },
    { name: 'two', value: 2.02 },
    { name: 'three', value: 3.03 },
    { name: 'four', value: 4.04 },
  ],
};

const nodes = JSON.parse(`{
  "kind": "List",
  "items": [
    {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
     "status": {"capacity": {"cpu": "4"}, "ready": true, "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
    {"kind": "None", "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
     "status": {"capacity": {"cpu": "8"}, "ready": false, "addresses": [
       {"type": "LegacyHostIP", "address": "127.0.0.2"}, {"type": "another", "address": "127.0.0.3"}]}}
  ],
  "users": [{"name": "myself", "user": {}}, {"name": "e2e", "user": {"username": "admin", "password": "secret"}}]
}`) as unknown;

const points = [
  { id: 'i1', x: 4, y: -5 },
  { id: 'i2', x: -2, y: -5, z: 1 },
  { id: 'i3', x: 8, y: 3 },
  { id: 'i4', x: -6, y: -1 },
  { id: 'i5', x: 0, y: 2, z: 1 },
  { id: 'i6', x: 1, y: 4 },
];

describe('kube JSONPath evaluation (client-go jsonpath_test.go cases)', () => {
  it.each([
    ['{ .bools }', types, '[true,false,true,false]'],
    ['{ .bools[0] }', types, 'true'],
    ['{ .bools[-1] }', types, 'false'],
    ['{ .bools[0:2] }', types, 'true false'],
    ['{ .bools[:2] }', types, 'true false'],
    ['{ .bools[:4:2] }', types, 'true true'],
    ['{ .integers[-2] }', types, '3'],
    ['{ .integers[1:] }', types, '2 3 4'],
    ['{ .integers[-2:] }', types, '3 4'],
    ['{ .integers[1:1] }', types, ''],
    ['{ .floats }', types, '[1.5,2.2,3.3,4.25]'],
    ['{ .floats[-2] }', types, '3.3'],
    ['{ .strings[0] }', types, 'one'],
    ['{ .strings[:4:2] }', types, 'one three'],
    ['{ .interfaces }', types, '[true,"one",1,1.1]'],
    ['{ .interfaces[:4:2] }', types, 'true 1'],
    ['{ .maps[-2] }', types, '{"name":"three","value":3.03}'],
    ['{ .maps[1::2] }', types, '{"name":"two","value":2.02} {"name":"four","value":4.04}'],
    ['hello jsonpath', null, 'hello jsonpath'],
    ['{..}', [1, 2, 3], '[1,2,3]'],
    ['{[?(@<5)]}', [2, 6, 3, 7], '2 3'],
    ['{"{"}', null, '{'],
    ['{[1,3,4]}', [0, 1, 2, 3, 4], '1 3 4'],
    ['{[0:2]}', ['Monday', 'Tudesday'], 'Monday Tudesday'],
    ['{$.labels.web/html}', { labels: { 'web/html': 15 } }, '15'],
    ['{.labels.k8s-app}', { labels: { 'k8s-app': 20 } }, '20'],
    ['{[?(@.z)].id}', points, 'i2 i5'],
    ['{[0][\'id\']}', points, 'i1'],
    ['{[?(@.x>=1)].id}', points, 'i1 i3 i6'],
    ['{[?(@.x<=0)].id}', points, 'i2 i4 i5'],
    ['{[?(@.x>0)].id}', points, 'i1 i3 i6'],
    ['{[?(@.y!=-5)].id}', points, 'i3 i4 i5 i6'],
    ['{[?(@.x==@.z)].id}', points, 'error: z is not found'],
    ['{.items[*].status.addresses[*].address}', nodes, '127.0.0.1 127.0.0.2 127.0.0.3'],
    ['{.items[*].metadata.name}', nodes, '127.0.0.1 127.0.0.2'],
    ["{.items[*]['metadata.name', 'status.capacity']}", nodes, '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
    ['{.users[?(@.name=="e2e")].user.password}', nodes, 'secret'],
    ["{.users[?(@.name=='e2e')].user.password}", nodes, 'secret'],
    ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', nodes, '127.0.0.1'],
    ['{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', nodes, 'None'],
    ['{.items[?(@..ready==true)].metadata.name}', nodes, '127.0.0.1'],
    ['{..name}', nodes, '127.0.0.1 127.0.0.2 myself e2e'],
    ['{...name}', nodes, '127.0.0.1 127.0.0.2 myself e2e'],
    ['{.items[0].metadata.name}{" / "}{.kind}', nodes, '127.0.0.1 / List'],
    ['{.users[*].name}', nodes, 'myself e2e'],
    ['{.users[1].user.*}', nodes, 'admin secret'],
    ['{.kind.*}', { kind: 'ab' }, '97 98'],
    ['{[?(@=="b")]}', ['a', 'b', 'c'], 'b'],
    ['{[?(@.*>64)]}', ['A', '@'], 'A'],
    ['{[?(@.*==64)]}', ['A', '@'], '@'],
    ['{[?(@.*<=64)]}', ['A', '@'], '@'],
    ['{[?(@<"b")]}', ['a', 'b', 'c'], 'a'],
    ['{[?(@.on==false)].n}', [{ n: 1, on: true }, { n: 2, on: false }], '2'],
    ['{[?(@.w==2.5)].n}', [{ n: 1, w: 2.5 }, { n: 2, w: 3.5 }], '1'],
    ['{[?(@.n==-1)].n}', [{ n: -1 }, { n: 1 }], '-1'],
    ['{.a}{5}{true}{1.5}', { a: 'x' }, 'x5true1.5'],
    ['{ .a }', { a: 'spaced' }, 'spaced'],
    ['{.missing}{.a}', { a: 'x' }, 'error: missing is not found'],
  ])('%s', (template, data, expected) => {
    expect(execute(template, data)).toBe(expected);
  });

  it.each([
    ['{.hello}', { a: 1 }, ''],
    ['before-{.hello}after', { a: 1 }, 'before-after'],
    ['{.a.b.c}', { a: 'string' }, ''],
    ['{.a[0].b}', { a: [null] }, ''],
    ['{.a[*].b}', { a: [{ b: 1 }, {}, { b: 3 }] }, '1 3'],
    ['{[?(@.x==@.z)].id}', points, ''],
    ['{[?(@.z==1)].id}', points, 'i2 i5'],
  ])('with missing keys allowed, %s', (template, data, expected) => {
    expect(execute(template, data, true)).toBe(expected);
  });

  it.each([
    ['{hello}', { a: 1 }, 'unrecognized identifier hello'],
    ['{range .a}{end}', { a: [1] }, 'range is not supported'],
    ['{.a[0]}', { a: { b: 1 } }, 'not array or slice'],
    ['{.a[3]}', { a: [1, 2] }, 'array index out of bounds: index 3, length 2'],
    ['{.a[-3]}', { a: [1, 2] }, 'array index out of bounds: index -1, length 2'],
    ['{.a[0:5]}', { a: [1, 2] }, 'array index out of bounds: index 4, length 2'],
    ['{.a[1:0]}', { a: [1, 2] }, 'starting index 1 is greater than ending index 0'],
    ['{.a[::0]}', { a: [1, 2] }, 'step must be > 0'],
    ['{.a[?(@.x)]}', { a: { x: 1 } }, 'not array or slice and cannot be filtered'],
    ['{.a[?(@.x)]}', { a: null }, 'not array or slice and cannot be filtered'],
    ['{.a[?(@.x<>1)]}', { a: [{ x: 1 }] }, 'unrecognized filter operator <>'],
    ['{.a[?(@.x=="1")]}', { a: [{ x: 1 }] }, 'incompatible types for comparison'],
    ['{.a[?(@.x==1.0)]}', { a: [{ x: 1 }] }, 'incompatible types for comparison'],
    ['{.a[?(@.x==1)]}', { a: [{ x: { y: 1 } }] }, 'invalid type for comparison'],
    ['{.a[?(@.x==1)]}', { a: [{ x: null }] }, 'invalid type for comparison'],
    ['{.a[?(@.x<true)]}', { a: [{ x: false }] }, 'invalid type for comparison'],
    ['{.a[?(@.x[*]==1)]}', { a: [{ x: [1, 2] }] }, 'can only compare one element at a time'],
    ['{.a[?(@.x==@.y[*])]}', { a: [{ x: 1, y: [1, 2] }] }, 'can only compare one element at a time'],
    ['{.a[?(@.x==@.y[5])]}', { a: [{ x: 1, y: [1] }] }, 'array index out of bounds: index 5, length 1'],
    ['{.a[?(@.x[5]==1)]}', { a: [{ x: [1] }] }, 'array index out of bounds: index 5, length 1'],
    ['{.a[0,5]}', { a: [1] }, 'array index out of bounds: index 5, length 1'],
    ['{..[0]}', { a: [1] }, 'not array or slice'],
  ])('%s fails to evaluate on %j', (template, data, message) => {
    expect(execute(template, data, true)).toBe(`error: ${message}`);
  });

  it('keeps a filtered element whose exists-path failed, as client-go does', () => {
    expect(execute('{.a[?(@.x[5])].n}', { a: [{ n: 1, x: [1] }, { n: 2 }] }, true)).toBe('1');
  });

  it('compares string bytes, not UTF-16 units', () => {
    expect(execute('{[?(@>"\uffff")]}', ['\u{1F600}', 'a'])).toBe('\u{1F600}');
  });

  it('walks a string into its UTF-8 bytes with .*', () => {
    const parsed = parseJsonPathTemplate('{.s.*}');
    if (parsed.type !== 'parsed') throw new Error('parse');
    const found = findResults(parsed.template, { s: 'é' });
    expect(found).toEqual({ type: 'found', results: [[new GoByte(0xc3), new GoByte(0xa9)]] });
  });

  it('evaluates deep data without recursion limits', () => {
    let deep: unknown = { leaf: 'bottom' };
    for (let i = 0; i < 20_000; i++) deep = { next: deep };
    expect(execute('{..leaf}', deep)).toBe('bottom');
  });
});

describe('prototype safety', () => {
  const hostile = JSON.parse('{"spec": {"__proto__": {"polluted": "yes"}, "constructor": "own"}, "plain": {}}') as unknown;

  it.each([
    ['{.plain.__proto__}', ''],
    ['{.plain.constructor}', ''],
    ['{.plain.toString}', ''],
    ['{.plain.hasOwnProperty}', ''],
    ['{.spec.polluted}', ''],
    ['{.spec.__proto__.polluted}', 'yes'],
    ['{.spec.constructor}', 'own'],
    ['{.list.length}', ''],
    ['{.text.length}', ''],
    ['{.plain[?(@.constructor)]}', 'error: not array or slice and cannot be filtered'],
    ['{.list[?(@.constructor)]}', ''],
  ])('%s reads own properties only', (template, expected) => {
    const data = { ...(hostile as object), list: [{}, []], text: 'abc' };
    expect(execute(template, data, true)).toBe(expected);
  });

  it('does not write through a __proto__ key when printing it', () => {
    expect(execute('{.spec}', hostile)).toBe('{"__proto__":{"polluted":"yes"},"constructor":"own"}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('parsing', () => {
  it.each([
    ['{.a', 'unclosed action'],
    ['{.a[0}', 'unterminated array'],
    ['{.a[x]}', 'invalid array index x'],
    ['{.a[1:-]}', 'array index - is not a number'],
    ['{.a[99999999999999999999]}', 'array index 99999999999999999999 is not a number'],
    ['{.a..b..c}', ''],
    ['{....a}', 'invalid multiple recursive descent'],
    ['{.a[?(@.b=="x"}', 'unterminated filter'],
    ['{.a[?(@.b=="x")}', 'unclosed array expect ]'],
    ['{.a[?(@.b=="x)]}', 'unterminated filter'],
    ['{!}', "unrecognized character in action: U+0021 '!'"],
    ['{.a["b"]}', 'invalid array index "b"'],
    ['{.a[?(@.x==1)', 'unclosed array expect ]'],
    ['{.a[?(@.b==1.2.3)]}', 'cannot parse number 1.2.3'],
    ['{"abc}', 'unterminated quoted string'],
    ['{"a\\qb"}', 'unquote string "a\\qb" error invalid syntax'],
    ['{.a[?(@.b==-)]}', 'cannot parse number -'],
  ])('%s', (template, message) => {
    const parsed = parseJsonPathTemplate(template);
    expect(parsed.type === 'invalid' ? parsed.message : '').toBe(message);
  });

  it.each([
    ['{"\\t\\n\\\\\\"x"}', '\t\n\\"x'],
    ["{'it\\'s'}", "it's"],
    ['{"\\u00e9\\x41\\101\\U0001F600"}', 'éAA\u{1F600}'],
    ['{"a\\b\\f\\v\\r\\a"}', 'a\b\f\v\r\x07'],
  ])('unquotes %s as Go does', (template, expected) => {
    expect(execute(template, null)).toBe(expected);
  });

  it.each(['{"a\\\'"}', '{"\\uD800"}', '{"\\x4"}', '{"\\777"}', '{"a\\"}'])('rejects the string literal %s', (template) => {
    expect(parseJsonPathTemplate(template).type).toBe('invalid');
  });
});

describe("Go's text of values", () => {
  it.each([
    [0, '0'],
    [-0, '-0'],
    [1.5, '1.5'],
    [-2.25, '-2.25'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [123456.5, '123456.5'],
    [1234567.5, '1.2345675e+06'],
    [1e21, '1e+21'],
    [1.5e300, '1.5e+300'],
    [-1e-7, '-1e-07'],
  ])('%d prints as %s', (value, text) => {
    expect(goFloatText(value)).toBe(text);
  });

  it.each([
    [null, '<no value>'],
    ['text', 'text'],
    [true, 'true'],
    [42, '42'],
    [-7, '-7'],
    [2.5, '2.5'],
    [2 ** 60, '1.152921504606847e+18'],
    [new GoByte(200), '200'],
    [[1, 'a', null], '[1,"a",null]'],
    [{ b: 1, a: { d: [], c: '<&>' } }, '{"a":{"c":"\\u003c\\u0026\\u003e","d":[]},"b":1}'],
    [{ '\u{1F600}': 1, '\uffff': 2 }, '{"\uffff":2,"\u{1F600}":1}'],
    [{ s: 'line\u2028sep' }, '{"s":"line\\u2028sep"}'],
  ])('%j prints as %s', (value, text) => {
    expect(goText(value)).toBe(text);
  });

  it('marshals like encoding/json (sorted keys, no spaces)', () => {
    expect(goJson({ z: [{ y: 1, x: 2 }], a: 'q"uote' })).toBe('{"a":"q\\"uote","z":[{"x":2,"y":1}]}');
  });
});
