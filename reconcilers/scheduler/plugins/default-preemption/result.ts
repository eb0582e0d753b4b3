/**
 * DefaultPreemption's result as the binding records it (the schema's `BindingPreemption`,
 * v9): kube-scheduler's PostFilterResult nominates a node; logplane keeps, with the
 * binding that follows, why the pod had to preempt and whom it evicted.
 */
import type { BindingPreemption, Pod, PreemptionVictim } from '../../../../schemas/index.ts';
import { podPriority } from '../../nominated.ts';

/** A victim as the rationale names it: namespace, name, uid and the priority it had. */
const preemptionVictim = (pod: Pod): PreemptionVictim => ({
  namespace: pod.metadata.namespace ?? 'default',
  name: pod.metadata.name,
  uid: pod.metadata.uid ?? null,
  priority: podPriority(pod),
});

/**
 * The preemption that nominated a pod to `nominatedNode` by evicting `victims` (in the
 * plugin's order, most important first), because no node fit: `reason` is the filter
 * summary of that cycle (kube's FitError message).
 */
export const bindingPreemption = (nominatedNode: string, reason: string, victims: readonly Pod[]): BindingPreemption => ({
  nominatedNode,
  reason,
  victims: victims.map(preemptionVictim),
});
