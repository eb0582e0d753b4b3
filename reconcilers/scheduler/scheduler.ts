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
  createSchedulingContext,
  FIT,
  type FilterResult,
  MAX_NODE_SCORE,
  type NodeInfo,
  type Profile,
  type SchedulingContext,
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
export function schedule(pod: Pod, nodeInfos: readonly NodeInfo[], profile: Profile): ScheduleResult {
  const ctx = createSchedulingContext(pod, nodeInfos);
  const filtered: FilteredNode[] = [];
  const feasible: NodeInfo[] = [];
  for (const nodeInfo of nodeInfos) {
    const verdict = runFilters(pod, nodeInfo, ctx, profile);
    if (verdict.type === 'fit') feasible.push(nodeInfo);
    else filtered.push({ node: nodeInfo.node.metadata.name, reasons: [...verdict.reasons] });
  }
  filtered.sort((left, right) => compareNames(left.node, right.node));

  const scores = topScores(pod, feasible, ctx, profile);
  const rationale: BindingRationale = {
    filtered,
    scores,
    feasibleNodes: feasible.length,
    totalNodes: nodeInfos.length,
  };
  const [best] = scores;
  if (best === undefined) {
    return { type: 'unschedulable', message: unschedulableMessage(filtered, nodeInfos.length), rationale };
  }
  return { type: 'bound', node: best.node, rationale };
}

function runFilters(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext, profile: Profile): FilterResult {
  for (const plugin of profile.filters) {
    const verdict = plugin.filter(pod, nodeInfo, ctx);
    if (verdict.type === 'unfit') return verdict;
  }
  return FIT;
}

/** Scores every feasible node but materialises only the best {@link TOP_SCORES}, best first. */
function topScores(pod: Pod, feasible: readonly NodeInfo[], ctx: SchedulingContext, profile: Profile): NodeScore[] {
  const top: NodeScore[] = [];
  const podsOf = new Map<string, number>();
  const pluginScores = new Array<number>(profile.scores.length).fill(0);
  for (const nodeInfo of feasible) {
    const node = nodeInfo.node.metadata.name;
    const pods = nodeInfo.requested.pods;
    let total = 0;
    for (let index = 0; index < profile.scores.length; index += 1) {
      const { plugin, weight } = profile.scores[index] as Profile['scores'][number];
      const score = plugin.score(pod, nodeInfo, ctx);
      if (!Number.isInteger(score) || score < 0 || score > MAX_NODE_SCORE) {
        throw new RangeError(
          `score plugin ${plugin.name} gave node ${node} the score ${score}; scores are integers 0..${MAX_NODE_SCORE}`,
        );
      }
      pluginScores[index] = score;
      total += score * weight;
    }
    const last = top[top.length - 1];
    if (top.length === TOP_SCORES && last !== undefined && !ranksBefore(total, pods, node, last, podsOf)) continue;
    const entry: NodeScore = {
      node,
      score: total,
      plugins: profile.scores.map(({ plugin }, index) => ({ name: plugin.name, score: pluginScores[index] ?? 0 })),
    };
    podsOf.set(node, pods);
    const position = top.findIndex((other) => ranksBefore(total, pods, node, other, podsOf));
    top.splice(position === -1 ? top.length : position, 0, entry);
    if (top.length > TOP_SCORES) top.pop();
  }
  return top;
}

/** Higher score first; among equal scores the node with fewer pods, then the name that sorts first. */
function ranksBefore(score: number, pods: number, node: string, other: NodeScore, podsOf: ReadonlyMap<string, number>): boolean {
  if (score !== other.score) return score > other.score;
  const otherPods = podsOf.get(other.node) ?? 0;
  return pods !== otherPods ? pods < otherPods : compareNames(node, other.node) < 0;
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
