/**
 * NodeAffinity: a pod runs only on nodes whose labels match its `spec.nodeSelector` and,
 * if set, its required node affinity (`nodeSelectorTerms` ORed; within a term all
 * `matchExpressions` and `matchFields` ANDed; operators In, NotIn, Exists, DoesNotExist,
 * Gt, Lt). A term that is empty or malformed matches no node, as in Kubernetes.
 *
 * As a score plugin it ranks nodes by the pod's preferred terms
 * (`preferredDuringSchedulingIgnoredDuringExecution`): a node scores the sum of the weights
 * of the terms it matches, scaled so the best feasible node has 100 (kube's
 * `DefaultNormalizeScore`).
 *
 * NodeAffinityArgs.addedAffinity applies to every pod of the profile besides its own: its
 * required terms must also match ("node(s) didn't match scheduler-enforced node affinity"),
 * its preferred terms add to the score.
 */
import { type LabelRequirement, matchesLabels } from '../../../../projections/selectors.ts';
import { defaultNormalizeScore, defineCycleValue, FIT, type FilterPlugin, type SchedulingContext, type ScorePlugin, unresolvable } from '../../framework.ts';
import type { Node, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, Pod } from '../../../../schemas/index.ts';
import type { NodeAffinityArgs } from '../../config/types.ts';

/** This plugin's registry name. */
export const NODE_AFFINITY = 'NodeAffinity';

/** kube-scheduler's reason for a node outside the pod's node selector or required affinity. */
export const NODE_AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector";

/** kube-scheduler's reason for a node outside the profile's addedAffinity. */
export const ENFORCED_NODE_AFFINITY_REASON = "node(s) didn't match scheduler-enforced node affinity";

/** The only field `matchFields` may test. */
const NODE_NAME_FIELD = 'metadata.name';

interface CompiledTerm {
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly LabelRequirement[];
}

/**
 * Compiles the pod's node selector and required node affinity once into a predicate over
 * nodes, so checking each of many nodes does not re-read the pod.
 */
export function nodeAffinityMatcher(pod: Pod): (node: Node) => boolean {
  const selector: LabelRequirement[] = Object.entries(pod.spec.nodeSelector ?? {}).map(([key, value]) => ({
    type: 'equals',
    key,
    value,
  }));
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required === undefined || required === null) {
    return selector.length === 0 ? () => true : (node) => matchesLabels(selector, node.metadata.labels);
  }
  const terms = required.nodeSelectorTerms.map(compileTerm).filter((term) => term !== undefined);
  return (node) => matchesLabels(selector, node.metadata.labels) && terms.some((term) => termMatches(term, node));
}

/** A preferred term, compiled, with its weight; an empty or malformed term matches no node. */
interface WeightedTerm {
  readonly term: CompiledTerm | undefined;
  readonly weight: number;
}

function termMatches(term: CompiledTerm, node: Node): boolean {
  return matchesLabels(term.labels, node.metadata.labels) && matchesLabels(term.fields, { [NODE_NAME_FIELD]: node.metadata.name });
}

/** Compiles the pod's preferred node affinity terms (weight-0 terms are left out, as kube does). */
export function preferredNodeAffinityTerms(pod: Pod): readonly WeightedTerm[] {
  const preferred = pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  return preferred.filter((entry) => entry.weight !== 0).map((entry) => ({ term: compileTerm(entry.preference), weight: entry.weight }));
}

/** The raw score of `node`: the sum of the weights of the preferred terms it matches. */
export function preferredNodeAffinityScore(terms: readonly WeightedTerm[], node: Node): number {
  let score = 0;
  for (const { term, weight } of terms) if (term !== undefined && termMatches(term, node)) score += weight;
  return score;
}

function compileTerm(term: NodeSelectorTerm): CompiledTerm | undefined {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return undefined;
  if (fields.some((field) => field.key !== NODE_NAME_FIELD)) return undefined;
  const compiledLabels = expressions.map(compileRequirement);
  const compiledFields = fields.map(compileRequirement);
  if (compiledLabels.includes(undefined) || compiledFields.includes(undefined)) return undefined;
  return {
    labels: compiledLabels.filter((requirement) => requirement !== undefined),
    fields: compiledFields.filter((requirement) => requirement !== undefined),
  };
}

const INTEGER = /^[+-]?\d+$/;

function compileRequirement(requirement: NodeSelectorRequirement): LabelRequirement | undefined {
  const { key } = requirement;
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return values.length > 0 ? { type: 'in', key, values } : undefined;
    case 'NotIn':
      return values.length > 0 ? { type: 'notIn', key, values } : undefined;
    case 'Exists':
      return values.length === 0 ? { type: 'exists', key } : undefined;
    case 'DoesNotExist':
      return values.length === 0 ? { type: 'doesNotExist', key } : undefined;
    case 'Gt':
    case 'Lt': {
      const [value] = values;
      if (values.length !== 1 || value === undefined || !INTEGER.test(value)) return undefined;
      return { type: requirement.operator === 'Gt' ? 'greaterThan' : 'lessThan', key, value: Number(value) };
    }
    default:
      return undefined;
  }
}

const podNodeAffinity = defineCycleValue('NodeAffinity/matcher', (pod) => nodeAffinityMatcher(pod));
const podPreferredTerms = defineCycleValue('NodeAffinity/preferred', (pod) => preferredNodeAffinityTerms(pod));

/** A pod that carries only `affinity`, to compile a profile's addedAffinity as a pod's. */
const podWithAffinity = (affinity: NodeAffinity): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: '' }, spec: { containers: [], affinity: { nodeAffinity: affinity } } }) as unknown as Pod;

/** Creates the NodeAffinity filter and score, with the profile's addedAffinity from `args`. */
export function createNodeAffinity(args?: NodeAffinityArgs): FilterPlugin & ScorePlugin {
  const added = args?.addedAffinity;
  if (added === undefined) return podAffinityOnly();
  const addedPod = podWithAffinity(added);
  const addedMatcher = nodeAffinityMatcher(addedPod);
  const addedTerms = preferredNodeAffinityTerms(addedPod);
  const scoresZero = (ctx: SchedulingContext): boolean => addedTerms.length === 0 && ctx.get(podPreferredTerms).length === 0;
  return {
    name: NODE_AFFINITY,
    filterNodeLocal: true,
    nodeLocal: scoresZero,
    preScoreSkip: scoresZero,
    filter(_pod, nodeInfo, ctx) {
      if (!addedMatcher(nodeInfo.node)) return unresolvable(ENFORCED_NODE_AFFINITY_REASON);
      return ctx.get(podNodeAffinity)(nodeInfo.node) ? FIT : unresolvable(NODE_AFFINITY_REASON);
    },
    score(_pod, nodeInfo, ctx) {
      return preferredNodeAffinityScore(ctx.get(podPreferredTerms), nodeInfo.node) + preferredNodeAffinityScore(addedTerms, nodeInfo.node);
    },
    normalize(scores) {
      defaultNormalizeScore(scores, false);
    },
  };
}

/** NodeAffinity without addedAffinity: the pod's own selector and terms. */
function podAffinityOnly(): FilterPlugin & ScorePlugin {
  return {
    name: NODE_AFFINITY,
    // The filter reads the node alone; without preferred terms every node scores 0.
    filterNodeLocal: true,
    nodeLocal: (ctx) => ctx.get(podPreferredTerms).length === 0,
    preScoreSkip: (ctx) => ctx.get(podPreferredTerms).length === 0,
    filter(_pod, nodeInfo, ctx) {
      return ctx.get(podNodeAffinity)(nodeInfo.node) ? FIT : unresolvable(NODE_AFFINITY_REASON);
    },
    score(_pod, nodeInfo, ctx) {
      const terms = ctx.get(podPreferredTerms);
      return terms.length === 0 ? 0 : preferredNodeAffinityScore(terms, nodeInfo.node);
    },
    normalize(scores) {
      defaultNormalizeScore(scores, false);
    },
  };
}
