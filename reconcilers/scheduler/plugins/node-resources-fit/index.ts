/**
 * NodeResourcesFit: a pod fits a node when each of its requests (cpu, memory,
 * ephemeral-storage, and every scalar resource: extended resources such as `nvidia.com/gpu`
 * advertised in the node's allocatable, `hugepages-<size>`) fits in what the node has left
 * (allocatable minus the requests of the pods already there) and the node has a pod slot
 * free. Requests are computed as kube does (init containers, sidecars, overhead: see
 * `computePodRequests`). As a score plugin it implements the default LeastAllocated
 * strategy: emptier nodes score higher, so pods spread.
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
 * offers 0.
 */
export function fitsResources(request: PodResources, nodeInfo: NodeInfo): FilterResult {
  const { allocatable, requested } = nodeInfo;
  const tooManyPods = requested.pods + 1 > allocatable.pods;
  const cpuShort = request.cpuMilli > 0 && request.cpuMilli > allocatable.cpuMilli - requested.cpuMilli;
  const memoryShort = request.memoryBytes > 0 && request.memoryBytes > allocatable.memoryBytes - requested.memoryBytes;
  const storageShort =
    request.ephemeralStorageBytes > 0 && request.ephemeralStorageBytes > allocatable.ephemeralStorageBytes - requested.ephemeralStorageBytes;
  let scalarShort: string[] | undefined;
  if (request.scalar.size > 0) {
    for (const [name, amount] of request.scalar) {
      if (amount === 0) continue;
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

/** Creates the NodeResourcesFit filter and LeastAllocated score. */
export function createNodeResourcesFit(): FilterPlugin & ScorePlugin {
  return {
    name: NODE_RESOURCES_FIT,
    nodeLocal: true,
    filter(_pod, nodeInfo, ctx) {
      const requests = ctx.get(podRequestsOfCycle);
      if (requests.type === 'invalid') return unfit(`Invalid resource request: ${requests.error.message}`);
      return fitsResources(requests.requests.requested, nodeInfo);
    },
    score(_pod, nodeInfo, ctx) {
      const requests = ctx.get(podRequestsOfCycle);
      const nonZero = requests.type === 'ok' ? requests.requests.nonZeroRequested : { cpuMilli: 0, memoryBytes: 0 };
      return leastAllocatedScore(nonZero, nodeInfo);
    },
  };
}
