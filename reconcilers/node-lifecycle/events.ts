/**
 * The Events of a node-lifecycle decision, as kube's node lifecycle and taint eviction
 * controllers record them: when the decision turns the node's Ready condition Unknown,
 * NodeNotReady "Node NAME status is now: NodeNotReady" on the Node and Warning NodeNotReady
 * "Node is not ready" on each of its ready pods (MarkPodsNotReady); NodeReady when it turns
 * True again; TaintManagerEviction "Marking for deletion Pod NS/NAME" (from
 * `taint-eviction-controller`) on every pod it evicts.
 */
import type { View } from '../../projections/index.ts';
import type { Node, Pod } from '../../schemas/index.ts';
import { createRecorder } from '../events/index.ts';
import type { Decision } from '../runtime.ts';

/** kube's component of the node lifecycle controller's Events. */
export const NODE_CONTROLLER_SOURCE = { component: 'node-controller' } as const;
/** kube's component of the taint eviction controller's Events. */
export const TAINT_EVICTION_SOURCE = { component: 'taint-eviction-controller' } as const;

const isReady = (pod: Pod): boolean => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** `decision` on `node` with the commands of the Events it records appended. */
export const withNodeEvents = (node: Node, view: View, now: number, decision: Decision): Decision => {
  if (decision.commands.length === 0) return decision;
  const lifecycle = createRecorder(view, now, NODE_CONTROLLER_SOURCE);
  const eviction = createRecorder(view, now, TAINT_EVICTION_SOURCE);
  const before = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  for (const command of decision.commands) {
    if (command.type === 'NodeStatusChanged') {
      const after = command.status.conditions?.find((c) => c.type === 'Ready')?.status;
      if (after === before) continue;
      if (after === 'Unknown') {
        lifecycle.event(node, 'Normal', 'NodeNotReady', `Node ${node.metadata.name} status is now: NodeNotReady`);
        for (const pod of view.podsOnNode(node.metadata.name)) if (isReady(pod)) lifecycle.event(pod, 'Warning', 'NodeNotReady', 'Node is not ready');
      } else if (after === 'True') {
        lifecycle.event(node, 'Normal', 'NodeReady', `Node ${node.metadata.name} status is now: NodeReady`);
      }
    } else if (command.type === 'ObjectDeleted' && command.kind === 'Pod') {
      const pod = view.get(`Pod/${command.namespace ?? ''}/${command.name}`);
      if (pod) eviction.event(pod, 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${command.namespace ?? ''}/${command.name}`);
    }
  }
  const events = [...lifecycle.commands(), ...eviction.commands()];
  return events.length === 0 ? decision : { ...decision, commands: [...decision.commands, ...events] };
};
