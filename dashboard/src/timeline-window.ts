/**
 * Drawing only what can be seen: of a timeline's items (thousands of spans), the ones on the
 * lanes in view (with a few lanes either side) that overlap the visible time range (widened
 * by half a window either side, so a short pan finds them drawn). The view feeds
 * vis-timeline these and updates them when the range or the scroll position changes.
 * Pure: no DOM.
 */

/** An item's lane and extent on the time axis (a point has `end` = `start`). */
export interface Placed {
  readonly id: string;
  readonly lane: string;
  readonly start: number;
  readonly end: number;
}

/** Items by lane. */
export const byLane = <T extends Placed>(items: readonly T[]): Map<string, T[]> => {
  const lanes = new Map<string, T[]>();
  for (const item of items) {
    const list = lanes.get(item.lane);
    if (list) list.push(item);
    else lanes.set(item.lane, [item]);
  }
  return lanes;
};

/** The time range to fill for a visible range: half a window more either side. */
export const paddedRange = (start: number, end: number): { start: number; end: number } => {
  const pad = (end - start) / 2;
  return { start: start - pad, end: end + pad };
};

/**
 * The lanes to draw: the visible ones (`first`..`last`, indexes into `shown`, the lanes in
 * display order) and `margin` more either side.
 */
export const lanesAround = (shown: readonly string[], first: number, last: number, margin: number): string[] =>
  shown.slice(Math.max(0, first - margin), Math.max(0, Math.min(shown.length, last + 1 + margin)));

/** The items of `lanes` that overlap `range`. */
export const itemsInWindow = <T extends Placed>(index: ReadonlyMap<string, readonly T[]>, lanes: Iterable<string>, range: { start: number; end: number }): T[] => {
  const found: T[] = [];
  for (const lane of lanes) {
    for (const item of index.get(lane) ?? []) if (item.end >= range.start && item.start <= range.end) found.push(item);
  }
  return found;
};

/** What to add and remove to go from the ids drawn to the ids wanted. */
export const windowChange = <T extends Placed>(drawn: ReadonlySet<string>, wanted: readonly T[]): { add: T[]; remove: string[] } => {
  const keep = new Set<string>();
  const add: T[] = [];
  for (const item of wanted) {
    keep.add(item.id);
    if (!drawn.has(item.id)) add.push(item);
  }
  const remove = [...drawn].filter((id) => !keep.has(id));
  return { add, remove };
};
