/** Which nodes a spread constraint counts (kube's `matchNodeInclusionPolicies`). */
import type { Node, Pod } from '../../../../schemas/index.ts';
import { nodeAffinityMatcher } from '../node-affinity/index.ts';
import { TaintEffect, tolerates } from '../taint-toleration/index.ts';
import type { SpreadConstraint } from './constraints.ts';

/**
 * For `pod`: whether a constraint counts `node`. nodeAffinityPolicy Honor: the node must
 * match the pod's nodeSelector and required node affinity; nodeTaintsPolicy Honor: the pod
 * must tolerate the node's NoSchedule/NoExecute taints (`spec.taints` as written).
 */
export function inclusionOf(pod: Pod): (constraint: SpreadConstraint, node: Node) => boolean {
  let affinity: ((node: Node) => boolean) | undefined;
  return (constraint, node) => {
    if (constraint.honorNodeAffinity) {
      affinity ??= nodeAffinityMatcher(pod);
      if (!affinity(node)) return false;
    }
    if (constraint.honorNodeTaints) {
      for (const taint of node.spec?.taints ?? []) {
        if (taint.effect !== TaintEffect.NoSchedule && taint.effect !== TaintEffect.NoExecute) continue;
        if (!tolerates(pod.spec.tolerations, taint)) return false;
      }
    }
    return true;
  };
}
