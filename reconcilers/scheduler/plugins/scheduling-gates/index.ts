/**
 * SchedulingGates (kube-scheduler's PreEnqueue plugin): a pod whose `spec.schedulingGates`
 * is not empty is not scheduled, nor retried, until every gate is removed (a pod update,
 * which re-queues it). Its PodScheduled condition says why, as the apiserver writes it.
 */
import type { PreEnqueuePlugin, PreEnqueueResult } from '../../framework.ts';
import type { Pod } from '../../../../schemas/index.ts';

/** This plugin's registry name (kube-scheduler's). */
export const SCHEDULING_GATES = 'SchedulingGates';

/** The PodScheduled condition of a gated pod (kube's `PodReasonSchedulingGated` and its message). */
export const SchedulingGated = {
  reason: 'SchedulingGated',
  message: 'Scheduling is blocked due to non-empty scheduling gates',
} as const;

const READY: PreEnqueueResult = Object.freeze({ type: 'ready' });
const GATED: PreEnqueueResult = Object.freeze({ type: 'gated', ...SchedulingGated });

/** Whether `pod` still has scheduling gates. */
export function isSchedulingGated(pod: Pod): boolean {
  return (pod.spec.schedulingGates?.length ?? 0) > 0;
}

/** Creates the SchedulingGates PreEnqueue plugin. */
export function createSchedulingGates(): PreEnqueuePlugin {
  return {
    name: SCHEDULING_GATES,
    preEnqueue: (pod) => (isSchedulingGated(pod) ? GATED : READY),
  };
}
