/**
 * Running the profile's PostFilter plugins (kube-scheduler's `RunPostFilterPlugins`) for a
 * pod no node fits, and the handle they use to re-run the filters on a node with other
 * pods on it (preemption's dry run).
 */
import type { Pod } from '../../schemas/index.ts';
import {
  type ClusterLister,
  createSchedulingContext,
  type FilterResult,
  type NodeInfo,
  type PostFilterHandle,
  type PostFilterResult,
  type Profile,
  type UnschedulableVerdicts,
} from './framework.ts';
import { filterLocality, holds } from './round-scheduler.ts';
import { runFilters } from './scheduler.ts';

/**
 * A handle for `pod`'s PostFilter plugins over `nodeInfos`. When every filter is node-local
 * this cycle, a node with other pods is judged in the cycle of the whole cluster; otherwise
 * in a cycle whose NodeInfos have that node replaced (kube's PreFilter AddPod/RemovePod).
 */
export function createPostFilterHandle(
  pod: Pod,
  nodeInfos: readonly NodeInfo[],
  profile: Profile,
  cluster: ClusterLister,
  nominatedPods: ReadonlyMap<string, readonly Pod[]>,
  now: number,
): PostFilterHandle {
  const cycle = createSchedulingContext(pod, nodeInfos, cluster);
  const local = profile.filters.every((plugin) => holds(filterLocality(plugin), cycle));
  return {
    nodeInfos,
    cluster,
    nominatedPods,
    now,
    filter(index: number, nodeInfo: NodeInfo): FilterResult {
      if (local) return runFilters(pod, nodeInfo, cycle, profile);
      const replaced = [...nodeInfos];
      replaced[index] = nodeInfo;
      return runFilters(pod, nodeInfo, createSchedulingContext(pod, replaced, cluster), profile);
    },
  };
}

/**
 * The profile's PostFilter plugins in order, until one nominates a node; without any, the
 * pod stays unschedulable with no more to say. Messages of unsuccessful plugins are joined.
 */
export function runPostFilters(pod: Pod, verdicts: UnschedulableVerdicts, handle: PostFilterHandle, profile: Profile): PostFilterResult {
  const messages: string[] = [];
  let clearNomination = false;
  for (const plugin of profile.postFilters) {
    const outcome = plugin.postFilter(pod, verdicts, handle);
    if (outcome.type === 'nominated') return outcome;
    if (outcome.message !== '') messages.push(outcome.message);
    clearNomination ||= outcome.clearNomination;
  }
  return { type: 'unschedulable', message: messages.join(' '), clearNomination };
}
