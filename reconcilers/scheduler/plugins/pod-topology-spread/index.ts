/**
 * PodTopologySpread (kube-scheduler 1.32), filter and score.
 *
 * Filter, for the pod's `whenUnsatisfiable: DoNotSchedule` constraints: a node must carry
 * every constraint's topology key ("… (missing required label)"), and placing the pod there
 * must keep, per constraint, `pods matching in the node's domain + 1 if the pod matches
 * itself - the minimum over domains <= maxSkew`, the minimum being 0 while fewer domains
 * than `minDomains` exist. Domains and counts come from the nodes the constraint includes
 * (nodeAffinityPolicy Honor: nodes matching the pod's node selector/affinity;
 * nodeTaintsPolicy Honor: nodes whose taints it tolerates) that carry every topology key.
 *
 * Score, for `ScheduleAnyway` constraints (or, for a pod with no constraints at all, the
 * system defaults: hostname maxSkew 3 and zone maxSkew 5 over the pods of the same
 * Services/ReplicaSet/StatefulSet/ReplicationController): a node's raw score is
 * `Σ count × ln(domains + 2) + maxSkew - 1` over its constraints, rounded, and normalized so
 * that fewer matching pods score higher (`100 × (max + min - score) / max`).
 */
import { defineCycleValue, FIT, type FilterPlugin, type FilterResult, MAX_NODE_SCORE, type NodeInfo, type SchedulingContext, type ScorePlugin, unfit } from '../../framework.ts';
import type { Pod } from '../../../../schemas/index.ts';
import { constraintsFor, countMatching, HOSTNAME_KEY, type SpreadConstraint, WhenUnsatisfiable } from './constraints.ts';
import { inclusionOf } from './inclusion.ts';
import { matchesLabels } from '../../../../projections/selectors.ts';
import { namespaceOf } from '../../affinity.ts';

/** This plugin's registry name (kube-scheduler's). */
export const POD_TOPOLOGY_SPREAD = 'PodTopologySpread';

/** kube-scheduler's reasons. */
export const PodTopologySpreadReason = {
  ConstraintsNotMatch: "node(s) didn't match pod topology spread constraints",
  NodeLabelNotMatch: "node(s) didn't match pod topology spread constraints (missing required label)",
} as const;

/** What the filter computes once per cycle (kube's preFilterState). */
export interface SpreadFilterState {
  readonly constraints: readonly SpreadConstraint[];
  /** Per constraint: domain value → matching pods. */
  readonly counts: readonly ReadonlyMap<string, number>[];
  /** Per constraint: the global minimum to compare against (minDomains applied). */
  readonly minimums: readonly number[];
  /** Per constraint: whether the incoming pod matches the selector itself. */
  readonly selfMatch: readonly number[];
}

function hasAllKeys(nodeInfo: NodeInfo, constraints: readonly SpreadConstraint[]): boolean {
  const labels = nodeInfo.node.metadata.labels;
  if (labels === undefined) return constraints.length === 0;
  for (const constraint of constraints) if (!Object.hasOwn(labels, constraint.topologyKey)) return false;
  return true;
}

/** kube's PreFilter: counts per domain over the included nodes that carry every topology key. */
export function spreadFilterState(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext): SpreadFilterState {
  const { constraints } = constraintsFor(pod, WhenUnsatisfiable.DoNotSchedule, ctx.cluster);
  if (constraints.length === 0) return { constraints, counts: [], minimums: [], selfMatch: [] };
  const namespace = namespaceOf(pod);
  const counts = constraints.map(() => new Map<string, number>());
  const includes = inclusionOf(pod);
  for (const nodeInfo of nodeInfos) {
    if (!hasAllKeys(nodeInfo, constraints)) continue;
    const labels = nodeInfo.node.metadata.labels as Readonly<Record<string, string>>;
    constraints.forEach((constraint, index) => {
      if (!includes(constraint, nodeInfo.node)) return;
      const value = labels[constraint.topologyKey] as string;
      const domain = counts[index] as Map<string, number>;
      domain.set(value, (domain.get(value) ?? 0) + countMatching(nodeInfo, constraint, namespace));
    });
  }
  const minimums = constraints.map((constraint, index) => {
    const domain = counts[index] as Map<string, number>;
    if (domain.size < constraint.minDomains) return 0;
    let minimum = Number.MAX_SAFE_INTEGER;
    for (const count of domain.values()) if (count < minimum) minimum = count;
    return minimum;
  });
  const selfMatch = constraints.map((constraint) =>
    constraint.selector !== undefined && matchesLabels(constraint.selector, pod.metadata.labels) ? 1 : 0,
  );
  return { constraints, counts, minimums, selfMatch };
}

/** The filter's verdict for `nodeInfo`. */
export function spreadVerdict(state: SpreadFilterState, nodeInfo: NodeInfo): FilterResult {
  if (state.constraints.length === 0) return FIT;
  const labels = nodeInfo.node.metadata.labels ?? {};
  for (let index = 0; index < state.constraints.length; index += 1) {
    const constraint = state.constraints[index] as SpreadConstraint;
    const value = Object.hasOwn(labels, constraint.topologyKey) ? labels[constraint.topologyKey] : undefined;
    if (value === undefined) return unfit(PodTopologySpreadReason.NodeLabelNotMatch);
    const matching = (state.counts[index] as ReadonlyMap<string, number>).get(value) ?? 0;
    const skew = matching + (state.selfMatch[index] as number) - (state.minimums[index] as number);
    if (skew > constraint.maxSkew) return unfit(PodTopologySpreadReason.ConstraintsNotMatch);
  }
  return FIT;
}

const filterStateOfCycle = defineCycleValue('PodTopologySpread/filter', spreadFilterState);

/** What scoring computes once per cycle, from the feasible nodes (kube's preScoreState). */
interface SpreadScoreState {
  readonly constraints: readonly SpreadConstraint[];
  readonly ignored: ReadonlySet<NodeInfo>;
  /** Per constraint (hostname ones stay empty: counted per node): domain value → matching pods. */
  readonly counts: readonly ReadonlyMap<string, number>[];
  readonly weights: readonly number[];
}

const scoreConstraintsOfCycle = defineCycleValue('PodTopologySpread/scoreConstraints', (pod, _nodeInfos, ctx) =>
  constraintsFor(pod, WhenUnsatisfiable.ScheduleAnyway, ctx.cluster),
);

/** kube's PreScore/initPreScoreState over the feasible nodes, counting over every node. */
function spreadScoreState(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext): SpreadScoreState {
  const { constraints, systemDefaulted } = ctx.get(scoreConstraintsOfCycle);
  const feasible = ctx.feasibleNodes();
  const requireAllTopologies = !systemDefaulted;
  const ignored = new Set<NodeInfo>();
  const counts = constraints.map(() => new Map<string, number>());
  const sizes = constraints.map(() => 0);
  for (const nodeInfo of feasible) {
    if (requireAllTopologies && !hasAllKeys(nodeInfo, constraints)) {
      ignored.add(nodeInfo);
      continue;
    }
    const labels = nodeInfo.node.metadata.labels ?? {};
    constraints.forEach((constraint, index) => {
      if (constraint.topologyKey === HOSTNAME_KEY) return;
      const value = (Object.hasOwn(labels, constraint.topologyKey) ? labels[constraint.topologyKey] : undefined) ?? '';
      const domain = counts[index] as Map<string, number>;
      if (!domain.has(value)) {
        domain.set(value, 0);
        sizes[index] = (sizes[index] as number) + 1;
      }
    });
  }
  const weights = constraints.map((constraint, index) =>
    Math.log((constraint.topologyKey === HOSTNAME_KEY ? feasible.length - ignored.size : (sizes[index] as number)) + 2),
  );
  const namespace = namespaceOf(pod);
  const includes = inclusionOf(pod);
  for (const nodeInfo of nodeInfos) {
    if (requireAllTopologies && !hasAllKeys(nodeInfo, constraints)) continue;
    const labels = nodeInfo.node.metadata.labels ?? {};
    constraints.forEach((constraint, index) => {
      if (!includes(constraint, nodeInfo.node)) return;
      const value = (Object.hasOwn(labels, constraint.topologyKey) ? labels[constraint.topologyKey] : undefined) ?? '';
      const domain = counts[index] as Map<string, number>;
      const current = domain.get(value);
      if (current === undefined) return; // a domain no feasible node is in
      domain.set(value, current + countMatching(nodeInfo, constraint, namespace));
    });
  }
  return { constraints, ignored, counts, weights };
}

const scoreStateOfCycle = defineCycleValue('PodTopologySpread/score', spreadScoreState);

function rawScore(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext): number {
  const state = ctx.get(scoreStateOfCycle);
  if (state.ignored.has(nodeInfo)) return 0;
  const labels = nodeInfo.node.metadata.labels ?? {};
  const namespace = namespaceOf(pod);
  let score = 0;
  state.constraints.forEach((constraint, index) => {
    if (!Object.hasOwn(labels, constraint.topologyKey)) return;
    const value = labels[constraint.topologyKey] as string;
    const count =
      constraint.topologyKey === HOSTNAME_KEY ? countMatching(nodeInfo, constraint, namespace) : ((state.counts[index] as ReadonlyMap<string, number>).get(value) ?? 0);
    score += count * (state.weights[index] as number) + (constraint.maxSkew - 1);
  });
  return Math.round(score);
}

/** kube's NormalizeScore: ignored nodes 0; otherwise `100 × (max + min - score) / max` (100 for all when max is 0). */
function normalize(scores: number[], nodes: readonly NodeInfo[], ctx: SchedulingContext): void {
  if (ctx.get(scoreConstraintsOfCycle).constraints.length === 0) return;
  const { ignored } = ctx.get(scoreStateOfCycle);
  let min = Number.MAX_SAFE_INTEGER;
  let max = 0;
  scores.forEach((score, index) => {
    if (ignored.has(nodes[index] as NodeInfo)) return;
    if (score < min) min = score;
    if (score > max) max = score;
  });
  scores.forEach((score, index) => {
    if (ignored.has(nodes[index] as NodeInfo)) scores[index] = 0;
    else if (max === 0) scores[index] = MAX_NODE_SCORE;
    else scores[index] = Math.trunc((MAX_NODE_SCORE * (max + min - score)) / max);
  });
}

/** Creates the PodTopologySpread filter and score. */
export function createPodTopologySpread(): FilterPlugin & ScorePlugin {
  return {
    name: POD_TOPOLOGY_SPREAD,
    // Node-local only for pods with no constraint at all (their own or the defaults).
    nodeLocal: (ctx) => ctx.get(filterStateOfCycle).constraints.length === 0 && ctx.get(scoreConstraintsOfCycle).constraints.length === 0,
    filter(_pod, nodeInfo, ctx) {
      return spreadVerdict(ctx.get(filterStateOfCycle), nodeInfo);
    },
    score(pod, nodeInfo, ctx) {
      if (ctx.get(scoreConstraintsOfCycle).constraints.length === 0) return 0;
      return rawScore(pod, nodeInfo, ctx);
    },
    normalize,
  };
}
