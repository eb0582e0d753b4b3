import { describe, expect, it } from 'vitest';
import { byLane, clampRange, coarsen, isCluster, itemsInWindow, lanesAround, paddedRange, windowChange, type Placed } from './timeline-window.ts';

const item = (id: string, lane: string, start: number, end = start): Placed => ({ id, lane, start, end });
const items = [item('a1', 'a', 0, 10), item('a2', 'a', 10, 20), item('a3', 'a', 20, 30), item('b1', 'b', 0, 30), item('bp', 'b', 15), item('c1', 'c', 5, 25)];

describe('the drawn window', () => {
  it('takes the items of the given lanes that overlap the range, points and spans', () => {
    const index = byLane(items);
    expect(itemsInWindow(index, ['a', 'b'], { start: 12, end: 18 }).map((i) => i.id)).toEqual(['a2', 'b1', 'bp']);
    expect(itemsInWindow(index, ['a'], { start: 20, end: 20 }).map((i) => i.id)).toEqual(['a2', 'a3']);
    expect(itemsInWindow(index, ['c', 'unknown'], { start: 26, end: 40 })).toEqual([]);
  });

  it('pads the range by half a window either side', () => {
    expect(paddedRange(100, 200)).toEqual({ start: 50, end: 250 });
  });

  it('takes the visible lanes and a margin either side, within the lanes shown', () => {
    const shown = ['l0', 'l1', 'l2', 'l3', 'l4', 'l5'];
    expect(lanesAround(shown, 2, 3, 1)).toEqual(['l1', 'l2', 'l3', 'l4']);
    expect(lanesAround(shown, 0, 1, 3)).toEqual(['l0', 'l1', 'l2', 'l3', 'l4']);
    expect(lanesAround(shown, 5, 5, 10)).toEqual(shown);
    // Nothing in view: only the margin after the top.
    expect(lanesAround(shown, 0, -1, 2)).toEqual(['l0', 'l1']);
  });

  it('adds what is wanted and not drawn, removes what is drawn and not wanted', () => {
    const { add, remove } = windowChange(new Set(['a1', 'a2', 'b1']), [item('a2', 'a', 10, 20), item('c1', 'c', 5, 25)]);
    expect(add.map((i) => i.id)).toEqual(['c1']);
    expect(remove).toEqual(['a1', 'b1']);
  });
});

describe('coarsen', () => {
  it('draws consecutive items that together fit in the width as one cluster, and a wide or lone item as itself', () => {
    const lane = [item('s1', 'a', 0, 1), item('s2', 'a', 1, 2), item('p', 'a', 3), item('s3', 'a', 3, 50), item('s4', 'a', 60, 61)];
    const out = coarsen(lane, 5);
    expect(out.map((i) => (isCluster(i) ? `cluster(${i.members.map((m) => m.id).join(',')}) ${i.start}-${i.end}` : i.id))).toEqual(['cluster(s1,s2,p) 0-3', 's3', 's4']);
    // Zoomed in, every item is itself.
    expect(coarsen(lane, 0.5).map((i) => i.id)).toEqual(['s1', 's2', 'p', 's3', 's4']);
    expect(coarsen([], 5)).toEqual([]);
    // Fewer than `least` close together: drawn one by one.
    expect(coarsen(lane, 5, 4).map((i) => i.id)).toEqual(['s1', 's2', 'p', 's3', 's4']);
  });

  it('keeps a range no wider than the widest zoom, centred', () => {
    expect(clampRange({ start: 0, end: 100 }, 40)).toEqual({ start: 30, end: 70 });
    expect(clampRange({ start: 0, end: 10 }, 40)).toEqual({ start: 0, end: 10 });
  });
});
