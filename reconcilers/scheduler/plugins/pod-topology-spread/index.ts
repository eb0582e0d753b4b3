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
import type { PodTopologySpreadArgs } from '../../config/types.ts';
import { type CycleValue, defineCycleValue, FIT, type FilterPlugin, type FilterResult, type NodeInfo, type SchedulingContext, type ScorePlugin, unfit, unresolvable } from '../../framework.ts';
import type { Pod } from '../../../../schemas/index.ts';
import { constraintsFor, countMatching, type SpreadConstraint, type SpreadDefaults, spreadDefaultsOf, SYSTEM_DEFAULTS, WhenUnsatisfiable } from './constraints.ts';
import { inclusionOf } from './inclusion.ts';
import { type DomainTotals, filterDomainTotals, spreadScoring } from './scoring.ts';
import { matchesLabels } from '../../../../projections/selectors.ts';
import { namespaceOf } from '../../affinity.ts';

/** This plugin's registry name (kube-scheduler's). */
export const POD_TOPOLOGY_SPREAD = 'PodTopologySpread';

/** kube-scheduler's reasons. */
export const PodTopologySpreadReason = {
  ConstraintsNotMatch: "node(s) didn't match pod topology spread constraints",
  NodeLabelNotMatch: "node(s) didn't match pod topology spread constraints (missing required label)",
} as const;

/** Matching pods by domain value (a Map, or a view of the spreading cache's totals). */
export interface DomainCounts {
  get(value: string): number | undefined;
}

/** What the filter computes once per cycle (kube's preFilterState). */
export interface SpreadFilterState {
  readonly constraints: readonly SpreadConstraint[];
  /** Per constraint: domain value → matching pods. */
  readonly counts: readonly DomainCounts[];
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

/** kube's PreFilter: counts per domain over the included nodes that carry every topology key, from every node (the reference `cachedSpreadFilterState` must equal). */
export function spreadFilterState(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext, defaults: SpreadDefaults = SYSTEM_DEFAULTS): SpreadFilterState {
  const { constraints } = constraintsFor(pod, WhenUnsatisfiable.DoNotSchedule, ctx.cluster, defaults);
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

/** The filter's two refusals, made once (a decision judges every node; the verdicts are shared and frozen, as FIT is). */
const frozenVerdict = (result: FilterResult): FilterResult => {
  if (result.type === 'unfit') Object.freeze(result.reasons);
  return Object.freeze(result);
};
const LABEL_NOT_MATCH = frozenVerdict(unresolvable(PodTopologySpreadReason.NodeLabelNotMatch));
const CONSTRAINTS_NOT_MATCH = frozenVerdict(unfit(PodTopologySpreadReason.ConstraintsNotMatch));

/** The filter's verdict for `nodeInfo`. */
export function spreadVerdict(state: SpreadFilterState, nodeInfo: NodeInfo): FilterResult {
  if (state.constraints.length === 0) return FIT;
  const labels = nodeInfo.node.metadata.labels ?? {};
  for (let index = 0; index < state.constraints.length; index += 1) {
    const constraint = state.constraints[index] as SpreadConstraint;
    const value = Object.hasOwn(labels, constraint.topologyKey) ? labels[constraint.topologyKey] : undefined;
    if (value === undefined) return LABEL_NOT_MATCH;
    const matching = (state.counts[index] as DomainCounts).get(value) ?? 0;
    const skew = matching + (state.selfMatch[index] as number) - (state.minimums[index] as number);
    if (skew > constraint.maxSkew) return CONSTRAINTS_NOT_MATCH;
  }
  return FIT;
}

/**
 * {@link spreadFilterState} from the per-constraint caches the score keeps across cycles
 * (see `scoring.ts`): the same counts and minimums, re-counting only the NodeInfos replaced
 * since the cache last looked instead of every node.
 */
export function cachedSpreadFilterState(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext, defaults: SpreadDefaults = SYSTEM_DEFAULTS): SpreadFilterState {
  const { constraints } = constraintsFor(pod, WhenUnsatisfiable.DoNotSchedule, ctx.cluster, defaults);
  if (constraints.length === 0) return { constraints, counts: [], minimums: [], selfMatch: [] };
  const totals = constraints.map((constraint) => filterDomainTotals(pod, constraint, constraints, nodeInfos, ctx.changes));
  const minimums = constraints.map((constraint, index) => {
    const domain = totals[index] as DomainTotals;
    return domain.domains < constraint.minDomains ? 0 : domain.minimum;
  });
  const selfMatch = constraints.map((constraint) =>
    constraint.selector !== undefined && matchesLabels(constraint.selector, pod.metadata.labels) ? 1 : 0,
  );
  return { constraints, counts: totals, minimums, selfMatch };
}

/** The cycle values of a profile's defaults, made once per distinct defaults (see `spreadScoring`). */
const pluginValues = new Map<string, { filterState: CycleValue<SpreadFilterState>; allScores: CycleValue<Map<NodeInfo, number>> }>();

const valuesFor = (defaults: SpreadDefaults) => {
  const key = JSON.stringify(defaults);
  let values = pluginValues.get(key);
  if (values === undefined) {
    const scoring = spreadScoring(defaults);
    values = {
      filterState: defineCycleValue('PodTopologySpread/filter', (pod, nodeInfos, ctx) => cachedSpreadFilterState(pod, nodeInfos, ctx, defaults)),
      allScores: defineCycleValue('PodTopologySpread/allScores', (pod, nodeInfos, ctx) => {
        const feasible = ctx.feasibleNodes();
        const positions = new Map(nodeInfos.map((nodeInfo, index) => [nodeInfo, index]));
        const scores = scoring.scores(pod, feasible.map((nodeInfo) => positions.get(nodeInfo) as number), ctx);
        return new Map(feasible.map((nodeInfo, position) => [nodeInfo, scores[position] as number]));
      }),
    };
    pluginValues.set(key, values);
  }
  return values;
};

/** Creates the PodTopologySpread filter and score. */
export function createPodTopologySpread(args?: PodTopologySpreadArgs): FilterPlugin & ScorePlugin {
  const defaults = spreadDefaultsOf(args);
  const scoring = spreadScoring(defaults);
  const { filterState: filterStateOfCycle, allScores: allScoresOfCycle } = valuesFor(defaults);
  const scoreConstraintsOfCycle = scoring.constraints;
  return {
    name: POD_TOPOLOGY_SPREAD,
    // The filter is node-local for pods without DoNotSchedule constraints, the score for
    // pods without ScheduleAnyway ones (their own or the defaults): then every node passes / scores 0.
    filterNodeLocal: (ctx) => ctx.get(filterStateOfCycle).constraints.length === 0,
    nodeLocal: (ctx) => ctx.get(filterStateOfCycle).constraints.length === 0 && ctx.get(scoreConstraintsOfCycle).constraints.length === 0,
    preScoreSkip: (ctx) => ctx.get(scoreConstraintsOfCycle).constraints.length === 0,
    filter(_pod, nodeInfo, ctx) {
      return spreadVerdict(ctx.get(filterStateOfCycle), nodeInfo);
    },
    // One node at a time (the scheduler uses scoreAll): the bulk scores of the cycle, looked up.
    score(_pod, nodeInfo, ctx) {
      if (ctx.get(scoreConstraintsOfCycle).constraints.length === 0) return 0;
      return ctx.get(allScoresOfCycle).get(nodeInfo) ?? 0;
    },
    scoreAll: scoring.scores,
    normalize: scoring.normalize,
  };
}
