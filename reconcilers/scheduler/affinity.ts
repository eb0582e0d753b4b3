/**
 * Pod (anti-)affinity terms, parsed once per pod (as kube-scheduler's PodInfo keeps them)
 * so that matching a term against many pods does not re-parse selectors.
 */
import {
  labelSelectorToRequirements,
  type LabelRequirement,
  matchesLabels,
} from '../../projections/selectors.ts';
import type { LabelSelector, Pod, PodAffinityTerm, WeightedPodAffinityTerm } from '../../schemas/index.ts';

/** The label every namespace carries with its own name (the apiserver sets it). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Labels of a namespace, as a namespaceSelector sees them. */
export type Labels = Readonly<Record<string, string>>;

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

/** A preferred term with its weight (1..100). */
export interface WeightedAffinityTerm extends AffinityTerm {
  readonly weight: number;
}

/** Every (anti-)affinity term of a pod, parsed. */
export interface PodAffinityTerms {
  readonly requiredAffinity: readonly AffinityTerm[];
  readonly requiredAntiAffinity: readonly AffinityTerm[];
  readonly preferredAffinity: readonly WeightedAffinityTerm[];
  readonly preferredAntiAffinity: readonly WeightedAffinityTerm[];
}

/** A placed pod with its parsed terms (kube-scheduler's `PodsWithAffinity` entries). */
export interface PodWithAffinity extends PodAffinityTerms {
  readonly pod: Pod;
}

const NONE: readonly never[] = [];

/** The pod's required anti-affinity terms as written (`spec.affinity.podAntiAffinity.requiredDuringScheduling…`). */
export function requiredAntiAffinityTerms(pod: Pod): readonly PodAffinityTerm[] {
  return pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? NONE;
}

/** Parses every (anti-)affinity term of `pod`; undefined when it has none. */
export function parsePodAffinityTerms(pod: Pod): PodAffinityTerms | undefined {
  const affinity = pod.spec.affinity;
  if (affinity === undefined || affinity === null) return undefined;
  const podAffinity = affinity.podAffinity;
  const podAntiAffinity = affinity.podAntiAffinity;
  const requiredAffinity = (podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? NONE).map((term) => parseAffinityTerm(term, pod));
  const requiredAntiAffinity = (podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? NONE).map((term) => parseAffinityTerm(term, pod));
  const preferredAffinity = (podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? NONE).map((term) => parseWeighted(term, pod));
  const preferredAntiAffinity = (podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? NONE).map((term) => parseWeighted(term, pod));
  if (requiredAffinity.length + requiredAntiAffinity.length + preferredAffinity.length + preferredAntiAffinity.length === 0) return undefined;
  return { requiredAffinity, requiredAntiAffinity, preferredAffinity, preferredAntiAffinity };
}

function parseWeighted(term: WeightedPodAffinityTerm, owner: Pod): WeightedAffinityTerm {
  return { ...parseAffinityTerm(term.podAffinityTerm, owner), weight: term.weight };
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

/** Looks up the labels of a pod's namespace (only called for terms with a namespaceSelector). */
export type NamespaceLabelsOf = (pod: Pod) => Labels;

/**
 * Whether `term` selects `pod` (kube-scheduler's `AffinityTerm.Matches`): the pod's
 * namespace is listed or its labels (`namespaceLabels(pod)`) match the namespaceSelector,
 * and the pod's labels match the labelSelector.
 */
export function termSelects(term: AffinityTerm, pod: Pod, namespaceLabels: NamespaceLabelsOf): boolean {
  if (term.selector === undefined) return false;
  const inScope =
    term.namespaces.has(namespaceOf(pod)) || (term.namespaceSelector !== undefined && matchesLabels(term.namespaceSelector, namespaceLabels(pod)));
  return inScope && matchesLabels(term.selector, pod.metadata.labels);
}

/** Whether every term selects `pod` (kube's `podMatchesAllAffinityTerms`; false for no terms). */
export function selectedByAll(terms: readonly AffinityTerm[], pod: Pod, namespaceLabels: NamespaceLabelsOf): boolean {
  if (terms.length === 0) return false;
  for (const term of terms) if (!termSelects(term, pod, namespaceLabels)) return false;
  return true;
}

export function namespaceOf(pod: Pod): string {
  return pod.metadata.namespace ?? 'default';
}

function selectorRequirements(selector: LabelSelector | null | undefined): readonly LabelRequirement[] | undefined {
  if (selector === undefined || selector === null) return undefined;
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? parsed.requirements : undefined;
}
