/** Topology domains (a topology key and one of its values) and counts per domain, shared by InterPodAffinity's filter and score. */
import { type Labels, type NamespaceLabelsOf, namespaceOf } from '../../affinity.ts';
import type { SchedulingContext } from '../../framework.ts';
import type { Node } from '../../../../schemas/index.ts';

/** The well-known per-node topology key. */
export const HOSTNAME_TOPOLOGY_KEY = 'kubernetes.io/hostname';

/** Topology key → value → count. */
export type TopologyCounts = Map<string, Map<string, number>>;

/** The value of `node`'s `topologyKey` label; the node name stands in for a missing hostname label. */
export function topologyValue(node: Node, topologyKey: string): string | undefined {
  const value = node.metadata.labels?.[topologyKey];
  if (value !== undefined) return value;
  return topologyKey === HOSTNAME_TOPOLOGY_KEY ? node.metadata.name : undefined;
}

/** Adds `amount` to the count of `node`'s domain for `topologyKey` (nothing when the node lacks the key). */
export function countDomain(counts: TopologyCounts, topologyKey: string, node: Node, amount: number): void {
  const value = topologyValue(node, topologyKey);
  if (value === undefined) return;
  let values = counts.get(topologyKey);
  if (values === undefined) {
    values = new Map();
    counts.set(topologyKey, values);
  }
  values.set(value, (values.get(value) ?? 0) + amount);
}

/** The count of `node`'s domain for `topologyKey`; undefined when the node lacks the key. */
export function domainCount(counts: TopologyCounts, topologyKey: string, node: Node): number | undefined {
  const value = topologyValue(node, topologyKey);
  if (value === undefined) return undefined;
  return counts.get(topologyKey)?.get(value) ?? 0;
}

/** Namespace labels looked up at most once per namespace per cycle. */
export function namespaceLabelsOf(ctx: SchedulingContext): NamespaceLabelsOf {
  const known = new Map<string, Labels>();
  return (pod) => {
    const namespace = namespaceOf(pod);
    let labels = known.get(namespace);
    if (labels === undefined) {
      labels = ctx.cluster.namespaceLabels(namespace);
      known.set(namespace, labels);
    }
    return labels;
  };
}

