import { describe, expect, it } from 'vitest';
import { murmur2, partitionFor } from './partitioner.ts';

describe('partitioner', () => {
  // Vectors from Kafka's UtilsTest.testMurmur2.
  it.each([
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ])('murmur2(%s) = %i as in Kafka', (key, expected) => {
    expect(murmur2(key)).toBe(expected);
  });

  it('spreads keys over all partitions and is stable', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100; i++) seen.add(partitionFor(`Pod/default/p${i}`, 3));
    expect([...seen].sort()).toEqual([0, 1, 2]);
    expect(partitionFor('Node//n1', 3)).toBe(partitionFor('Node//n1', 3));
  });
});
