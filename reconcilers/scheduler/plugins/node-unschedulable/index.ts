/**
 * NodeUnschedulable: a cordoned node (`spec.unschedulable`) takes no new pods, except pods
 * that tolerate the `node.kubernetes.io/unschedulable:NoSchedule` taint (as DaemonSet pods do).
 */
import { FIT, type FilterPlugin, unresolvable } from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';
import { NodeTaintKey, TaintEffect, tolerates } from '../taint-toleration/index.ts';

/** This plugin's registry name. */
export const NODE_UNSCHEDULABLE = 'NodeUnschedulable';

/** kube-scheduler's reason for a cordoned node. */
export const NODE_UNSCHEDULABLE_REASON = 'node(s) were unschedulable';

/** Whether `pod` may be placed on `node` as far as cordoning goes. */
export function admitsDespiteCordon(pod: Pod, node: Node): boolean {
  if (node.spec?.unschedulable !== true) return true;
  return tolerates(pod.spec.tolerations, { key: NodeTaintKey.Unschedulable, effect: TaintEffect.NoSchedule });
}

/** Creates the NodeUnschedulable filter. */
export function createNodeUnschedulable(): FilterPlugin {
  return {
    name: NODE_UNSCHEDULABLE,
    nodeLocal: true,
    filter(pod, nodeInfo) {
      return admitsDespiteCordon(pod, nodeInfo.node) ? FIT : unresolvable(NODE_UNSCHEDULABLE_REASON);
    },
  };
}
