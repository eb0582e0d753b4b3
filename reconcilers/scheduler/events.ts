/**
 * The Events of the scheduler's decisions, as kube-scheduler 1.32 records them (reporting
 * controller `default-scheduler`): Scheduled "Successfully assigned NS/NAME to NODE" for a
 * binding, FailedScheduling with the filter summary ("0/3 nodes are available: 3
 * Insufficient cpu.") when the pod fits nowhere, and Preempted "Preempted by pod UID on
 * node NODE" on each pod it preempts. A pod held back by its scheduling gates records none,
 * as in kube (only its PodScheduled condition says so).
 */
import type { Narrator } from '../events/index.ts';
import { preemptedMessage, PREEMPTION_BY_SCHEDULER } from './preemption.ts';

/** kube's `Scheduled` message for a binding. */
export const scheduledMessage = (namespace: string, name: string, node: string): string => `Successfully assigned ${namespace}/${name} to ${node}`;

/** Records what the scheduler decided about the pod `key`. */
export const narrateScheduling: Narrator = (key, view, decision, recorder) => {
  const pod = view.get(key);
  if (pod?.kind !== 'Pod') return;
  for (const command of decision.commands) {
    if (command.type === 'PodBound') {
      recorder.event(pod, 'Normal', 'Scheduled', scheduledMessage(command.namespace, command.name, command.node));
    } else if (command.type === 'ObjectUpdated' && command.object.kind === 'Pod') {
      const object = command.object;
      if (object.metadata.name === pod.metadata.name && object.metadata.namespace === pod.metadata.namespace) {
        const condition = object.status?.conditions?.find((c) => c.type === 'PodScheduled');
        if (condition?.status === 'False' && condition.reason === 'Unschedulable') recorder.event(pod, 'Warning', 'FailedScheduling', condition.message ?? '');
        continue;
      }
      const disruption = object.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
      if (disruption?.reason === PREEMPTION_BY_SCHEDULER && object.spec.nodeName) {
        recorder.event(object, 'Normal', 'Preempted', preemptedMessage(pod.metadata.uid ?? '', object.spec.nodeName));
      }
    }
  }
};
