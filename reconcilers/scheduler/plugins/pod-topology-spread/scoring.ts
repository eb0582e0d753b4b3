/**
 * PodTopologySpread's score for ScheduleAnyway constraints (kube-scheduler 1.32's
 * PreScore/Score/NormalizeScore), computed in bulk over the feasible nodes.
 *
 * Per constraint, the matching-pod count of every node and the per-domain totals are kept
 * across cycles and NodeInfo arrays (a scheduler round replaces entries in place), so a
 * cycle only re-counts the nodes whose NodeInfo was replaced since the last one (found from
 * the caller's change log when it keeps one, else by comparing every entry) and then reads
 * two arrays per feasible node, instead of matching every pod of the cluster.
 */
import { type CycleValue, defineCycleValue, MAX_NODE_SCORE, type NodeInfo, type SchedulingContext } from '../../framework.ts';
import type { Pod } from '../../../../schemas/index.ts';
import { namespaceOf } from '../../affinity.ts';
import { constraintsFor, countMatching, HOSTNAME_KEY, type SpreadConstraint, type SpreadDefaults, SYSTEM_DEFAULTS, WhenUnsatisfiable } from './constraints.ts';
import { inclusionOf } from './inclusion.ts';

/** What one constraint knows about every node of a NodeInfo array. */
interface ConstraintCache {
  readonly snapshot: (NodeInfo | undefined)[];
  /** Matching pods on the node. */
  readonly counts: number[];
  /** The node's value of the topology key ('' when it lacks it), and whether it has it. */
  readonly values: string[];
  readonly hasKey: boolean[];
  /** The node's value as a small number (see `idOf`), so a cycle's loops index arrays instead of maps. */
  readonly valueIds: number[];
  /** Whether the node counts toward domain totals (inclusion policies, every topology key when required). */
  readonly eligible: boolean[];
  /** Domain value → its id; ids are never reused while the cache lives. */
  readonly idOf: Map<string, number>;
  /** Domain id → matching pods over eligible nodes. */
  readonly totals: number[];
  /** Domain id → nodes with that value (any node), to count domains without a pass when every node is feasible. */
  readonly nodesPerValue: number[];
  /** Domain id → eligible nodes with that value (the domains PreFilter counts). */
  readonly eligiblePerValue: number[];
  /** Values with at least one node. */
  domains: number;
  /** Domain id → the last cycle that counted it among the scored nodes (see `spreadScores`). */
  readonly seenIn: number[];
  cycle: number;
  /** The NodeInfo array the cache was last brought up to date with, and the length of its change log then (undefined: compare every entry next time). */
  array: readonly NodeInfo[] | undefined;
  seen: number | undefined;
}

/**
 * Cache key → cache, kept across NodeInfo arrays (rounds, and a round's copies with nominated
 * pods): a cache compares its snapshot with a new array entry by entry (NodeInfos of unchanged
 * nodes are the same objects), so only the replaced entries are re-counted.
 */
const caches = new Map<string, ConstraintCache>();

/** Caches kept (distinct templates × constraints); past that it starts over. */
const CACHES_KEPT = 256;

function hasAllKeys(nodeInfo: NodeInfo, constraints: readonly SpreadConstraint[]): boolean {
  const labels = nodeInfo.node.metadata.labels;
  if (labels === undefined) return constraints.length === 0;
  for (const constraint of constraints) if (!Object.hasOwn(labels, constraint.topologyKey)) return false;
  return true;
}

/** Brings the cache of `constraint` for `nodeInfos` up to date (re-counting replaced entries only). */
function cacheFor(
  pod: Pod,
  constraint: SpreadConstraint,
  constraints: readonly SpreadConstraint[],
  requireAllTopologies: boolean,
  nodeInfos: readonly NodeInfo[],
  changes: readonly number[] | undefined,
): ConstraintCache {
  const inclusionKey = JSON.stringify([
    // The policies themselves too: "honor, with no tolerations" is not "ignore".
    constraint.honorNodeAffinity ? [pod.spec.nodeSelector ?? null, pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null] : false,
    constraint.honorNodeTaints ? [pod.spec.tolerations ?? null] : false,
    requireAllTopologies ? constraints.map((c) => c.topologyKey) : null,
  ]);
  const key = `${constraint.topologyKey}\u0000${constraint.selectorKey}\u0000${inclusionKey}`;
  const byKey = caches;
  let cache = byKey.get(key);
  if (cache === undefined || cache.snapshot.length !== nodeInfos.length) {
    if (byKey.size >= CACHES_KEPT) byKey.clear();
    const length = nodeInfos.length;
    cache = {
      snapshot: new Array<NodeInfo | undefined>(length).fill(undefined),
      counts: new Array<number>(length).fill(0),
      values: new Array<string>(length).fill(''),
      hasKey: new Array<boolean>(length).fill(false),
      valueIds: new Array<number>(length).fill(0),
      eligible: new Array<boolean>(length).fill(false),
      idOf: new Map(),
      totals: [],
      nodesPerValue: [],
      eligiblePerValue: [],
      domains: 0,
      seenIn: [],
      cycle: 0,
      array: undefined,
      seen: undefined,
    };
    byKey.set(key, cache);
  }
  const namespace = namespaceOf(pod);
  let includes: ReturnType<typeof inclusionOf> | undefined;
  const { snapshot, counts, values, hasKey, valueIds, eligible, idOf, totals, nodesPerValue, eligiblePerValue } = cache;
  // With the change log, only entries replaced since the last visit can differ from the snapshot.
  const from = changes !== undefined && cache.array === nodeInfos && cache.seen !== undefined && cache.seen <= changes.length ? cache.seen : undefined;
  cache.array = nodeInfos;
  cache.seen = changes?.length;
  const visits = from === undefined ? nodeInfos.length : (changes as readonly number[]).length - from;
  for (let visit = 0; visit < visits; visit += 1) {
    const index = from === undefined ? visit : ((changes as readonly number[])[from + visit] as number);
    const nodeInfo = nodeInfos[index] as NodeInfo;
    if (snapshot[index] === nodeInfo) continue;
    if (snapshot[index] !== undefined) {
      const id = valueIds[index] as number;
      if (eligible[index] === true) {
        totals[id] = (totals[id] as number) - (counts[index] as number);
        eligiblePerValue[id] = (eligiblePerValue[id] as number) - 1;
      }
      nodesPerValue[id] = (nodesPerValue[id] as number) - 1;
      if (nodesPerValue[id] === 0) cache.domains -= 1;
    }
    const labels = nodeInfo.node.metadata.labels ?? {};
    const present = Object.hasOwn(labels, constraint.topologyKey);
    const value = present ? (labels[constraint.topologyKey] as string) : '';
    includes ??= inclusionOf(pod);
    const counted = (!requireAllTopologies || hasAllKeys(nodeInfo, constraints)) && includes(constraint, nodeInfo.node);
    const count = countMatching(nodeInfo, constraint, namespace);
    let id = idOf.get(value);
    if (id === undefined) {
      id = idOf.size;
      idOf.set(value, id);
      totals.push(0);
      nodesPerValue.push(0);
      eligiblePerValue.push(0);
      cache.seenIn.push(-1);
    }
    snapshot[index] = nodeInfo;
    counts[index] = count;
    values[index] = value;
    hasKey[index] = present;
    valueIds[index] = id;
    eligible[index] = counted;
    if (counted) {
      totals[id] = (totals[id] as number) + count;
      eligiblePerValue[id] = (eligiblePerValue[id] as number) + 1;
    }
    if (nodesPerValue[id] === 0) cache.domains += 1;
    nodesPerValue[id] = (nodesPerValue[id] as number) + 1;
  }
  return cache;
}

/** A constraint's matching pods per domain over the nodes it counts, as kube's PreFilter sums them. */
export interface DomainTotals {
  /** Matching pods in the domain `value` (undefined or 0 when no counted node has it). */
  get(value: string): number | undefined;
  /** How many domains have a counted node. */
  readonly domains: number;
  /** The fewest matching pods in such a domain (Number.MAX_SAFE_INTEGER when there is none). */
  readonly minimum: number;
}

/**
 * The per-domain totals of `constraint` over the nodes that carry every topology key of
 * `constraints` and that the constraint includes (kube's PreFilter for DoNotSchedule
 * constraints), from the cache kept across cycles: only NodeInfos replaced since are re-counted.
 */
export function filterDomainTotals(
  pod: Pod,
  constraint: SpreadConstraint,
  constraints: readonly SpreadConstraint[],
  nodeInfos: readonly NodeInfo[],
  changes: readonly number[] | undefined,
): DomainTotals {
  const cache = cacheFor(pod, constraint, constraints, true, nodeInfos, changes);
  const { idOf, totals, eligiblePerValue } = cache;
  let domains = 0;
  let minimum = Number.MAX_SAFE_INTEGER;
  for (let id = 0; id < eligiblePerValue.length; id += 1) {
    if ((eligiblePerValue[id] as number) === 0) continue;
    domains += 1;
    const total = totals[id] as number;
    if (total < minimum) minimum = total;
  }
  return {
    get: (value) => {
      const id = idOf.get(value);
      return id === undefined ? undefined : totals[id];
    },
    domains,
    minimum,
  };
}

/** The score's values of one cycle for a profile's defaults: the ScheduleAnyway constraints, and the positions kube ignores. */
export interface SpreadScoring {
  readonly constraints: CycleValue<{ constraints: SpreadConstraint[]; systemDefaulted: boolean }>;
  /** Raw scores (kube's Score) of the feasible nodes at `indices` of `ctx.nodeInfos`. */
  readonly scores: (pod: Pod, indices: readonly number[], ctx: SchedulingContext) => number[];
  /** kube's NormalizeScore: ignored nodes 0; otherwise `100 × (max + min - score) / max` (100 for all when max is 0). */
  readonly normalize: (scores: number[], nodes: readonly NodeInfo[], ctx: SchedulingContext) => void;
}

const scorings = new Map<string, SpreadScoring>();

/**
 * The score of a profile whose pods without constraints get `defaults`. Its cycle values
 * are made once per distinct defaults (a configuration has a few), so profiles with the same
 * PodTopologySpreadArgs share them.
 */
export function spreadScoring(defaults: SpreadDefaults): SpreadScoring {
  const key = JSON.stringify(defaults);
  const known = scorings.get(key);
  if (known !== undefined) return known;
  const constraints = defineCycleValue('PodTopologySpread/scoreConstraints', (pod, _nodeInfos, ctx) => constraintsFor(pod, WhenUnsatisfiable.ScheduleAnyway, ctx.cluster, defaults));
  // Per cycle: which feasible positions kube would ignore (missing a required topology key), for normalization.
  const ignored = defineCycleValue('PodTopologySpread/ignored', () => ({ positions: new Set<number>() }));
  const scoring: SpreadScoring = {
    constraints,
    scores: (pod, indices, ctx) => scoresOf(ctx.get(constraints), ctx.get(ignored).positions, pod, indices, ctx),
    normalize: (scores, _nodes, ctx) => {
      if (ctx.get(constraints).constraints.length > 0) normalizeScores(scores, ctx.get(ignored).positions);
    },
  };
  scorings.set(key, scoring);
  return scoring;
}

function scoresOf(
  { constraints, systemDefaulted }: { constraints: SpreadConstraint[]; systemDefaulted: boolean },
  ignored: Set<number>,
  pod: Pod,
  indices: readonly number[],
  ctx: SchedulingContext,
): number[] {
  if (constraints.length === 0) return new Array<number>(indices.length).fill(0);
  const nodeInfos = ctx.nodeInfos;
  const requireAllTopologies = !systemDefaulted;
  const cachesOf = constraints.map((constraint) => cacheFor(pod, constraint, constraints, requireAllTopologies, nodeInfos, ctx.changes));
  // kube's initPreScoreState: ignored nodes, domains among the feasible nodes, weights.
  ignored.clear();
  // Per constraint, the distinct values among the scored nodes (counted by marking each
  // value's id with this cycle's number instead of filling a set).
  const domains = constraints.map(() => 0);
  for (const cache of cachesOf) cache.cycle += 1;
  // Every node feasible and none ignored (the usual case): the domains are those of all nodes.
  const everyNode = !requireAllTopologies && indices.length === nodeInfos.length;
  for (let position = 0; !everyNode && position < indices.length; position += 1) {
    const index = indices[position] as number;
    if (requireAllTopologies && !cachesOf.every((cache) => cache.hasKey[index] === true)) {
      ignored.add(position);
      continue;
    }
    for (let c = 0; c < constraints.length; c += 1) {
      if ((constraints[c] as SpreadConstraint).topologyKey === HOSTNAME_KEY) continue;
      const cache = cachesOf[c] as ConstraintCache;
      const id = cache.valueIds[index] as number;
      if (cache.seenIn[id] === cache.cycle) continue;
      cache.seenIn[id] = cache.cycle;
      domains[c] = (domains[c] as number) + 1;
    }
  }
  const weights = constraints.map((constraint, c) => {
    if (constraint.topologyKey === HOSTNAME_KEY) return Math.log(indices.length - ignored.size + 2);
    return Math.log((everyNode ? (cachesOf[c] as ConstraintCache).domains : (domains[c] as number)) + 2);
  });
  const checkIgnored = ignored.size > 0;
  const scores: number[] = new Array<number>(indices.length).fill(0);
  for (let position = 0; position < indices.length; position += 1) {
    if (checkIgnored && ignored.has(position)) {
      scores[position] = 0;
      continue;
    }
    const index = indices[position] as number;
    let score = 0;
    for (let c = 0; c < constraints.length; c += 1) {
      const cache = cachesOf[c] as ConstraintCache;
      if (cache.hasKey[index] !== true) continue;
      const constraint = constraints[c] as SpreadConstraint;
      const count = constraint.topologyKey === HOSTNAME_KEY ? (cache.counts[index] as number) : (cache.totals[cache.valueIds[index] as number] as number);
      score += count * (weights[c] as number) + (constraint.maxSkew - 1);
    }
    scores[position] = Math.round(score);
  }
  return scores;
}

function normalizeScores(scores: number[], ignored: ReadonlySet<number>): void {
  const checkIgnored = ignored.size > 0;
  let min = Number.MAX_SAFE_INTEGER;
  let max = 0;
  for (let position = 0; position < scores.length; position += 1) {
    if (checkIgnored && ignored.has(position)) continue;
    const score = scores[position] as number;
    if (score < min) min = score;
    if (score > max) max = score;
  }
  for (let position = 0; position < scores.length; position += 1) {
    if (checkIgnored && ignored.has(position)) scores[position] = 0;
    else if (max === 0) scores[position] = MAX_NODE_SCORE;
    else scores[position] = Math.trunc((MAX_NODE_SCORE * (max + min - (scores[position] as number))) / max);
  }
}

const systemScoring = spreadScoring(SYSTEM_DEFAULTS);

/** The ScheduleAnyway constraints of the cycle's pod under kube's system defaults. */
export const scoreConstraintsOfCycle = systemScoring.constraints;

/** {@link SpreadScoring.scores} under kube's system defaults. */
export const spreadScores = systemScoring.scores;

/** {@link SpreadScoring.normalize} under kube's system defaults. */
export const normalizeSpreadScores = systemScoring.normalize;
