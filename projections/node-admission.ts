/**
 * Kubelet admission in the fold, for pods created with `spec.nodeName` under the v6 rule
 * (`ObjectCreated.nodeAdmission: 'Deferred'`, what the apiserver writes): as in
 * Kubernetes, such a create is accepted whether or not the node exists or has room, and
 * the node admits or rejects the pod.
 *
 * - The node does not exist yet: the pod is stored bound but uncharged, *waiting*; the
 *   node's registration (its create, in the same partition: Pods and Nodes share the
 *   scheduling domain) admits every waiting pod in log order, charging those that fit.
 * - The node exists, or registers, without room: the pod is *rejected* (never charged);
 *   its agent reports it Failed with the reason and message kubelet gives
 *   (`OutOfcpu`, "Pod was rejected: Node didn't have enough resource: cpu, …").
 *
 * The verdicts live beside the ClusterIPs in the fold's allocations, so a replay reaches
 * them again and no node is ever charged past its allocatable. Logs written before v6
 * hold no deferred create and fold as they always did.
 */
import type { FoldState } from './fold.ts';
import { judgedInFold } from './quota-admission.ts';
import { addUsage, nodeAllocatable, podUsage, type NodeUsage } from './resources.ts';
import type { EventBody, KubeObject, Node, Pod } from '../schemas/index.ts';

/** Why a node did not admit a pod: kubelet's `OutOf<resource>` and message. */
export interface AdmissionRejection {
  readonly reason: string;
  readonly message: string;
}

/** A pod the fold did not charge to its node: waiting for the node, or rejected by it. */
export type PodAdmission =
  | { readonly state: 'waiting'; readonly node: string }
  | ({ readonly state: 'rejected'; readonly node: string } & AdmissionRejection);

/** The allocation holding a pod's admission (absent: the pod is charged, or unbound). */
const admissionResource = (podKey: string): string => `admission/${podKey}`;
/** The allocation listing the pods that wait for a node, in log order. */
const waitingResource = (node: string): string => `waiting/${node}`;

/** The admission the fold recorded for a pod; undefined when it is charged or unbound. */
export const podAdmissionOf = (getAllocation: (resource: string) => string | undefined, podKey: string): PodAdmission | undefined => {
  const stored = getAllocation(admissionResource(podKey));
  return stored === undefined ? undefined : (JSON.parse(stored) as PodAdmission);
};

const RESOURCE_NAMES = [
  ['pods', 'pods'],
  ['cpuMilli', 'cpu'],
  ['memoryBytes', 'memory'],
] as const satisfies readonly (readonly [keyof NodeUsage, string])[];

/**
 * Kubelet's verdict on adding `pod` to a node using `used` of `allocatable`: undefined
 * when it fits, else the first resource short (pods, cpu, memory, as NodeResourcesFit
 * checks them) in kubelet's words.
 */
export const kubeletRejection = (pod: Pod, used: NodeUsage, allocatable: NodeUsage): AdmissionRejection | undefined => {
  const requested = podUsage(pod);
  for (const [field, name] of RESOURCE_NAMES) {
    if (used[field] + requested[field] > allocatable[field]) {
      return {
        reason: `OutOf${name}`,
        message: `Pod was rejected: Node didn't have enough resource: ${name}, requested: ${requested[field]}, used: ${used[field]}, capacity: ${allocatable[field]}`,
      };
    }
  }
  return undefined;
};

const setAdmission = (state: FoldState, podKey: string, admission: PodAdmission | undefined): void =>
  state.putAllocation(admissionResource(podKey), admission === undefined ? undefined : JSON.stringify(admission));

const waitingPods = (state: FoldState, node: string): string[] => {
  const stored = state.getAllocation(waitingResource(node));
  return stored === undefined ? [] : (JSON.parse(stored) as string[]);
};

const setWaitingPods = (state: FoldState, node: string, keys: readonly string[]): void =>
  state.putAllocation(waitingResource(node), keys.length === 0 ? undefined : JSON.stringify(keys));

/**
 * Admits a deferred pod to `node` now: charged if the node exists and has room, rejected
 * if it exists without, waiting if it does not exist yet. Never rejects the create.
 */
export const admitDeferred = (state: FoldState, podKey: string, pod: Pod, node: string): void => {
  const nodeRecord = state.getDesired(`Node//${node}`);
  if (!nodeRecord || nodeRecord.object.kind !== 'Node') {
    setAdmission(state, podKey, { state: 'waiting', node });
    setWaitingPods(state, node, [...waitingPods(state, node), podKey]);
    return;
  }
  chargeOrReject(state, podKey, pod, nodeRecord.object);
};

const chargeOrReject = (state: FoldState, podKey: string, pod: Pod, node: Node): void => {
  const name = node.metadata.name;
  const used = state.getNodeUsage(name) ?? { cpuMilli: 0, memoryBytes: 0, pods: 0 };
  const rejection = kubeletRejection(pod, used, nodeAllocatable(node));
  if (rejection) {
    setAdmission(state, podKey, { state: 'rejected', node: name, ...rejection });
    return;
  }
  state.putNodeUsage(name, addUsage(used, podUsage(pod)));
  setAdmission(state, podKey, undefined);
};

/** A node registered: the pods waiting for it are admitted, in the order they were created. */
export const admitWaitingPods = (state: FoldState, node: Node): void => {
  const name = node.metadata.name;
  const waiting = waitingPods(state, name);
  if (waiting.length === 0) return;
  setWaitingPods(state, name, []);
  for (const podKey of waiting) {
    const record = state.getDesired(podKey);
    // Deleted meanwhile (`forgetAdmission` took it off the list), so this cannot miss; kept as a guard.
    if (!record || record.object.kind !== 'Pod' || record.object.spec?.nodeName !== name) continue;
    chargeOrReject(state, podKey, record.object, node);
  }
};

/**
 * A pod is going: forgets its admission. True when it was never charged (waiting or
 * rejected), so the caller must not subtract it from its node's usage.
 */
export const forgetAdmission = (state: FoldState, podKey: string): boolean => {
  const admission = podAdmissionOf(state.getAllocation, podKey);
  if (admission === undefined) return false;
  setAdmission(state, podKey, undefined);
  if (admission.state === 'waiting') {
    setWaitingPods(state, admission.node, waitingPods(state, admission.node).filter((key) => key !== podKey));
  }
  return true;
};

/** Whether a pod is bound but uncharged (no node runs it, so its deletion needs no grace). */
export const isUncharged = (state: FoldState, podKey: string): boolean => state.getAllocation(admissionResource(podKey)) !== undefined;

/**
 * The create an apiserver appends for `object`: a Pod that names its node defers to that
 * node's admission (v6), as in Kubernetes, instead of being refused by the create; a kind
 * the fold judges against ResourceQuotas is judged (v7, `quota-admission.ts`).
 */
export const objectCreated = (object: KubeObject): Extract<EventBody, { type: 'ObjectCreated' }> => ({
  type: 'ObjectCreated',
  object,
  ...(object.kind === 'Pod' && object.spec?.nodeName ? { nodeAdmission: 'Deferred' as const } : {}),
  ...(judgedInFold(object.kind) ? { quotaAdmission: 'Judged' as const } : {}),
});
