/**
 * Drawing only what can be seen: of a timeline's items (thousands of spans), the ones on the
 * lanes in view (with a few lanes either side) that overlap the visible time range (widened
 * by half a window either side, so a short pan finds them drawn), and where a run of them is
 * too narrow to see at this zoom, one cluster for the run (vis-timeline's clustering, done
 * before the items reach it). The view feeds vis-timeline these and updates them when the
 * range or the scroll position changes.
 * Pure: no DOM.
 */

/** An item's lane and extent on the time axis (a point has `end` = `start`). */
export interface Placed {
  readonly id: string;
  readonly lane: string;
  readonly start: number;
  readonly end: number;
}

/** Items by lane, each lane's in start order. */
export const byLane = <T extends Placed>(items: readonly T[]): Map<string, T[]> => {
  const lanes = new Map<string, T[]>();
  for (const item of items) {
    const list = lanes.get(item.lane);
    if (list) list.push(item);
    else lanes.set(item.lane, [item]);
  }
  for (const list of lanes.values()) list.sort((a, b) => a.start - b.start);
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

/** Consecutive items of a lane drawn as one, at a zoom where each is too narrow to see or click. */
export interface Cluster<T extends Placed> extends Placed {
  readonly members: readonly T[];
}

export const isCluster = <T extends Placed>(item: T | Cluster<T>): item is Cluster<T> => 'members' in item;

/**
 * One lane's `items` (in start order) at a zoom where `width` ms is the narrowest thing worth
 * drawing (a few pixels): at least `least` consecutive items that together fit in `width`
 * are one cluster; fewer, or a wider item, stay themselves (a handful of marks close together
 * are still drawn one by one). Zoomed in far enough, every item is itself.
 */
export const coarsen = <T extends Placed>(items: readonly T[], width: number, least = 2): (T | Cluster<T>)[] => {
  const out: (T | Cluster<T>)[] = [];
  let group: T[] = [];
  const flush = (): void => {
    if (group.length < Math.max(2, least)) out.push(...group);
    else {
      const first = group[0]!;
      let end = first.end;
      for (const item of group) end = Math.max(end, item.end);
      out.push({ id: `cluster:${first.id}:${group.length}`, lane: first.lane, start: first.start, end, members: group });
    }
    group = [];
  };
  for (const item of items) {
    const start = group[0]?.start ?? item.start;
    if (group.length > 0 && Math.max(item.end, start) - start > width) flush();
    group.push(item);
  }
  flush();
  return out;
};

/** `range` no wider than `max` (vis-timeline's `zoomMax`), kept centred as vis-timeline keeps it. */
export const clampRange = (range: { start: number; end: number }, max: number): { start: number; end: number } => {
  if (range.end - range.start <= max) return range;
  const centre = (range.start + range.end) / 2;
  return { start: centre - max / 2, end: centre + max / 2 };
};
