/**
 * The bootstrap roles and bindings every cluster starts with, as kube's
 * `plugin/pkg/auth/authorizer/rbac/bootstrappolicy` defines them (its testdata
 * `cluster-roles.yaml` / `cluster-role-bindings.yaml`): the user-facing roles
 * (cluster-admin, and admin, edit, view built by aggregation from the
 * `system:aggregate-to-*` roles), discovery and self-review for everyone, and the roles of
 * the components (scheduler, controller manager, nodes, proxy). Each carries kube's label
 * `kubernetes.io/bootstrapping: rbac-defaults` and annotation
 * `rbac.authorization.kubernetes.io/autoupdate: "true"`.
 */
import type { PolicyRule } from './rules.ts';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const EVENTS: PolicyRule = { verbs: ['create', 'patch', 'update'], apiGroups: ['', 'events.k8s.io'], resources: ['events'] };

const rule = (verbs: readonly string[], apiGroups: readonly string[], resources: readonly string[], resourceNames?: readonly string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const urls = (verbs: readonly string[], nonResourceURLs: readonly string[]): PolicyRule => ({ verbs, nonResourceURLs });

const AGGREGATE_TO = (role: 'admin' | 'edit' | 'view'): Record<string, string> => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true' });

/** A bootstrap ClusterRole: rules, or an aggregation of the roles with `aggregateFrom`'s label; extra labels. */
interface ClusterRoleSpec {
  readonly name: string;
  readonly rules?: readonly PolicyRule[];
  readonly aggregateFrom?: 'admin' | 'edit' | 'view';
  readonly labels?: Record<string, string>;
}

const CLUSTER_ROLES: readonly ClusterRoleSpec[] = [
  { name: 'admin', aggregateFrom: 'admin' },
  { name: 'cluster-admin', rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])] },
  { name: 'edit', aggregateFrom: 'edit', labels: AGGREGATE_TO('admin') },
  { name: 'view', aggregateFrom: 'view', labels: AGGREGATE_TO('edit') },
  {
    name: 'system:aggregate-to-admin',
    labels: AGGREGATE_TO('admin'),
    rules: [rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']), rule(READ_WRITE, ['rbac.authorization.k8s.io'], ['rolebindings', 'roles'])],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: AGGREGATE_TO('edit'),
    rules: [
      rule(READ, [''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
      rule(['create'], [''], ['pods/eviction']),
      rule(WRITE, [''], ['configmaps', 'events', 'persistentvolumeclaims', 'replicationcontrollers', 'replicationcontrollers/scale', 'secrets', 'serviceaccounts', 'services', 'services/proxy']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(WRITE, ['apps'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale']),
      rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
      rule(WRITE, ['extensions'], ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'ingresses', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale']),
      rule(WRITE, ['policy'], ['poddisruptionbudgets']),
      rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
      rule(READ_WRITE, ['coordination.k8s.io'], ['leases']),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: AGGREGATE_TO('view'),
    rules: [
      rule(READ, [''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status']),
      rule(READ, [''], ['bindings', 'events', 'limitranges', 'namespaces/status', 'pods/log', 'pods/status', 'replicationcontrollers/status', 'resourcequotas', 'resourcequotas/status']),
      rule(READ, [''], ['namespaces']),
      rule(READ, ['discovery.k8s.io'], ['endpointslices']),
      rule(READ, ['apps'], ['controllerrevisions', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'statefulsets', 'statefulsets/scale', 'statefulsets/status']),
      rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
      rule(READ, ['extensions'], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'networkpolicies', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale']),
      rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
    ],
  },
  {
    // metrics-server's manifest ships this role: the resource metrics for admin, edit and view.
    name: 'system:aggregated-metrics-reader',
    labels: { ...AGGREGATE_TO('admin'), ...AGGREGATE_TO('edit'), ...AGGREGATE_TO('view') },
    rules: [rule(READ, ['metrics.k8s.io'], ['nodes', 'pods'])],
  },
  { name: 'system:auth-delegator', rules: [rule(['create'], ['authentication.k8s.io'], ['tokenreviews']), rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])] },
  {
    name: 'system:basic-user',
    rules: [rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']), rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews'])],
  },
  {
    name: 'system:discovery',
    rules: [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'])],
  },
  {
    name: 'system:kube-controller-manager',
    rules: [
      EVENTS,
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-controller-manager']),
      rule(['create'], [''], ['secrets', 'serviceaccounts']),
      rule(['delete'], [''], ['secrets']),
      rule(['get'], [''], ['configmaps', 'namespaces', 'secrets', 'serviceaccounts']),
      rule(['update'], [''], ['secrets', 'serviceaccounts']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['create'], [''], ['serviceaccounts/token']),
    ],
  },
  {
    name: 'system:kube-scheduler',
    rules: [
      EVENTS,
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
      rule(READ, [''], ['nodes']),
      rule(['delete', 'get', 'list', 'watch'], [''], ['pods']),
      rule(['create'], [''], ['bindings', 'pods/binding']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(READ, [''], ['replicationcontrollers', 'services']),
      rule(READ, ['apps', 'extensions'], ['replicasets']),
      rule(READ, ['apps'], ['statefulsets']),
      rule(READ, ['policy'], ['poddisruptionbudgets']),
      rule(READ, [''], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
      rule(READ, ['storage.k8s.io'], ['csinodes']),
      rule(READ, [''], ['namespaces']),
      rule(READ, ['storage.k8s.io'], ['csidrivers']),
      rule(READ, ['storage.k8s.io'], ['csistoragecapacities']),
    ],
  },
  {
    name: 'system:monitoring',
    rules: [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])],
  },
  {
    name: 'system:node',
    rules: [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews', 'subjectaccessreviews']),
      rule(READ, [''], ['services']),
      rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
      rule(['patch', 'update'], [''], ['nodes/status']),
      rule(['patch', 'update'], [''], ['nodes']),
      rule(['create', 'patch', 'update'], [''], ['events']),
      rule(READ, [''], ['pods']),
      rule(['create', 'delete'], [''], ['pods']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(['create'], [''], ['pods/eviction']),
      rule(READ, [''], ['configmaps', 'secrets']),
      rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['get'], [''], ['endpoints']),
      rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
      rule(['create', 'delete', 'get', 'patch', 'update'], ['coordination.k8s.io'], ['leases']),
      rule(['get'], ['storage.k8s.io'], ['volumeattachments']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(['get', 'patch', 'update'], [''], ['persistentvolumeclaims/status']),
      rule(READ, ['storage.k8s.io'], ['csidrivers']),
      rule(['create', 'delete', 'get', 'patch', 'update'], ['storage.k8s.io'], ['csinodes']),
      rule(READ, ['node.k8s.io'], ['runtimeclasses']),
    ],
  },
  {
    name: 'system:node-proxier',
    rules: [rule(['list', 'watch'], [''], ['endpoints', 'services']), rule(READ, [''], ['nodes']), EVENTS, rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices'])],
  },
  { name: 'system:public-info-viewer', rules: [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])] },
  { name: 'system:service-account-issuer-discovery', rules: [urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/'])] },
];

type SubjectSpec = { readonly kind: 'User' | 'Group'; readonly name: string };
const group = (name: string): SubjectSpec => ({ kind: 'Group', name });
const user = (name: string): SubjectSpec => ({ kind: 'User', name });

/** Bootstrap ClusterRoleBindings: binding name = role name, as kube's. `system:node` has no subjects (the Node authorizer's job). */
const CLUSTER_ROLE_BINDINGS: readonly { readonly name: string; readonly subjects: readonly SubjectSpec[] }[] = [
  { name: 'cluster-admin', subjects: [group('system:masters')] },
  { name: 'system:basic-user', subjects: [group('system:authenticated')] },
  { name: 'system:discovery', subjects: [group('system:authenticated')] },
  { name: 'system:kube-controller-manager', subjects: [user('system:kube-controller-manager')] },
  { name: 'system:kube-scheduler', subjects: [user('system:kube-scheduler')] },
  { name: 'system:monitoring', subjects: [group('system:monitoring')] },
  { name: 'system:node', subjects: [] },
  { name: 'system:node-proxier', subjects: [user('system:kube-proxy')] },
  { name: 'system:public-info-viewer', subjects: [group('system:authenticated'), group('system:unauthenticated')] },
  { name: 'system:service-account-issuer-discovery', subjects: [group('system:serviceaccounts')] },
];

const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';

const metadata = (name: string, labels: Record<string, string> = {}) => ({
  name,
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...labels },
  annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
});

/** The bootstrap ClusterRoles as API objects. */
export const bootstrapClusterRoles = (): Record<string, unknown>[] =>
  CLUSTER_ROLES.map((spec) => ({
    apiVersion: RBAC_API_VERSION,
    kind: 'ClusterRole',
    metadata: metadata(spec.name, spec.labels),
    ...(spec.aggregateFrom ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: AGGREGATE_TO(spec.aggregateFrom) }] } } : {}),
    ...(spec.rules ? { rules: spec.rules.map((r) => ({ ...r })) } : {}),
  }));

/** The bootstrap ClusterRoleBindings as API objects. */
export const bootstrapClusterRoleBindings = (): Record<string, unknown>[] =>
  CLUSTER_ROLE_BINDINGS.map((spec) => ({
    apiVersion: RBAC_API_VERSION,
    kind: 'ClusterRoleBinding',
    metadata: metadata(spec.name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: spec.name },
    ...(spec.subjects.length > 0 ? { subjects: spec.subjects.map((s) => ({ apiGroup: 'rbac.authorization.k8s.io', ...s })) } : {}),
  }));

/** The rules of the `system:node` ClusterRole: what the Node authorizer allows every node beyond its graph (kube's `NodeRules()`). */
export const NODE_RULES: readonly PolicyRule[] = CLUSTER_ROLES.find((role) => role.name === 'system:node')?.rules ?? [];
