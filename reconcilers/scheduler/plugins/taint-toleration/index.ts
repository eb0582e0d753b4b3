/**
 * TaintToleration: a node's NoSchedule and NoExecute taints keep off every pod that does
 * not tolerate them. A node whose Ready condition is not True counts as carrying the
 * `node.kubernetes.io/not-ready` (False, or no condition yet) or
 * `node.kubernetes.io/unreachable` (Unknown) NoSchedule taint even before the
 * node-lifecycle controller has added it, so a freshly failed node is avoided at once
 * and reported exactly as the taint would be.
 */
import { defaultNormalizeScore, defineCycleValue, FIT, type FilterPlugin, MAX_NODE_SCORE, type NodeInfo, type ScorePlugin, unresolvable } from '../../framework.ts';
import type { Node, Pod, Taint, Toleration } from '../../../../schemas/index.ts';

/** This plugin's registry name. */
export const TAINT_TOLERATION = 'TaintToleration';

/** Taint effects. */
export const TaintEffect = {
  NoSchedule: 'NoSchedule',
  PreferNoSchedule: 'PreferNoSchedule',
  NoExecute: 'NoExecute',
} as const;

/** The taint keys Kubernetes' own controllers put on nodes. */
export const NodeTaintKey = {
  NotReady: 'node.kubernetes.io/not-ready',
  Unreachable: 'node.kubernetes.io/unreachable',
  Unschedulable: 'node.kubernetes.io/unschedulable',
} as const;

const TolerationOperator = { Equal: 'Equal', Exists: 'Exists' } as const;

/**
 * Whether one toleration tolerates `taint` (`v1.Toleration.ToleratesTaint`): its effect is
 * empty or equal, its key is empty or equal, and it is `Exists` or (`Equal`, the default)
 * with an equal value. An empty key with `Exists` tolerates every taint.
 */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? TolerationOperator.Equal) {
    case TolerationOperator.Exists:
      return true;
    case TolerationOperator.Equal:
    case '':
      return (toleration.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** Whether any of `tolerations` tolerates `taint` (node-lifecycle reuses this for NoExecute eviction). */
export function tolerates(tolerations: readonly Toleration[] | null | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((toleration) => toleratesTaint(toleration, taint));
}

/**
 * The node's taints plus the NoSchedule taint its Ready condition implies when the
 * node-lifecycle controller has not added it yet.
 */
export function effectiveTaints(node: Node): readonly Taint[] {
  let taints = taintsByNode.get(node);
  if (taints === undefined) taintsByNode.set(node, (taints = computeEffectiveTaints(node)));
  return taints;
}

/**
 * {@link effectiveTaints} per Node object: a view's objects are frozen and replaced, never
 * changed, and every decision asks for every node's taints (1,000 nodes × each pod).
 */
const taintsByNode = new WeakMap<Node, readonly Taint[]>();

function computeEffectiveTaints(node: Node): readonly Taint[] {
  const taints = node.spec?.taints ?? [];
  const impliedKey = readinessTaintKey(node);
  if (impliedKey === undefined) return taints;
  if (taints.some((taint) => taint.key === impliedKey && taint.effect === TaintEffect.NoSchedule)) return taints;
  return [...taints, { key: impliedKey, effect: TaintEffect.NoSchedule }];
}

function readinessTaintKey(node: Node): string | undefined {
  const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready');
  switch (ready?.status) {
    case 'True':
      return undefined;
    case 'Unknown':
      return NodeTaintKey.Unreachable;
    default:
      return NodeTaintKey.NotReady;
  }
}

/** The first NoSchedule/NoExecute taint of `node` (see {@link effectiveTaints}) that `pod` does not tolerate. */
export function findUntoleratedTaint(pod: Pod, node: Node): Taint | undefined {
  return effectiveTaints(node).find(
    (taint) =>
      (taint.effect === TaintEffect.NoSchedule || taint.effect === TaintEffect.NoExecute) &&
      !tolerates(pod.spec.tolerations, taint),
  );
}

/** kube-scheduler's reason for an untolerated taint, e.g. `node(s) had untolerated taint {dedicated: gpu}`. */
export function untoleratedTaintReason(taint: Taint): string {
  return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
}

/**
 * The score's raw value (kube's `countIntolerableTaintsPreferNoSchedule`): how many of the
 * node's PreferNoSchedule taints (`spec.taints`) the pod's tolerations with that effect, or
 * with no effect, do not tolerate.
 */
export function intolerablePreferNoSchedule(node: Node, tolerations: readonly Toleration[]): number {
  let count = 0;
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect === TaintEffect.PreferNoSchedule && !tolerates(tolerations, taint)) count += 1;
  }
  return count;
}

/** The pod's PreferNoSchedule (or effect-less) tolerations, and whether any node has a PreferNoSchedule taint they leave. */
const preferNoScheduleOfCycle = defineCycleValue('TaintToleration/preferNoSchedule', (pod: Pod, nodeInfos: readonly NodeInfo[]) => {
  const tolerations = (pod.spec.tolerations ?? []).filter((toleration) => !toleration.effect || toleration.effect === TaintEffect.PreferNoSchedule);
  let anyNode = false;
  for (let index = 0; index < nodeInfos.length && !anyNode; index += 1) {
    const node = (nodeInfos[index] as NodeInfo).node;
    if ((node.spec?.taints?.length ?? 0) > 0 && intolerablePreferNoSchedule(node, tolerations) > 0) anyNode = true;
  }
  return { tolerations, anyNode };
});

/**
 * Creates the TaintToleration filter and score. The score prefers nodes with fewer
 * intolerable PreferNoSchedule taints (kube: raw count, `DefaultNormalizeScore` reversed).
 * While no node has one, every node scores 100, given directly (node-local).
 */
export function createTaintToleration(): FilterPlugin & ScorePlugin {
  return {
    name: TAINT_TOLERATION,
    filterNodeLocal: true,
    nodeLocal: (ctx) => !ctx.get(preferNoScheduleOfCycle).anyNode,
    filter(pod, nodeInfo) {
      const taint = findUntoleratedTaint(pod, nodeInfo.node);
      return taint === undefined ? FIT : unresolvable(untoleratedTaintReason(taint));
    },
    score(_pod, nodeInfo, ctx) {
      const { tolerations, anyNode } = ctx.get(preferNoScheduleOfCycle);
      return anyNode ? intolerablePreferNoSchedule(nodeInfo.node, tolerations) : MAX_NODE_SCORE;
    },
    normalize(scores, _nodes, ctx) {
      if (ctx.get(preferNoScheduleOfCycle).anyNode) defaultNormalizeScore(scores, true);
    },
  };
}
