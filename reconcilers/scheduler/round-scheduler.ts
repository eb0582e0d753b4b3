/**
 * The round scheduler: `schedule` with the same results for the pods of one round, reusing
 * what an earlier pod of the same template saw on every node whose NodeInfo did not change.
 */
import {
  type ClusterLister,
  createSchedulingContext,
  EMPTY_CLUSTER,
  type FilterPlugin,
  type NodeInfo,
  type NodeLocality,
  type Profile,
  type SchedulingContext,
  type SchedulingCycle,
} from './framework.ts';
import type { FilteredNode, Pod } from '../../schemas/index.ts';
import {
  compareNames,
  decide,
  evaluateAll,
  evaluateNode,
  filteredOf,
  type NodeOutcome,
  rank,
  ranksBefore,
  result,
  type ScheduleResult,
  scoresOver,
  scoringWindow,
  skippedScores,
  TOP_SCORES,
} from './scheduler.ts';

/**
 * A scheduler for one round of decisions: `schedule` with the same results, which reuses
 * the outcome of an earlier pod of the round with the same namespace, labels and spec (the
 * replicas of one template) on every node whose NodeInfo is the same object as then, when
 * every plugin is node-local for both cycles (see `NodeLocality`). After a binding only the
 * chosen node's NodeInfo changes, so the replicas of a template cost one full pass per round
 * plus one node each; the ranking is kept too (see `Ranking`), so they are not re-ranked
 * over every node either.
 */
export function createRoundScheduler(
  profile: Profile,
  cluster: ClusterLister = EMPTY_CLUSTER,
): (pod: Pod, nodeInfos: readonly NodeInfo[], changes?: readonly number[]) => ScheduleResult {
  const filters = profile.filters;
  const scorePlugins = profile.scores.map((entry) => entry.plugin);
  const mayReuse =
    filters.every((plugin) => filterLocality(plugin) !== undefined) && scorePlugins.every((plugin) => plugin.nodeLocal !== undefined);
  /** Pod signature → what the last pod with it saw. */
  const memos = new Map<string, Memo>();
  return (pod, nodeInfos, changes) => {
    const ctx = createSchedulingContext(pod, nodeInfos, cluster, changes);
    const filtersLocal = mayReuse && filters.every((plugin) => holds(filterLocality(plugin), ctx));
    if (!filtersLocal) return decide(evaluateAll(pod, nodeInfos, ctx, profile), profile);
    // Score plugins that are not node-local this cycle are scored afresh over the feasible
    // nodes (with their normalization); the filters' verdicts and the other scores are reused.
    const scoreMask = scorePlugins.map((plugin) => !holds(plugin.nodeLocal, ctx));
    // Left out of per-node scoring: the non-local ones, and those that score 0 everywhere this cycle.
    const skipped = skippedScores(profile, ctx);
    const leaveOut = scoreMask.map((nonLocal, index) => nonLocal || (skipped[index] as boolean));
    const signature = JSON.stringify([pod.metadata.namespace ?? 'default', pod.metadata.labels ?? null, signatureSpec(pod.spec)]);
    let memo = memos.get(signature);
    if (memo === undefined || memo.outcomes.length !== nodeInfos.length) {
      const outcomes = nodeInfos.map((nodeInfo) => evaluateNode(pod, nodeInfo, ctx, profile, leaveOut));
      memo = memoOf(outcomes, scoreMask);
      if (changes !== undefined) {
        memo.infos = nodeInfos;
        memo.seen = changes.length;
      }
      memos.set(signature, memo);
    } else {
      refreshMemo(memo, pod, nodeInfos, ctx, profile, changes, skipped, scoreMask);
    }
    const fresh = memo.scoreMask.map((skipped, index) => skipped || (scoreMask[index] as boolean));
    const outcomes = memo.outcomes;
    const window = scoringWindow(pod, nodeInfos, ctx, profile, memo.feasible, (index) => (outcomes[index] as NodeOutcome).unfit === undefined);
    if (!fresh.includes(true)) return decideFromMemo(memo, profile, window);
    return decideWithFreshScores(memo, pod, ctx, profile, fresh, window);
  };
}

/** A filter's locality: `filterNodeLocal` of a plugin that also scores, else `nodeLocal`. */
export function filterLocality(plugin: FilterPlugin): NodeLocality | undefined {
  return plugin.filterNodeLocal ?? plugin.nodeLocal;
}

/** Whether a plugin is node-local in the cycle of `ctx`. */
export function holds(locality: NodeLocality | undefined, ctx: SchedulingContext): boolean {
  return locality === true || (locality !== undefined && locality(ctx));
}

/** Brings `memo` up to date with `nodeInfos`: re-evaluates the nodes whose NodeInfo changed since. */
function refreshMemo(
  memo: Memo,
  pod: Pod,
  nodeInfos: readonly NodeInfo[],
  ctx: SchedulingContext,
  profile: Profile,
  changes: readonly number[] | undefined,
  skipped: readonly boolean[],
  nonLocalNow: readonly boolean[],
): void {
  // A plugin that is not node-local now (though it was when the memo was made) is scored
  // afresh over the feasible nodes, with its normalization: never per node here.
  const leaveOut = memo.scoreMask.map((nonLocal, index) => nonLocal || (nonLocalNow[index] as boolean) || (skipped[index] as boolean));
  // With the caller's log of replaced entries (same array as last time), only the entries
  // replaced since this memo was last used can differ: visit those (ascending, as the full
  // scan would) instead of comparing every node.
  let indices: readonly number[] | undefined;
  if (changes !== undefined && memo.infos === nodeInfos && memo.seen !== undefined) {
    indices = [...new Set(changes.slice(memo.seen))].sort((a, b) => a - b);
    memo.seen = changes.length;
  } else {
    memo.infos = undefined;
    memo.seen = undefined;
  }
  const changed: NodeOutcome[] = [];
  const replaced = new Set<NodeOutcome>();
  let filteredChanged = false;
  const visits = indices?.length ?? nodeInfos.length;
  for (let visit = 0; visit < visits; visit += 1) {
    const index = indices === undefined ? visit : (indices[visit] as number);
    const nodeInfo = nodeInfos[index] as NodeInfo;
    const before = memo.outcomes[index] as NodeOutcome;
    if (before.nodeInfo === nodeInfo) continue;
    const after = evaluateNode(pod, nodeInfo, ctx, profile, leaveOut);
    memo.outcomes[index] = after;
    updateFeasibleView(memo, index, after);
    replaced.add(before);
    if (before.unfit === undefined) memo.feasible -= 1;
    if (after.unfit === undefined) {
      memo.feasible += 1;
      changed.push(after);
    }
    if (before.unfit !== undefined || after.unfit !== undefined) filteredChanged = true;
  }
  if (filteredChanged) {
    memo.filtered = filteredOf(memo.outcomes);
    memo.feasibleView = undefined;
  }
  if (!updateRanking(memo.ranking, replaced, changed)) memo.ranking = rankingOf(memo.outcomes);
}

/**
 * The decision from a memo whose filter verdicts are current, with the plugins flagged in
 * `fresh` scored now over the nodes the cycle scores (kube's PreScore/Score/NormalizeScore
 * for them) and the others' memoized scores. `window` (node indices, in scan order) is the
 * feasible nodes the cycle scores when that is not all of them (`percentageOfNodesToScore`).
 */
function decideWithFreshScores(
  memo: Memo,
  pod: Pod,
  ctx: SchedulingCycle,
  profile: Profile,
  fresh: readonly boolean[],
  window: readonly number[] | undefined,
): ScheduleResult {
  memo.feasibleView ??= feasibleViewOf(memo.outcomes);
  const view = memo.feasibleView;
  const { outcomes: feasibleOutcomes, totals, nameRank } = view;
  /** Slot → position in the feasible view (the first `slots` entries). */
  let positions: Int32Array;
  let slots: number;
  let nodes: NodeInfo[];
  if (window === undefined) {
    positions = view.all ??= Int32Array.from(feasibleOutcomes.keys());
    slots = positions.length;
    nodes = view.nodes;
  } else {
    positions = view.scratch;
    slots = window.length;
    nodes = new Array<NodeInfo>(slots);
    for (let slot = 0; slot < slots; slot += 1) {
      const position = view.positionOf[window[slot] as number] as number;
      positions[slot] = position;
      nodes[slot] = view.nodes[position] as NodeInfo;
    }
  }
  const indices: readonly number[] = window ?? view.indices;
  ctx.setFeasibleNodes(nodes);
  const plugins = profile.scores.length;
  const freshScores: (readonly number[] | undefined)[] = [];
  for (let index = 0; index < plugins; index += 1) {
    const { plugin } = profile.scores[index] as Profile['scores'][number];
    freshScores.push(fresh[index] === true ? scoresOver(plugin, pod, nodes, indices, ctx) : undefined);
  }
  // Totals first (the memo's, with the fresh plugins' parts replaced), outcome objects only for the best few.
  for (let slot = 0; slot < slots; slot += 1) totals[slot] = (feasibleOutcomes[positions[slot] as number] as NodeOutcome).total;
  for (let index = 0; index < plugins; index += 1) {
    const scores = freshScores[index];
    if (scores === undefined) continue;
    const weight = (profile.scores[index] as Profile['scores'][number]).weight;
    for (let slot = 0; slot < slots; slot += 1) {
      const memoized = (feasibleOutcomes[positions[slot] as number] as NodeOutcome).scores[index] as number;
      totals[slot] = (totals[slot] as number) + ((scores[slot] as number) - memoized) * weight;
    }
  }
  /** Whether slot `slot` ranks before slot `other` (higher total, fewer pods, then the name that sorts first). */
  const before = (slot: number, other: number): boolean => {
    const total = totals[slot] as number;
    const otherTotal = totals[other] as number;
    if (total !== otherTotal) return total > otherTotal;
    const position = positions[slot] as number;
    const otherPosition = positions[other] as number;
    const pods = (view.nodes[position] as NodeInfo).requested.pods;
    const otherPods = (view.nodes[otherPosition] as NodeInfo).requested.pods;
    if (pods !== otherPods) return pods < otherPods;
    return (nameRank[position] as number) < (nameRank[otherPosition] as number);
  };
  const best: number[] = [];
  for (let slot = 0; slot < slots; slot += 1) {
    if (best.length === TOP_SCORES) {
      const worst = best[TOP_SCORES - 1] as number;
      // Most nodes fall below the fifth best on the total alone.
      if ((totals[slot] as number) < (totals[worst] as number)) continue;
      if (!before(slot, worst)) continue;
    }
    let at = best.length;
    while (at > 0 && before(slot, best[at - 1] as number)) at -= 1;
    best.splice(at, 0, slot);
    if (best.length > TOP_SCORES) best.pop();
  }
  const top = best.map((slot): NodeOutcome => {
    const outcome = feasibleOutcomes[positions[slot] as number] as NodeOutcome;
    const scores = profile.scores.map((_entry, index) => freshScores[index]?.[slot] ?? (outcome.scores[index] as number));
    return { nodeInfo: outcome.nodeInfo, unfit: undefined, unresolvable: false, total: totals[slot] as number, scores };
  });
  const filtered = memo.filtered.map((entry) => ({ node: entry.node, reasons: [...entry.reasons] }));
  return result(filtered, top, memo.feasible, memo.outcomes, profile);
}

/**
 * The feasible outcomes of a memo in node order, with their NodeInfos and node indices
 * (kube's PreScore input), kept across the cycles of a round: a binding replaces one
 * feasible outcome in place, so a cycle does not rebuild them from every node.
 */
interface FeasibleView {
  readonly outcomes: NodeOutcome[];
  readonly nodes: NodeInfo[];
  readonly indices: readonly number[];
  /** Node index → position in the arrays above, -1 when unfit. */
  readonly positionOf: Int32Array;
  /** Scratch space for a cycle's totals, one per feasible outcome. */
  readonly totals: Float64Array;
  /** Position → rank of its node's name among the feasible nodes' (`compareNames` order), for ties. */
  readonly nameRank: Int32Array;
  /** Every position, in order (the slots of a cycle that scores every feasible node), made on first need. */
  all?: Int32Array | undefined;
  /** Scratch space for a windowed cycle's slots (see `decideWithFreshScores`). */
  readonly scratch: Int32Array;
}

function feasibleViewOf(outcomes: readonly NodeOutcome[]): FeasibleView {
  const feasibleOutcomes: NodeOutcome[] = [];
  const nodes: NodeInfo[] = [];
  const indices: number[] = [];
  const positionOf = new Int32Array(outcomes.length).fill(-1);
  for (let index = 0; index < outcomes.length; index += 1) {
    const outcome = outcomes[index] as NodeOutcome;
    if (outcome.unfit !== undefined) continue;
    positionOf[index] = feasibleOutcomes.length;
    feasibleOutcomes.push(outcome);
    nodes.push(outcome.nodeInfo);
    indices.push(index);
  }
  const byName = nodes.map((_node, position) => position).sort((left, right) => compareNames((nodes[left] as NodeInfo).node.metadata.name, (nodes[right] as NodeInfo).node.metadata.name));
  const nameRank = new Int32Array(nodes.length);
  byName.forEach((position, rank) => {
    nameRank[position] = rank;
  });
  return { outcomes: feasibleOutcomes, nodes, indices, positionOf, totals: new Float64Array(feasibleOutcomes.length), nameRank, scratch: new Int32Array(feasibleOutcomes.length) };
}

/** Keeps the memo's feasible view in step with the outcome at `index` replaced by `after` (dropped when feasibility changed). */
function updateFeasibleView(memo: Memo, index: number, after: NodeOutcome): void {
  const view = memo.feasibleView;
  if (view === undefined) return;
  const position = view.positionOf[index] as number;
  if (position < 0 || after.unfit !== undefined) {
    memo.feasibleView = undefined;
    return;
  }
  view.outcomes[position] = after;
  view.nodes[position] = after.nodeInfo;
}

/** How many of the best feasible outcomes a round scheduler keeps ranked. */
const RANKED = 64;

/**
 * The best feasible outcomes, best first: the top `best.length` of all nodes, or every
 * feasible node when `complete`. Nodes that did not change keep their order, and those left
 * out rank below every kept one, so after a change the kept unchanged ones plus the changed
 * ones still hold the top down to the last kept unchanged one.
 */
interface Ranking {
  best: NodeOutcome[];
  complete: boolean;
}

type PodSpec = Pod['spec'];
type Container = PodSpec['containers'][number];

/**
 * A pod's spec as its signature sees it: volume names replaced by their index. No plugin
 * reads a volume's name, and the admission names some per pod (the ServiceAccount plugin's
 * `kube-api-access-<suffix>`, derived from the pod's name), so pods of one template would
 * otherwise never share what the round learned about the nodes.
 */
export const signatureSpec = (spec: PodSpec): PodSpec => {
  const volumes = spec.volumes;
  if (volumes === undefined || volumes.length === 0) return spec;
  const index = new Map(volumes.map((volume, i) => [volume.name, `#${i}`]));
  const renamed = <T extends { name: string }>(items: readonly T[] | undefined): T[] | undefined => items?.map((item) => ({ ...item, name: index.get(item.name) ?? item.name }));
  const container = <C extends Container>(c: C): C => ({
    ...c,
    ...(c.volumeMounts ? { volumeMounts: renamed(c.volumeMounts) } : {}),
    ...(c.volumeDevices ? { volumeDevices: renamed(c.volumeDevices) } : {}),
  });
  return {
    ...spec,
    volumes: renamed(volumes) ?? [],
    containers: spec.containers.map(container),
    ...(spec.initContainers ? { initContainers: spec.initContainers.map(container) } : {}),
  };
};

/** What a round scheduler keeps per pod signature; `outcomes` is indexed like the NodeInfos. */
interface Memo {
  readonly outcomes: NodeOutcome[];
  /** Score plugins whose scores the outcomes leave out (0), as they were not node-local when the memo was made. */
  readonly scoreMask: readonly boolean[];
  feasible: number;
  filtered: readonly FilteredNode[];
  ranking: Ranking;
  /** The NodeInfos array the outcomes were last brought up to date with, when the caller logs its changes. */
  infos?: readonly NodeInfo[] | undefined;
  /** Length of the caller's change log at that time. */
  seen?: number | undefined;
  /** The feasible outcomes for fresh scoring, built on first need and kept in step (see FeasibleView). */
  feasibleView?: FeasibleView | undefined;
}

function memoOf(outcomes: NodeOutcome[], scoreMask: readonly boolean[]): Memo {
  let feasible = 0;
  for (const outcome of outcomes) if (outcome.unfit === undefined) feasible += 1;
  return { outcomes, scoreMask, feasible, filtered: filteredOf(outcomes), ranking: rankingOf(outcomes) };
}

function rankingOf(outcomes: readonly NodeOutcome[]): Ranking {
  const best = rank(outcomes, RANKED);
  const feasible = outcomes.reduce((count, outcome) => count + (outcome.unfit === undefined ? 1 : 0), 0);
  return { best, complete: best.length === feasible };
}

/**
 * Updates `ranking` in place after the outcomes in `replaced` were replaced, by those in
 * `changed` when feasible; false when too little of it is left to know the top (then rank
 * everything again).
 */
function updateRanking(ranking: Ranking, replaced: ReadonlySet<NodeOutcome>, changed: readonly NodeOutcome[]): boolean {
  const kept = replaced.size === 0 ? ranking.best : ranking.best.filter((outcome) => !replaced.has(outcome));
  if (!ranking.complete && kept.length === 0) return false;
  const worstKept = kept[kept.length - 1];
  const merged = [...kept];
  for (const outcome of changed) {
    let position = 0;
    while (position < merged.length && !ranksBefore(outcome, merged[position] as NodeOutcome)) position += 1;
    merged.splice(position, 0, outcome);
  }
  if (ranking.complete) {
    ranking.best = merged.slice(0, RANKED);
    ranking.complete = merged.length <= RANKED;
    return true;
  }
  // Below the worst kept unchanged outcome, unranked unchanged nodes may come first: cut there.
  const cut = merged.indexOf(worstKept as NodeOutcome) + 1;
  ranking.best = merged.slice(0, Math.min(cut, RANKED));
  return ranking.best.length >= TOP_SCORES;
}

/** The decision from a round scheduler's memo, ranking only the nodes in `window` when the cycle does not score every feasible node. */
function decideFromMemo(memo: Memo, profile: Profile, window: readonly number[] | undefined): ScheduleResult {
  const filtered = memo.filtered.map((entry) => ({ node: entry.node, reasons: [...entry.reasons] }));
  const top = window === undefined ? memo.ranking.best.slice(0, TOP_SCORES) : rank(window.map((index) => memo.outcomes[index] as NodeOutcome), TOP_SCORES);
  return result(filtered, top, memo.feasible, memo.outcomes, profile);
}
