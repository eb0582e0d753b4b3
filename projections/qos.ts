/**
 * A pod's quality-of-service class, as kube 1.32's `qos.GetPodQOS` (pkg/apis/core/helper/qos)
 * computes it: the apiserver records it in `status.qosClass` when the pod is created, and
 * the node agent reports it with every status, as kubelet does.
 *
 * Only cpu and memory count, and only quantities above zero. BestEffort: no container (nor
 * init container) requests or limits either. Guaranteed: every container limits both cpu and
 * memory, and the summed requests equal the summed limits for every resource. Burstable:
 * anything else. Pod-level `spec.resources` is behind the PodLevelResources gate, alpha and
 * off in 1.32, so (as there) it does not count; ephemeral containers cannot set resources.
 */
import type { Pod } from '../schemas/index.ts';
import { parseQuantity, QuantityScale } from './quantity.ts';

/** The three classes, as `status.qosClass` spells them. */
export const QosClass = { Guaranteed: 'Guaranteed', Burstable: 'Burstable', BestEffort: 'BestEffort' } as const;
export type QosClass = (typeof QosClass)[keyof typeof QosClass];

const QOS_RESOURCES = { cpu: QuantityScale.Milli, memory: QuantityScale.Unit } as const;
type QosResource = keyof typeof QOS_RESOURCES;
const isQosResource = (name: string): name is QosResource => Object.hasOwn(QOS_RESOURCES, name);

/** The positive cpu (millicores) and memory (bytes) amounts of a resource list; malformed ones (the apiserver rejects them) count as none. */
const positiveAmounts = (list: Readonly<Record<string, string>> | null | undefined): Map<QosResource, number> => {
  const amounts = new Map<QosResource, number>();
  for (const [name, quantity] of Object.entries(list ?? {})) {
    if (!isQosResource(name)) continue;
    const parsed = parseQuantity(quantity, QOS_RESOURCES[name]);
    if (parsed.type === 'ok' && parsed.value > 0) amounts.set(name, parsed.value);
  }
  return amounts;
};

const addInto = (sum: Map<QosResource, number>, amounts: Map<QosResource, number>): void => {
  for (const [name, value] of amounts) sum.set(name, (sum.get(name) ?? 0) + value);
};

/** kube's ComputePodQOS: the class the pod's containers' resources make it. */
export const computePodQos = (pod: Pick<Pod, 'spec'>): QosClass => {
  const requests = new Map<QosResource, number>();
  const limits = new Map<QosResource, number>();
  let guaranteed = true;
  for (const container of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    addInto(requests, positiveAmounts(container.resources?.requests));
    const containerLimits = positiveAmounts(container.resources?.limits);
    addInto(limits, containerLimits);
    if (!containerLimits.has('cpu') || !containerLimits.has('memory')) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return QosClass.BestEffort;
  if (guaranteed && requests.size === limits.size && [...requests].every(([name, value]) => limits.get(name) === value)) return QosClass.Guaranteed;
  return QosClass.Burstable;
};

/** kube's GetPodQOS: the class recorded in the pod's status, else the computed one. */
export const podQos = (pod: Pick<Pod, 'spec' | 'status'>): string => {
  const recorded = pod.status?.qosClass;
  return recorded !== undefined && recorded !== null && recorded !== '' ? recorded : computePodQos(pod);
};
