/**
 * What the scheduler writes when a pod preempts (kube-scheduler 1.32's `prepareCandidate`
 * and its nomination): each victim gets the DisruptionTarget condition and a graceful
 * delete (its own grace period), lower-priority pods nominated to the node lose their
 * nomination, and the preemptor gets `status.nominatedNodeName` with its PodScheduled
 * condition, whose message names the victims.
 */
import type { EventBody, Pod, PodCondition } from '../../schemas/index.ts';
import { podPriority } from './nominated.ts';

/** kube's reason of the DisruptionTarget condition of a pod the scheduler preempted. */
export const PREEMPTION_BY_SCHEDULER = 'PreemptionByScheduler';

/** kube's message of that condition: "<schedulerName>: preempting to accommodate a higher priority pod". */
export const preemptionConditionMessage = (schedulerName: string): string => `${schedulerName}: preempting to accommodate a higher priority pod`;

/** kube's Preempted event message on a victim. */
export const preemptedMessage = (preemptorUid: string, node: string): string => `Preempted by pod ${preemptorUid} on node ${node}`;

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const namespacedName = (pod: Pod): string => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/**
 * What follows kube's filter summary in the preemptor's PodScheduled message when it
 * preempted (kube has none there; logplane records the victims with the decision):
 * "preemption: nominated node node-2, preempting 2 pod(s): default/low-1, default/low-2."
 */
export const preemptionNote = (node: string, victims: readonly Pod[]): string =>
  `preemption: nominated node ${node}, preempting ${victims.length} pod(s): ${victims.map(namespacedName).join(', ')}.`;

const statusWrite = (pod: Pod, status: NonNullable<Pod['status']>): EventBody => ({
  type: 'ObjectUpdated',
  object: { ...pod, status },
  expectedResourceVersion: null,
  subresource: 'status',
});

/**
 * The writes that preempt `victims` for `preemptor` (victims already being deleted are left
 * alone, as kube skips them), then clear the nomination of `nominatedOnNode` pods of lower
 * priority than the preemptor.
 */
export function preemptionCommands(preemptor: Pod, victims: readonly Pod[], nominatedOnNode: readonly Pod[], now: number): EventBody[] {
  const commands: EventBody[] = [];
  const schedulerName = preemptor.spec.schedulerName ?? 'default-scheduler';
  for (const victim of victims) {
    if (victim.metadata.deletionTimestamp) continue;
    const conditions = victim.status?.conditions ?? [];
    const condition: PodCondition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: PREEMPTION_BY_SCHEDULER,
      message: preemptionConditionMessage(schedulerName),
      lastTransitionTime: isoTime(now),
    };
    commands.push(statusWrite(victim, { ...victim.status, conditions: [...conditions.filter((c) => c.type !== 'DisruptionTarget'), condition] }));
    commands.push({
      type: 'ObjectDeleted',
      kind: 'Pod',
      namespace: victim.metadata.namespace ?? 'default',
      name: victim.metadata.name,
      expectedResourceVersion: null,
      uid: victim.metadata.uid ?? null,
      propagationPolicy: null,
      gracePeriodSeconds: null,
    });
  }
  const priority = podPriority(preemptor);
  for (const pod of nominatedOnNode) {
    if (podPriority(pod) >= priority || !pod.status?.nominatedNodeName) continue;
    const { nominatedNodeName: _cleared, ...status } = pod.status;
    commands.push(statusWrite(pod, status));
  }
  return commands;
}
