/**
 * Completion indexes of an Indexed Job as kube writes them in `status.completedIndexes`:
 * ascending, comma-separated intervals, a run of three or more as `first-last`
 * (kube's `orderedIntervals.String`, e.g. "1,3-5,7").
 */

/** The indexes `text` lists (below `limit`), ascending and without duplicates; bad parts are skipped as kube does. */
export const parseIndexes = (text: string | undefined, limit: number): number[] => {
  if (!text) return [];
  const found = new Set<number>();
  for (const part of text.split(',')) {
    const [first, last] = part.split('-');
    const from = Number(first);
    const to = last === undefined ? from : Number(last);
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to < from) continue;
    for (let index = from; index <= Math.min(to, limit - 1); index++) found.add(index);
  }
  return [...found].sort((a, b) => a - b);
};

/** `indexes` (any order, duplicates allowed) as kube's interval string. */
export const formatIndexes = (indexes: Iterable<number>): string => {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    const first = sorted[i] as number;
    let last = first;
    while (i + 1 < sorted.length && sorted[i + 1] === last + 1) {
      i++;
      last = sorted[i] as number;
    }
    i++;
    parts.push(last === first ? String(first) : last === first + 1 ? `${first},${last}` : `${first}-${last}`);
  }
  return parts.join(',');
};

/**
 * The message of the first rule of an Indexed Job's success policy that `succeeded` meets
 * (kube's `matchSuccessPolicy`): all of its `succeededIndexes`, or `succeededCount` of them
 * (of all indexes without `succeededIndexes`); undefined when none is met.
 */
export const matchSuccessPolicy = (
  rules: readonly { readonly succeededIndexes?: string; readonly succeededCount?: number }[],
  completions: number,
  succeeded: ReadonlySet<number>,
): string | undefined => {
  if (succeeded.size === 0) return undefined;
  for (const [index, rule] of rules.entries()) {
    if (rule.succeededIndexes !== undefined) {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.length === 0) continue;
      const matched = required.filter((i) => succeeded.has(i)).length;
      if (matched === 0) continue;
      if (rule.succeededCount !== undefined ? rule.succeededCount <= matched : matched === required.length) return `Matched rules at index ${index}`;
    } else if (rule.succeededCount !== undefined && rule.succeededCount <= succeeded.size) {
      return `Matched rules at index ${index}`;
    }
  }
  return undefined;
};
