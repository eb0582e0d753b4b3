/**
 * PrioritySort (kube-scheduler's QueueSort plugin): pods are tried higher `spec.priority`
 * first (the PriorityClass value admission resolved; 0 when unset), then the one that
 * entered the queue earlier. Queue time is not in the log, so "earlier" is the pod's
 * `metadata.creationTimestamp`, then its namespace/name, which keeps the order a pure
 * function of the view.
 */
import type { QueueSortPlugin } from '../../framework.ts';
import type { Pod } from '../../../../schemas/index.ts';

/** This plugin's registry name (kube-scheduler's). */
export const PRIORITY_SORT = 'PrioritySort';

const priorityOf = (pod: Pod): number => pod.spec.priority ?? 0;
const keyOf = (pod: Pod): string => `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** Negative when `left` is tried before `right`. */
export function comparePods(left: Pod, right: Pod): number {
  const priority = priorityOf(right) - priorityOf(left);
  if (priority !== 0) return priority;
  // RFC 3339 in UTC ("…Z") sorts as text; a pod without one goes after those with one.
  const leftTime = left.metadata.creationTimestamp ?? '\uffff';
  const rightTime = right.metadata.creationTimestamp ?? '\uffff';
  if (leftTime !== rightTime) return leftTime < rightTime ? -1 : 1;
  const leftKey = keyOf(left);
  const rightKey = keyOf(right);
  return leftKey < rightKey ? -1 : leftKey > rightKey ? 1 : 0;
}

/** Creates the PrioritySort queue ordering. */
export function createPrioritySort(): QueueSortPlugin {
  return { name: PRIORITY_SORT, compare: comparePods };
}
