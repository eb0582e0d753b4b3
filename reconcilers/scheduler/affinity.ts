/**
 * Required pod (anti-)affinity terms, parsed once per pod (as kube-scheduler's PodInfo
 * keeps them) so that matching a term against many pods does not re-parse selectors.
 */
import {
  labelSelectorToRequirements,
  type LabelRequirement,
  matchesLabels,
} from '../../projections/selectors.ts';
import type { LabelSelector, Pod, PodAffinityTerm } from '../../schemas/index.ts';

/** The label every namespace carries with its own name; the only one a namespaceSelector can test here. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * A parsed term: it selects the pods whose labels match `selector`, in `namespaces` or in
 * a namespace `namespaceSelector` matches, and applies per value of `topologyKey`.
 */
export interface AffinityTerm {
  readonly topologyKey: string;
  /** Undefined when the term selects no pod (a null or malformed labelSelector). */
  readonly selector: readonly LabelRequirement[] | undefined;
  readonly namespaces: ReadonlySet<string>;
  /** Undefined without a (valid) namespaceSelector; `[]` (from `{}`) selects every namespace. */
  readonly namespaceSelector: readonly LabelRequirement[] | undefined;
}

/** The pod's required anti-affinity terms as written (`spec.affinity.podAntiAffinity.requiredDuringScheduling…`). */
export function requiredAntiAffinityTerms(pod: Pod): readonly PodAffinityTerm[] {
  return pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
}

/**
 * Parses `term` as written in `owner`'s spec: with neither `namespaces` nor
 * `namespaceSelector` it applies to the owner's namespace (Kubernetes semantics).
 */
export function parseAffinityTerm(term: PodAffinityTerm, owner: Pod): AffinityTerm {
  const namespaces = new Set(term.namespaces ?? []);
  const namespaceSelector = selectorRequirements(term.namespaceSelector);
  if (namespaces.size === 0 && (term.namespaceSelector === undefined || term.namespaceSelector === null)) {
    namespaces.add(namespaceOf(owner));
  }
  return { topologyKey: term.topologyKey, selector: selectorRequirements(term.labelSelector), namespaces, namespaceSelector };
}

/** Whether `term` selects `pod`. */
export function termSelects(term: AffinityTerm, pod: Pod): boolean {
  if (term.selector === undefined) return false;
  const namespace = namespaceOf(pod);
  const inScope =
    term.namespaces.has(namespace) ||
    (term.namespaceSelector !== undefined && matchesLabels(term.namespaceSelector, { [NAMESPACE_NAME_LABEL]: namespace }));
  return inScope && matchesLabels(term.selector, pod.metadata.labels);
}

function namespaceOf(pod: Pod): string {
  return pod.metadata.namespace ?? 'default';
}

function selectorRequirements(selector: LabelSelector | null | undefined): readonly LabelRequirement[] | undefined {
  if (selector === undefined || selector === null) return undefined;
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? parsed.requirements : undefined;
}
