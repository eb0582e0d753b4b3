import { describe, expect, it } from 'vitest';
import { compileToAvro } from './convert.ts';
import { compileFastCheck } from './fast-check.ts';
import { bodies, envelope, objects } from './fixtures/samples.ts';
import { loadSchemaRegistry } from './index.ts';

const registry = loadSchemaRegistry();

/** Odd values put in place of each field, item and map value. */
const ODD: readonly unknown[] = [
  undefined, null, 0, -1, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY, '', 'x', 'Running',
  true, [], ['x'], {}, { x: 1 }, Buffer.from('x'), () => 1, 10n,
];

type Path = readonly (string | number)[];

/** Every path to a value inside `value` (the root included). */
function paths(value: unknown, prefix: Path = []): Path[] {
  const found: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((item, index) => found.push(...paths(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null && !Buffer.isBuffer(value)) {
    for (const [key, inner] of Object.entries(value)) found.push(...paths(inner, [...prefix, key]));
  }
  return found;
}

/** A deep copy of `value` with what is at `path` replaced by `edit` of it. */
function edited(value: unknown, path: Path, edit: (old: unknown) => unknown): unknown {
  if (path.length === 0) return edit(value);
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  const next = edited(copy[head as string], rest, edit);
  if (next === DELETE) delete copy[head as string];
  else copy[head as string] = next;
  return copy;
}
const DELETE = Symbol('delete');

/** Variants of `value`: every node replaced by each odd value, deleted, or (objects) given an unknown field. */
function* variants(value: unknown): Generator<unknown> {
  for (const path of paths(value)) {
    for (const odd of ODD) yield edited(value, path, () => odd);
    if (path.length > 0) yield edited(value, path, () => DELETE);
    yield edited(value, path, (old) => (typeof old === 'object' && old !== null && !Array.isArray(old) ? { ...old, unknownField: 'x' } : old));
    yield edited(value, path, (old) => (Array.isArray(old) ? [...old, ...old] : old));
  }
}

describe('compileFastCheck', () => {
  const writer = registry.current.type;
  const toAvro = compileToAvro(writer) as (value: unknown) => unknown;
  const fits = compileFastCheck(writer);
  /** avsc's verdict; it throws on some values (a BigInt for an int), which it does not accept either. */
  const avscFits = (value: unknown): boolean => {
    try {
      return writer.isValid(value, { noUndeclaredFields: true });
    } catch {
      return false;
    }
  };
  const samples = [...bodies.map((body) => envelope(body)), ...objects.map((object) => envelope({ type: 'ObjectCreated', object }))].map(toAvro);

  it('accepts every valid sample event (the fast path is taken)', () => {
    for (const sample of samples) {
      expect(avscFits(sample)).toBe(true);
      expect(fits(sample)).toBe(true);
    }
  });

  it('accepts only what avsc accepts, and agrees with it on nearly every broken variant', () => {
    let checked = 0;
    let rejectedByAvsc = 0;
    let stricter = 0;
    for (const sample of samples) {
      for (const variant of variants(sample)) {
        checked += 1;
        const avsc = avscFits(variant);
        const fast = fits(variant);
        if (!avsc) rejectedByAvsc += 1;
        // Never valid where avsc says invalid: that value would be written as it is.
        if (fast && !avsc) expect.fail(`fast check accepts what avsc rejects: ${JSON.stringify(variant).slice(0, 400)}`);
        if (avsc && !fast) stricter += 1;
      }
    }
    expect(checked).toBeGreaterThan(10_000);
    expect(rejectedByAvsc).toBeGreaterThan(checked / 2);
    // Where it is stricter, avsc decides (arrays as records, prototype keys): rare here.
    expect(stricter).toBeLessThan(checked / 100);
  });

  it('checks the ranges of int and long as avsc does', () => {
    const ints = compileFastCheck(registry.current.types['logplane.k8s.core.v1.ContainerPort'] as never);
    for (const containerPort of [80, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 1.5, Number.NaN, '80']) {
      const value = { containerPort };
      expect(ints(value), String(containerPort)).toBe((registry.current.types['logplane.k8s.core.v1.ContainerPort'] as never as { isValid(v: unknown, o: object): boolean }).isValid(value, { noUndeclaredFields: true }));
    }
  });
});
