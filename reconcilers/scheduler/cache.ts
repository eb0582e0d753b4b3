/**
 * The scheduler's NodeInfo cache (kube-scheduler's cache, fed like an informer's indexer):
 * NodeInfos kept across rounds and updated from the projection's change feed, instead of
 * listing every pod and node each round. Only the nodes a change touched are rebuilt, from
 * per-pod contributions derived once per pod version.
 *
 * It holds exactly what `buildNodeInfos(view.list('Node'), bound pods)` would build from
 * the projection's current state (tests check it against a rebuild after random changes);
 * decisions read it only when the view they are given is at the projection's cursor, so a
 * decision re-run on a past view (`debug reconcile`) rebuilds from that view instead.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { Node, Pod } from '../../schemas/index.ts';
import { nodeInfoFromPlaced, placedPod, type NodeInfo, type PlacedPod } from './framework.ts';
import { nodeAllocatable, type ResourceAmounts } from './resources.ts';

interface CachedNode {
  readonly node: Node;
  readonly allocatable: ResourceAmounts;
}

export interface NodeInfoCache {
  /** Forgets everything and loads the current state of `view`. */
  reset(view: View): void;
  /** Applies one committed change of the projection. */
  apply(change: AppliedChange): void;
  /** The NodeInfos of every node, in node-key order (as `view.list('Node')`); the array is the caller's. */
  nodeInfos(): NodeInfo[];
}

const podKeyOf = (pod: Pod): string => `Pod/${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** Creates an empty cache; `reset` it from a view, then `apply` every later change. */
export const createNodeInfoCache = (): NodeInfoCache => {
  /** Node key → node. */
  const nodes = new Map<string, CachedNode>();
  /** Node name → (pod key → placed pod), also for nodes not (or no longer) known, as a view holds such pods too. */
  const podsByNode = new Map<string, Map<string, PlacedPod>>();
  /** Pod key → the node it is counted on. */
  const nodeOfPod = new Map<string, string>();
  /** Node name → its NodeInfo, while no change touched it. */
  const built = new Map<string, NodeInfo>();
  /** Node keys in order, while no node came or went. */
  let order: string[] | undefined;

  const removePod = (key: string): void => {
    const nodeName = nodeOfPod.get(key);
    if (nodeName === undefined) return;
    nodeOfPod.delete(key);
    const pods = podsByNode.get(nodeName);
    pods?.delete(key);
    if (pods?.size === 0) podsByNode.delete(nodeName);
    built.delete(nodeName);
  };

  const putPod = (key: string, pod: Pod): void => {
    const nodeName = pod.spec.nodeName;
    removePod(key);
    if (!nodeName) return;
    let pods = podsByNode.get(nodeName);
    if (pods === undefined) {
      pods = new Map();
      podsByNode.set(nodeName, pods);
    }
    pods.set(key, placedPod(pod));
    nodeOfPod.set(key, nodeName);
    built.delete(nodeName);
  };

  const putNode = (key: string, node: Node): void => {
    if (!nodes.has(key)) order = undefined;
    nodes.set(key, { node, allocatable: nodeAllocatable(node) });
    built.delete(node.metadata.name);
  };

  const removeNode = (key: string, node: Node): void => {
    if (nodes.delete(key)) order = undefined;
    built.delete(node.metadata.name);
  };

  const nodeInfoOf = (cached: CachedNode): NodeInfo => {
    const name = cached.node.metadata.name;
    const existing = built.get(name);
    if (existing !== undefined) return existing;
    const pods = podsByNode.get(name);
    // Pods in key order, as a rebuild from `view.list('Pod')` lists them.
    const placed = pods === undefined ? [] : [...pods.keys()].sort().map((key) => pods.get(key) as PlacedPod);
    const info = nodeInfoFromPlaced(cached.node, placed, cached.allocatable);
    built.set(name, info);
    return info;
  };

  return {
    reset: (view) => {
      nodes.clear();
      podsByNode.clear();
      nodeOfPod.clear();
      built.clear();
      order = undefined;
      for (const node of view.list('Node') as Node[]) putNode(`Node//${node.metadata.name}`, node);
      for (const pod of view.list('Pod') as Pod[]) if (pod.spec.nodeName) putPod(podKeyOf(pod), pod);
    },
    apply: (change) => {
      if (change.key.startsWith('Pod/')) {
        if (change.type === 'DELETED') removePod(change.key);
        else putPod(change.key, change.object as Pod);
      } else if (change.key.startsWith('Node/')) {
        if (change.type === 'DELETED') removeNode(change.key, change.object as Node);
        else putNode(change.key, change.object as Node);
      }
    },
    nodeInfos: () => {
      order ??= [...nodes.keys()].sort();
      return order.map((key) => nodeInfoOf(nodes.get(key) as CachedNode));
    },
  };
};
