/**
 * Nominated pods (kube-scheduler's PodNominator): pending pods whose preemption freed, or is
 * freeing, room on a node (`status.nominatedNodeName`). Until they bind, a pod of lower or
 * equal priority is filtered as if they already ran there, so it does not take the room
 * made for them (kube's `RunFilterPluginsWithNominatedPods`).
 */
import type { Pod } from '../../schemas/index.ts';
import { assumePod, type NodeInfo } from './node-info.ts';

/** A pod's priority as the scheduler reads it (`spec.priority`, resolved at admission; 0 when unset). */
export const podPriority = (pod: Pod): number => pod.spec.priority ?? 0;

const identity = (pod: Pod): string => pod.metadata.uid ?? `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** Pending pods by the node they are nominated to: unbound, not being deleted, with a `nominatedNodeName`. */
export function nominatedPodsOf(pendingPods: readonly Pod[]): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of pendingPods) {
    const node = pod.status?.nominatedNodeName;
    if (!node || pod.spec.nodeName || pod.metadata.deletionTimestamp) continue;
    let pods = byNode.get(node);
    if (pods === undefined) {
      pods = [];
      byNode.set(node, pods);
    }
    pods.push(pod);
  }
  return byNode;
}

/** Records `pod` as nominated to `node` (and nowhere else) in `byNode`. */
export function nominate(byNode: Map<string, Pod[]>, pod: Pod, node: string | undefined): void {
  const id = identity(pod);
  for (const [name, pods] of byNode) {
    const kept = pods.filter((other) => identity(other) !== id);
    if (kept.length === 0) byNode.delete(name);
    else if (kept.length !== pods.length) byNode.set(name, kept);
  }
  if (node !== undefined) byNode.set(node, [...(byNode.get(node) ?? []), pod]);
}

/** The pods nominated to `node` that `pod` must leave room for: priority at least its own, other than itself. */
export function nominatedAhead(pod: Pod, nominated: readonly Pod[] | undefined): Pod[] {
  if (nominated === undefined || nominated.length === 0) return [];
  const priority = podPriority(pod);
  const id = identity(pod);
  return nominated.filter((other) => podPriority(other) >= priority && identity(other) !== id);
}

/** The last `withPods` result per NodeInfo, with the pods it counted. */
const lastWithPods = new WeakMap<NodeInfo, { readonly pods: readonly Pod[]; readonly info: NodeInfo }>();

const samePods = (left: readonly Pod[], right: readonly Pod[]): boolean => left.length === right.length && left.every((pod, index) => pod === right[index]);

/**
 * `nodeInfo` with `pods` counted on it (the same object when there are none). Asked again
 * for the same NodeInfo and the same pod objects, it returns the same NodeInfo as last time,
 * so that the caches keyed by NodeInfo identity (the round scheduler's memo, the plugins'
 * per-node counts) see an unchanged node from one cycle with nominated pods to the next.
 */
export function withPods(nodeInfo: NodeInfo, pods: readonly Pod[]): NodeInfo {
  if (pods.length === 0) return nodeInfo;
  const last = lastWithPods.get(nodeInfo);
  if (last !== undefined && samePods(last.pods, pods)) return last.info;
  let info = nodeInfo;
  for (const pod of pods) info = assumePod(info, pod);
  lastWithPods.set(nodeInfo, { pods: [...pods], info });
  return info;
}
