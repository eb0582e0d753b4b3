import { describe, expect, it } from 'vitest';
import { sameJson } from './fold.ts';

describe('sameJson', () => {
  // Each pair: sameJson must answer as comparing the JSON texts does.
  const pairs: [unknown, unknown][] = [
    [{ a: 1, b: [1, 2] }, { a: 1, b: [1, 2] }],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }], // key order counts, as in the JSON text
    [{ a: 1, b: undefined }, { a: 1 }], // undefined fields are not in the text
    [{ a: undefined, b: 1 }, { b: 1, c: undefined }],
    [{ a: 1 }, { a: '1' }],
    [[undefined], [null]], // an undefined element is written as null
    [[1, 2], [1, 2, 3]],
    [{ a: [] }, { a: {} }],
    [{ a: { b: { c: 'x' } } }, { a: { b: { c: 'y' } } }],
    [null, {}],
    [undefined, undefined],
    [{ a: NaN }, { a: null }], // a number that is not finite is written as null
    [{ a: Infinity }, { a: NaN }],
    [{ a: Infinity }, { a: 1 }],
    [[NaN], [0]],
    [{ containers: [{ name: 'main', image: 'a:1', ports: [{ containerPort: 80 }] }] }, { containers: [{ name: 'main', image: 'a:1', ports: [{ containerPort: 81 }] }] }],
    [{ containers: [{ name: 'main', image: 'a:1' }] }, { containers: [{ name: 'main', image: 'a:1' }] }],
  ];
  it.each(pairs.map((pair, i) => [i, ...pair]))('pair %i answers as JSON.stringify does', (_, a, b) => {
    expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
  });
  it('tells a changed spec from an unchanged one', () => {
    expect(sameJson({ replicas: 3 }, { replicas: 3 })).toBe(true);
    expect(sameJson({ replicas: 3 }, { replicas: 4 })).toBe(false);
  });
});
