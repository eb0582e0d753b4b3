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
  type FilterResult,
  MAX_NODE_SCORE,
  type NodeInfo,
  type PreEnqueueResult,
  type Profile,
  type SchedulingContext,
  type SchedulingCycle,
  type ScorePlugin,
} from './framework.ts';
import type { BindingRationale, FilteredNode, NodeScore, Pod } from '../../schemas/index.ts';
import { numFeasibleNodesToFind, scanOrderOf, startIndexOf, windowOf } from './nodes-to-score.ts';

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
      /** The rejected nodes whose verdict removing pods cannot resolve (kube's UnschedulableAndUnresolvable), which preemption skips. */
      readonly unresolvable: ReadonlySet<string>;
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

/** One node's outcome for a pod: the first "unfit" verdict, or the weighted total and each plugin's score. */
export interface NodeOutcome {
  readonly nodeInfo: NodeInfo;
  /** Undefined when the node is feasible. */
  readonly unfit: readonly string[] | undefined;
  /** Whether the unfit verdict is one removing pods cannot resolve (kube's UnschedulableAndUnresolvable). */
  readonly unresolvable: boolean;
  readonly total: number;
  readonly scores: readonly number[];
  /** A feasible node the cycle did not score (outside kube's `percentageOfNodesToScore`): never ranked. */
  readonly unscored?: true;
}

const NO_SCORES: readonly number[] = [];

/** Per score plugin: whether it skips this cycle (scores 0 everywhere; kube's PreScore Skip). */
export function skippedScores(profile: Profile, ctx: SchedulingContext): boolean[] {
  return profile.scores.map(({ plugin }) => plugin.preScoreSkip?.(ctx) === true);
}

/**
 * One node's outcome in a cycle where every filter is node-local and so is every score
 * plugin not flagged in `skip` (those score 0 here and are scored over the feasible nodes later).
 */
export function evaluateNode(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext, profile: Profile, skip: readonly boolean[]): NodeOutcome {
  const verdict = runFilters(pod, nodeInfo, ctx, profile);
  if (verdict.type === 'unfit') return { nodeInfo, unfit: verdict.reasons, unresolvable: verdict.unresolvable === true, total: 0, scores: NO_SCORES };
  const scores: number[] = [];
  let total = 0;
  for (let index = 0; index < profile.scores.length; index += 1) {
    const { plugin, weight } = profile.scores[index] as Profile['scores'][number];
    const score = skip[index] === true ? 0 : checkedScore(plugin.name, plugin.score(pod, nodeInfo, ctx), nodeInfo);
    scores.push(score);
    total += score * weight;
  }
  return { nodeInfo, unfit: undefined, unresolvable: false, total, scores };
}

/**
 * Every node's outcome, as kube-scheduler's cycle runs: Filter on every node, then (with
 * the feasible nodes known, kube's PreScore) Score per plugin the feasible nodes the cycle
 * scores (`percentageOfNodesToScore`: see `nodes-to-score.ts`), then each plugin's
 * NormalizeScore over them, then the weighted totals. A feasible node left out of scoring
 * is `unscored` (not ranked).
 */
export function evaluateAll(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingCycle, profile: Profile): NodeOutcome[] {
  const verdicts = nodeInfos.map((nodeInfo) => runFilters(pod, nodeInfo, ctx, profile));
  let feasibleTotal = 0;
  for (const verdict of verdicts) if (verdict.type === 'fit') feasibleTotal += 1;
  const window = scoringWindow(pod, nodeInfos, ctx, profile, feasibleTotal, (index) => (verdicts[index] as FilterResult).type === 'fit');
  const scored = window === undefined ? undefined : new Set(window);
  const feasible: NodeInfo[] = [];
  const indices: number[] = [];
  nodeInfos.forEach((nodeInfo, index) => {
    if ((verdicts[index] as FilterResult).type !== 'fit' || (scored !== undefined && !scored.has(index))) return;
    feasible.push(nodeInfo);
    indices.push(index);
  });
  ctx.setFeasibleNodes(feasible);
  const perPlugin = profile.scores.map(({ plugin }) => scoresOver(plugin, pod, feasible, indices, ctx));
  let next = 0;
  return nodeInfos.map((nodeInfo, index) => {
    const verdict = verdicts[index] as FilterResult;
    if (verdict.type === 'unfit') return { nodeInfo, unfit: verdict.reasons, unresolvable: verdict.unresolvable === true, total: 0, scores: NO_SCORES };
    if (scored !== undefined && !scored.has(index)) return { nodeInfo, unfit: undefined, unresolvable: false, total: 0, scores: NO_SCORES, unscored: true };
    const position = next;
    next += 1;
    const scores = perPlugin.map((pluginScores) => pluginScores[position] as number);
    let total = 0;
    profile.scores.forEach(({ weight }, plugin) => {
      total += (scores[plugin] as number) * weight;
    });
    return { nodeInfo, unfit: undefined, unresolvable: false, total, scores };
  });
}

/**
 * The indices (in scan order) of the feasible nodes this cycle scores, or undefined for all of
 * them: kube's first `numFeasibleNodesToFind` feasible nodes in node-tree order from the
 * pod's start (see `nodes-to-score.ts`).
 */
export function scoringWindow(
  pod: Pod,
  nodeInfos: readonly NodeInfo[],
  ctx: SchedulingContext,
  profile: Profile,
  feasibleTotal: number,
  feasible: (index: number) => boolean,
): number[] | undefined {
  const count = numFeasibleNodesToFind(profile.percentageOfNodesToScore, nodeInfos.length);
  if (count >= feasibleTotal) return undefined;
  const order = scanOrderOf(nodeInfos, ctx.changes);
  return windowOf(order, startIndexOf(pod, nodeInfos.length), count, feasibleTotal, feasible);
}

/** One plugin's final (normalized, checked) scores of the feasible nodes, `indices` their positions in `ctx.nodeInfos`. */
export function scoresOver(plugin: ScorePlugin, pod: Pod, feasible: readonly NodeInfo[], indices: readonly number[], ctx: SchedulingContext): number[] {
  if (plugin.preScoreSkip?.(ctx) === true) return new Array<number>(feasible.length).fill(0);
  const raw = plugin.scoreAll !== undefined ? plugin.scoreAll(pod, indices, ctx) : feasible.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
  plugin.normalize?.(raw, feasible, ctx);
  for (let position = 0; position < raw.length; position += 1) checkedScore(plugin.name, raw[position] as number, feasible[position] as NodeInfo);
  return raw;
}

export function checkedScore(plugin: string, score: number, nodeInfo: NodeInfo): number {
  if (!Number.isInteger(score) || score < 0 || score > MAX_NODE_SCORE) {
    throw new RangeError(`score plugin ${plugin} gave node ${nodeInfo.node.metadata.name} the score ${score}; scores are integers 0..${MAX_NODE_SCORE}`);
  }
  return score;
}

/** The decision from every node's outcome. */
export function decide(outcomes: readonly NodeOutcome[], profile: Profile): ScheduleResult {
  let feasible = 0;
  for (const outcome of outcomes) if (outcome.unfit === undefined) feasible += 1;
  return result(filteredOf(outcomes), rank(outcomes, TOP_SCORES), feasible, outcomes, profile);
}

/** The decision from the rejected nodes, the best feasible outcomes, and every node's outcome (for the unresolvable ones when none is feasible). */
export function result(filtered: FilteredNode[], top: readonly NodeOutcome[], feasible: number, outcomes: readonly NodeOutcome[], profile: Profile): ScheduleResult {
  const total = outcomes.length;
  const scores = top.map((outcome) => ({
    node: outcome.nodeInfo.node.metadata.name,
    score: outcome.total,
    plugins: profile.scores.map(({ plugin }, index) => ({ name: plugin.name, score: outcome.scores[index] ?? 0 })),
  }));
  const rationale: BindingRationale = { filtered, scores, feasibleNodes: feasible, totalNodes: total };
  const [best] = scores;
  if (best === undefined) return { type: 'unschedulable', message: unschedulableMessage(filtered, total), rationale, unresolvable: unresolvableOf(outcomes) };
  return { type: 'bound', node: best.node, rationale };
}

/** The names of the nodes whose verdict removing pods cannot resolve. */
function unresolvableOf(outcomes: readonly NodeOutcome[]): Set<string> {
  const names = new Set<string>();
  for (const outcome of outcomes) if (outcome.unresolvable) names.add(outcome.nodeInfo.node.metadata.name);
  return names;
}

/** The unfit nodes with their reasons, in name order. */
export function filteredOf(outcomes: readonly NodeOutcome[]): FilteredNode[] {
  const filtered: FilteredNode[] = [];
  for (const outcome of outcomes) {
    if (outcome.unfit !== undefined) filtered.push({ node: outcome.nodeInfo.node.metadata.name, reasons: [...outcome.unfit] });
  }
  return filtered.sort((left, right) => compareNames(left.node, right.node));
}

/** The profile's filters on one node: the first "unfit" verdict, or FIT. */
export function runFilters(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext, profile: Profile): FilterResult {
  for (const plugin of profile.filters) {
    const verdict = plugin.filter(pod, nodeInfo, ctx);
    if (verdict.type === 'unfit') return verdict;
  }
  return FIT;
}

/** The best `count` feasible outcomes, best first. */
export function rank(outcomes: readonly NodeOutcome[], count: number): NodeOutcome[] {
  const top: NodeOutcome[] = [];
  for (const outcome of outcomes) {
    if (outcome.unfit !== undefined || outcome.unscored === true) continue;
    const last = top[top.length - 1];
    if (top.length === count && last !== undefined && !ranksBefore(outcome, last)) continue;
    let position = 0;
    while (position < top.length && !ranksBefore(outcome, top[position] as NodeOutcome)) position += 1;
    top.splice(position, 0, outcome);
    if (top.length > count) top.pop();
  }
  return top;
}

/** Higher score first; among equal scores the node with fewer pods, then the name that sorts first. */
export function ranksBefore(outcome: NodeOutcome, other: NodeOutcome): boolean {
  if (outcome.total !== other.total) return outcome.total > other.total;
  const pods = outcome.nodeInfo.requested.pods;
  const otherPods = other.nodeInfo.requested.pods;
  return pods !== otherPods ? pods < otherPods : compareNames(outcome.nodeInfo.node.metadata.name, other.nodeInfo.node.metadata.name) < 0;
}

/** Orders by UTF-16 code units (for node names, which are ASCII, the same as Go's byte order). */
export function compareNames(left: string, right: string): number {
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
