/** Field numbers of k8s.io/api/rbac/v1 generated.proto messages. */
import { f, list, m, type Message } from './spec.ts';

export const RBAC: Readonly<Record<string, Message>> = {
  // rbac.authorization.k8s.io/v1 (kubectl create role|clusterrole|rolebinding|clusterrolebinding send them).
  Role: { 1: f('metadata', m('ObjectMeta')), 2: f('rules', m('PolicyRule'), list) },
  ClusterRole: { 1: f('metadata', m('ObjectMeta')), 2: f('rules', m('PolicyRule'), list), 3: f('aggregationRule', m('AggregationRule')) },
  PolicyRule: {
    1: f('verbs', 'string', list), 2: f('apiGroups', 'string', list), 3: f('resources', 'string', list), 4: f('resourceNames', 'string', list),
    5: f('nonResourceURLs', 'string', list),
  },
  AggregationRule: { 1: f('clusterRoleSelectors', m('LabelSelector'), list) },
  RoleBinding: { 1: f('metadata', m('ObjectMeta')), 2: f('subjects', m('Subject'), list), 3: f('roleRef', m('RoleRef')) },
  ClusterRoleBinding: { 1: f('metadata', m('ObjectMeta')), 2: f('subjects', m('Subject'), list), 3: f('roleRef', m('RoleRef')) },
  Subject: { 1: f('kind', 'string'), 2: f('apiGroup', 'string'), 3: f('name', 'string'), 4: f('namespace', 'string') },
  RoleRef: { 1: f('apiGroup', 'string'), 2: f('kind', 'string'), 3: f('name', 'string') },
};
