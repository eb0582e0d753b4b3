/**
 * DefaultPreemption's choice of victims on one node (kube-scheduler 1.32's
 * `SelectVictimsOnNode`): remove every pod of lower priority, check that the preemptor
 * fits, then reprieve as many as possible, most important first, the ones whose
 * PodDisruptionBudget would be violated before the others.
 */
import { labelSelectorToRequirements, matchesLabels } from '../../../../projections/selectors.ts';
import type { Pod, PodDisruptionBudget } from '../../../../schemas/index.ts';
import { assumePod, type FilterResult, type NodeInfo, nodeInfoFromPlaced, placedPod, type PostFilterHandle } from '../../framework.ts';
import { nominatedAhead, podPriority, withPods } from '../../nominated.ts';

/** kube's status of a node without a pod of lower priority than the preemptor. */
export const NO_VICTIMS_REASON = 'No preemption victims found for incoming pod';

/** When a pod started (epoch ms): `status.startTime`, else `now` (kube's `GetPodStartTime` takes the current time). */
export function podStartTime(pod: Pod, now: number): number {
  const started = pod.status?.startTime;
  const parsed = started ? Date.parse(started) : Number.NaN;
  return Number.isNaN(parsed) ? now : parsed;
}

/** kube's `MoreImportantPod`: higher priority first, then the one that started earlier. */
export function compareImportance(left: Pod, right: Pod, now: number): number {
  const priority = podPriority(right) - podPriority(left);
  if (priority !== 0) return priority;
  return podStartTime(left, now) - podStartTime(right, now);
}

/**
 * kube's `filterPodsWithPDBViolation`: splits `pods` (order kept) into those whose eviction
 * would take a matching budget below zero disruptions allowed, counting down each budget
 * as its pods are taken, and the others. A pod already in a budget's `disruptedPods` does
 * not count against it; a budget with an empty or invalid selector matches nothing.
 */
export function splitByBudgetViolation(pods: readonly Pod[], budgets: readonly PodDisruptionBudget[]): { violating: Pod[]; nonViolating: Pod[] } {
  const parsed = budgets.map((budget) => {
    const selector = budget.spec?.selector;
    const requirements = selector ? labelSelectorToRequirements(selector) : undefined;
    return {
      budget,
      requirements: requirements?.type === 'ok' && requirements.requirements.length > 0 ? requirements.requirements : undefined,
      allowed: budget.status?.disruptionsAllowed ?? 0,
    };
  });
  const violating: Pod[] = [];
  const nonViolating: Pod[] = [];
  for (const pod of pods) {
    let violated = false;
    const labels = pod.metadata.labels ?? {};
    if (Object.keys(labels).length > 0) {
      for (const entry of parsed) {
        if ((entry.budget.metadata.namespace ?? 'default') !== (pod.metadata.namespace ?? 'default')) continue;
        if (entry.requirements === undefined || !matchesLabels(entry.requirements, labels)) continue;
        if (Object.hasOwn(entry.budget.status?.disruptedPods ?? {}, pod.metadata.name)) continue;
        entry.allowed -= 1;
        if (entry.allowed < 0) violated = true;
      }
    }
    (violated ? violating : nonViolating).push(pod);
  }
  return { violating, nonViolating };
}

/**
 * kube's `RunFilterPluginsWithNominatedPods`: the profile's filters with the pods nominated
 * to the node that the preemptor must leave room for counted on it, and, when those pass
 * and there were any, once more without them (both must pass).
 */
export function filterWithNominated(pod: Pod, index: number, nodeInfo: NodeInfo, handle: PostFilterHandle): FilterResult {
  const ahead = nominatedAhead(pod, handle.nominatedPods.get(nodeInfo.node.metadata.name));
  const first = handle.filter(index, withPods(nodeInfo, ahead));
  if (ahead.length === 0 || first.type === 'unfit') return first;
  return handle.filter(index, nodeInfo);
}

/** `nodeInfo` without any pod. */
function withoutPods(nodeInfo: NodeInfo): NodeInfo {
  return nodeInfoFromPlaced(nodeInfo.node, [], nodeInfo.allocatable);
}

/** `nodeInfo` without `pods` (some of its pods), rebuilt once (kube's `RemovePod` for each). */
function removePods(nodeInfo: NodeInfo, pods: readonly Pod[]): NodeInfo {
  const removed = new Set(pods);
  return nodeInfoFromPlaced(nodeInfo.node, nodeInfo.pods.filter((placed) => !removed.has(placed)).map(placedPod), nodeInfo.allocatable);
}

/** The victims chosen on one node, most important first, and how many of them violate a budget; or why the node cannot help. */
export type NodeVictims =
  | { readonly type: 'victims'; readonly victims: readonly Pod[]; readonly pdbViolations: number }
  | { readonly type: 'unfit'; readonly reasons: readonly string[] };

/**
 * The fewest victims on the node at `index` that make room for `pod`: all lower-priority
 * pods removed, then each reprieved (added back) while the pod still fits, budget-violating
 * ones first, each group most important first. `budgets` are those of the cluster.
 */
export function selectVictimsOnNode(pod: Pod, index: number, handle: PostFilterHandle, budgets: readonly PodDisruptionBudget[]): NodeVictims {
  const original = handle.nodeInfos[index] as NodeInfo;
  const priority = podPriority(pod);
  const potential = original.pods.filter((placed) => podPriority(placed) < priority);
  if (potential.length === 0) return { type: 'unfit', reasons: [NO_VICTIMS_REASON] };
  // Every lower-priority pod removed at once (the same NodeInfo as removing them one by one).
  let nodeInfo = potential.length === original.pods.length ? withoutPods(original) : removePods(original, potential);
  const fits = filterWithNominated(pod, index, nodeInfo, handle);
  if (fits.type === 'unfit') return { type: 'unfit', reasons: fits.reasons };
  // Stable: equally important pods keep the node's (key) order, so the choice is deterministic.
  const byImportance = [...potential].sort((left, right) => compareImportance(left, right, handle.now));
  const { violating, nonViolating } = splitByBudgetViolation(byImportance, budgets);
  const victims: Pod[] = [];
  let pdbViolations = 0;
  const reprieve = (candidate: Pod): boolean => {
    const withCandidate = assumePod(nodeInfo, candidate);
    if (filterWithNominated(pod, index, withCandidate, handle).type === 'fit') {
      nodeInfo = withCandidate;
      return true;
    }
    victims.push(candidate);
    return false;
  };
  for (const candidate of violating) if (!reprieve(candidate)) pdbViolations += 1;
  for (const candidate of nonViolating) reprieve(candidate);
  if (violating.length > 0 && nonViolating.length > 0) victims.sort((left, right) => compareImportance(left, right, handle.now));
  return { type: 'victims', victims, pdbViolations };
}
