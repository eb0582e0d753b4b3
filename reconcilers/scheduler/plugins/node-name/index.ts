/** NodeName: a pod that names its node (`spec.nodeName`) fits only that node. */
import { FIT, type FilterPlugin, unresolvable } from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';

/** This plugin's registry name. */
export const NODE_NAME = 'NodeName';

/** kube-scheduler's reason for a node other than the requested one. */
export const NODE_NAME_REASON = "node(s) didn't match the requested node name";

/** Whether `node` is the node `pod` asks for, or `pod` asks for none. */
export function matchesNodeName(pod: Pod, node: Node): boolean {
  const requested = pod.spec.nodeName;
  return !requested || requested === node.metadata.name;
}

/** Creates the NodeName filter. */
export function createNodeName(): FilterPlugin {
  return {
    name: NODE_NAME,
    nodeLocal: true,
    filter(pod, nodeInfo) {
      return matchesNodeName(pod, nodeInfo.node) ? FIT : unresolvable(NODE_NAME_REASON);
    },
  };
}
