/**
 * DefaultPreemption (kube-scheduler 1.32's PostFilter plugin and `preemption.Evaluator`): a
 * pod that fits nowhere may evict pods of lower priority. Candidates are the nodes whose
 * rejection removing pods could resolve; on each the fewest, least important victims are
 * chosen (see `victims.ts`); the node is picked by kube's `pickOneNodeForPreemption`. The
 * caller marks the victims (DisruptionTarget), deletes them gracefully and nominates the
 * pod to the node; the pod binds in a later cycle, once they are gone.
 *
 * Deterministic where kube is not: nodes are tried from the first (kube starts at a random
 * offset and checks them in parallel), and ties go to the first node in name order.
 */
import type { Pod, PodDisruptionBudget } from '../../../../schemas/index.ts';
import type { FilteredNode } from '../../../../schemas/index.ts';
import type { NodeInfo, PostFilterHandle, PostFilterPlugin, PostFilterResult, UnschedulableVerdicts } from '../../framework.ts';
import { podPriority } from '../../nominated.ts';
import { unschedulableMessage } from '../../scheduler.ts';
import { podStartTime, selectVictimsOnNode } from './victims.ts';
import type { DefaultPreemptionArgs } from '../../config/types.ts';

export { compareImportance, filterWithNominated, NO_VICTIMS_REASON, podStartTime, selectVictimsOnNode, splitByBudgetViolation } from './victims.ts';
export { bindingPreemption } from './result.ts';

/** This plugin's registry name (kube-scheduler's). */
export const DEFAULT_PREEMPTION = 'DefaultPreemption';

/** kube's reasons a pod may not preempt. */
export const NOT_ELIGIBLE = {
  PolicyNever: 'not eligible due to preemptionPolicy=Never.',
  TerminatingOnNominatedNode: 'not eligible due to a terminating pod on the nominated node.',
} as const;

/** kube's status of the nodes preemption did not try (their rejection removing pods cannot resolve). */
export const NOT_HELPFUL_REASON = 'Preemption is not helpful for scheduling';

/** kube's DefaultPreemptionArgs defaults: try at least this share of the candidate nodes… */
export const MIN_CANDIDATE_NODES_PERCENTAGE = 10;
/** …and at least this many. */
export const MIN_CANDIDATE_NODES_ABSOLUTE = 100;

/** A node preemption could use, with its victims most important first. */
export interface Candidate {
  readonly node: string;
  readonly victims: readonly Pod[];
  readonly pdbViolations: number;
}

/** Whether a victim is being deleted because the scheduler preempted it (kube's `podTerminatingByPreemption`). */
export function podTerminatingByPreemption(pod: Pod): boolean {
  if (!pod.metadata.deletionTimestamp) return false;
  const condition = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
  return condition?.status === 'True' && condition.reason === 'PreemptionByScheduler';
}

/**
 * kube's `PodEligibleToPreemptOthers`: not with `preemptionPolicy: Never`, nor while a
 * lower-priority pod preempted for it is still terminating on its nominated node (unless
 * that node now rejects it for a reason removing pods cannot resolve).
 */
export function eligibleToPreempt(pod: Pod, verdicts: UnschedulableVerdicts, nodeInfos: readonly NodeInfo[]): string | undefined {
  if (pod.spec.preemptionPolicy === 'Never') return NOT_ELIGIBLE.PolicyNever;
  const nominated = pod.status?.nominatedNodeName;
  if (!nominated || verdicts.unresolvable.has(nominated)) return undefined;
  const nodeInfo = nodeInfos.find((info) => info.node.metadata.name === nominated);
  const priority = podPriority(pod);
  if (nodeInfo?.pods.some((placed) => podPriority(placed) < priority && podTerminatingByPreemption(placed))) return NOT_ELIGIBLE.TerminatingOnNominatedNode;
  return undefined;
}

/**
 * kube's `calculateNumCandidates`: how many candidates the dry run looks for among `nodes`
 * potential nodes (DefaultPreemptionArgs' percentage of them, at least its absolute number).
 */
export function candidatesWanted(nodes: number, args: DefaultPreemptionArgs = DEFAULT_PREEMPTION_ARGS): number {
  const share = Math.floor((nodes * args.minCandidateNodesPercentage) / 100);
  return Math.min(Math.max(share, args.minCandidateNodesAbsolute), nodes);
}

/** kube's default DefaultPreemptionArgs. */
export const DEFAULT_PREEMPTION_ARGS: DefaultPreemptionArgs = {
  minCandidateNodesPercentage: MIN_CANDIDATE_NODES_PERCENTAGE,
  minCandidateNodesAbsolute: MIN_CANDIDATE_NODES_ABSOLUTE,
};

/**
 * kube's `pickOneNodeForPreemption`: fewest budget violations, then the lowest
 * highest-priority victim, the smallest sum of priorities, the fewest victims, the latest
 * start among the highest-priority victims, then the first candidate.
 */
export function pickOneNodeForPreemption(candidates: readonly Candidate[], now: number): Candidate | undefined {
  const criteria: ((candidate: Candidate) => number)[] = [
    (candidate) => -candidate.pdbViolations,
    (candidate) => -podPriority(candidate.victims[0] as Pod),
    // Each priority is shifted by 2^31 so that negative ones still add up (kube's MaxInt32+1).
    (candidate) => -candidate.victims.reduce((sum, victim) => sum + podPriority(victim) + 2 ** 31, 0),
    (candidate) => -candidate.victims.length,
    (candidate) => earliestStartOfMostImportant(candidate.victims, now),
  ];
  let remaining = [...candidates];
  for (const score of criteria) {
    if (remaining.length <= 1) break;
    let best = Number.NEGATIVE_INFINITY;
    let kept: Candidate[] = [];
    for (const candidate of remaining) {
      const value = score(candidate);
      if (value > best) {
        best = value;
        kept = [candidate];
      } else if (value === best) kept.push(candidate);
    }
    remaining = kept;
  }
  return remaining[0];
}

/** kube's `GetEarliestPodStartTime`: the earliest start among the victims of the highest priority. */
function earliestStartOfMostImportant(victims: readonly Pod[], now: number): number {
  let highest = Number.NEGATIVE_INFINITY;
  let earliest = Number.POSITIVE_INFINITY;
  for (const victim of victims) {
    const priority = podPriority(victim);
    const start = podStartTime(victim, now);
    if (priority > highest) {
      highest = priority;
      earliest = start;
    } else if (priority === highest && start < earliest) earliest = start;
  }
  return earliest;
}

/** The namespaces of a NodeInfo's pods, kept while the NodeInfo lives (NodeInfos are replaced, never changed). */
const namespacesByNodeInfo = new WeakMap<NodeInfo, readonly string[]>();

function namespacesOf(nodeInfo: NodeInfo): readonly string[] {
  let namespaces = namespacesByNodeInfo.get(nodeInfo);
  if (namespaces === undefined) {
    namespaces = [...new Set(nodeInfo.pods.map((pod) => pod.metadata.namespace ?? 'default'))];
    namespacesByNodeInfo.set(nodeInfo, namespaces);
  }
  return namespaces;
}

/** The budgets of the namespaces of the pods on the potential nodes (all kube's preemption can match). */
function budgetsFor(nodeInfos: readonly NodeInfo[], handle: PostFilterHandle): PodDisruptionBudget[] {
  const namespaces = new Set<string>();
  for (const nodeInfo of nodeInfos) for (const namespace of namespacesOf(nodeInfo)) namespaces.add(namespace);
  return [...namespaces].sort().flatMap((namespace) => handle.cluster.list('PodDisruptionBudget', namespace) as PodDisruptionBudget[]);
}

/**
 * kube's `Evaluator.Preempt` without its API calls: whether `pod` may preempt, the
 * candidates of a dry run over the nodes whose rejection removing pods could resolve (in
 * node order, until enough are found), and the one picked. The message of an unsuccessful
 * attempt starts with "preemption: ", as kube's PostFilter status.
 */
export function preempt(pod: Pod, verdicts: UnschedulableVerdicts, handle: PostFilterHandle, args: DefaultPreemptionArgs = DEFAULT_PREEMPTION_ARGS): PostFilterResult {
  const notEligible = eligibleToPreempt(pod, verdicts, handle.nodeInfos);
  if (notEligible !== undefined) return { type: 'unschedulable', message: `preemption: ${notEligible}`, clearNomination: false };
  const rejected = new Set(verdicts.filtered.map((entry) => entry.node));
  const potential: number[] = [];
  handle.nodeInfos.forEach((nodeInfo, index) => {
    const name = nodeInfo.node.metadata.name;
    if (rejected.has(name) && !verdicts.unresolvable.has(name)) potential.push(index);
  });
  const wanted = candidatesWanted(potential.length, args);
  const budgets = potential.length === 0 ? [] : budgetsFor(potential.map((index) => handle.nodeInfos[index] as NodeInfo), handle);
  const nonViolating: Candidate[] = [];
  const violating: Candidate[] = [];
  const statuses: FilteredNode[] = [];
  for (const index of potential) {
    const name = (handle.nodeInfos[index] as NodeInfo).node.metadata.name;
    const chosen = selectVictimsOnNode(pod, index, handle, budgets);
    if (chosen.type === 'unfit') {
      statuses.push({ node: name, reasons: [...chosen.reasons] });
      continue;
    }
    (chosen.pdbViolations === 0 ? nonViolating : violating).push({ node: name, victims: chosen.victims, pdbViolations: chosen.pdbViolations });
    if (nonViolating.length > 0 && nonViolating.length + violating.length >= wanted) break;
  }
  const best = pickOneNodeForPreemption([...nonViolating, ...violating], handle.now);
  if (best === undefined) {
    const tried = new Set(statuses.map((status) => status.node));
    for (const nodeInfo of handle.nodeInfos) {
      const name = nodeInfo.node.metadata.name;
      if (!tried.has(name)) statuses.push({ node: name, reasons: [NOT_HELPFUL_REASON] });
    }
    return { type: 'unschedulable', message: `preemption: ${unschedulableMessage(statuses, handle.nodeInfos.length)}`, clearNomination: true };
  }
  return { type: 'nominated', node: best.node, victims: best.victims, pdbViolations: best.pdbViolations };
}

/** Creates the DefaultPreemption PostFilter plugin (kube's default candidate counts without `args`). */
export function createDefaultPreemption(args: DefaultPreemptionArgs = DEFAULT_PREEMPTION_ARGS): PostFilterPlugin {
  return { name: DEFAULT_PREEMPTION, postFilter: (pod, verdicts, handle) => preempt(pod, verdicts, handle, args) };
}
