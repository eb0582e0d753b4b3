/**
 * The RBAC objects of the projection, indexed for authorization: bindings by subject
 * (`User:alice`, `Group:system:authenticated`, `ServiceAccount:ns:name`), roles by name,
 * and every aggregated ClusterRole's effective rules. Built from the projection's current
 * view and rebuilt, on the next request, after any change to a Role, ClusterRole,
 * RoleBinding or ClusterRoleBinding; between such changes a request costs a few map reads.
 *
 * ClusterRole aggregation (`aggregationRule`) is evaluated here, at authorization time, to
 * the same rules kube's clusterrole-aggregation controller writes into the role: the union,
 * in name order and without duplicates, of the rules of every other ClusterRole a selector
 * matches (which are themselves aggregated). The stored role's `rules` are not rewritten.
 */
import type { Subscription } from 'rxjs';
import type { Projection } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import { sameJson } from '../../schemas/canonical-json.ts';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding, Subject as RbacSubject } from '../../schemas/generated/types.ts';
import { kindRef } from '../../schemas/keys.ts';
import type { Subject } from './attributes.ts';
import type { PolicyRule } from './rules.ts';

const RBAC_KINDS = ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'] as const;
const RBAC_KEY_PREFIXES = RBAC_KINDS.map((kind) => `${kindRef(kind)}/`);

/** A binding (RoleBinding or ClusterRoleBinding) as the authorizer reads it. */
export interface IndexedBinding {
  readonly kind: 'RoleBinding' | 'ClusterRoleBinding';
  readonly name: string;
  /** `''` for a ClusterRoleBinding. */
  readonly namespace: string;
  readonly roleRef: { readonly kind: string; readonly name: string };
  readonly subjects: readonly RbacSubject[];
}

/** One immutable state of the index. */
export interface PolicySnapshot {
  /** The ClusterRoleBindings that name one of `user`'s subjects, in name order. */
  clusterRoleBindingsFor(user: Subject): readonly IndexedBinding[];
  /** The RoleBindings of `namespace` that name one of `user`'s subjects, in name order. */
  roleBindingsFor(user: Subject, namespace: string): readonly IndexedBinding[];
  /** A ClusterRole's effective rules (aggregated when it has an aggregationRule); undefined if there is none. */
  clusterRoleRules(name: string): readonly PolicyRule[] | undefined;
  roleRules(namespace: string, name: string): readonly PolicyRule[] | undefined;
}

export interface PolicyIndex {
  /** The current snapshot (rebuilt first if an RBAC object changed since the last one). */
  current(): PolicySnapshot;
  close(): void;
}

/** What the RBAC authorizer reads: the current snapshot. */
export type PolicySource = Pick<PolicyIndex, 'current'>;

/** A service account's user name: `system:serviceaccount:<namespace>:<name>`. */
export const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** The subject keys a user matches: its name, each group, and its service account when it is one. */
const subjectKeysOf = (user: Subject): string[] => {
  const keys = [`User:${user.name}`, ...user.groups.map((group) => `Group:${group}`)];
  const serviceAccount = SERVICE_ACCOUNT_USER.exec(user.name);
  if (serviceAccount) keys.push(`ServiceAccount:${serviceAccount[1]}:${serviceAccount[2]}`);
  return keys;
};

/** The index key of a binding's subject; a service account without a namespace takes the binding's (none for a ClusterRoleBinding). */
const subjectKey = (subject: RbacSubject, bindingNamespace: string): string | undefined => {
  switch (subject.kind) {
    case 'User':
    case 'Group':
      return `${subject.kind}:${subject.name}`;
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace === '' ? undefined : `ServiceAccount:${namespace}:${subject.name}`;
    }
    default:
      return undefined;
  }
};

type BindingsBySubject = Map<string, IndexedBinding[]>;

const addBinding = (index: BindingsBySubject, binding: IndexedBinding): void => {
  for (const subject of binding.subjects) {
    const key = subjectKey(subject, binding.namespace);
    if (key === undefined) continue;
    const list = index.get(key) ?? [];
    if (!list.includes(binding)) list.push(binding);
    index.set(key, list);
  }
};

const bindingsFor = (index: BindingsBySubject | undefined, user: Subject): readonly IndexedBinding[] => {
  if (!index) return [];
  const found = new Set<IndexedBinding>();
  for (const key of subjectKeysOf(user)) for (const binding of index.get(key) ?? []) found.add(binding);
  return [...found].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
};

const toBinding = (object: RoleBinding | ClusterRoleBinding, namespace: string): IndexedBinding => ({
  kind: object.kind,
  name: object.metadata.name,
  namespace,
  roleRef: { kind: object.roleRef.kind, name: object.roleRef.name },
  subjects: object.subjects ?? [],
});

/** The aggregated rules of every ClusterRole, kube's clusterrole-aggregation controller's fixed point. */
const aggregateClusterRoles = (roles: ReadonlyMap<string, ClusterRole>): Map<string, readonly PolicyRule[]> => {
  const effective = new Map<string, readonly PolicyRule[]>();
  const resolving = new Set<string>();
  const rulesOf = (name: string): readonly PolicyRule[] => {
    const known = effective.get(name);
    if (known) return known;
    const role = roles.get(name)!;
    const selectors = role.aggregationRule?.clusterRoleSelectors;
    if (!selectors) {
      effective.set(name, role.rules ?? []);
      return role.rules ?? [];
    }
    // A cycle of aggregating roles stops at the role being resolved, as one controller pass would.
    if (resolving.has(name)) return role.rules ?? [];
    resolving.add(name);
    const rules: PolicyRule[] = [];
    for (const selector of selectors) {
      const parsed = labelSelectorToRequirements(selector);
      if (parsed.type !== 'ok') continue;
      for (const other of [...roles.keys()].sort()) {
        if (other === name || !matchesLabels(parsed.requirements, roles.get(other)!.metadata.labels)) continue;
        for (const rule of rulesOf(other)) if (!rules.some((r) => sameJson(r, rule))) rules.push(rule);
      }
    }
    resolving.delete(name);
    effective.set(name, rules);
    return rules;
  };
  for (const name of roles.keys()) rulesOf(name);
  return effective;
};

/** The RBAC objects a snapshot is built from. */
export interface PolicyObjects {
  readonly clusterRoles: readonly ClusterRole[];
  readonly roles: readonly Role[];
  readonly clusterRoleBindings: readonly ClusterRoleBinding[];
  readonly roleBindings: readonly RoleBinding[];
}

/** Indexes RBAC objects into a snapshot. */
export const policySnapshot = (objects: PolicyObjects): PolicySnapshot => {
  const clusterRoles = new Map<string, ClusterRole>(objects.clusterRoles.map((role) => [role.metadata.name, role]));
  const roles = new Map<string, readonly PolicyRule[]>(objects.roles.map((role) => [`${role.metadata.namespace ?? ''}/${role.metadata.name}`, role.rules ?? []]));
  const clusterBindings: BindingsBySubject = new Map();
  for (const binding of objects.clusterRoleBindings) addBinding(clusterBindings, toBinding(binding, ''));
  const roleBindings = new Map<string, BindingsBySubject>();
  for (const binding of objects.roleBindings) {
    const namespace = binding.metadata.namespace ?? '';
    const index = roleBindings.get(namespace) ?? new Map();
    addBinding(index, toBinding(binding, namespace));
    roleBindings.set(namespace, index);
  }
  const aggregated = aggregateClusterRoles(clusterRoles);
  return {
    clusterRoleBindingsFor: (user) => bindingsFor(clusterBindings, user),
    roleBindingsFor: (user, namespace) => bindingsFor(roleBindings.get(namespace), user),
    clusterRoleRules: (name) => aggregated.get(name),
    roleRules: (namespace, name) => roles.get(`${namespace}/${name}`),
  };
};

/** The projection's current RBAC objects as a snapshot. */
export const buildPolicySnapshot = (projection: Projection): PolicySnapshot => {
  const view = projection.view();
  return policySnapshot({
    clusterRoles: view.list('ClusterRole') as unknown as ClusterRole[],
    roles: view.list('Role') as unknown as Role[],
    clusterRoleBindings: view.list('ClusterRoleBinding') as unknown as ClusterRoleBinding[],
    roleBindings: view.list('RoleBinding') as unknown as RoleBinding[],
  });
};

/** Keeps a snapshot of `projection`'s RBAC objects, rebuilt lazily after they change. */
export const createPolicyIndex = (projection: Projection): PolicyIndex => {
  let snapshot: PolicySnapshot | undefined;
  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (RBAC_KEY_PREFIXES.some((prefix) => change.key.startsWith(prefix))) snapshot = undefined;
  });
  return {
    current: () => (snapshot ??= buildPolicySnapshot(projection)),
    close: () => subscription.unsubscribe(),
  };
};
