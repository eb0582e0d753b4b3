/**
 * The resource quota controller (kube-controller-manager's `resourcequota-controller`,
 * `pkg/controller/resourcequota`): every ResourceQuota's `status.hard` is its `spec.hard`
 * and `status.used` the recount, from the view, of what the namespace's objects use of
 * each hard resource (kube's evaluators, `projections/quota-evaluators.ts`: compute and
 * pod counts of non-terminal pods, `count/pods` of every pod, services, claims, object
 * counts of any kind), on every change in the namespace.
 *
 * It also tells the fold when a pod reaches Succeeded or Failed in a namespace with
 * quotas (`ObjectUpdated.quotaRelease: 'Terminated'`, v7), so the pod's compute resources
 * stop counting in the fold's verdicts too, as kube's pod evaluator stops counting them.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import {
  addLists,
  hardOf,
  listToRecord,
  maskList,
  matchingResources,
  quotaMatches,
  quotaUsage,
} from '../../projections/quota-evaluators.ts';
import { parseQuantity } from '../../schemas/quantity.ts';
import { CLUSTER_SCOPED, KINDS, parseObjectKey, sameJson, type EventBody, type KubeObject, type Pod, type ResourceQuota } from '../../schemas/index.ts';
import { statusCommand } from '../replicaset/objects.ts';
import type { Controller, Decision } from '../runtime.ts';

const isTerminal = (pod: Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** The status kube's controller writes for `quota`: hard from the spec, used recounted from `view`. */
export const quotaStatus = (quota: ResourceQuota, view: View): { hard: Record<string, string>; used: Record<string, string> } => {
  const hard = hardOf(quota);
  const namespace = quota.metadata.namespace ?? '';
  let used = new Map([...hard.keys()].map((name) => [name, parseQuantity(0)]));
  for (const kind of KINDS) {
    if (CLUSTER_SCOPED.has(kind) || matchingResources(kind, hard.keys()).length === 0) continue;
    for (const object of view.list(kind, namespace)) {
      if (!quotaMatches(quota, object)) continue;
      used = addLists(used, maskList(quotaUsage(object, object.kind === 'Pod' && isTerminal(object)), hard.keys()));
    }
  }
  return { hard: listToRecord(hard), used: listToRecord(used) };
};

const decideQuota = (key: string, view: View): Decision => {
  const quota = view.get(key);
  if (quota?.kind !== 'ResourceQuota' || quota.metadata.deletionTimestamp) return { commands: [] };
  const status = quotaStatus(quota, view);
  if (sameJson(quota.status ?? {}, status)) return { commands: [] };
  return { commands: [statusCommand(quota, status)] };
};

const decidePod = (key: string, view: View): Decision => {
  const pod = view.get(key);
  if (pod?.kind !== 'Pod' || !isTerminal(pod) || !pod.metadata.namespace) return { commands: [] };
  if (view.list('ResourceQuota', pod.metadata.namespace).length === 0) return { commands: [] };
  const release: EventBody = {
    type: 'ObjectUpdated',
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}) }, spec: { containers: [] } },
    expectedResourceVersion: null,
    subresource: null,
    quotaRelease: 'Terminated',
  };
  return { commands: [release] };
};

/** Decides a ResourceQuota key (status recount) or a Pod key (a terminated pod's release). */
export const decideResourceQuota = (key: string, view: View): Decision => {
  const { kind } = parseObjectKey(key);
  if (kind === 'ResourceQuota') return decideQuota(key, view);
  if (kind === 'Pod') return decidePod(key, view);
  return { commands: [] };
};

const keysFor = (change: AppliedChange, view: View): readonly string[] => {
  const object: KubeObject = change.object;
  const namespace = object.metadata.namespace;
  if (!namespace) return [];
  const quotas = [...view.keys('ResourceQuota', namespace)];
  if (object.kind === 'ResourceQuota') return change.type === 'DELETED' ? quotas : [...new Set([change.key, ...quotas])];
  if (quotas.length === 0) return [];
  return object.kind === 'Pod' && change.type !== 'DELETED' && isTerminal(object) ? [...quotas, change.key] : quotas;
};

/** Creates the resource quota controller. */
export const createResourceQuotaController = (): Controller => ({
  name: 'resourcequota',
  keysFor,
  initialKeys: (view) => view.list('ResourceQuota').map((quota) => `ResourceQuota/${quota.metadata.namespace ?? ''}/${quota.metadata.name}`),
  decide: (key, view) => decideResourceQuota(key, view),
});
