/**
 * NodeResourcesFit: a pod fits a node when each of its requests (cpu, memory,
 * ephemeral-storage, and every scalar resource: extended resources such as `nvidia.com/gpu`
 * advertised in the node's allocatable, `hugepages-<size>`) fits in what the node has left
 * (allocatable minus the requests of the pods already there) and the node has a pod slot
 * free. Requests are computed as kube does (init containers, sidecars, overhead: see
 * `computePodRequests`). As a score plugin it implements kube's scoring strategies
 * (NodeResourcesFitArgs.scoringStrategy): LeastAllocated, the default (emptier nodes score
 * higher, so pods spread), MostAllocated (fuller nodes score higher: bin packing), and
 * RequestedToCapacityRatio (a utilization → score shape), each over weighted resources.
 */
import {
  defineCycleValue,
  FIT,
  type FilterPlugin,
  type FilterResult,
  MAX_NODE_SCORE,
  type NodeInfo,
  type ScorePlugin,
  unfit,
  unresolvable,
} from '../../framework.ts';
import { computePodRequests, type CpuMemory, type PodResources } from '../../resources.ts';
import type { NodeResourcesFitArgs } from '../../config/types.ts';
import { strategyScore } from './scoring.ts';

/** This plugin's registry name. */
export const NODE_RESOURCES_FIT = 'NodeResourcesFit';

/** kube-scheduler's reasons, one per exhausted resource. */
export const InsufficientReason = {
  Pods: 'Too many pods',
  Cpu: 'Insufficient cpu',
  Memory: 'Insufficient memory',
  EphemeralStorage: 'Insufficient ephemeral-storage',
} as const;

/** kube-scheduler's reason for any other exhausted resource, e.g. "Insufficient nvidia.com/gpu". */
export const insufficientReason = (resource: string): string => `Insufficient ${resource}`;

/** The pod's requests, parsed once per scheduling cycle (shared with NodeResourcesBalancedAllocation). */
export const podRequestsOfCycle = defineCycleValue('NodeResourcesFit/podRequests', (pod) => computePodRequests(pod));

/**
 * Whether a pod requesting `request` fits on the node (kube's `fitsRequest`): returns every
 * exhausted resource as a reason, in kube's order ("Too many pods", cpu, memory,
 * ephemeral-storage, then scalar resources by name). A zero request for a resource always
 * fits it, even on an overcommitted node; a scalar resource the node does not advertise
 * offers 0. Scalar resources for which `ignored` holds are not checked (kube's
 * ignoredResources / ignoredResourceGroups).
 */
export function fitsResources(request: PodResources, nodeInfo: NodeInfo, ignored?: (resource: string) => boolean): FilterResult {
  const { allocatable, requested } = nodeInfo;
  const tooManyPods = requested.pods + 1 > allocatable.pods;
  const cpuShort = request.cpuMilli > 0 && request.cpuMilli > allocatable.cpuMilli - requested.cpuMilli;
  const memoryShort = request.memoryBytes > 0 && request.memoryBytes > allocatable.memoryBytes - requested.memoryBytes;
  const storageShort =
    request.ephemeralStorageBytes > 0 && request.ephemeralStorageBytes > allocatable.ephemeralStorageBytes - requested.ephemeralStorageBytes;
  let scalarShort: string[] | undefined;
  if (request.scalar.size > 0) {
    for (const [name, amount] of request.scalar) {
      if (amount === 0 || ignored?.(name) === true) continue;
      if (amount > (allocatable.scalar.get(name) ?? 0) - (requested.scalar.get(name) ?? 0)) (scalarShort ??= []).push(name);
    }
  }
  if (!tooManyPods && !cpuShort && !memoryShort && !storageShort && scalarShort === undefined) return FIT;
  // More than the whole node offers: removing pods cannot help (kube's `Unresolvable` insufficient resource).
  let beyondNode =
    (cpuShort && request.cpuMilli > allocatable.cpuMilli) ||
    (memoryShort && request.memoryBytes > allocatable.memoryBytes) ||
    (storageShort && request.ephemeralStorageBytes > allocatable.ephemeralStorageBytes);
  for (const name of scalarShort ?? []) beyondNode ||= (request.scalar.get(name) ?? 0) > (allocatable.scalar.get(name) ?? 0);
  const reasons: string[] = [];
  if (tooManyPods) reasons.push(InsufficientReason.Pods);
  if (cpuShort) reasons.push(InsufficientReason.Cpu);
  if (memoryShort) reasons.push(InsufficientReason.Memory);
  if (storageShort) reasons.push(InsufficientReason.EphemeralStorage);
  if (scalarShort !== undefined) for (const name of scalarShort.sort()) reasons.push(insufficientReason(name));
  const [first, ...rest] = reasons;
  if (first === undefined) return FIT;
  return beyondNode ? unresolvable(first, ...rest) : unfit(first, ...rest);
}

/**
 * LeastAllocated: for cpu and memory, `(allocatable - requested) × 100 / allocatable` with
 * the pod added (requests defaulted as kube-scheduler's NonZeroRequested), integer-divided
 * and averaged over the resources the node offers; 0 for a resource that would be overcommitted.
 */
export function leastAllocatedScore(nonZeroRequest: CpuMemory, nodeInfo: NodeInfo): number {
  const { allocatable, nonZeroRequested } = nodeInfo;
  let total = 0;
  let counted = 0;
  if (allocatable.cpuMilli > 0) {
    total += leastRequested(nonZeroRequested.cpuMilli + nonZeroRequest.cpuMilli, allocatable.cpuMilli);
    counted += 1;
  }
  if (allocatable.memoryBytes > 0) {
    total += leastRequested(nonZeroRequested.memoryBytes + nonZeroRequest.memoryBytes, allocatable.memoryBytes);
    counted += 1;
  }
  return counted === 0 ? 0 : Math.floor(total / counted);
}

function leastRequested(requested: number, capacity: number): number {
  return requested > capacity ? 0 : Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

/**
 * kube's ignoredResources / ignoredResourceGroups test: a resource named in the first, or
 * whose prefix (`example.com` of `example.com/foo`) is in the second; undefined when both are empty.
 */
function ignoredResourcesOf(args: NodeResourcesFitArgs | undefined): ((resource: string) => boolean) | undefined {
  if (args === undefined || (args.ignoredResources.length === 0 && args.ignoredResourceGroups.length === 0)) return undefined;
  const names = new Set(args.ignoredResources);
  const groups = new Set(args.ignoredResourceGroups);
  return (resource) => names.has(resource) || (resource.includes('/') && groups.has(resource.slice(0, resource.indexOf('/'))));
}

/** Whether `args` asks for the default strategy: LeastAllocated over cpu and memory, weight 1 each. */
function isDefaultStrategy(args: NodeResourcesFitArgs | undefined): boolean {
  if (args === undefined) return true;
  const { type, resources } = args.scoringStrategy;
  return (
    type === 'LeastAllocated' &&
    resources.length === 2 &&
    resources[0]?.name === 'cpu' &&
    resources[0].weight === 1 &&
    resources[1]?.name === 'memory' &&
    resources[1].weight === 1
  );
}

/** Creates the NodeResourcesFit filter and score, with kube's defaults (LeastAllocated over cpu and memory) without `args`. */
export function createNodeResourcesFit(args?: NodeResourcesFitArgs): FilterPlugin & ScorePlugin {
  const ignored = ignoredResourcesOf(args);
  const strategy = isDefaultStrategy(args) ? undefined : (args as NodeResourcesFitArgs).scoringStrategy;
  return {
    name: NODE_RESOURCES_FIT,
    nodeLocal: true,
    filter(_pod, nodeInfo, ctx) {
      const requests = ctx.get(podRequestsOfCycle);
      if (requests.type === 'invalid') return unfit(`Invalid resource request: ${requests.error.message}`);
      return fitsResources(requests.requests.requested, nodeInfo, ignored);
    },
    score(_pod, nodeInfo, ctx) {
      const requests = ctx.get(podRequestsOfCycle);
      if (strategy !== undefined) return strategyScore(strategy, requests.type === 'ok' ? requests.requests : undefined, nodeInfo);
      // kube's default, LeastAllocated over cpu and memory, on the fast path of the non-zero requests.
      const nonZero = requests.type === 'ok' ? requests.requests.nonZeroRequested : { cpuMilli: 0, memoryBytes: 0 };
      return leastAllocatedScore(nonZero, nodeInfo);
    },
  };
}
