import { describe, expect, it } from 'vitest';
import { nodeTreeOrder, numFeasibleNodesToFind, startIndexOf, windowOf, zoneKeyOf } from './nodes-to-score.ts';
import { makePod } from './test-fixtures.ts';

describe('numFeasibleNodesToFind (kube-scheduler 1.32)', () => {
  it.each([
    // [percentage, nodes, expected]: kube's TestNumFeasibleNodesToFind cases and the envelope sizes.
    [undefined, 10, 10],
    [undefined, 99, 99],
    [undefined, 100, 100],
    [undefined, 150, 100], // 48 % is 72: never below 100
    [undefined, 1_000, 420], // 50 - 1000/125 = 42 %
    [undefined, 5_000, 500], // 10 %
    [undefined, 6_000, 300], // 50 - 48 = 2 %, raised to 5 %
    [0, 1_000, 420],
    [40, 10, 10],
    [40, 1_000, 400],
    [40, 6_000, 2_400],
    [1, 6_000, 100],
    [100, 6_000, 6_000],
  ])('percentage %s of %i nodes: %i', (percentage, nodes, expected) => {
    expect(numFeasibleNodesToFind(percentage, nodes)).toBe(expected);
  });
});

describe('the node-tree scan order', () => {
  it('keys zones by region and zone, GA labels before beta ones', () => {
    expect(zoneKeyOf(undefined)).toBe('');
    expect(zoneKeyOf({ 'kubernetes.io/hostname': 'a' })).toBe('');
    expect(zoneKeyOf({ 'topology.kubernetes.io/zone': 'z1' })).toBe(':\u0000:z1');
    expect(zoneKeyOf({ 'topology.kubernetes.io/zone': 'z1', 'topology.kubernetes.io/region': 'r' })).toBe('r:\u0000:z1');
    expect(zoneKeyOf({ 'failure-domain.beta.kubernetes.io/zone': 'old', 'topology.kubernetes.io/zone': 'new' })).toBe(':\u0000:new');
    expect(zoneKeyOf({ 'failure-domain.beta.kubernetes.io/zone': 'old' })).toBe(':\u0000:old');
  });

  it('interleaves the zones, one node of each in turn, zones in order of first appearance (kube nodeTree.list)', () => {
    // Nodes 0-2 in zone a, 3-4 in b, 5 in c, 6 in a again.
    expect([...nodeTreeOrder(['a', 'a', 'a', 'b', 'b', 'c', 'a'])]).toEqual([0, 3, 5, 1, 4, 2, 6]);
    expect([...nodeTreeOrder([])]).toEqual([]);
  });

  it('takes the first feasible nodes from the start, wrapping around; undefined when that is all of them', () => {
    const order = Int32Array.from([0, 1, 2, 3, 4, 5]);
    const odd = (index: number) => index % 2 === 1;
    expect(windowOf(order, 4, 2, 3, odd)).toEqual([5, 1]);
    expect(windowOf(order, 0, 3, 3, odd)).toBeUndefined();
  });

  it('starts each pod at a place that depends only on its namespace and name', () => {
    const starts = Array.from({ length: 200 }, (_, n) => startIndexOf(makePod({ name: `web-${n}` }), 1_000));
    expect(starts).toEqual(Array.from({ length: 200 }, (_, n) => startIndexOf(makePod({ name: `web-${n}` }), 1_000)));
    expect(starts.every((start) => start >= 0 && start < 1_000)).toBe(true);
    // Spread over the list as kube's rotating start is, not one place.
    expect(new Set(starts.map((start) => Math.floor(start / 100))).size).toBeGreaterThanOrEqual(8);
    expect(startIndexOf(makePod({ name: 'web-0' }), 0)).toBe(0);
  });
});
