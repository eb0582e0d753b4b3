/**
 * kube's quota evaluators (`pkg/quota/v1/evaluator/core`, `apiserver/pkg/quota/v1/generic`
 * of Kubernetes 1.32), pure: what an object uses of a ResourceQuota, which quotas it
 * matches (hard resources and scopes), the pod constraints ("must specify limits.cpu for:
 * web") and kube's messages. The fold judges creates with them (`quota-admission.ts`) and
 * the resourcequota controller recounts `status.used` with them, so both count alike.
 *
 * Resource lists are `Map`s keyed by resource name (user keys never become object keys);
 * quantities are exact (`schemas/quantity.ts`) and written back as kube writes them.
 */
import type { KubeObject, Pod, ResourceQuota } from '../schemas/index.ts';
import { storedKind } from '../schemas/kinds/registry.ts';
import { addQuantities, compareQuantities, parseQuantity, ZERO_QUANTITY, type Quantity } from '../schemas/quantity.ts';

/** A resource list: resource name → quantity. */
export type ResourceList = ReadonlyMap<string, Quantity>;

/** A quota's scope requirement (`spec.scopes` become `Exists` requirements). */
export interface ScopeRequirement {
  readonly scopeName: string;
  readonly operator: string;
  readonly values: readonly string[];
}

const ONE = parseQuantity('1');

/** Parses a `{name: quantity}` record; a malformed quantity (the apiserver refuses those) counts as absent. */
export const resourceListOf = (record: Readonly<Record<string, unknown>> | undefined): Map<string, Quantity> => {
  const list = new Map<string, Quantity>();
  for (const [name, value] of Object.entries(record ?? {})) {
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    try {
      list.set(name, parseQuantity(value));
    } catch {
      // skipped: validation refuses malformed quantities before they reach the log
    }
  }
  return list;
};

/** `a + b` per resource (`quota.Add`). */
export const addLists = (a: ResourceList, b: ResourceList): Map<string, Quantity> => {
  const sum = new Map(a);
  for (const [name, value] of b) sum.set(name, addQuantities(sum.get(name) ?? ZERO_QUANTITY, value));
  return sum;
};

/** The per-resource maximum of `a` and `b` (`quota.Max`). */
const maxLists = (a: ResourceList, b: ResourceList): Map<string, Quantity> => {
  const max = new Map(a);
  for (const [name, value] of b) {
    const current = max.get(name);
    if (current === undefined || compareQuantities(value, current) > 0) max.set(name, value);
  }
  return max;
};

/** `list` restricted to `names` (`quota.Mask`). */
export const maskList = (list: ResourceList, names: Iterable<string>): Map<string, Quantity> => {
  const masked = new Map<string, Quantity>();
  for (const name of names) {
    const value = list.get(name);
    if (value !== undefined) masked.set(name, value);
  }
  return masked;
};

/** The resources of `a` that exceed `b` (`quota.LessThanOrEqual`; a resource `b` lacks is unlimited). */
export const exceededResources = (a: ResourceList, b: ResourceList): string[] =>
  [...a].filter(([name, value]) => {
    const limit = b.get(name);
    return limit !== undefined && compareQuantities(value, limit) > 0;
  }).map(([name]) => name);

/** kube's `prettyPrint`: `name=quantity` pairs sorted by name, joined by commas. */
export const prettyPrint = (list: ResourceList): string =>
  [...list.keys()].sort().map((name) => `${name}=${list.get(name)?.serialized ?? '0'}`).join(',');

/** A resource list as the JSON of `status.used`, names sorted. */
export const listToRecord = (list: ResourceList): Record<string, string> => {
  const record: Record<string, string> = {};
  for (const name of [...list.keys()].sort()) Object.defineProperty(record, name, { value: list.get(name)?.serialized ?? '0', enumerable: true, writable: true, configurable: true });
  return record;
};

// ---------------------------------------------------------------------------- names

const HUGEPAGES_PREFIX = 'hugepages-';
const REQUESTS_PREFIX = 'requests.';
const COMPUTE = ['cpu', 'memory', 'ephemeral-storage'] as const;

/** `helper.IsNativeResource`: no domain, or the kubernetes.io domain. */
const isNativeResource = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
/** `helper.IsExtendedResourceName`: a domain other than kubernetes.io, and not a quota name. */
const isExtendedResourceName = (name: string): boolean => !isNativeResource(name) && !name.startsWith(REQUESTS_PREFIX);
/** Only `requests.<extended>` quotas extended resources (they cannot be overcommitted). */
const isExtendedResourceNameForQuota = (name: string): boolean => !isNativeResource(name) && name.startsWith(REQUESTS_PREFIX);

/** The object-count name of a kind (`count/pods`, `count/deployments.apps`), from the kind registry. */
export const objectCountName = (kind: string): string | undefined => {
  const registered = storedKind(kind);
  if (registered === undefined) return undefined;
  return registered.group === '' ? `count/${registered.plural}` : `count/${registered.plural}.${registered.group}`;
};

/** The legacy object-count names kube keeps beside `count/<resource>` (`generic` registry aliases). */
const LEGACY_COUNT_NAMES: ReadonlyMap<string, string> = new Map([
  ['count/configmaps', 'configmaps'],
  ['count/resourcequotas', 'resourcequotas'],
  ['count/replicationcontrollers', 'replicationcontrollers'],
  ['count/secrets', 'secrets'],
  ['count/services', 'services'],
  ['count/persistentvolumeclaims', 'persistentvolumeclaims'],
]);

// ---------------------------------------------------------------------------- pods

type Container = NonNullable<NonNullable<Pod['spec']>['containers']>[number];

const POD_RESOURCES = new Set([
  'count/pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods',
]);

/** The resources whose quota requires every container to set them (kube's backward-compatibility "mistake"). */
const VALIDATION_SET = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** `podComputeUsageHelper`: the quota names a pod's (or container's) requests and limits charge. */
const computeUsage = (requests: ResourceList, limits: ResourceList): Map<string, Quantity> => {
  const result = new Map<string, Quantity>([['pods', ONE]]);
  for (const resource of COMPUTE) {
    const request = requests.get(resource);
    if (request !== undefined) {
      result.set(resource, request);
      result.set(`${REQUESTS_PREFIX}${resource}`, request);
    }
    const limit = limits.get(resource);
    if (limit !== undefined) result.set(`limits.${resource}`, limit);
  }
  for (const [resource, request] of requests) {
    if (resource.startsWith(HUGEPAGES_PREFIX)) {
      result.set(resource, request);
      result.set(`${REQUESTS_PREFIX}${resource}`, request);
    }
    if (isExtendedResourceName(resource)) result.set(`${REQUESTS_PREFIX}${resource}`, request);
  }
  return result;
};

const requestsOf = (container: Container): Map<string, Quantity> => resourceListOf(container.resources?.requests);
const limitsOf = (container: Container): Map<string, Quantity> => resourceListOf(container.resources?.limits);

/**
 * `resourcehelper.PodRequests` / `PodLimits`: the containers summed; restartable (sidecar)
 * init containers added to it and to every later init container; the result at least the
 * largest init container; the pod overhead added (to limits only where a limit is set).
 */
const podAggregate = (pod: Pod, of: (container: Container) => Map<string, Quantity>, isLimits: boolean): Map<string, Quantity> => {
  let total = new Map<string, Quantity>();
  for (const container of pod.spec?.containers ?? []) total = addLists(total, of(container));
  let sidecars = new Map<string, Quantity>();
  let initMax = new Map<string, Quantity>();
  for (const container of pod.spec?.initContainers ?? []) {
    const own = of(container);
    if (container.restartPolicy === 'Always') {
      total = addLists(total, own);
      sidecars = addLists(sidecars, own);
      initMax = maxLists(initMax, sidecars);
    } else {
      initMax = maxLists(initMax, addLists(own, sidecars));
    }
  }
  total = maxLists(total, initMax);
  const overhead = resourceListOf(pod.spec?.overhead);
  return addLists(total, isLimits ? maskList(overhead, total.keys()) : overhead);
};

/**
 * What a pod uses (`PodUsageFunc`): `count/pods` always (object counts track every pod in
 * storage); its compute resources and `pods` unless it is `terminal` (Succeeded or Failed).
 */
export const podQuotaUsage = (pod: Pod, terminal: boolean): Map<string, Quantity> => {
  const count = new Map<string, Quantity>([['count/pods', ONE]]);
  if (terminal) return count;
  return addLists(count, computeUsage(podAggregate(pod, requestsOf, false), podAggregate(pod, limitsOf, true)));
};

/** `qos.GetPodQOS(pod) == BestEffort`: no container sets a cpu or memory request or limit. */
export const isBestEffort = (pod: Pod): boolean =>
  [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].every((container) =>
    ['cpu', 'memory'].every((resource) => !requestsOf(container).has(resource) && !limitsOf(container).has(resource)),
  );

/** A pod is Terminating for quota when it has an `activeDeadlineSeconds` ≥ 0. */
const isTerminating = (pod: Pod): boolean => (pod.spec?.activeDeadlineSeconds ?? -1) >= 0;

const usesCrossNamespacePodAffinity = (pod: Pod): boolean => {
  const affinity = pod.spec?.affinity;
  const terms = [
    ...(affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(affinity?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((weighted) => weighted.podAffinityTerm),
    ...(affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((weighted) => weighted.podAffinityTerm),
  ];
  return terms.some((term) => (term.namespaces ?? []).length > 0 || term.namespaceSelector !== undefined);
};

/** `podMatchesScopeFunc`: whether `pod` is in the scope a requirement names. */
export const podMatchesScope = (requirement: ScopeRequirement, pod: Pod): boolean => {
  switch (requirement.scopeName) {
    case 'Terminating':
      return isTerminating(pod);
    case 'NotTerminating':
      return !isTerminating(pod);
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass': {
      const priorityClass = pod.spec?.priorityClassName ?? '';
      switch (requirement.operator) {
        case 'Exists':
          return priorityClass !== '';
        case 'DoesNotExist':
          return priorityClass === '';
        case 'In':
          return priorityClass !== '' && requirement.values.includes(priorityClass);
        case 'NotIn':
          return priorityClass === '' || !requirement.values.includes(priorityClass);
        default:
          return false;
      }
    }
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespacePodAffinity(pod);
    default:
      return false;
  }
};

/**
 * `podEvaluator.Constraints`: undefined when every container (init containers too) sets
 * each of the cpu/memory resources `required` names, else kube's "must specify" text.
 */
export const podConstraintViolation = (required: Iterable<string>, pod: Pod): string | undefined => {
  const requiredSet = [...required].filter((name) => VALIDATION_SET.has(name));
  const missing = new Map<string, Set<string>>();
  for (const container of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    const has = computeUsage(requestsOf(container), limitsOf(container));
    for (const resource of requiredSet) {
      if (has.has(resource)) continue;
      const names = missing.get(resource) ?? new Set<string>();
      names.add(container.name);
      missing.set(resource, names);
    }
  }
  if (missing.size === 0) return undefined;
  const parts = [...missing.keys()].sort().map((resource) => `${resource} for: ${[...(missing.get(resource) ?? [])].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
};

// ---------------------------------------------------------------------------- other kinds

type Service = Extract<KubeObject, { kind: 'Service' }>;
type Claim = Extract<KubeObject, { kind: 'PersistentVolumeClaim' }>;

const serviceUsage = (service: Service): Map<string, Quantity> => {
  const usage = new Map<string, Quantity>([['services', ONE], ['count/services', ONE]]);
  const ports = service.spec?.ports ?? [];
  if (service.spec?.type === 'NodePort') usage.set('services.nodeports', parseQuantity(ports.length));
  if (service.spec?.type === 'LoadBalancer') {
    usage.set('services.loadbalancers', ONE);
    usage.set('services.nodeports', parseQuantity(ports.filter((port) => (port.nodePort ?? 0) !== 0 || service.spec?.allocateLoadBalancerNodePorts !== false).length));
  }
  return usage;
};

const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

const claimUsage = (claim: Claim): Map<string, Quantity> => {
  const usage = new Map<string, Quantity>([['persistentvolumeclaims', ONE], ['count/persistentvolumeclaims', ONE]]);
  const className = claim.spec?.storageClassName ?? '';
  if (className !== '') usage.set(`${className}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`, ONE);
  const storage = resourceListOf(claim.spec?.resources?.requests).get('storage');
  if (storage !== undefined) {
    usage.set('requests.storage', storage);
    if (className !== '') usage.set(`${className}${STORAGE_CLASS_SUFFIX}requests.storage`, storage);
  }
  return usage;
};

/**
 * What `object` uses of a quota (kube's evaluator for its kind; every other kind is
 * object-counted, `count/<resource>` and the legacy name). `terminal` only matters to pods.
 */
export const quotaUsage = (object: KubeObject, terminal = false): Map<string, Quantity> => {
  switch (object.kind) {
    case 'Pod':
      return podQuotaUsage(object, terminal);
    case 'Service':
      return serviceUsage(object);
    case 'PersistentVolumeClaim':
      return claimUsage(object);
    default: {
      const name = objectCountName(object.kind);
      if (name === undefined) return new Map();
      const legacy = LEGACY_COUNT_NAMES.get(name);
      return new Map([[name, ONE], ...(legacy === undefined ? [] : [[legacy, ONE] as const])]);
    }
  }
};

/** `MatchingResources`: the names of `hard` an object of `kind` can use. */
export const matchingResources = (kind: KubeObject['kind'], hard: Iterable<string>): string[] => {
  const names = [...hard];
  switch (kind) {
    case 'Pod':
      return names.filter((name) => POD_RESOURCES.has(name) || name.startsWith(HUGEPAGES_PREFIX) || name.startsWith(`${REQUESTS_PREFIX}${HUGEPAGES_PREFIX}`) || isExtendedResourceNameForQuota(name));
    case 'Service':
      return names.filter((name) => ['services', 'count/services', 'services.nodeports', 'services.loadbalancers'].includes(name));
    case 'PersistentVolumeClaim':
      return names.filter((name) => ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(name) || (name.includes(STORAGE_CLASS_SUFFIX) && (name.endsWith('/persistentvolumeclaims') || name.endsWith('/requests.storage'))));
    default: {
      const count = objectCountName(kind);
      const legacy = count === undefined ? undefined : LEGACY_COUNT_NAMES.get(count);
      return names.filter((name) => name === count || (legacy !== undefined && name === legacy));
    }
  }
};

/** A quota's scope requirements: `spec.scopes` (as `Exists`) and `spec.scopeSelector.matchExpressions`. */
export const scopeRequirements = (quota: ResourceQuota): ScopeRequirement[] => [
  ...(quota.spec?.scopes ?? []).map((scopeName) => ({ scopeName, operator: 'Exists', values: [] })),
  ...(quota.spec?.scopeSelector?.matchExpressions ?? []).map((requirement) => ({
    scopeName: requirement.scopeName,
    operator: requirement.operator,
    values: requirement.values ?? [],
  })),
];

/** A quota's hard limits (`spec.hard`: the fold judges by the spec, the controller copies it to status). */
export const hardOf = (quota: ResourceQuota): Map<string, Quantity> => resourceListOf(quota.spec?.hard);

/**
 * `generic.Matches`: the quota limits a resource `object` uses, and `object` is in every
 * scope of the quota (only pods have scopes; a scoped quota matches no other kind).
 */
export const quotaMatches = (quota: ResourceQuota, object: KubeObject): boolean => {
  if (matchingResources(object.kind, hardOf(quota).keys()).length === 0) return false;
  const scopes = scopeRequirements(quota);
  if (object.kind !== 'Pod') return scopes.length === 0;
  return scopes.every((requirement) => podMatchesScope(requirement, object));
};
