/**
 * kube's quota evaluators beyond the pod cases of `quota-admission.test.ts`: the resource
 * list helpers (`quota.Add`/`Mask`/`LessThanOrEqual`, prettyPrint), the object-count,
 * service and PVC evaluators, the pod aggregate of sidecar and regular init containers,
 * every quota scope (PriorityClass operators, CrossNamespacePodAffinity) and
 * `generic.Matches` (a scoped quota matches no kind but pods). Cases after
 * `pkg/quota/v1/evaluator/core/{pods,services,persistent_volume_claims}_test.go` of 1.32.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, Pod, ResourceQuota } from '../schemas/index.ts';
import { parseQuantity } from '../schemas/quantity.ts';
import {
  addLists,
  exceededResources,
  hardOf,
  isBestEffort,
  listToRecord,
  maskList,
  matchingResources,
  objectCountName,
  podConstraintViolation,
  podMatchesScope,
  podQuotaUsage,
  prettyPrint,
  quotaMatches,
  quotaUsage,
  resourceListOf,
  scopeRequirements,
  type ScopeRequirement,
} from './quota-evaluators.ts';

const NS = 'team';
type PodSpec = NonNullable<Pod['spec']>;
type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

const pod = (containers: Resources[] = [{}], extra: Partial<PodSpec> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: NS },
  spec: { ...extra, containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'logplane/echo', resources })) },
});
const quota = (hard: Record<string, string>, spec: Partial<NonNullable<ResourceQuota['spec']>> = {}): ResourceQuota => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: 'q', namespace: NS },
  spec: { ...spec, hard },
});
const service = (spec: Extract<KubeObject, { kind: 'Service' }>['spec']): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: NS }, spec });
const claim = (spec: Extract<KubeObject, { kind: 'PersistentVolumeClaim' }>['spec']): KubeObject => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: NS }, spec });
const list = (record: Record<string, string>) => resourceListOf(record);
const exists = (scopeName: string): ScopeRequirement => ({ scopeName, operator: 'Exists', values: [] });

describe('resource lists', () => {
  it('parse strings and numbers, and skip values that are not quantities', () => {
    const parsed = resourceListOf({ cpu: '500m', pods: 3, bogus: 'ten', flag: true, nested: { a: 1 } });
    expect(listToRecord(parsed)).toEqual({ cpu: '500m', pods: '3' });
    expect(resourceListOf(undefined).size).toBe(0);
  });

  it('add per resource (quota.Add) and mask to names (quota.Mask)', () => {
    const sum = addLists(list({ cpu: '1', memory: '1Gi' }), list({ cpu: '500m', pods: '2' }));
    expect(listToRecord(sum)).toEqual({ cpu: '1500m', memory: '1Gi', pods: '2' });
    expect(listToRecord(maskList(sum, ['pods', 'cpu', 'secrets']))).toEqual({ cpu: '1500m', pods: '2' });
  });

  it('exceed only where the limit is smaller; a resource without a limit is unlimited (quota.LessThanOrEqual)', () => {
    const used = list({ cpu: '2', memory: '1Gi', pods: '10' });
    expect(exceededResources(used, list({ cpu: '1', memory: '1024Mi' }))).toEqual(['cpu']);
    expect(exceededResources(used, list({}))).toEqual([]);
  });

  it("print as kube's prettyPrint: sorted name=quantity pairs", () => {
    expect(prettyPrint(list({ 'requests.memory': '1Gi', pods: '2', cpu: '100m' }))).toBe('cpu=100m,pods=2,requests.memory=1Gi');
    expect(prettyPrint(new Map())).toBe('');
  });
});

describe('object counts', () => {
  it('name count/<resource> with the group of the kind from the registry', () => {
    expect(objectCountName('ConfigMap')).toBe('count/configmaps');
    expect(objectCountName('Deployment')).toBe('count/deployments.apps');
    expect(objectCountName('NoSuchKind')).toBeUndefined();
  });

  it('charge the count and, for the legacy kinds, the legacy name; nothing for an unknown kind', () => {
    expect(listToRecord(quotaUsage({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS } }))).toEqual({ 'count/configmaps': '1', configmaps: '1' });
    expect(listToRecord(quotaUsage({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: NS } } as KubeObject))).toEqual({ 'count/deployments.apps': '1' });
    expect(quotaUsage({ apiVersion: 'v1', kind: 'NoSuchKind', metadata: { name: 'x' } } as unknown as KubeObject).size).toBe(0);
    expect(matchingResources('NoSuchKind' as KubeObject['kind'], ['pods', 'count/nosuchkinds'])).toEqual([]);
  });
});

describe("kube's service evaluator", () => {
  it('a ClusterIP service uses services and its count only', () => {
    expect(listToRecord(quotaUsage(service({ ports: [{ port: 80 }] })))).toEqual({ 'count/services': '1', services: '1' });
  });

  it('a LoadBalancer uses one load balancer and a node port per port', () => {
    expect(listToRecord(quotaUsage(service({ type: 'LoadBalancer', ports: [{ port: 80 }, { port: 443 }] })))).toEqual({
      'count/services': '1',
      services: '1',
      'services.loadbalancers': '1',
      'services.nodeports': '2',
    });
  });

  it('a LoadBalancer without allocated node ports counts only the ports that have one', () => {
    const usage = quotaUsage(service({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80, nodePort: 30080 }, { port: 443 }] }));
    expect(listToRecord(usage)).toMatchObject({ 'services.loadbalancers': '1', 'services.nodeports': '1' });
  });

  it('matches only the service resources', () => {
    expect(matchingResources('Service', ['services', 'count/services', 'services.nodeports', 'services.loadbalancers', 'pods', 'count/pods'])).toEqual([
      'services',
      'count/services',
      'services.nodeports',
      'services.loadbalancers',
    ]);
  });
});

describe("kube's persistent volume claim evaluator", () => {
  it('a claim without a storage class or a storage request uses its counts only', () => {
    expect(listToRecord(quotaUsage(claim({})))).toEqual({ 'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1' });
  });

  it('a claim without a class charges requests.storage but no class resource', () => {
    expect(listToRecord(quotaUsage(claim({ resources: { requests: { storage: '5Gi' } } })))).toEqual({
      'count/persistentvolumeclaims': '1',
      persistentvolumeclaims: '1',
      'requests.storage': '5Gi',
    });
  });

  it('a claim of a class without a storage request charges the per-class count only', () => {
    expect(listToRecord(quotaUsage(claim({ storageClassName: 'gold' })))).toEqual({
      'count/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      persistentvolumeclaims: '1',
    });
  });

  it('matches the per-class names of its two resources only', () => {
    expect(
      matchingResources('PersistentVolumeClaim', [
        'persistentvolumeclaims',
        'requests.storage',
        'count/persistentvolumeclaims',
        'gold.storageclass.storage.k8s.io/requests.storage',
        'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
        'gold.storageclass.storage.k8s.io/limits.storage',
        'gold/requests.storage',
        'pods',
      ]),
    ).toEqual([
      'persistentvolumeclaims',
      'requests.storage',
      'count/persistentvolumeclaims',
      'gold.storageclass.storage.k8s.io/requests.storage',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims',
    ]);
  });
});

describe("kube's pod evaluator: aggregates", () => {
  it('a regular init container after a sidecar runs beside it (PodRequests: init max includes the sidecars before it)', () => {
    const p = pod([{ requests: { cpu: '500m' } }], {
      initContainers: [
        { name: 'side', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '1' } } },
        { name: 'migrate', image: 'x', resources: { requests: { cpu: '2' } } },
      ],
    });
    // containers 500m + sidecar 1 = 1500m; init phase: migrate 2 + sidecar 1 = 3 → 3.
    expect(listToRecord(podQuotaUsage(p, false))).toMatchObject({ cpu: '3', 'requests.cpu': '3' });
  });

  it('the overhead adds to a limit only where the pod sets that limit', () => {
    const p = pod([{ requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1' } }], { overhead: { cpu: '100m', memory: '64Mi' } });
    const usage = listToRecord(podQuotaUsage(p, false));
    expect(usage).toMatchObject({ 'limits.cpu': '1100m', 'requests.memory': '1088Mi' });
    expect(usage).not.toHaveProperty('limits.memory');
  });

  it('requests.<extended> and hugepages are matched for pods, a bare extended name is not', () => {
    expect(matchingResources('Pod', ['hugepages-2Mi', 'requests.hugepages-2Mi', 'requests.example.com/gpu', 'example.com/gpu', 'limits.example.com/gpu', 'count/pods', 'services'])).toEqual([
      'hugepages-2Mi',
      'requests.hugepages-2Mi',
      'requests.example.com/gpu',
      'count/pods',
    ]);
  });

  it('a native kubernetes.io resource is not an extended one', () => {
    expect(listToRecord(podQuotaUsage(pod([{ requests: { 'kubernetes.io/thing': '1' } }]), false))).toEqual({ 'count/pods': '1', pods: '1' });
  });

  it('an init container with a cpu request makes the pod not BestEffort', () => {
    expect(isBestEffort(pod([{}], { initContainers: [{ name: 'i', image: 'x', resources: { requests: { cpu: '10m' } } }] }))).toBe(false);
  });
});

describe("kube's pod evaluator: constraints", () => {
  it('names init containers that miss a required resource too', () => {
    const p = pod([{ requests: { memory: '1Gi' } }], { initContainers: [{ name: 'init', image: 'x' }] });
    expect(podConstraintViolation(['memory'], p)).toBe('must specify memory for: init');
  });

  it('ignores required resources outside the validation set (only cpu and memory must be set per container)', () => {
    expect(podConstraintViolation(['pods', 'count/pods', 'requests.ephemeral-storage', 'limits.ephemeral-storage'], pod())).toBeUndefined();
  });

  it('lists resources sorted and containers sorted', () => {
    const p = pod([{}, {}], { initContainers: [{ name: 'a-init', image: 'x' }] });
    expect(podConstraintViolation(['limits.memory', 'cpu'], p)).toBe('must specify cpu for: a-init,c0,c1; limits.memory for: a-init,c0,c1');
  });
});

describe("kube's pod evaluator: scopes", () => {
  const high = pod([{}], { priorityClassName: 'high' });
  const none = pod();
  it.each([
    { name: 'Exists with a class', requirement: exists('PriorityClass'), pod: high, matches: true },
    { name: 'DoesNotExist with a class', requirement: { scopeName: 'PriorityClass', operator: 'DoesNotExist', values: [] }, pod: high, matches: false },
    { name: 'In without a class', requirement: { scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, pod: none, matches: false },
    { name: 'In another class', requirement: { scopeName: 'PriorityClass', operator: 'In', values: ['low'] }, pod: high, matches: false },
    { name: 'NotIn without a class', requirement: { scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, pod: none, matches: true },
    { name: 'NotIn another class', requirement: { scopeName: 'PriorityClass', operator: 'NotIn', values: ['low'] }, pod: high, matches: true },
    { name: 'an unknown operator', requirement: { scopeName: 'PriorityClass', operator: 'Gt', values: ['1'] }, pod: high, matches: false },
    { name: 'Terminating without a deadline', requirement: exists('Terminating'), pod: none, matches: false },
    { name: 'Terminating with a zero deadline', requirement: exists('Terminating'), pod: pod([{}], { activeDeadlineSeconds: 0 }), matches: true },
    { name: 'NotTerminating without a deadline', requirement: exists('NotTerminating'), pod: none, matches: true },
    { name: 'NotBestEffort with a memory limit', requirement: exists('NotBestEffort'), pod: pod([{ limits: { memory: '1Gi' } }]), matches: true },
    { name: 'an unknown scope', requirement: exists('VolumeAttributesClass'), pod: none, matches: false },
  ])('$name → $matches', ({ requirement, pod: p, matches }) => {
    expect(podMatchesScope(requirement, p)).toBe(matches);
  });

  const term = (extra: Record<string, unknown> = {}) => ({ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } }, ...extra });
  it.each([
    { name: 'no affinity', affinity: undefined, matches: false },
    { name: 'a same-namespace required affinity term', affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term()] } }, matches: false },
    { name: 'a required affinity term naming namespaces', affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaces: ['other'] })] } }, matches: true },
    { name: 'a required anti-affinity term with a namespace selector', affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ namespaceSelector: {} })] } }, matches: true },
    { name: 'a preferred affinity term naming namespaces', affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term({ namespaces: ['other'] }) }] } }, matches: true },
    { name: 'a preferred anti-affinity term with a namespace selector', affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term({ namespaceSelector: { matchLabels: { team: 'a' } } }) }] } }, matches: true },
    { name: 'an empty namespaces list', affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term({ namespaces: [] }) }] } }, matches: false },
  ])('CrossNamespacePodAffinity with $name → $matches', ({ affinity, matches }) => {
    expect(podMatchesScope(exists('CrossNamespacePodAffinity'), pod([{}], affinity === undefined ? {} : ({ affinity } as Partial<PodSpec>)))).toBe(matches);
  });
});

describe('quotas: requirements, hard limits and generic.Matches', () => {
  it('spec.scopes become Exists requirements beside the scope selector (values default to none)', () => {
    const q = quota({ pods: '1' }, {
      scopes: ['BestEffort'],
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, { scopeName: 'Terminating', operator: 'Exists' }] },
    });
    expect(scopeRequirements(q)).toEqual([
      { scopeName: 'BestEffort', operator: 'Exists', values: [] },
      { scopeName: 'PriorityClass', operator: 'In', values: ['high'] },
      { scopeName: 'Terminating', operator: 'Exists', values: [] },
    ]);
    expect(scopeRequirements({ ...q, spec: undefined })).toEqual([]);
  });

  it('hard limits come from spec.hard', () => {
    expect(listToRecord(hardOf(quota({ 'requests.cpu': '2', pods: '10' })))).toEqual({ pods: '10', 'requests.cpu': '2' });
    expect(hardOf({ ...quota({}), spec: undefined }).size).toBe(0);
  });

  it('a quota matches an object only if it limits a resource the object uses', () => {
    expect(quotaMatches(quota({ 'count/secrets': '5' }), pod())).toBe(false);
    expect(quotaMatches(quota({ 'count/services': '5' }), service({}))).toBe(true);
    expect(quotaMatches(quota({ pods: '5' }), pod())).toBe(true);
  });

  it('a scoped quota matches no kind but pods, and a pod only in every scope', () => {
    expect(quotaMatches(quota({ services: '5' }, { scopes: ['NotTerminating'] }), service({}))).toBe(false);
    const terminatingBestEffort = quota({ pods: '5' }, { scopes: ['Terminating', 'BestEffort'] });
    expect(quotaMatches(terminatingBestEffort, pod([{}], { activeDeadlineSeconds: 30 }))).toBe(true);
    expect(quotaMatches(terminatingBestEffort, pod([{ requests: { cpu: '1' } }], { activeDeadlineSeconds: 30 }))).toBe(false);
    expect(quotaMatches(terminatingBestEffort, pod())).toBe(false);
  });

  it('quantities compare exactly across formats', () => {
    expect(exceededResources(list({ memory: '1Gi' }), new Map([['memory', parseQuantity('1073741824')]]))).toEqual([]);
    expect(exceededResources(list({ memory: '1Gi' }), new Map([['memory', parseQuantity('1073741823')]]))).toEqual(['memory']);
  });
});

describe('absent optional fields', () => {
  it('a LoadBalancer without ports uses no node port; a claim without a spec uses its counts', () => {
    expect(listToRecord(quotaUsage(service({ type: 'LoadBalancer' })))).toMatchObject({ 'services.loadbalancers': '1', 'services.nodeports': '0' });
    expect(listToRecord(quotaUsage(claim(undefined)))).toEqual({ 'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1' });
  });
});
