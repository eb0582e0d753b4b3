/**
 * The scheduler's view of one node (kube-scheduler's NodeInfo): the node, its pods, and the
 * aggregates the plugins read (requests per resource, host ports, pods with affinity terms),
 * derived once per node or pod version, never per decision.
 */
import type { Node, Pod } from '../../schemas/index.ts';
import { parsePodAffinityTerms, type PodWithAffinity } from './affinity.ts';
import {
  addCpuMemory,
  addResources,
  computePodRequests,
  type CpuMemory,
  nodeAllocatable,
  type PodResources,
  type ResourceAmounts,
  ZERO_RESOURCES,
} from './resources.ts';

/** A host port a pod takes on its node: `hostIP` defaults to 0.0.0.0 and `protocol` to TCP, as kube-scheduler reads them. */
export interface HostPort {
  readonly hostIP: string;
  readonly protocol: string;
  readonly port: number;
}

/** A node with the aggregates the plugins need, precomputed once per node, not per pod. */
export interface NodeInfo {
  readonly node: Node;
  /** The pods bound to the node, until they are deleted. */
  readonly pods: readonly Pod[];
  /** Sum of the pods' requests (every resource); `pods` is their count. */
  readonly requested: ResourceAmounts;
  /** Sum of the pods' cpu/memory requests with defaults for unset ones (kube-scheduler's `NonZeroRequested`), for scoring. */
  readonly nonZeroRequested: CpuMemory;
  /** What the node offers pods (`status.allocatable`, else `status.capacity`). */
  readonly allocatable: ResourceAmounts;
  /** The subset of `pods` with any pod (anti-)affinity term, parsed (kube's `PodsWithAffinity`; lets InterPodAffinity skip the rest). */
  readonly podsWithAffinity: readonly PodWithAffinity[];
  /** The subset of `podsWithAffinity` with required anti-affinity terms (kube's `PodsWithRequiredAntiAffinity`). */
  readonly podsWithRequiredAntiAffinity: readonly PodWithAffinity[];
  /** The host ports the pods take (kube's `UsedPorts`). */
  readonly usedPorts: readonly HostPort[];
}

/** The host ports `pod`'s containers ask for (`hostPort` > 0), defaults applied (kube-scheduler's `GetHostPorts`). */
export function hostPortsOf(pod: Pod): readonly HostPort[] {
  let ports: HostPort[] | undefined;
  for (const container of pod.spec.containers) {
    for (const port of container.ports ?? NO_PORTS) {
      const hostPort = port.hostPort ?? 0;
      if (hostPort <= 0) continue;
      ports ??= [];
      ports.push({ hostIP: port.hostIP || DEFAULT_HOST_IP, protocol: port.protocol || 'TCP', port: hostPort });
    }
  }
  return ports ?? NO_HOST_PORTS;
}

/** The wildcard address a host port without `hostIP` binds. */
export const DEFAULT_HOST_IP = '0.0.0.0';
const NO_PORTS: readonly never[] = [];
const NO_HOST_PORTS: readonly HostPort[] = [];
const NO_AFFINITY: readonly PodWithAffinity[] = [];

const NO_NON_ZERO: CpuMemory = { cpuMilli: 0, memoryBytes: 0 };

/** What a placed pod adds to its node, derived once per pod version (a NodeInfo cache keeps these across rounds). */
export interface PlacedPod {
  readonly pod: Pod;
  readonly requested: PodResources;
  readonly nonZeroRequested: CpuMemory;
  /** Its parsed (anti-)affinity terms, when it has any. */
  readonly affinity: PodWithAffinity | undefined;
  readonly hostPorts: readonly HostPort[];
}

/**
 * Derives what `pod` adds to the node it is bound to. Unlike kube-scheduler, a finished
 * (Succeeded or Failed) pod still counts until it is deleted: the fold admits bindings from
 * the desired topic alone, where a pod's phase is not visible, so it counts every pod bound
 * to the node, and the scheduler must not offer room the fold would refuse. (ReplicaSets
 * delete their finished pods, which frees the room.) A pod whose requests cannot be parsed
 * (the apiserver rejects those) holds none.
 */
export function placedPod(pod: Pod): PlacedPod {
  const requests = computePodRequests(pod);
  const terms = parsePodAffinityTerms(pod);
  return {
    pod,
    requested: requests.type === 'ok' ? requests.requests.requested : ZERO_RESOURCES,
    nonZeroRequested: requests.type === 'ok' ? requests.requests.nonZeroRequested : NO_NON_ZERO,
    affinity: terms === undefined ? undefined : { pod, ...terms },
    hostPorts: hostPortsOf(pod),
  };
}

/** Builds the NodeInfo of `node` from the pods bound to it (finished ones included, see `placedPod`). */
export function createNodeInfo(node: Node, pods: readonly Pod[]): NodeInfo {
  return nodeInfoFromPlaced(node, pods.map(placedPod), nodeAllocatable(node));
}

/** `createNodeInfo` from pods whose contributions are already derived (the sums are integers, so any order gives the same totals). */
export function nodeInfoFromPlaced(node: Node, placed: readonly PlacedPod[], allocatable: ResourceAmounts): NodeInfo {
  const counted: Pod[] = [];
  let affinityPods: PodWithAffinity[] | undefined;
  let antiAffinityPods: PodWithAffinity[] | undefined;
  let usedPorts: HostPort[] | undefined;
  let cpuMilli = 0;
  let memoryBytes = 0;
  let ephemeralStorageBytes = 0;
  let scalar = ZERO_RESOURCES.scalar;
  let nonZeroCpuMilli = 0;
  let nonZeroMemoryBytes = 0;
  for (const entry of placed) {
    counted.push(entry.pod);
    if (entry.affinity !== undefined) {
      (affinityPods ??= []).push(entry.affinity);
      if (entry.affinity.requiredAntiAffinity.length > 0) (antiAffinityPods ??= []).push(entry.affinity);
    }
    if (entry.hostPorts.length > 0) (usedPorts ??= []).push(...entry.hostPorts);
    const { requested } = entry;
    cpuMilli += requested.cpuMilli;
    memoryBytes += requested.memoryBytes;
    ephemeralStorageBytes += requested.ephemeralStorageBytes;
    if (requested.scalar.size > 0) {
      if (scalar === ZERO_RESOURCES.scalar) scalar = new Map();
      const sums = scalar as Map<string, number>;
      for (const [name, value] of requested.scalar) sums.set(name, (sums.get(name) ?? 0) + value);
    }
    nonZeroCpuMilli += entry.nonZeroRequested.cpuMilli;
    nonZeroMemoryBytes += entry.nonZeroRequested.memoryBytes;
  }
  return nodeInfoOf(
    node,
    counted,
    { cpuMilli, memoryBytes, ephemeralStorageBytes, scalar },
    { cpuMilli: nonZeroCpuMilli, memoryBytes: nonZeroMemoryBytes },
    allocatable,
    affinityPods ?? NO_AFFINITY,
    antiAffinityPods ?? NO_AFFINITY,
    usedPorts ?? NO_HOST_PORTS,
  );
}

/** Every NodeInfo is built here, so all share one object shape (keeps the per-node hot path monomorphic). */
function nodeInfoOf(
  node: Node,
  pods: readonly Pod[],
  requested: PodResources,
  nonZeroRequested: CpuMemory,
  allocatable: ResourceAmounts,
  podsWithAffinity: readonly PodWithAffinity[],
  podsWithRequiredAntiAffinity: readonly PodWithAffinity[],
  usedPorts: readonly HostPort[],
): NodeInfo {
  return {
    node,
    pods,
    requested: {
      cpuMilli: requested.cpuMilli,
      memoryBytes: requested.memoryBytes,
      ephemeralStorageBytes: requested.ephemeralStorageBytes,
      scalar: requested.scalar,
      pods: pods.length,
    },
    nonZeroRequested: { cpuMilli: nonZeroRequested.cpuMilli, memoryBytes: nonZeroRequested.memoryBytes },
    allocatable,
    podsWithAffinity,
    podsWithRequiredAntiAffinity,
    usedPorts,
  };
}

/** Groups `pods` by `spec.nodeName` and builds one NodeInfo per node; pods on unknown nodes are ignored. */
export function buildNodeInfos(nodes: readonly Node[], pods: readonly Pod[]): NodeInfo[] {
  const podsByNode = new Map<string, Pod[]>(nodes.map((node) => [node.metadata.name, []]));
  for (const pod of pods) {
    const nodeName = pod.spec.nodeName;
    if (nodeName) podsByNode.get(nodeName)?.push(pod);
  }
  return nodes.map((node) => createNodeInfo(node, podsByNode.get(node.metadata.name) ?? []));
}

/**
 * Returns a new NodeInfo with `pod` counted on the node, as kube-scheduler "assumes" a pod
 * it just bound so the next decision sees the capacity taken before the log says so.
 */
export function assumePod(nodeInfo: NodeInfo, pod: Pod): NodeInfo {
  const placed = placedPod(pod);
  const affinity = placed.affinity;
  return nodeInfoOf(
    nodeInfo.node,
    [...nodeInfo.pods, pod],
    addResources(nodeInfo.requested, placed.requested),
    addCpuMemory(nodeInfo.nonZeroRequested, placed.nonZeroRequested),
    nodeInfo.allocatable,
    affinity === undefined ? nodeInfo.podsWithAffinity : [...nodeInfo.podsWithAffinity, affinity],
    affinity === undefined || affinity.requiredAntiAffinity.length === 0
      ? nodeInfo.podsWithRequiredAntiAffinity
      : [...nodeInfo.podsWithRequiredAntiAffinity, affinity],
    placed.hostPorts.length === 0 ? nodeInfo.usedPorts : [...nodeInfo.usedPorts, ...placed.hostPorts],
  );
}


/**
 * Returns a new NodeInfo without `pod` (one of `nodeInfo.pods`), as kube-scheduler's
 * `NodeInfo.RemovePod` on a snapshot copy when preemption tries the node without its victims.
 */
export function removePod(nodeInfo: NodeInfo, pod: Pod): NodeInfo {
  const remaining = nodeInfo.pods.filter((placed) => placed !== pod);
  return nodeInfoFromPlaced(nodeInfo.node, remaining.map(placedPod), nodeInfo.allocatable);
}
