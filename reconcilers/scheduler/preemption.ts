/**
 * What the scheduler writes when a pod preempts (kube-scheduler 1.32's `prepareCandidate`
 * and its nomination): each victim gets the DisruptionTarget condition and a graceful
 * delete (its own grace period), lower-priority pods nominated to the node lose their
 * nomination, and the preemptor gets `status.nominatedNodeName` with its PodScheduled
 * condition, whose message names the victims, and the preemption recorded for its binding
 * (see {@link PREEMPTION_RECORD}).
 */
import type { BindingPreemption, EventBody, Pod, PodCondition, PreemptionVictim } from '../../schemas/index.ts';
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
 * priority than the preemptor (and the preemption recorded for it).
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
    commands.push(statusWrite(pod, status.conditions ? { ...status, conditions: withoutPreemptionRecord(status.conditions) } : status));
  }
  return commands;
}

/**
 * The type of the condition in which the scheduler records, on the pod it nominated by
 * preempting, that preemption: the nominated node, the victims (namespace/name, uid,
 * priority) and the filter summary that made it preempt. kube-scheduler keeps none of this
 * (its victims are gone once the pod can bind, and the PodScheduled message of each later
 * cycle replaces the one that named them); logplane keeps it on the pod, where the binding's
 * decision reads it back for its rationale (`BindingPreemption`), so that decision stays a
 * function of the view and re-runs the same. A condition type kube does not define is a
 * qualified name, as kube-apiserver requires.
 */
export const PREEMPTION_RECORD = 'scheduler.logplane.io/Preemption';

/** The reason of the {@link PREEMPTION_RECORD} condition. */
const PREEMPTION_RECORD_REASON = 'VictimsPreempted';

const victimText = (victim: PreemptionVictim): string =>
  `${victim.namespace}/${victim.name} (${victim.uid === null ? '' : `uid ${victim.uid}, `}priority ${victim.priority})`;

/**
 * The message of the {@link PREEMPTION_RECORD} condition: "nominated node node-1, preempting
 * 2 pod(s): default/low-1 (uid …, priority 0), default/low-2 (uid …, priority 0); reason:
 * 0/2 nodes are available: 2 Insufficient cpu."
 */
const preemptionRecordMessage = (preemption: BindingPreemption): string =>
  `nominated node ${preemption.nominatedNode}, preempting ${preemption.victims.length} pod(s): ${preemption.victims.map(victimText).join(', ')}; reason: ${preemption.reason}`;

/** The {@link PREEMPTION_RECORD} condition for `preemption`, decided at `now`. */
export const preemptionRecord = (preemption: BindingPreemption, now: number): PodCondition => ({
  type: PREEMPTION_RECORD,
  status: 'True',
  reason: PREEMPTION_RECORD_REASON,
  message: preemptionRecordMessage(preemption),
  lastTransitionTime: isoTime(now),
});

const RECORD_MESSAGE = /^nominated node (\S+), preempting \d+ pod\(s\): (.*?); reason: (.*)$/s;
const VICTIM_TEXT = /([^\s/,]+)\/([^\s,(]+) \((?:uid ([^\s,()]+), )?priority (-?\d+)\)/g;

/**
 * The preemption recorded on `pod` for its nomination to `nominatedNode`, or undefined when
 * it has none for that node (never nominated by a preemption, nominated elsewhere since, or
 * a condition that does not read back exactly as the scheduler writes it).
 */
export function recordedPreemption(pod: Pod, nominatedNode: string): BindingPreemption | undefined {
  const message = pod.status?.conditions?.find((c) => c.type === PREEMPTION_RECORD && c.status === 'True')?.message;
  const parts = message === undefined ? null : RECORD_MESSAGE.exec(message);
  if (parts === null || parts[1] !== nominatedNode) return undefined;
  const victims = [...(parts[2] as string).matchAll(VICTIM_TEXT)].map(
    ([, namespace, name, uid, priority]): PreemptionVictim => ({ namespace: namespace as string, name: name as string, uid: uid ?? null, priority: Number(priority) }),
  );
  const preemption: BindingPreemption = { nominatedNode, reason: parts[3] as string, victims };
  return preemptionRecordMessage(preemption) === message ? preemption : undefined;
}

/** `conditions` without the {@link PREEMPTION_RECORD} (the pod no longer waits for that preemption). */
export const withoutPreemptionRecord = (conditions: readonly PodCondition[]): PodCondition[] => conditions.filter((c) => c.type !== PREEMPTION_RECORD);
