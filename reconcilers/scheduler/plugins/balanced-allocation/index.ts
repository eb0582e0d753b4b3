/**
 * NodeResourcesBalancedAllocation: prefers nodes whose cpu and memory would be used in
 * the same proportion with the pod placed, so neither runs out while the other idles.
 */
import { MAX_NODE_SCORE, type NodeInfo, type ScorePlugin } from '../../framework.ts';
import type { CpuMemory } from '../../resources.ts';
import type { NodeResourcesBalancedAllocationArgs } from '../../config/types.ts';
import { podRequestsOfCycle } from '../node-resources-fit/index.ts';
import { allocationOf } from '../node-resources-fit/scoring.ts';

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

/**
 * kube's balancedResourceScorer over any resources: the used fractions (capped at 1) of the
 * resources the node offers; two: half their difference, more: their standard deviation.
 */
export function balancedScoreOf(allocatable: readonly number[], requested: readonly number[]): number {
  const fractions: number[] = [];
  allocatable.forEach((capacity, index) => {
    if (capacity > 0) fractions.push(Math.min((requested[index] as number) / capacity, 1));
  });
  let deviation = 0;
  if (fractions.length === 2) deviation = Math.abs((fractions[0] as number) - (fractions[1] as number)) / 2;
  else if (fractions.length > 2) {
    const mean = fractions.reduce((sum, fraction) => sum + fraction, 0) / fractions.length;
    deviation = Math.sqrt(fractions.reduce((sum, fraction) => sum + (fraction - mean) ** 2, 0) / fractions.length);
  }
  return Math.trunc((1 - deviation) * MAX_NODE_SCORE);
}

/** Creates the NodeResourcesBalancedAllocation score, over cpu and memory without `args`. */
export function createBalancedAllocation(args?: NodeResourcesBalancedAllocationArgs): ScorePlugin {
  const resources = args?.resources;
  const isDefault = resources === undefined || (resources.length === 2 && resources[0]?.name === 'cpu' && resources[1]?.name === 'memory');
  if (!isDefault) {
    return {
      name: BALANCED_ALLOCATION,
      nodeLocal: true,
      score(_pod, nodeInfo, ctx) {
        const requests = ctx.get(podRequestsOfCycle);
        const { allocatable, requested } = allocationOf(resources, requests.type === 'ok' ? requests.requests : undefined, nodeInfo, true);
        return balancedScoreOf(allocatable, requested);
      },
    };
  }
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
