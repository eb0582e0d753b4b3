/**
 * PodAntiAffinity: required pod anti-affinity (kube-scheduler's InterPodAffinity filter,
 * anti-affinity half). A node is excluded when
 * - a pod matching one of the incoming pod's terms already runs in the node's topology
 *   domain (same value of the term's `topologyKey` label), or
 * - a pod already running there has a term that matches the incoming pod (symmetry).
 *
 * Terms select pods by `labelSelector` (null selects none) in the term owner's namespace,
 * or in `namespaces`, or in the namespaces `namespaceSelector` selects (`{}` = all); a
 * namespace selector can only test the `kubernetes.io/metadata.name` label, as namespace
 * objects are not part of the scheduler's view. A node without the `kubernetes.io/hostname`
 * label is its own hostname domain (named by the node).
 *
 * The domains to exclude are computed once per cycle (O(pods) when the incoming pod has
 * terms, O(nodes + pods with terms) otherwise), so each node's check is a few set lookups.
 */
import { parseAffinityTerm, requiredAntiAffinityTerms, termSelects } from '../../affinity.ts';
import { defineCycleValue, FIT, type FilterPlugin, type FilterResult, type NodeInfo, unfit } from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';

/** This plugin's registry name. */
export const POD_ANTI_AFFINITY = 'PodAntiAffinity';

/** kube-scheduler's reasons: the incoming pod's terms, and existing pods' terms. */
export const AntiAffinityReason = {
  Incoming: "node(s) didn't match pod anti-affinity rules",
  Existing: "node(s) didn't satisfy existing pods anti-affinity rules",
} as const;

/** The well-known per-node topology key. */
export const HOSTNAME_TOPOLOGY_KEY = 'kubernetes.io/hostname';

/** The topology domains (values per topology key) the incoming pod may not join. */
export interface AntiAffinityState {
  /** Domains holding a pod that one of the incoming pod's terms selects. */
  readonly excludedByIncoming: ReadonlyMap<string, ReadonlySet<string>>;
  /** Domains holding a pod whose own term selects the incoming pod. */
  readonly excludedByExisting: ReadonlyMap<string, ReadonlySet<string>>;
}

/** The value of `node`'s `topologyKey` label; the node name stands in for a missing hostname label. */
export function topologyValue(node: Node, topologyKey: string): string | undefined {
  const value = node.metadata.labels?.[topologyKey];
  if (value !== undefined) return value;
  return topologyKey === HOSTNAME_TOPOLOGY_KEY ? node.metadata.name : undefined;
}

/**
 * Computes which topology domains `pod` must avoid, given every node's pods (kube-scheduler's
 * PreFilter). Only pods listed in `podsWithRequiredAntiAffinity` are visited for the
 * symmetric check, and no pod at all for the incoming one when the pod has no terms.
 */
export function antiAffinityState(pod: Pod, nodeInfos: readonly NodeInfo[]): AntiAffinityState {
  const excludedByIncoming = new Map<string, Set<string>>();
  const excludedByExisting = new Map<string, Set<string>>();
  const incomingTerms = requiredAntiAffinityTerms(pod).map((term) => parseAffinityTerm(term, pod));
  if (incomingTerms.length === 0) {
    // The usual case, once per pod over every node: an indexed loop that only looks at nodes
    // running pods with terms (the iterator loops below cost ~20 ns per node even when empty).
    for (let index = 0; index < nodeInfos.length; index += 1) {
      const nodeInfo = nodeInfos[index] as NodeInfo;
      const withTerms = nodeInfo.podsWithRequiredAntiAffinity;
      if (withTerms.length === 0) continue;
      for (const existing of withTerms) {
        for (const term of existing.terms) {
          if (termSelects(term, pod)) exclude(excludedByExisting, term.topologyKey, nodeInfo.node);
        }
      }
    }
    return { excludedByIncoming, excludedByExisting };
  }
  for (const nodeInfo of nodeInfos) {
    for (const term of incomingTerms) {
      if (nodeInfo.pods.some((existing) => termSelects(term, existing))) {
        exclude(excludedByIncoming, term.topologyKey, nodeInfo.node);
      }
    }
    for (const existing of nodeInfo.podsWithRequiredAntiAffinity) {
      for (const term of existing.terms) {
        if (termSelects(term, pod)) exclude(excludedByExisting, term.topologyKey, nodeInfo.node);
      }
    }
  }
  return { excludedByIncoming, excludedByExisting };
}

function exclude(excluded: Map<string, Set<string>>, topologyKey: string, node: Node): void {
  const value = topologyValue(node, topologyKey);
  if (value === undefined) return;
  const values = excluded.get(topologyKey);
  if (values === undefined) excluded.set(topologyKey, new Set([value]));
  else values.add(value);
}

/** Whether `node` lies in none of the domains `state` excludes; the incoming pod's terms are reported first. */
export function antiAffinityVerdict(state: AntiAffinityState, node: Node): FilterResult {
  if (inExcludedDomain(state.excludedByIncoming, node)) return unfit(AntiAffinityReason.Incoming);
  if (inExcludedDomain(state.excludedByExisting, node)) return unfit(AntiAffinityReason.Existing);
  return FIT;
}

function inExcludedDomain(excluded: ReadonlyMap<string, ReadonlySet<string>>, node: Node): boolean {
  if (excluded.size === 0) return false;
  for (const [topologyKey, values] of excluded) {
    const value = topologyValue(node, topologyKey);
    if (value !== undefined && values.has(value)) return true;
  }
  return false;
}

const antiAffinityOfCycle = defineCycleValue('PodAntiAffinity/state', antiAffinityState);

/** Creates the PodAntiAffinity filter. */
export function createPodAntiAffinity(): FilterPlugin {
  return {
    name: POD_ANTI_AFFINITY,
    // Node-local while the cycle excludes no domain at all (no pod has terms that matter
    // here): then every node passes, whatever the other nodes hold.
    nodeLocal: (ctx) => {
      const state = ctx.get(antiAffinityOfCycle);
      return state.excludedByIncoming.size === 0 && state.excludedByExisting.size === 0;
    },
    filter(_pod, nodeInfo, ctx) {
      return antiAffinityVerdict(ctx.get(antiAffinityOfCycle), nodeInfo.node);
    },
  };
}
