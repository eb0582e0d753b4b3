/**
 * Which feasible nodes a cycle scores (kube-scheduler 1.32's `percentageOfNodesToScore`).
 *
 * kube stops filtering once it has found `numFeasibleNodesToFind` feasible nodes, scanning
 * its snapshot's node list (the node tree: zones interleaved, one node of each zone in
 * turn) from `nextStartNodeIndex`, and scores only those; the next cycle starts where this
 * one stopped. With 1,000 nodes that is 420 nodes, with 5,000 nodes 500.
 *
 * logplane's decisions must be a pure function of the view (a replay, `debug reconcile` and
 * every scheduler of a consumer group agree), so the start is not carried from cycle to
 * cycle: it is a hash of the pod's namespace and name, which spreads successive pods over
 * the node list as kube's rotating start does. The window is the same set kube's early stop
 * gives: the first `numFeasibleNodesToFind` feasible nodes in node-tree order from the start.
 * (Filters still run on every node here, so the rationale lists every rejected node.)
 */
import type { Pod } from '../../schemas/index.ts';
import type { NodeInfo } from './framework.ts';

/** kube's minFeasibleNodesToFind: below this many nodes every node is scored. */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** kube's minFeasibleNodesPercentageToFind. */
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/**
 * kube's `numFeasibleNodesToFind`: with `percentage` unset or 0, the adaptive default
 * `50 - nodes/125` (at least 5 %); never fewer than 100 nodes, never more than all of them.
 */
export function numFeasibleNodesToFind(percentage: number | undefined, numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let adaptive = percentage ?? 0;
  if (adaptive <= 0) {
    // Go's integer division.
    adaptive = 50 - Math.trunc(numAllNodes / 125);
    if (adaptive < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND) adaptive = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
  }
  if (adaptive >= 100) return numAllNodes;
  const numNodes = Math.trunc((numAllNodes * adaptive) / 100);
  return numNodes < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : numNodes;
}

const ZONE_LABEL = 'topology.kubernetes.io/zone';
const REGION_LABEL = 'topology.kubernetes.io/region';
const BETA_ZONE_LABEL = 'failure-domain.beta.kubernetes.io/zone';
const BETA_REGION_LABEL = 'failure-domain.beta.kubernetes.io/region';

/** kube's `utilnode.GetZoneKey`: region and zone (GA labels first, then the beta ones), '' when neither is set. */
export function zoneKeyOf(labels: Readonly<Record<string, string>> | undefined): string {
  if (labels === undefined) return '';
  const zone = (Object.hasOwn(labels, ZONE_LABEL) ? labels[ZONE_LABEL] : undefined) ?? (Object.hasOwn(labels, BETA_ZONE_LABEL) ? labels[BETA_ZONE_LABEL] : undefined) ?? '';
  const region = (Object.hasOwn(labels, REGION_LABEL) ? labels[REGION_LABEL] : undefined) ?? (Object.hasOwn(labels, BETA_REGION_LABEL) ? labels[BETA_REGION_LABEL] : undefined) ?? '';
  if (zone === '' && region === '') return '';
  return `${region}:\u0000:${zone}`;
}

/**
 * kube's node-tree list over `nodeInfos`: nodes grouped by zone key, zones in the order
 * their first node appears, then one node of each zone in turn. `nodeInfos` is in node-name
 * order (kube adds nodes in informer order; name order is the deterministic stand-in).
 * Returns the indices of `nodeInfos` in that order.
 */
export function nodeTreeOrder(zoneKeys: readonly string[]): Int32Array {
  const zones = new Map<string, number[]>();
  zoneKeys.forEach((zone, index) => {
    const members = zones.get(zone);
    if (members === undefined) zones.set(zone, [index]);
    else members.push(index);
  });
  const order = new Int32Array(zoneKeys.length);
  const lists = [...zones.values()];
  let length = 0;
  for (let depth = 0; length < order.length; depth += 1) {
    for (const members of lists) if (depth < members.length) order[length++] = members[depth] as number;
  }
  return order;
}

/** What the scan order of one NodeInfo array was built from. */
interface TreeCache {
  readonly names: string[];
  readonly zones: string[];
  order: Int32Array;
  /** Length of the caller's change log when last checked (undefined: compare every entry next time). */
  seen: number | undefined;
}

const trees = new WeakMap<readonly NodeInfo[], TreeCache>();

/**
 * The node-tree order of `nodeInfos`, kept per array: with the caller's change log only the
 * entries replaced since the last call are checked for a new name or zone (a binding replaces
 * a NodeInfo but not its node's labels), else every entry is compared.
 */
export function scanOrderOf(nodeInfos: readonly NodeInfo[], changes: readonly number[] | undefined): Int32Array {
  let cache = trees.get(nodeInfos);
  let stale = cache === undefined || cache.names.length !== nodeInfos.length;
  if (cache !== undefined && !stale) {
    const from = changes !== undefined && cache.seen !== undefined && cache.seen <= changes.length ? cache.seen : undefined;
    const visits = from === undefined ? nodeInfos.length : (changes as readonly number[]).length - from;
    for (let visit = 0; visit < visits && !stale; visit += 1) {
      const index = from === undefined ? visit : ((changes as readonly number[])[from + visit] as number);
      const node = (nodeInfos[index] as NodeInfo).node;
      stale = cache.names[index] !== node.metadata.name || cache.zones[index] !== zoneKeyOf(node.metadata.labels);
    }
  }
  if (cache === undefined || stale) {
    const names = nodeInfos.map((info) => info.node.metadata.name);
    const zones = nodeInfos.map((info) => zoneKeyOf(info.node.metadata.labels));
    cache = { names, zones, order: nodeTreeOrder(zones), seen: undefined };
    trees.set(nodeInfos, cache);
  }
  cache.seen = changes?.length;
  return cache.order;
}

/** FNV-1a (32 bits) of `text`. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/** Where `pod`'s scan of `numAllNodes` nodes starts: a pure function of its namespace and name. */
export function startIndexOf(pod: Pod, numAllNodes: number): number {
  if (numAllNodes === 0) return 0;
  return fnv1a(`${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`) % numAllNodes;
}

/**
 * The nodes a cycle scores: the indices of the first `count` nodes for which `feasible`
 * holds, scanning `order` circularly from `start`, in scan order; undefined when that is
 * every feasible node (then the caller scores all, in its own order).
 */
export function windowOf(order: Int32Array, start: number, count: number, feasibleTotal: number, feasible: (index: number) => boolean): number[] | undefined {
  if (count >= feasibleTotal) return undefined;
  const picked: number[] = [];
  const total = order.length;
  for (let step = 0; step < total && picked.length < count; step += 1) {
    const index = order[(start + step) % total] as number;
    if (feasible(index)) picked.push(index);
  }
  return picked;
}
