/**
 * kube-scheduler's resource allocation scorers (noderesources/resource_allocation.go,
 * least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go): per resource of
 * the strategy, the node's allocatable and what would be requested with the pod placed,
 * then one score from 0 to 100 over the weighted resources.
 */
import { MAX_NODE_SCORE, type NodeInfo } from '../../framework.ts';
import type { PodRequests } from '../../resources.ts';
import { MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION } from '../../config/args.ts';
import { type ResourceSpec, type ScoringStrategy, ScoringStrategyType, type UtilizationShapePoint } from '../../config/types.ts';
import { assertNever } from '../../../../schemas/index.ts';

/** Per resource of a strategy: the node's allocatable (0: left out) and the requests with the pod placed. */
export interface Allocation {
  readonly allocatable: number[];
  readonly requested: number[];
}

/**
 * kube's calculateResourceAllocatableRequest for each of `resources`: cpu and memory count
 * the non-zero-defaulted requests (NodeResourcesFit) or the requests as written
 * (`useRequested`, NodeResourcesBalancedAllocation); any other resource the pod does not
 * request, or the node does not offer, is left out (allocatable 0).
 */
export function allocationOf(resources: readonly ResourceSpec[], requests: PodRequests | undefined, nodeInfo: NodeInfo, useRequested: boolean): Allocation {
  const allocatable: number[] = [];
  const requested: number[] = [];
  const { allocatable: node, requested: used, nonZeroRequested } = nodeInfo;
  const pod = useRequested ? requests?.requested : requests?.nonZeroRequested;
  for (const { name } of resources) {
    let alloc = 0;
    let req = 0;
    switch (name) {
      case 'cpu':
        alloc = node.cpuMilli;
        req = (useRequested ? used.cpuMilli : nonZeroRequested.cpuMilli) + (pod?.cpuMilli ?? 0);
        break;
      case 'memory':
        alloc = node.memoryBytes;
        req = (useRequested ? used.memoryBytes : nonZeroRequested.memoryBytes) + (pod?.memoryBytes ?? 0);
        break;
      case 'ephemeral-storage':
        alloc = node.ephemeralStorageBytes;
        req = used.ephemeralStorageBytes + (requests?.requested.ephemeralStorageBytes ?? 0);
        break;
      default: {
        const podRequest = requests?.requested.scalar.get(name) ?? 0;
        if (podRequest !== 0 && node.scalar.has(name)) {
          alloc = node.scalar.get(name) ?? 0;
          req = (used.scalar.get(name) ?? 0) + podRequest;
        }
      }
    }
    allocatable.push(alloc);
    requested.push(alloc === 0 ? 0 : req);
  }
  return { allocatable, requested };
}

/** kube's leastRequestedScore: the unused share, 0 when overcommitted. */
function leastRequested(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/** kube's mostRequestedScore: the used share (requests above capacity count as capacity). */
function mostRequested(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.trunc((Math.min(requested, capacity) * MAX_NODE_SCORE) / capacity);
}

/** kube's BuildBrokenLinearFunction over a shape whose scores are already scaled to 0..100. */
function brokenLinear(shape: readonly UtilizationShapePoint[], utilization: number): number {
  for (let index = 0; index < shape.length; index += 1) {
    const point = shape[index] as UtilizationShapePoint;
    if (utilization <= point.utilization) {
      if (index === 0) return point.score;
      const previous = shape[index - 1] as UtilizationShapePoint;
      return previous.score + Math.trunc(((point.score - previous.score) * (utilization - previous.utilization)) / (point.utilization - previous.utilization));
    }
  }
  return (shape[shape.length - 1] as UtilizationShapePoint).score;
}

/** Weighted integer mean of `score` over the resources the node offers (kube's least/most allocated scorers). */
function weightedMean(resources: readonly ResourceSpec[], allocation: Allocation, score: (requested: number, capacity: number) => number): number {
  let nodeScore = 0;
  let weightSum = 0;
  resources.forEach(({ weight }, index) => {
    const capacity = allocation.allocatable[index] as number;
    if (capacity === 0) return;
    nodeScore += score(allocation.requested[index] as number, capacity) * weight;
    weightSum += weight;
  });
  return weightSum === 0 ? 0 : Math.trunc(nodeScore / weightSum);
}

/** kube's requestedToCapacityRatioScorer: resources scoring 0 do not count, the mean is rounded. */
function requestedToCapacityRatio(resources: readonly ResourceSpec[], shape: readonly UtilizationShapePoint[], allocation: Allocation): number {
  const scaled = shape.map((point) => ({ utilization: point.utilization, score: point.score * (MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE) }));
  let nodeScore = 0;
  let weightSum = 0;
  resources.forEach(({ weight }, index) => {
    const capacity = allocation.allocatable[index] as number;
    if (capacity === 0) return;
    const requested = allocation.requested[index] as number;
    const resourceScore = requested > capacity ? brokenLinear(scaled, MAX_UTILIZATION) : brokenLinear(scaled, Math.trunc((requested * MAX_UTILIZATION) / capacity));
    if (resourceScore > 0) {
      nodeScore += resourceScore * weight;
      weightSum += weight;
    }
  });
  return weightSum === 0 ? 0 : Math.round(nodeScore / weightSum);
}

/** The score of a node under `strategy` for a pod with `requests` (undefined: invalid requests, scored as none). */
export function strategyScore(strategy: ScoringStrategy, requests: PodRequests | undefined, nodeInfo: NodeInfo): number {
  const allocation = allocationOf(strategy.resources, requests, nodeInfo, false);
  switch (strategy.type) {
    case ScoringStrategyType.LeastAllocated:
      return weightedMean(strategy.resources, allocation, leastRequested);
    case ScoringStrategyType.MostAllocated:
      return weightedMean(strategy.resources, allocation, mostRequested);
    case ScoringStrategyType.RequestedToCapacityRatio:
      return requestedToCapacityRatio(strategy.resources, strategy.shape, allocation);
    default:
      return assertNever(strategy, 'scoring strategy');
  }
}
