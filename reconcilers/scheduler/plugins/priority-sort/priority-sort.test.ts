import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../../schemas/index.ts';
import { makePod } from '../../test-fixtures.ts';
import { comparePods, createPrioritySort } from './index.ts';

const at = (pod: Pod, creationTimestamp: string | undefined): Pod =>
  creationTimestamp === undefined ? pod : { ...pod, metadata: { ...pod.metadata, creationTimestamp } };

describe('PrioritySort', () => {
  it.each<[string, Pod, Pod]>([
    ['higher priority first', makePod({ name: 'z', priority: 1000 }), makePod({ name: 'a', priority: 10 })],
    ['unset priority is 0, below a positive one', makePod({ name: 'z', priority: 1 }), makePod({ name: 'a' })],
    ['a negative priority goes after unset', makePod({ name: 'z' }), makePod({ name: 'a', priority: -5 })],
    ['equal priority: the earlier one first', at(makePod({ name: 'z' }), '2026-01-01T00:00:00Z'), at(makePod({ name: 'a' }), '2026-01-01T00:00:01Z')],
    ['without a creation time: after those with one', at(makePod({ name: 'z' }), '2026-01-01T00:00:00Z'), makePod({ name: 'a' })],
    ['all equal: by namespace/name', makePod({ name: 'a' }), makePod({ name: 'b' })],
  ])('%s', (_case, first, second) => {
    expect(comparePods(first, second)).toBeLessThan(0);
    expect(comparePods(second, first)).toBeGreaterThan(0);
    expect([second, first].sort(createPrioritySort().compare)).toEqual([first, second]);
  });
});
