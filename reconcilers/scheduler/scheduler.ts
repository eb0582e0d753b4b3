/**
 * One scheduling decision: run the profile's filters on every node, score the feasible
 * ones, bind to the best. Deterministic: ties go to the node with fewer pods, then to the
 * node whose name sorts first, and the rationale lists nodes in name order, so re-running
 * a decision on the view it saw (time-travel debugging) produces the same binding and the
 * same rationale. (Scores are integers 0..100, so on large nodes small pods often tie;
 * kube-scheduler picks among ties at random, which spreads them; fewest pods spreads them
 * deterministically.)
 */
import {
  type ClusterLister,
  createSchedulingContext,
  EMPTY_CLUSTER,
  FIT,
  type FilterPlugin,
  type FilterResult,
  MAX_NODE_SCORE,
  type NodeLocality,
  type NodeInfo,
  type PreEnqueueResult,
  type Profile,
  type SchedulingContext,
  type SchedulingCycle,
  type ScorePlugin,
} from './framework.ts';
import type { BindingRationale, FilteredNode, NodeScore, Pod } from '../../schemas/index.ts';

/**
 * A scheduling decision. "Unschedulable" is an outcome, not an error. The rationale
 * (the event schema's `BindingRationale`) lists every rejected node by name with the
 * reasons of the first filter that rejected it, and the best {@link TOP_SCORES} feasible
 * nodes best first (the first is the one chosen) with their weighted total and their
 * per-plugin (unweighted, 0..100) scores.
 */
export type ScheduleResult =
  | { readonly type: 'bound'; readonly node: string; readonly rationale: BindingRationale }
  | {
      readonly type: 'unschedulable';
      /** kube-scheduler's FitError text, e.g. "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}." */
      readonly message: string;
      readonly rationale: BindingRationale;
    };

/** How many of the best-scoring nodes the rationale keeps. */
export const TOP_SCORES = 5;

/** kube-scheduler's message when the cluster has no nodes at all. */
export const NO_NODES_MESSAGE = 'no nodes available to schedule pods';

/**
 * Decides where `pod` runs among `nodeInfos` under `profile`. A node fails at its first
 * filter that says "unfit"; feasible nodes are ranked by the weighted sum of the score
 * plugins, ties broken by fewer pods, then by node name. Throws only on a plugin bug (a
 * score outside 0..{@link MAX_NODE_SCORE} or not an integer).
 */
export function schedule(pod: Pod, nodeInfos: readonly NodeInfo[], profile: Profile, cluster: ClusterLister = EMPTY_CLUSTER): ScheduleResult {
  const ctx = createSchedulingContext(pod, nodeInfos, cluster);
  return decide(evaluateAll(pod, nodeInfos, ctx, profile), profile);
}

const READY: PreEnqueueResult = Object.freeze({ type: 'ready' });

/** Whether `pod` may be scheduled at all under `profile` (its PreEnqueue plugins, e.g. SchedulingGates). */
export function preEnqueue(pod: Pod, profile: Profile): PreEnqueueResult {
  for (const plugin of profile.preEnqueue) {
    const verdict = plugin.preEnqueue(pod);
    if (verdict.type === 'gated') return verdict;
  }
  return READY;
}

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
    const ctx = createSchedulingContext(pod, nodeInfos, cluster);
    const filtersLocal = mayReuse && filters.every((plugin) => holds(filterLocality(plugin), ctx));
    if (!filtersLocal) return decide(evaluateAll(pod, nodeInfos, ctx, profile), profile);
    // Score plugins that are not node-local this cycle are scored afresh over the feasible
    // nodes (with their normalization); the filters' verdicts and the other scores are reused.
    const scoreMask = scorePlugins.map((plugin) => !holds(plugin.nodeLocal, ctx));
    const signature = JSON.stringify([pod.metadata.namespace ?? 'default', pod.metadata.labels ?? null, pod.spec]);
    let memo = memos.get(signature);
    if (memo === undefined || memo.outcomes.length !== nodeInfos.length) {
      const outcomes = nodeInfos.map((nodeInfo) => evaluateNode(pod, nodeInfo, ctx, profile, scoreMask));
      memo = memoOf(outcomes, scoreMask);
      if (changes !== undefined) {
        memo.infos = nodeInfos;
        memo.seen = changes.length;
      }
      memos.set(signature, memo);
    } else {
      refreshMemo(memo, pod, nodeInfos, ctx, profile, changes);
    }
    const fresh = memo.scoreMask.map((skipped, index) => skipped || (scoreMask[index] as boolean));
    if (!fresh.includes(true)) return decideFromMemo(memo, profile);
    return decideWithFreshScores(memo, pod, ctx, profile, fresh);
  };
}

/** A filter's locality: `filterNodeLocal` of a plugin that also scores, else `nodeLocal`. */
function filterLocality(plugin: FilterPlugin): NodeLocality | undefined {
  return plugin.filterNodeLocal ?? plugin.nodeLocal;
}

function holds(locality: NodeLocality | undefined, ctx: SchedulingContext): boolean {
  return locality === true || (locality !== undefined && locality(ctx));
}

/** Brings `memo` up to date with `nodeInfos`: re-evaluates the nodes whose NodeInfo changed since. */
function refreshMemo(memo: Memo, pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext, profile: Profile, changes: readonly number[] | undefined): void {
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
    const after = evaluateNode(pod, nodeInfo, ctx, profile, memo.scoreMask);
    memo.outcomes[index] = after;
    replaced.add(before);
    if (before.unfit === undefined) memo.feasible -= 1;
    if (after.unfit === undefined) {
      memo.feasible += 1;
      changed.push(after);
    }
    if (before.unfit !== undefined || after.unfit !== undefined) filteredChanged = true;
  }
  if (filteredChanged) memo.filtered = filteredOf(memo.outcomes);
  if (!updateRanking(memo.ranking, replaced, changed)) memo.ranking = rankingOf(memo.outcomes);
}

/**
 * The decision from a memo whose filter verdicts are current, with the plugins flagged in
 * `fresh` scored now over the feasible nodes (kube's PreScore/Score/NormalizeScore for
 * them) and the others' memoized scores.
 */
function decideWithFreshScores(memo: Memo, pod: Pod, ctx: SchedulingCycle, profile: Profile, fresh: readonly boolean[]): ScheduleResult {
  const feasibleOutcomes: NodeOutcome[] = [];
  const feasible: NodeInfo[] = [];
  const indices: number[] = [];
  const outcomes = memo.outcomes;
  for (let index = 0; index < outcomes.length; index += 1) {
    const outcome = outcomes[index] as NodeOutcome;
    if (outcome.unfit !== undefined) continue;
    feasibleOutcomes.push(outcome);
    feasible.push(outcome.nodeInfo);
    indices.push(index);
  }
  ctx.setFeasibleNodes(feasible);
  const plugins = profile.scores.length;
  const freshScores: (readonly number[] | undefined)[] = [];
  for (let index = 0; index < plugins; index += 1) {
    const { plugin } = profile.scores[index] as Profile['scores'][number];
    freshScores.push(fresh[index] === true ? scoresOver(plugin, pod, feasible, indices, ctx) : undefined);
  }
  // Totals first (the memo's, with the fresh plugins' parts replaced), outcome objects only for the best few.
  const totals = new Array<number>(feasibleOutcomes.length);
  for (let position = 0; position < feasibleOutcomes.length; position += 1) {
    const outcome = feasibleOutcomes[position] as NodeOutcome;
    let total = outcome.total;
    for (let index = 0; index < plugins; index += 1) {
      const scores = freshScores[index];
      if (scores === undefined) continue;
      const weight = (profile.scores[index] as Profile['scores'][number]).weight;
      total += ((scores[position] as number) - (outcome.scores[index] as number)) * weight;
    }
    totals[position] = total;
  }
  const best: number[] = [];
  for (let position = 0; position < totals.length; position += 1) {
    if (best.length === TOP_SCORES && !positionRanksBefore(position, best[best.length - 1] as number, totals, feasible)) continue;
    let at = best.length;
    while (at > 0 && positionRanksBefore(position, best[at - 1] as number, totals, feasible)) at -= 1;
    best.splice(at, 0, position);
    if (best.length > TOP_SCORES) best.pop();
  }
  const top = best.map((position): NodeOutcome => {
    const outcome = feasibleOutcomes[position] as NodeOutcome;
    const scores = profile.scores.map((_entry, index) => freshScores[index]?.[position] ?? (outcome.scores[index] as number));
    return { nodeInfo: outcome.nodeInfo, unfit: undefined, total: totals[position] as number, scores };
  });
  const filtered = memo.filtered.map((entry) => ({ node: entry.node, reasons: [...entry.reasons] }));
  return result(filtered, top, memo.feasible, memo.outcomes.length, profile);
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

/** One node's outcome for a pod: the first "unfit" verdict, or the weighted total and each plugin's score. */
interface NodeOutcome {
  readonly nodeInfo: NodeInfo;
  /** Undefined when the node is feasible. */
  readonly unfit: readonly string[] | undefined;
  readonly total: number;
  readonly scores: readonly number[];
}

const NO_SCORES: readonly number[] = [];

/**
 * One node's outcome in a cycle where every filter is node-local and so is every score
 * plugin not flagged in `skip` (those score 0 here and are scored over the feasible nodes later).
 */
function evaluateNode(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext, profile: Profile, skip: readonly boolean[]): NodeOutcome {
  const verdict = runFilters(pod, nodeInfo, ctx, profile);
  if (verdict.type === 'unfit') return { nodeInfo, unfit: verdict.reasons, total: 0, scores: NO_SCORES };
  const scores: number[] = [];
  let total = 0;
  for (let index = 0; index < profile.scores.length; index += 1) {
    const { plugin, weight } = profile.scores[index] as Profile['scores'][number];
    const score = skip[index] === true ? 0 : checkedScore(plugin.name, plugin.score(pod, nodeInfo, ctx), nodeInfo);
    scores.push(score);
    total += score * weight;
  }
  return { nodeInfo, unfit: undefined, total, scores };
}

/**
 * Every node's outcome, as kube-scheduler's cycle runs: Filter on every node, then (with
 * the feasible nodes known, kube's PreScore) Score each feasible node per plugin, then
 * each plugin's NormalizeScore over the feasible nodes, then the weighted totals.
 */
function evaluateAll(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingCycle, profile: Profile): NodeOutcome[] {
  const verdicts = nodeInfos.map((nodeInfo) => runFilters(pod, nodeInfo, ctx, profile));
  const feasible: NodeInfo[] = [];
  const indices: number[] = [];
  nodeInfos.forEach((nodeInfo, index) => {
    if ((verdicts[index] as FilterResult).type !== 'fit') return;
    feasible.push(nodeInfo);
    indices.push(index);
  });
  ctx.setFeasibleNodes(feasible);
  const perPlugin = profile.scores.map(({ plugin }) => scoresOver(plugin, pod, feasible, indices, ctx));
  let next = 0;
  return nodeInfos.map((nodeInfo, index) => {
    const verdict = verdicts[index] as FilterResult;
    if (verdict.type === 'unfit') return { nodeInfo, unfit: verdict.reasons, total: 0, scores: NO_SCORES };
    const position = next;
    next += 1;
    const scores = perPlugin.map((pluginScores) => pluginScores[position] as number);
    let total = 0;
    profile.scores.forEach(({ weight }, plugin) => {
      total += (scores[plugin] as number) * weight;
    });
    return { nodeInfo, unfit: undefined, total, scores };
  });
}

/** One plugin's final (normalized, checked) scores of the feasible nodes, `indices` their positions in `ctx.nodeInfos`. */
function scoresOver(plugin: ScorePlugin, pod: Pod, feasible: readonly NodeInfo[], indices: readonly number[], ctx: SchedulingContext): number[] {
  const raw = plugin.scoreAll !== undefined ? plugin.scoreAll(pod, indices, ctx) : feasible.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
  plugin.normalize?.(raw, feasible, ctx);
  for (let position = 0; position < raw.length; position += 1) checkedScore(plugin.name, raw[position] as number, feasible[position] as NodeInfo);
  return raw;
}

function checkedScore(plugin: string, score: number, nodeInfo: NodeInfo): number {
  if (!Number.isInteger(score) || score < 0 || score > MAX_NODE_SCORE) {
    throw new RangeError(`score plugin ${plugin} gave node ${nodeInfo.node.metadata.name} the score ${score}; scores are integers 0..${MAX_NODE_SCORE}`);
  }
  return score;
}

/** The decision from every node's outcome. */
function decide(outcomes: readonly NodeOutcome[], profile: Profile): ScheduleResult {
  let feasible = 0;
  for (const outcome of outcomes) if (outcome.unfit === undefined) feasible += 1;
  return result(filteredOf(outcomes), rank(outcomes, TOP_SCORES), feasible, outcomes.length, profile);
}

/** The decision from a round scheduler's memo. */
function decideFromMemo(memo: Memo, profile: Profile): ScheduleResult {
  const filtered = memo.filtered.map((entry) => ({ node: entry.node, reasons: [...entry.reasons] }));
  return result(filtered, memo.ranking.best.slice(0, TOP_SCORES), memo.feasible, memo.outcomes.length, profile);
}

function result(filtered: FilteredNode[], top: readonly NodeOutcome[], feasible: number, total: number, profile: Profile): ScheduleResult {
  const scores = top.map((outcome) => ({
    node: outcome.nodeInfo.node.metadata.name,
    score: outcome.total,
    plugins: profile.scores.map(({ plugin }, index) => ({ name: plugin.name, score: outcome.scores[index] ?? 0 })),
  }));
  const rationale: BindingRationale = { filtered, scores, feasibleNodes: feasible, totalNodes: total };
  const [best] = scores;
  if (best === undefined) return { type: 'unschedulable', message: unschedulableMessage(filtered, total), rationale };
  return { type: 'bound', node: best.node, rationale };
}

/** The unfit nodes with their reasons, in name order. */
function filteredOf(outcomes: readonly NodeOutcome[]): FilteredNode[] {
  const filtered: FilteredNode[] = [];
  for (const outcome of outcomes) {
    if (outcome.unfit !== undefined) filtered.push({ node: outcome.nodeInfo.node.metadata.name, reasons: [...outcome.unfit] });
  }
  return filtered.sort((left, right) => compareNames(left.node, right.node));
}

function runFilters(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext, profile: Profile): FilterResult {
  for (const plugin of profile.filters) {
    const verdict = plugin.filter(pod, nodeInfo, ctx);
    if (verdict.type === 'unfit') return verdict;
  }
  return FIT;
}

/** The best `count` feasible outcomes, best first. */
function rank(outcomes: readonly NodeOutcome[], count: number): NodeOutcome[] {
  const top: NodeOutcome[] = [];
  for (const outcome of outcomes) {
    if (outcome.unfit !== undefined) continue;
    const last = top[top.length - 1];
    if (top.length === count && last !== undefined && !ranksBefore(outcome, last)) continue;
    let position = 0;
    while (position < top.length && !ranksBefore(outcome, top[position] as NodeOutcome)) position += 1;
    top.splice(position, 0, outcome);
    if (top.length > count) top.pop();
  }
  return top;
}

/** `ranksBefore` for feasible positions with their totals. */
function positionRanksBefore(position: number, other: number, totals: readonly number[], feasible: readonly NodeInfo[]): boolean {
  const total = totals[position] as number;
  const otherTotal = totals[other] as number;
  if (total !== otherTotal) return total > otherTotal;
  const pods = (feasible[position] as NodeInfo).requested.pods;
  const otherPods = (feasible[other] as NodeInfo).requested.pods;
  if (pods !== otherPods) return pods < otherPods;
  return compareNames((feasible[position] as NodeInfo).node.metadata.name, (feasible[other] as NodeInfo).node.metadata.name) < 0;
}

/** Higher score first; among equal scores the node with fewer pods, then the name that sorts first. */
function ranksBefore(outcome: NodeOutcome, other: NodeOutcome): boolean {
  if (outcome.total !== other.total) return outcome.total > other.total;
  const pods = outcome.nodeInfo.requested.pods;
  const otherPods = other.nodeInfo.requested.pods;
  return pods !== otherPods ? pods < otherPods : compareNames(outcome.nodeInfo.node.metadata.name, other.nodeInfo.node.metadata.name) < 0;
}

/** Orders by UTF-16 code units (for node names, which are ASCII, the same as Go's byte order). */
function compareNames(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * kube-scheduler's FitError message: "0/<total> nodes are available: " followed by each
 * distinct reason prefixed with the number of nodes it applies to, sorted as strings (as
 * Go's `sort.Strings` does), joined by ", ", ending with ".".
 */
export function unschedulableMessage(filtered: readonly FilteredNode[], totalNodes: number): string {
  if (totalNodes === 0) return NO_NODES_MESSAGE;
  const nodesByReason = new Map<string, number>();
  for (const { reasons } of filtered) {
    for (const reason of reasons) nodesByReason.set(reason, (nodesByReason.get(reason) ?? 0) + 1);
  }
  const histogram = [...nodesByReason].map(([reason, count]) => `${count} ${reason}`).sort(compareNames);
  return `0/${totalNodes} nodes are available: ${histogram.join(', ')}.`;
}
