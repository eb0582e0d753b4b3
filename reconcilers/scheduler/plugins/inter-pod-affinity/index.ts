/**
 * InterPodAffinity (kube-scheduler's plugin of that name), filter and score.
 *
 * Filter (PreFilter computes per-topology-domain counts once per cycle, so each node's check
 * is a few map lookups; the counts come from tallies kept across cycles, `counts-cache.ts`,
 * which re-count only the nodes whose NodeInfo changed), in kube's order:
 * 1. required pod affinity: every term's topology domain of the node must hold a pod that
 *    matches *all* the terms; when no pod anywhere matches them and the pod matches its
 *    own terms, any node carrying every term's topology key passes (the first pod of a
 *    group that has affinity to itself);
 * 2. required anti-affinity of the incoming pod: no domain of any term may hold a pod the
 *    term selects;
 * 3. required anti-affinity of existing pods (symmetry): no pod in the node's domain has a
 *    term that selects the incoming pod.
 * Score: see `scoring.ts`.
 *
 * Terms select pods by `labelSelector` (null selects none) in the term owner's namespace,
 * or in `namespaces`, or in the namespaces whose labels (the real Namespace objects', via
 * the cluster lister) `namespaceSelector` matches (`{}` = all). A node without the
 * `kubernetes.io/hostname` label is its own hostname domain (named by the node).
 */
import type { InterPodAffinityArgs } from '../../config/types.ts';
import { type AffinityTerm, parsePodAffinityTerms, type PodAffinityTerms, selectedByAll, termSelects } from '../../affinity.ts';
import { type Contribution, createTallyStore } from './counts-cache.ts';
import { incomingPodKey, termsKey, withoutNamespaceSelector } from './terms-key.ts';
import {
  defineCycleValue,
  FIT,
  type FilterPlugin,
  type FilterResult,
  type NodeInfo,
  type SchedulingContext,
  type ScorePlugin,
  unfit,
  unresolvable,
} from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';
import { affinityScoring } from './scoring.ts';
import { countDomain, domainCount, namespaceLabelsOf, type TopologyCounts, topologyValue } from './topology.ts';

export { HOSTNAME_TOPOLOGY_KEY, topologyValue } from './topology.ts';

/** This plugin's registry name (kube-scheduler's). */
export const INTER_POD_AFFINITY = 'InterPodAffinity';

/** kube-scheduler's reasons. */
export const InterPodAffinityReason = {
  Affinity: "node(s) didn't match pod affinity rules",
  AntiAffinity: "node(s) didn't match pod anti-affinity rules",
  ExistingAntiAffinity: "node(s) didn't satisfy existing pods anti-affinity rules",
} as const;

/** What the filter computes once per cycle (kube's preFilterState). */
export interface InterPodAffinityState {
  readonly terms: PodAffinityTerms | undefined;
  /** Domains holding pods that match all the incoming pod's required affinity terms. */
  readonly affinityCounts: TopologyCounts;
  /** Domains holding a pod that one of the incoming pod's anti-affinity terms selects. */
  readonly antiAffinityCounts: TopologyCounts;
  /** Domains holding a pod whose own required anti-affinity term selects the incoming pod. */
  readonly existingAntiAffinityCounts: TopologyCounts;
  /** Whether the incoming pod matches all its own required affinity terms. */
  readonly matchesOwnAffinity: boolean;
}

/**
 * Computes the cycle's counts (kube-scheduler's PreFilter) from every node, without the
 * tallies (the reference `cachedInterPodAffinityState` must equal). Existing pods' anti-affinity
 * visits only the pods listed in `podsWithRequiredAntiAffinity`; the incoming pod's terms
 * visit every pod only when it has required terms.
 */
export function interPodAffinityState(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext): InterPodAffinityState {
  const terms = parsePodAffinityTerms(pod);
  const affinityCounts: TopologyCounts = new Map();
  const antiAffinityCounts: TopologyCounts = new Map();
  const existingAntiAffinityCounts: TopologyCounts = new Map();
  const labelsOf = namespaceLabelsOf(ctx);
  // The usual case, once per pod over every node: an indexed loop that only looks at nodes
  // running pods with terms (iterator loops cost ~20 ns per node even when empty).
  for (let index = 0; index < nodeInfos.length; index += 1) {
    const nodeInfo = nodeInfos[index] as NodeInfo;
    const withTerms = nodeInfo.podsWithRequiredAntiAffinity;
    if (withTerms.length === 0) continue;
    for (const existing of withTerms) {
      for (const term of existing.requiredAntiAffinity) {
        if (termSelects(term, pod, labelsOf)) countDomain(existingAntiAffinityCounts, term.topologyKey, nodeInfo.node, 1);
      }
    }
  }
  const required = terms?.requiredAffinity ?? [];
  const anti = terms?.requiredAntiAffinity ?? [];
  if (required.length > 0 || anti.length > 0) {
    // Indexed loops: this visits every placed pod once per cycle.
    for (let index = 0; index < nodeInfos.length; index += 1) {
      const nodeInfo = nodeInfos[index] as NodeInfo;
      const pods = nodeInfo.pods;
      for (let podIndex = 0; podIndex < pods.length; podIndex += 1) {
        const existing = pods[podIndex] as Pod;
        if (required.length > 0 && selectedByAll(required, existing, labelsOf)) {
          for (let term = 0; term < required.length; term += 1) {
            countDomain(affinityCounts, (required[term] as AffinityTerm).topologyKey, nodeInfo.node, 1);
          }
        }
        for (let term = 0; term < anti.length; term += 1) {
          const antiTerm = anti[term] as AffinityTerm;
          if (termSelects(antiTerm, existing, labelsOf)) countDomain(antiAffinityCounts, antiTerm.topologyKey, nodeInfo.node, 1);
        }
      }
    }
  }
  const matchesOwnAffinity = required.length > 0 && selectedByAll(required, pod, labelsOf);
  return { terms, affinityCounts, antiAffinityCounts, existingAntiAffinityCounts, matchesOwnAffinity };
}

const tallyOf = createTallyStore();

/**
 * {@link interPodAffinityState} from tallies kept across cycles (see `counts-cache.ts`): the
 * same counts, but a cycle re-counts only the nodes whose NodeInfo changed since a pod with
 * the same terms (or, for existing pods' anti-affinity, the same namespace and labels) was
 * last scheduled. Terms with a namespaceSelector (whose matches depend on namespace labels)
 * are counted afresh, as the uncached computation does.
 */
export function cachedInterPodAffinityState(pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext): InterPodAffinityState {
  const terms = parsePodAffinityTerms(pod);
  const required = terms?.requiredAffinity ?? [];
  const anti = terms?.requiredAntiAffinity ?? [];
  if (!withoutNamespaceSelector(required) || !withoutNamespaceSelector(anti)) return interPodAffinityState(pod, nodeInfos, ctx);
  const labelsOf = namespaceLabelsOf(ctx);
  const changes = ctx.changes;
  const existingAntiAffinityCounts = tallyOf(`existing-anti\u0000${incomingPodKey(pod, labelsOf)}`).sync(nodeInfos, changes, (nodeInfo) => {
    const contributions: Contribution[] = [];
    for (const existing of nodeInfo.podsWithRequiredAntiAffinity) {
      for (const term of existing.requiredAntiAffinity) {
        if (termSelects(term, pod, labelsOf)) contributions.push({ topologyKey: term.topologyKey, amount: 1, calls: 1 });
      }
    }
    return contributions;
  });
  const affinityCounts: TopologyCounts =
    required.length === 0
      ? new Map()
      : tallyOf(`affinity\u0000${termsKey(required)}`).sync(nodeInfos, changes, (nodeInfo) => {
          let matching = 0;
          for (const existing of nodeInfo.pods) if (selectedByAll(required, existing, labelsOf)) matching += 1;
          return matching === 0 ? [] : required.map((term) => ({ topologyKey: term.topologyKey, amount: matching, calls: matching }));
        });
  const antiAffinityCounts: TopologyCounts =
    anti.length === 0
      ? new Map()
      : tallyOf(`anti\u0000${termsKey(anti)}`).sync(nodeInfos, changes, (nodeInfo) => {
          const contributions: Contribution[] = [];
          for (const term of anti) {
            let selected = 0;
            for (const existing of nodeInfo.pods) if (termSelects(term, existing, labelsOf)) selected += 1;
            if (selected > 0) contributions.push({ topologyKey: term.topologyKey, amount: selected, calls: selected });
          }
          return contributions;
        });
  const matchesOwnAffinity = required.length > 0 && selectedByAll(required, pod, labelsOf);
  return { terms, affinityCounts, antiAffinityCounts, existingAntiAffinityCounts, matchesOwnAffinity };
}

/** kube's `satisfyPodAffinity`, with the first-pod-of-a-group rule. */
function satisfiesAffinity(state: InterPodAffinityState, terms: readonly AffinityTerm[], node: Node): boolean {
  let podsExist = true;
  for (const term of terms) {
    const count = domainCount(state.affinityCounts, term.topologyKey, node);
    if (count === undefined) return false; // every topology key must be on the node
    if (count <= 0) podsExist = false;
  }
  if (podsExist) return true;
  return state.affinityCounts.size === 0 && state.matchesOwnAffinity;
}

/** The filter's verdict for `node` under the cycle's `state`. */
export function interPodAffinityVerdict(state: InterPodAffinityState, node: Node): FilterResult {
  const terms = state.terms;
  if (terms !== undefined) {
    if (terms.requiredAffinity.length > 0 && !satisfiesAffinity(state, terms.requiredAffinity, node)) {
      return unresolvable(InterPodAffinityReason.Affinity);
    }
    for (const term of terms.requiredAntiAffinity) {
      if ((domainCount(state.antiAffinityCounts, term.topologyKey, node) ?? 0) > 0) return unfit(InterPodAffinityReason.AntiAffinity);
    }
  }
  if (state.existingAntiAffinityCounts.size > 0) {
    for (const [topologyKey, values] of state.existingAntiAffinityCounts) {
      const value = topologyValue(node, topologyKey);
      if (value !== undefined && (values.get(value) ?? 0) > 0) return unfit(InterPodAffinityReason.ExistingAntiAffinity);
    }
  }
  return FIT;
}

export const interPodAffinityOfCycle = defineCycleValue('InterPodAffinity/state', cachedInterPodAffinityState);

/** Creates the InterPodAffinity filter and score. */
export function createInterPodAffinity(args?: InterPodAffinityArgs): FilterPlugin & ScorePlugin {
  const scoring = affinityScoring(args);
  return {
    name: INTER_POD_AFFINITY,
    // Node-local while the cycle has nothing to check (no required terms on the pod, no
    // existing term selects it): then every node passes, whatever the other nodes hold;
    // and while no preferred or symmetric term gives any domain a score.
    filterNodeLocal: (ctx) => {
      const state = ctx.get(interPodAffinityOfCycle);
      const required = (state.terms?.requiredAffinity.length ?? 0) + (state.terms?.requiredAntiAffinity.length ?? 0);
      return required === 0 && state.existingAntiAffinityCounts.size === 0;
    },
    nodeLocal: scoring.isZero,
    preScoreSkip: scoring.isZero,
    filter(_pod, nodeInfo, ctx) {
      return interPodAffinityVerdict(ctx.get(interPodAffinityOfCycle), nodeInfo.node);
    },
    score: scoring.score,
    normalize: scoring.normalize,
  };
}
