/**
 * kube-apiserver 1.32's LimitRanger admission plugin (plugin/pkg/admission/limitranger), as
 * pure functions of the object and the LimitRanges of its namespace in the view. Pods and
 * PersistentVolumeClaims on create only (kube skips pod updates: containers are immutable).
 *
 * - Mutating (pods): each LimitRange's `Container` item in turn gives a container or init
 *   container its `default` limits and `defaultRequest` requests for the resources it names
 *   none of, and the pod the annotation `kubernetes.io/limit-ranger` saying what was set
 *   ("LimitRanger plugin set: cpu, memory request for container web; cpu limit for container web").
 * - Validating: each LimitRange's `Container` items against every container and init
 *   container, its `Pod` items against the pod's total requests and limits (kube's
 *   podRequests / podLimits: the larger of the containers' sum and the largest init
 *   container, restartable init containers added to both), its `PersistentVolumeClaim` items
 *   against the claim's requests; `min`, `max` and `maxLimitRequestRatio`, with kube's
 *   messages. The failures of one LimitRange are one 403 (kube's `NewAggregate`: several are
 *   bracketed); the first LimitRange that fails refuses.
 *
 * kube walks Go maps, so its order of several failures varies; here resources are taken by name.
 */
import type { View } from '../../projections/index.ts';
import { computePodQos } from '../../projections/index.ts';
import type { Container, ObjectOfKind } from '../../schemas/index.ts';
import { addQuantities, compareQuantities, parseQuantity, quantityMilliValue, quantityValue, ZERO_QUANTITY, type Quantity } from '../../schemas/quantity.ts';
import { ApiError } from '../errors.ts';
import { failureStatus } from '../status.ts';

type Pod = ObjectOfKind<'Pod'>;
type Claim = ObjectOfKind<'PersistentVolumeClaim'>;
type LimitRange = ObjectOfKind<'LimitRange'>;
type ResourceList = Readonly<Record<string, string>>;
type Quantities = Map<string, Quantity>;

/** The annotation LimitRanger writes on a pod it defaulted. */
export const LIMIT_RANGER_ANNOTATION = 'kubernetes.io/limit-ranger';

/** resource.MaxMilliValue: above it kube compares whole units instead of thousandths. */
const MAX_MILLI_VALUE = 9223372036854775n;

const quantities = (list: ResourceList | undefined): Quantities => new Map(Object.entries(list ?? {}).map(([name, text]) => [name, parseQuantity(text)]));

const sortedEntries = (list: ResourceList | undefined): [string, Quantity][] =>
  Object.keys(list ?? {})
    .sort()
    .map((name) => [name, parseQuantity(list![name]!)]);

/** requestLimitEnforcedValues: request, limit and enforced in thousandths, or in units when one is too large. */
const observed = (request: Quantity | undefined, limit: Quantity | undefined, enforced: Quantity): [bigint, bigint, bigint] => {
  const [req, lim] = [request ?? ZERO_QUANTITY, limit ?? ZERO_QUANTITY];
  const units = [req, lim, enforced].map(quantityValue);
  if (units.some((value) => value > MAX_MILLI_VALUE)) return units as [bigint, bigint, bigint];
  return [quantityMilliValue(req), quantityMilliValue(lim), quantityMilliValue(enforced)];
};

/** kube's minConstraint. */
export const minConstraint = (limitType: string, name: string, enforced: Quantity, requests: Quantities, limits: Quantities): string | undefined => {
  const [request, limit] = [requests.get(name), limits.get(name)];
  const [req, lim, min] = observed(request, limit, enforced);
  if (!request) return `minimum ${name} usage per ${limitType} is ${enforced.serialized}.  No request is specified`;
  if (req < min) return `minimum ${name} usage per ${limitType} is ${enforced.serialized}, but request is ${request.serialized}`;
  if (limit && lim < min) return `minimum ${name} usage per ${limitType} is ${enforced.serialized}, but limit is ${limit.serialized}`;
  return undefined;
};

/** kube's maxConstraint. */
export const maxConstraint = (limitType: string, name: string, enforced: Quantity, requests: Quantities, limits: Quantities): string | undefined => {
  const [request, limit] = [requests.get(name), limits.get(name)];
  const [req, lim, max] = observed(request, limit, enforced);
  if (!limit) return `maximum ${name} usage per ${limitType} is ${enforced.serialized}.  No limit is specified`;
  if (lim > max) return `maximum ${name} usage per ${limitType} is ${enforced.serialized}, but limit is ${limit.serialized}`;
  if (request && req > max) return `maximum ${name} usage per ${limitType} is ${enforced.serialized}, but request is ${request.serialized}`;
  return undefined;
};

/** kube's maxRequestConstraint (claims: the max against what is requested). */
export const maxRequestConstraint = (limitType: string, name: string, enforced: Quantity, requests: Quantities): string | undefined => {
  const request = requests.get(name);
  const [req, , max] = observed(request, undefined, enforced);
  if (!request) return `maximum ${name} usage per ${limitType} is ${enforced.serialized}.  No request is specified`;
  if (req > max) return `maximum ${name} usage per ${limitType} is ${enforced.serialized}, but request is ${request.serialized}`;
  return undefined;
};

/** kube's limitRequestRatioConstraint; the observed ratio is written as Go's `%f`. */
export const limitRequestRatioConstraint = (limitType: string, name: string, enforced: Quantity, requests: Quantities, limits: Quantities): string | undefined => {
  const [request, limit] = [requests.get(name), limits.get(name)];
  const [req, lim] = observed(request, limit, enforced);
  const prefix = `${name} max limit to request ratio per ${limitType} is ${enforced.serialized}`;
  if (!request || req === 0n) return `${prefix}, but no request is specified or request is 0`;
  if (!limit || lim === 0n) return `${prefix}, but no limit is specified or limit is 0`;
  const ratio = Number(lim) / Number(req);
  const enforcedUnits = quantityValue(enforced);
  const [compared, allowed] = enforcedUnits <= MAX_MILLI_VALUE ? [ratio * 1000, Number(quantityMilliValue(enforced))] : [ratio, Number(enforcedUnits)];
  return compared > allowed ? `${prefix}, but provided ratio is ${ratio.toFixed(6)}` : undefined;
};

/** min, max and maxLimitRequestRatio of one LimitRange item against one set of requests and limits. */
const checkItem = (
  errors: string[],
  item: NonNullable<LimitRange['spec']>['limits'][number],
  requests: Quantities,
  limits: Quantities,
): void => {
  for (const [name, enforced] of sortedEntries(item.min)) push(errors, minConstraint(item.type, name, enforced, requests, limits));
  for (const [name, enforced] of sortedEntries(item.max)) push(errors, maxConstraint(item.type, name, enforced, requests, limits));
  for (const [name, enforced] of sortedEntries(item.maxLimitRequestRatio)) push(errors, limitRequestRatioConstraint(item.type, name, enforced, requests, limits));
};

const push = (errors: string[], error: string | undefined): void => {
  if (error !== undefined) errors.push(error);
};

const addTo = (sum: Quantities, list: Quantities): void => {
  for (const [name, value] of list) sum.set(name, addQuantities(sum.get(name) ?? ZERO_QUANTITY, value));
};

const maxInto = (max: Quantities, list: Quantities): void => {
  for (const [name, value] of list) {
    const current = max.get(name);
    if (!current || compareQuantities(value, current) > 0) max.set(name, value);
  }
};

/** kube's limitranger podRequests / podLimits (no overhead): containers summed, then the larger of that and each init container's need. */
export const podTotal = (pod: Pod, which: 'requests' | 'limits'): Quantities => {
  const total: Quantities = new Map();
  for (const container of pod.spec.containers) addTo(total, quantities(container.resources?.[which]));
  const restartable: Quantities = new Map();
  const initMax: Quantities = new Map();
  for (const container of pod.spec.initContainers ?? []) {
    const own = quantities(container.resources?.[which]);
    let need: Quantities;
    if (container.restartPolicy === 'Always') {
      addTo(total, own);
      addTo(restartable, own);
      need = restartable;
    } else {
      need = new Map();
      addTo(need, own);
      addTo(need, restartable);
    }
    maxInto(initMax, need);
  }
  maxInto(total, initMax);
  return total;
};

/** kube's PodValidateLimitFunc: what `limitRange` finds wrong with `pod`, in kube's words. */
export const podLimitViolations = (limitRange: LimitRange, pod: Pod): string[] => {
  const errors: string[] = [];
  for (const item of limitRange.spec?.limits ?? []) {
    if (item.type === 'Container') {
      for (const container of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
        checkItem(errors, item, quantities(container.resources?.requests), quantities(container.resources?.limits));
      }
    } else if (item.type === 'Pod') {
      checkItem(errors, item, podTotal(pod, 'requests'), podTotal(pod, 'limits'));
    }
  }
  return errors;
};

/** kube's PersistentVolumeClaimValidateLimitFunc: min against the claim's requests (no limits), max against its requests. */
export const claimLimitViolations = (limitRange: LimitRange, claim: Claim): string[] => {
  const errors: string[] = [];
  const requests = quantities(claim.spec?.resources?.requests);
  for (const item of limitRange.spec?.limits ?? []) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const [name, enforced] of sortedEntries(item.min)) push(errors, minConstraint(item.type, name, enforced, requests, new Map()));
    for (const [name, enforced] of sortedEntries(item.max)) push(errors, maxRequestConstraint(item.type, name, enforced, requests));
  }
  return errors;
};

/** utilerrors.NewAggregate(errs).Error(): one message as is, several (distinct) in brackets. */
export const aggregateMessage = (errors: readonly string[]): string => {
  const distinct = [...new Set(errors)];
  return distinct.length === 1 ? distinct[0]! : `[${distinct.join(', ')}]`;
};

/** kube's mergeContainerResources: the defaults `container` lacks, with what was set for the annotation. */
const mergeContainer = (container: Container, limits: ResourceList, requests: ResourceList, label: string, notes: string[]): void => {
  const resources = (container.resources ??= {});
  const setLimits = Object.keys(limits).filter((name) => !Object.hasOwn(resources.limits ?? {}, name));
  const setRequests = Object.keys(requests).filter((name) => !Object.hasOwn(resources.requests ?? {}, name));
  if (setLimits.length > 0) resources.limits = { ...resources.limits, ...Object.fromEntries(setLimits.map((name) => [name, limits[name]!])) };
  if (setRequests.length > 0) resources.requests = { ...resources.requests, ...Object.fromEntries(setRequests.map((name) => [name, requests[name]!])) };
  if (setRequests.length > 0) notes.push(`${setRequests.sort().join(', ')} request for ${label} ${container.name}`);
  if (setLimits.length > 0) notes.push(`${setLimits.sort().join(', ')} limit for ${label} ${container.name}`);
};

/** kube's PodMutateLimitFunc: the defaults of `limitRange`'s Container items on every container that lacks them; whether it changed anything. */
export const applyContainerDefaults = (limitRange: LimitRange, pod: Pod): boolean => {
  const limits: Record<string, string> = {};
  const requests: Record<string, string> = {};
  for (const item of limitRange.spec?.limits ?? []) {
    if (item.type !== 'Container') continue;
    Object.assign(requests, item.defaultRequest);
    Object.assign(limits, item.default);
  }
  const notes: string[] = [];
  for (const container of pod.spec.containers) mergeContainer(container, limits, requests, 'container', notes);
  for (const container of pod.spec.initContainers ?? []) mergeContainer(container, limits, requests, 'init container', notes);
  if (notes.length === 0) return false;
  pod.metadata.annotations = { ...pod.metadata.annotations, [LIMIT_RANGER_ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
  return true;
};

/** The LimitRanges of `namespace`, by name (kube lists them from its informer; its order is the store's). */
const limitRangesOf = (view: View, namespace: string): LimitRange[] =>
  (view.list('LimitRange', namespace) as LimitRange[]).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));

const forbidden = (resource: 'pods' | 'persistentvolumeclaims', name: string, errors: readonly string[]): ApiError =>
  new ApiError(failureStatus('Forbidden', `${resource} "${name}" is forbidden: ${aggregateMessage(errors)}`, { name, group: '', kind: resource }));

/** LimitRanger's Admit then Validate of a new pod (changes `pod`; throws kube's 403). */
export const admitPodLimits = (pod: Pod, view: View): void => {
  const ranges = limitRangesOf(view, pod.metadata.namespace ?? 'default');
  if (ranges.length === 0) return;
  let defaulted = false;
  for (const range of ranges) defaulted = applyContainerDefaults(range, pod) || defaulted;
  // kube's PrepareForCreate computes the QoS class after mutating admission.
  if (defaulted && pod.status) pod.status.qosClass = computePodQos(pod);
  for (const range of ranges) {
    const errors = podLimitViolations(range, pod);
    if (errors.length > 0) throw forbidden('pods', pod.metadata.name, errors);
  }
};

/** LimitRanger's Validate of a new claim (throws kube's 403). */
export const admitClaimLimits = (claim: Claim, view: View): void => {
  for (const range of limitRangesOf(view, claim.metadata.namespace ?? 'default')) {
    const errors = claimLimitViolations(range, claim);
    if (errors.length > 0) throw forbidden('persistentvolumeclaims', claim.metadata.name, errors);
  }
};
