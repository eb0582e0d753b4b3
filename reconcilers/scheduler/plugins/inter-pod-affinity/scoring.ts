/**
 * InterPodAffinity's score (kube-scheduler's PreScore/Score/NormalizeScore): each topology
 * domain gets, from every pod placed in it,
 * - + the weight of each of the incoming pod's preferred affinity terms that selects it,
 *   - the weight of each preferred anti-affinity term that selects it;
 * - + {@link HARD_POD_AFFINITY_WEIGHT} for each of its required affinity terms that selects
 *   the incoming pod, + / - the weight of each of its preferred (anti-)affinity terms that
 *   selects the incoming pod (symmetry).
 * A node scores the sum over the domains it lies in; the scores are then scaled min-max to
 * 0..100 over the feasible nodes. When no pod contributes anything every node scores 0.
 * The domain scores come from a tally kept across cycles (`counts-cache.ts`).
 */
import { type AffinityTerm, type NamespaceLabelsOf, parsePodAffinityTerms, termSelects, type WeightedAffinityTerm } from '../../affinity.ts';
import { defineCycleValue, MAX_NODE_SCORE, type NodeInfo, type SchedulingContext } from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';
import { countDomain, namespaceLabelsOf, topologyValue, type TopologyCounts } from './topology.ts';
import { type Contribution, createTallyStore } from './counts-cache.ts';
import { incomingPodKey, termsKey, withoutNamespaceSelector } from './terms-key.ts';

/** kube-scheduler's default `hardPodAffinityWeight` (InterPodAffinityArgs). */
export const HARD_POD_AFFINITY_WEIGHT = 1;

/** What a profile's InterPodAffinityArgs change in the score. */
export interface AffinityScoreArgs {
  /** The weight an existing pod's required affinity term adds where it selects the incoming pod (0: none). */
  readonly hardPodAffinityWeight: number;
  /** Skip the score (every node 0) for an incoming pod without preferred terms of its own. */
  readonly ignorePreferredTermsOfExistingPods: boolean;
}

export const DEFAULT_AFFINITY_SCORE_ARGS: AffinityScoreArgs = { hardPodAffinityWeight: HARD_POD_AFFINITY_WEIGHT, ignorePreferredTermsOfExistingPods: false };

function scoreTerm(scores: TopologyCounts, term: AffinityTerm, weight: number, pod: Pod, labels: NamespaceLabelsOf, node: Node): void {
  if (termSelects(term, pod, labels)) countDomain(scores, term.topologyKey, node, weight);
}

function scoreTerms(scores: TopologyCounts, terms: readonly WeightedAffinityTerm[], pod: Pod, labels: NamespaceLabelsOf, node: Node, sign: number): void {
  for (const term of terms) scoreTerm(scores, term, term.weight * sign, pod, labels, node);
}

/** The score of every topology domain for the cycle's pod (kube's preScoreState.topologyScore), from every node; empty when nothing scores. */
export function interPodAffinityTopologyScores(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext, args: AffinityScoreArgs = DEFAULT_AFFINITY_SCORE_ARGS): TopologyCounts {
  const terms = parsePodAffinityTerms(pod);
  const preferred = terms?.preferredAffinity ?? [];
  const preferredAnti = terms?.preferredAntiAffinity ?? [];
  const hasConstraints = preferred.length > 0 || preferredAnti.length > 0;
  const scores: TopologyCounts = new Map();
  // kube's PreScore: with ignorePreferredTermsOfExistingPods, a pod without preferred terms is not scored.
  if (args.ignorePreferredTermsOfExistingPods && !hasConstraints) return scores;
  const labelsOf = namespaceLabelsOf(ctx);
  for (let index = 0; index < nodeInfos.length; index += 1) {
    const nodeInfo = nodeInfos[index] as NodeInfo;
    const node = nodeInfo.node;
    if (!hasConstraints && nodeInfo.podsWithAffinity.length === 0) continue;
    if (hasConstraints) {
      for (const existing of nodeInfo.pods) {
        scoreTerms(scores, preferred, existing, labelsOf, node, 1);
        scoreTerms(scores, preferredAnti, existing, labelsOf, node, -1);
      }
    }
    for (const existing of nodeInfo.podsWithAffinity) {
      if (existing.requiredAffinity.length + existing.preferredAffinity.length + existing.preferredAntiAffinity.length === 0) continue;
      if (args.hardPodAffinityWeight > 0) for (const term of existing.requiredAffinity) scoreTerm(scores, term, args.hardPodAffinityWeight, pod, labelsOf, node);
      scoreTerms(scores, existing.preferredAffinity, pod, labelsOf, node, 1);
      scoreTerms(scores, existing.preferredAntiAffinity, pod, labelsOf, node, -1);
    }
  }
  return scores;
}

const tallyOf = createTallyStore();

/** Adds to `contributions` the weight of every term of `terms` that selects `pod`, times `sign`. */
function contributeTerms(contributions: Contribution[], terms: readonly WeightedAffinityTerm[], pod: Pod, labels: NamespaceLabelsOf, sign: number): void {
  for (const term of terms) if (termSelects(term, pod, labels)) contributions.push({ topologyKey: term.topologyKey, amount: term.weight * sign, calls: 1 });
}

/**
 * {@link interPodAffinityTopologyScores} from a tally kept across cycles (see
 * `counts-cache.ts`), keyed by what a node's contribution depends on besides its NodeInfo:
 * the incoming pod's preferred terms, namespace, labels and namespace labels. Preferred terms
 * with a namespaceSelector are scored afresh, as the uncached computation does.
 */
export function cachedInterPodAffinityTopologyScores(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext, args: AffinityScoreArgs = DEFAULT_AFFINITY_SCORE_ARGS): TopologyCounts {
  const terms = parsePodAffinityTerms(pod);
  const preferred = terms?.preferredAffinity ?? [];
  const preferredAnti = terms?.preferredAntiAffinity ?? [];
  if (!withoutNamespaceSelector(preferred) || !withoutNamespaceSelector(preferredAnti)) return interPodAffinityTopologyScores(pod, nodeInfos, ctx, args);
  const hasConstraints = preferred.length > 0 || preferredAnti.length > 0;
  if (args.ignorePreferredTermsOfExistingPods && !hasConstraints) return new Map();
  const labelsOf = namespaceLabelsOf(ctx);
  const hardWeight = args.hardPodAffinityWeight;
  const key = JSON.stringify([incomingPodKey(pod, labelsOf), weightedTermsKey(preferred), weightedTermsKey(preferredAnti), hardWeight]);
  return tallyOf(key).sync(nodeInfos, ctx.changes, (nodeInfo) => {
    if (!hasConstraints && nodeInfo.podsWithAffinity.length === 0) return [];
    const contributions: Contribution[] = [];
    if (hasConstraints) {
      for (const existing of nodeInfo.pods) {
        contributeTerms(contributions, preferred, existing, labelsOf, 1);
        contributeTerms(contributions, preferredAnti, existing, labelsOf, -1);
      }
    }
    for (const existing of nodeInfo.podsWithAffinity) {
      if (hardWeight > 0) {
        for (const term of existing.requiredAffinity) {
          if (termSelects(term, pod, labelsOf)) contributions.push({ topologyKey: term.topologyKey, amount: hardWeight, calls: 1 });
        }
      }
      contributeTerms(contributions, existing.preferredAffinity, pod, labelsOf, 1);
      contributeTerms(contributions, existing.preferredAntiAffinity, pod, labelsOf, -1);
    }
    return contributions;
  });
}

function weightedTermsKey(terms: readonly WeightedAffinityTerm[]): string {
  return `${termsKey(terms)}${JSON.stringify(terms.map((term) => term.weight))}`;
}

/** The score of a profile's InterPodAffinityArgs: whether the cycle scores nothing, a node's raw score, and the normalization. */
export interface AffinityScoring {
  /** Whether every node scores 0 in this cycle (kube's PreScore "Skip"). */
  readonly isZero: (ctx: SchedulingContext) => boolean;
  /** The raw score of `nodeInfo`: the sum of the scores of the domains it lies in (may be negative). */
  readonly score: (pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext) => number;
  readonly normalize: (scores: number[], nodes: readonly NodeInfo[], ctx: SchedulingContext) => void;
}

const scorings = new Map<string, AffinityScoring>();

/** The score for `args`; its cycle value is made once per distinct args (a configuration has a few). */
export function affinityScoring(args: AffinityScoreArgs = DEFAULT_AFFINITY_SCORE_ARGS): AffinityScoring {
  const key = JSON.stringify([args.hardPodAffinityWeight, args.ignorePreferredTermsOfExistingPods]);
  const known = scorings.get(key);
  if (known !== undefined) return known;
  const topologyScores = defineCycleValue('InterPodAffinity/topologyScores', (pod, nodeInfos, ctx) => cachedInterPodAffinityTopologyScores(pod, nodeInfos, ctx, args));
  const scoring: AffinityScoring = {
    isZero: (ctx) => ctx.get(topologyScores).size === 0,
    score: (_pod, nodeInfo, ctx) => {
      const scores = ctx.get(topologyScores);
      if (scores.size === 0) return 0;
      let score = 0;
      for (const [topologyKey, values] of scores) {
        const value = topologyValue(nodeInfo.node, topologyKey);
        if (value !== undefined) score += values.get(value) ?? 0;
      }
      return score;
    },
    normalize: (scores, _nodes, ctx) => {
      if (ctx.get(topologyScores).size > 0) normalizeAffinityScores(scores);
    },
  };
  scorings.set(key, scoring);
  return scoring;
}

/** kube's NormalizeScore: `100 × ((score - min) / (max - min))` in floating point, truncated; all 0 when max = min. */
function normalizeAffinityScores(scores: number[]): void {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const score of scores) {
    if (score > max) max = score;
    if (score < min) min = score;
  }
  const spread = max - min;
  for (let index = 0; index < scores.length; index += 1) {
    scores[index] = spread > 0 ? Math.trunc(MAX_NODE_SCORE * (((scores[index] as number) - min) / spread)) : 0;
  }
}

const defaultScoring = affinityScoring();

/** {@link AffinityScoring.isZero} with kube's default args. */
export const interPodAffinityScoreIsZero = defaultScoring.isZero;

/** {@link AffinityScoring.score} with kube's default args. */
export const interPodAffinityScore = defaultScoring.score;

/** {@link AffinityScoring.normalize} with kube's default args. */
export const interPodAffinityNormalize = defaultScoring.normalize;
