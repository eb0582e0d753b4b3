/**
 * ResourceQuota admission in the fold, for creates under the v7 rule
 * (`ObjectCreated.quotaAdmission: 'Judged'`, what the apiserver writes), as
 * kube-apiserver's quota admission (`plugin/pkg/admission/resourcequota`) judges them:
 * the object is charged against every ResourceQuota of its namespace that it matches
 * (hard resources it uses, scopes it is in); a pod that does not set a cpu/memory resource
 * such a quota limits is refused ("failed quota: NAME: must specify limits.cpu for: web"),
 * and a create that would take any quota over its hard limits is refused ("exceeded quota:
 * NAME, requested: cpu=500m, used: cpu=1, limited: cpu=1"), both 403 Forbidden.
 *
 * Only kinds of the quotas' own partition domain (`scheduling`: Pods, PodDisruptionBudgets,
 * ResourceQuotas) are judged here, so the verdict depends only on one total order, for any
 * partition count. The usage a create is judged against is recounted from the fold's own
 * state, in log order: the objects of its kind in the namespace that match the quota, less
 * the compute resources of the pods the resourcequota controller reported terminal (the
 * `quota/terminated/<pod key>` allocations a v7 `ObjectUpdated.quotaRelease` writes). So
 * two apiservers creating at once can never take a quota over its limits together, and a
 * replay reaches every verdict again. Logs written before v7 hold neither field: their
 * creates are not judged and the fold writes nothing new for them.
 */
import type { KubeObject, Pod, ResourceQuota } from '../schemas/index.ts';
import { kindRef } from '../schemas/keys.ts';
import { partitionDomainOf, SCHEDULING_DOMAIN } from '../schemas/kinds/domains.ts';
import { storedKind } from '../schemas/kinds/registry.ts';
import { parseQuantity } from '../schemas/quantity.ts';
import type { FoldState } from './fold.ts';
import {
  addLists,
  exceededResources,
  hardOf,
  maskList,
  matchingResources,
  podConstraintViolation,
  prettyPrint,
  quotaMatches,
  quotaUsage,
  type ResourceList,
} from './quota-evaluators.ts';

/** The allocation marking a pod whose quota charge was given back because it terminated (value: its uid). */
const terminatedResource = (podKey: string): string => `quota/terminated/${podKey}`;

/** Whether the fold judges creates of `kind` against quotas: kinds of the quotas' own partition domain. */
export const judgedInFold = (kind: string): boolean => {
  const domain = partitionDomainOf(kindRef(kind));
  return domain.type === 'shared' && SCHEDULING_DOMAIN.type === 'shared' && domain.key === SCHEDULING_DOMAIN.key && storedKind(kind)?.scope === 'Namespaced';
};

/** Whether the fold counts `podKey` as terminal (its compute resources released). */
export const isQuotaTerminated = (getAllocation: (resource: string) => string | undefined, podKey: string, uid: string | undefined): boolean => {
  const marked = getAllocation(terminatedResource(podKey));
  return marked !== undefined && marked === (uid ?? '');
};

/** The ResourceQuotas of `namespace`, in key order. */
const quotasOf = (state: FoldState, namespace: string): ResourceQuota[] => {
  const quotas: ResourceQuota[] = [];
  for (const key of state.desiredKeys(`ResourceQuota/${namespace}/`)) {
    const record = state.getDesired(key);
    if (record?.object.kind === 'ResourceQuota') quotas.push(record.object);
  }
  return quotas;
};

/** What the objects of `kind` in `namespace` that `quota` matches use, as the fold counts them. */
const usedBy = (state: FoldState, quota: ResourceQuota, kind: KubeObject['kind'], namespace: string): Map<string, ReturnType<typeof parseQuantity>> => {
  let used = new Map<string, ReturnType<typeof parseQuantity>>();
  for (const key of state.desiredKeys(`${kindRef(kind)}/${namespace}/`)) {
    const object = state.getDesired(key)?.object;
    if (object === undefined || !quotaMatches(quota, object)) continue;
    const terminal = object.kind === 'Pod' && isQuotaTerminated(state.getAllocation, key, object.metadata.uid);
    used = addLists(used, quotaUsage(object, terminal));
  }
  return used;
};

const forbidden = (object: KubeObject, detail: string): string => {
  const plural = storedKind(object.kind)?.plural ?? object.kind;
  return `${plural} "${object.metadata.name}" is forbidden: ${detail}`;
};

/**
 * Judges the create of `object` against the quotas of its namespace (kube's `checkRequest`):
 * undefined when it may be created, else kube's Forbidden message.
 */
export const judgeQuotas = (state: FoldState, object: KubeObject): string | undefined => {
  const namespace = object.metadata.namespace;
  if (!namespace || !judgedInFold(object.kind)) return undefined;
  const matching = quotasOf(state, namespace).filter((quota) => quotaMatches(quota, object));
  if (matching.length === 0) return undefined;
  for (const quota of matching) {
    if (object.kind !== 'Pod') continue;
    const violation = podConstraintViolation(matchingResources('Pod', hardOf(quota).keys()), object as Pod);
    if (violation) return forbidden(object, `failed quota: ${quota.metadata.name}: ${violation}`);
  }
  const delta = quotaUsage(object);
  for (const quota of matching) {
    const hard = hardOf(quota);
    const requested = maskList(delta, hard.keys());
    if (requested.size === 0) continue;
    const zeros = new Map([...hard.keys()].map((name) => [name, parseQuantity(0)]));
    const used: ResourceList = addLists(zeros, usedBy(state, quota, object.kind, namespace));
    const exceeded = exceededResources(maskList(addLists(used, requested), requested.keys()), hard);
    if (exceeded.length > 0) {
      return forbidden(
        object,
        `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, used: ${prettyPrint(maskList(used, exceeded))}, limited: ${prettyPrint(maskList(hard, exceeded))}`,
      );
    }
  }
  return undefined;
};

/**
 * A v7 `ObjectUpdated.quotaRelease: 'Terminated'`: the resourcequota controller saw the
 * pod `podKey` (uid `uid`) Succeeded or Failed, so its compute resources stop counting
 * (its `count/pods` still counts, as kube's). Idempotent; the pod itself is unchanged.
 */
export const releaseTerminatedPod = (state: FoldState, podKey: string, uid: string | undefined): 'released' | 'not-found' => {
  const record = state.getDesired(podKey);
  if (record?.object.kind !== 'Pod' || (uid !== undefined && record.object.metadata.uid !== uid)) return 'not-found';
  state.putAllocation(terminatedResource(podKey), record.object.metadata.uid ?? '');
  return 'released';
};

/** A pod is deleted: its terminated mark (if any) goes with it. */
export const forgetQuotaRelease = (state: FoldState, podKey: string): void => {
  if (state.getAllocation(terminatedResource(podKey)) !== undefined) state.putAllocation(terminatedResource(podKey), undefined);
};
