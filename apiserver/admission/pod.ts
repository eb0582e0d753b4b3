/**
 * The admission plugins of kube-apiserver 1.32 that complete a new Pod from cluster
 * objects, as pure functions of the pod and the view; a refusal is kube's 403
 * (`pods "x" is forbidden: …`).
 *
 * - Priority (plugin/pkg/admission/priority): `spec.priority` and `spec.preemptionPolicy`
 *   from the PriorityClass the pod names, else from the globalDefault one (whose name the
 *   pod then carries), else 0 and PreemptLowerPriority. A class that does not exist, or a
 *   priority / preemption policy the pod sets that differs from the class's, is refused.
 *   kube-apiserver creates the two system classes at start; here, while no object of that
 *   name exists, they resolve to their built-in values.
 * - RuntimeClass (plugin/pkg/admission/runtimeclass): `spec.overhead` from the class's
 *   overhead, its scheduling nodeSelector merged into the pod's and its tolerations into
 *   the pod's (kube's tolerations.MergeTolerations); a missing class, a conflicting
 *   nodeSelector value or an overhead the class does not define are refused.
 */
import type { View } from '../../projections/index.ts';
import { kindRef, sameJson, type ObjectOfKind, type Toleration } from '../../schemas/index.ts';
import { ApiError } from '../errors.ts';
import { failureStatus } from '../status.ts';

type Pod = ObjectOfKind<'Pod'>;
type PriorityClass = ObjectOfKind<'PriorityClass'>;
type RuntimeClass = ObjectOfKind<'RuntimeClass'>;

/** kube's `admission.NewForbidden` for a pod. */
const forbidden = (pod: Pod, reason: string): ApiError =>
  new ApiError(failureStatus('Forbidden', `pods "${pod.metadata.name}" is forbidden: ${reason}`, { name: pod.metadata.name, group: '', kind: 'pods' }));

/** kube's scheduling.SystemPriorityClasses: what the apiserver bootstraps at start. */
export const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-node-critical': 2000001000,
  'system-cluster-critical': 2000000000,
};

const PREEMPT_LOWER_PRIORITY = 'PreemptLowerPriority';

/** The PriorityClass named `name`: the stored object, else the built-in system class of that name. */
const priorityClassNamed = (view: View, name: string): Pick<PriorityClass, 'value' | 'preemptionPolicy'> | undefined => {
  const stored = view.get(`${kindRef('PriorityClass')}//${name}`) as PriorityClass | undefined;
  if (stored) return stored;
  return Object.hasOwn(SYSTEM_PRIORITY_CLASSES, name) ? { value: SYSTEM_PRIORITY_CLASSES[name]!, preemptionPolicy: PREEMPT_LOWER_PRIORITY } : undefined;
};

/** kube's getDefaultPriorityClass: of the globalDefault classes (normally one), the one with the lowest value. */
export const defaultPriorityClass = (view: View): PriorityClass | undefined =>
  (view.list('PriorityClass') as PriorityClass[])
    .filter((candidate) => candidate.globalDefault === true)
    .reduce<PriorityClass | undefined>((lowest, candidate) => (lowest === undefined || candidate.value < lowest.value ? candidate : lowest), undefined);

/** The Priority plugin's admitPod on create. */
export const admitPodPriority = (pod: Pod, view: View): void => {
  const spec = pod.spec;
  let priority: number;
  let preemptionPolicy: string | undefined;
  const named = spec.priorityClassName;
  if (named === undefined || named === '') {
    const chosen = defaultPriorityClass(view);
    if (chosen) spec.priorityClassName = chosen.metadata.name;
    priority = chosen?.value ?? 0;
    preemptionPolicy = chosen ? chosen.preemptionPolicy : PREEMPT_LOWER_PRIORITY;
  } else {
    const found = priorityClassNamed(view, named);
    if (!found) throw forbidden(pod, `no PriorityClass with name ${named} was found`);
    priority = found.value;
    preemptionPolicy = found.preemptionPolicy;
  }
  if (spec.priority != null && spec.priority !== priority) {
    throw forbidden(
      pod,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
    );
  }
  spec.priority = priority;
  if (preemptionPolicy === undefined) return;
  if (spec.preemptionPolicy != null && spec.preemptionPolicy !== preemptionPolicy) {
    throw forbidden(
      pod,
      `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`,
    );
  }
  spec.preemptionPolicy = preemptionPolicy;
};

/** The Priority plugin's validatePriorityClass on create: at most one globalDefault class. */
export const admitPriorityClass = (priorityClass: PriorityClass, view: View): void => {
  if (priorityClass.globalDefault !== true) return;
  const existing = defaultPriorityClass(view);
  if (!existing) return;
  const name = priorityClass.metadata.name;
  throw new ApiError(
    failureStatus(
      'Forbidden',
      `priorityclasses.scheduling.k8s.io "${name}" is forbidden: PriorityClass ${existing.metadata.name} is already marked as default. Only one default can exist`,
      { name, group: 'scheduling.k8s.io', kind: 'priorityclasses' },
    ),
  );
};

/** kube's tolerations.isSuperset: whether `wide` tolerates everything `narrow` does. */
const tolerates = (wide: Toleration, narrow: Toleration): boolean => {
  if (sameJson(wide, narrow)) return true;
  if (narrow.key !== wide.key && ((wide.key ?? '') !== '' || wide.operator !== 'Exists')) return false;
  if (narrow.effect !== wide.effect && (wide.effect ?? '') !== '') return false;
  if (wide.effect === 'NoExecute' && wide.tolerationSeconds != null) {
    if (narrow.tolerationSeconds == null || narrow.tolerationSeconds > wide.tolerationSeconds) return false;
  }
  switch (wide.operator ?? '') {
    case 'Equal':
    case '':
      return narrow.operator === 'Equal' && narrow.value === wide.value;
    case 'Exists':
      return true;
    default:
      return false;
  }
};

/** kube's tolerations.MergeTolerations: both lists, without the ones another (kept) toleration covers; of equal ones, the first. */
export const mergeTolerations = (first: readonly Toleration[], second: readonly Toleration[]): Toleration[] => {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((toleration, index) => {
    if (merged.some((kept) => tolerates(kept, toleration))) return;
    if (all.slice(index + 1).some((later) => !sameJson(later, toleration) && tolerates(later, toleration))) return;
    merged.push(toleration);
  });
  return merged;
};

/** The RuntimeClass plugin's Admit and Validate on create. */
export const admitRuntimeClass = (pod: Pod, view: View): void => {
  const spec = pod.spec;
  const name = spec.runtimeClassName;
  const runtimeClass = name == null ? undefined : (view.get(`${kindRef('RuntimeClass')}//${name}`) as RuntimeClass | undefined);
  if (name != null && !runtimeClass) throw forbidden(pod, `pod rejected: RuntimeClass "${name}" not found`);
  const overhead = runtimeClass?.overhead?.podFixed;
  const podOverhead = spec.overhead != null && Object.keys(spec.overhead).length > 0 ? spec.overhead : undefined;
  if (overhead !== undefined) {
    if (podOverhead !== undefined && !sameJson(podOverhead, overhead)) throw forbidden(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    spec.overhead = { ...overhead };
  } else if (podOverhead !== undefined) {
    throw forbidden(pod, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  }
  const scheduling = runtimeClass?.scheduling;
  if (!scheduling) return;
  if (scheduling.nodeSelector !== undefined) {
    const selector: Record<string, string> = { ...spec.nodeSelector };
    for (const [key, value] of Object.entries(scheduling.nodeSelector)) {
      if (Object.hasOwn(selector, key) && selector[key] !== value) {
        throw forbidden(pod, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${selector[key]}`);
      }
      selector[key] = value;
    }
    spec.nodeSelector = selector;
  }
  const merged = mergeTolerations(spec.tolerations ?? [], scheduling.tolerations ?? []);
  if (merged.length > 0) spec.tolerations = merged;
};
