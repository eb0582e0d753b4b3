/**
 * NodeResourcesBalancedAllocation: prefers nodes whose cpu and memory would be used in
 * the same proportion with the pod placed, so neither runs out while the other idles.
 */
import { MAX_NODE_SCORE, type NodeInfo, type ScorePlugin } from '../../framework.ts';
import type { CpuMemory } from '../../resources.ts';
import { podRequestsOfCycle } from '../node-resources-fit/index.ts';

/** This plugin's registry name (kube-scheduler's). */
export const BALANCED_ALLOCATION = 'NodeResourcesBalancedAllocation';

/**
 * `(1 - standard deviation of the used fractions) × 100`, truncated, over cpu and memory
 * with the pod's requests added; each fraction is capped at 1 and a resource the node does
 * not offer is left out. Uses the requests as written (not defaulted), as kube-scheduler does.
 */
export function balancedAllocationScore(request: CpuMemory, nodeInfo: NodeInfo): number {
  const { allocatable, requested } = nodeInfo;
  const cpu = usedFraction(requested.cpuMilli + request.cpuMilli, allocatable.cpuMilli);
  const memory = usedFraction(requested.memoryBytes + request.memoryBytes, allocatable.memoryBytes);
  const deviation = cpu !== undefined && memory !== undefined ? Math.abs(cpu - memory) / 2 : 0;
  return Math.trunc((1 - deviation) * MAX_NODE_SCORE);
}

/** `used / capacity` capped at 1; undefined when the node offers none of the resource. */
function usedFraction(used: number, capacity: number): number | undefined {
  return capacity > 0 ? Math.min(used / capacity, 1) : undefined;
}

/** Creates the NodeResourcesBalancedAllocation score. */
export function createBalancedAllocation(): ScorePlugin {
  return {
    name: BALANCED_ALLOCATION,
    nodeLocal: true,
    score(_pod, nodeInfo, ctx) {
      const requests = ctx.get(podRequestsOfCycle);
      const requested = requests.type === 'ok' ? requests.requests.requested : { cpuMilli: 0, memoryBytes: 0 };
      return balancedAllocationScore(requested, nodeInfo);
    },
  };
}
