/** Cache keys for InterPodAffinity's tallies: what matching a term reads of the term and of a pod. */
import { type AffinityTerm, type NamespaceLabelsOf, namespaceOf } from '../../affinity.ts';
import type { Pod } from '../../../../schemas/index.ts';

/** A key for a term list: what `termSelects` reads of each term. */
export function termsKey(terms: readonly AffinityTerm[]): string {
  return JSON.stringify(terms.map((term) => [term.topologyKey, term.selector ?? null, [...term.namespaces].sort(), term.namespaceSelector ?? null]));
}

/** Whether every term names its namespaces (no namespaceSelector): then whether it selects a pod depends on that pod alone. */
export function withoutNamespaceSelector(terms: readonly AffinityTerm[]): boolean {
  return terms.every((term) => term.namespaceSelector === undefined);
}

/** A key for what an existing pod's term reads of the incoming pod: its namespace, labels and namespace labels. */
export function incomingPodKey(pod: Pod, labelsOf: NamespaceLabelsOf): string {
  return JSON.stringify([namespaceOf(pod), pod.metadata.labels ?? null, labelsOf(pod)]);
}
