/**
 * The RBAC authorizer, as kube's (`plugin/pkg/auth/authorizer/rbac/rbac.go` over
 * `pkg/registry/rbac/validation/rule.go`): the rules of every ClusterRoleBinding naming the
 * user, then of every RoleBinding naming it in the request's namespace, are visited until
 * one allows the request. Nothing allows: no opinion, with the roles that could not be
 * resolved as the reason (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`).
 */
import type { Subject as RbacSubject } from '../../schemas/generated/types.ts';
import type { Attributes, Subject } from './attributes.ts';
import type { Authorizer, Decision, RulesReview } from './decision.ts';
import { SERVICE_ACCOUNT_USER, type IndexedBinding, type PolicySnapshot, type PolicySource } from './policy-index.ts';
import { ruleAllows, type PolicyRule } from './rules.ts';

const describeSubject = (subject: RbacSubject, bindingNamespace: string): string =>
  subject.kind === 'ServiceAccount'
    ? `${subject.kind} ${JSON.stringify(`${subject.name}/${subject.namespace || bindingNamespace}`)}`
    : `${subject.kind} ${JSON.stringify(subject.name)}`;

/** Whether a binding's subject names `user` (kube's `appliesToUser`). */
const appliesTo = (user: Subject, subject: RbacSubject, bindingNamespace: string): boolean => {
  switch (subject.kind) {
    case 'User':
      return subject.name === user.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      const match = SERVICE_ACCOUNT_USER.exec(user.name);
      return namespace !== '' && match !== null && match[1] === namespace && match[2] === subject.name;
    }
    default:
      return false;
  }
};

/** `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, or `RoleBinding "x/ns" of …`, as kube describes a source. */
const describeBinding = (binding: IndexedBinding, user: Subject): string => {
  const subject = binding.subjects.find((s) => appliesTo(user, s, binding.namespace))!;
  const name = binding.kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  return `${binding.kind} ${JSON.stringify(name)} of ${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)} to ${describeSubject(subject, binding.namespace)}`;
};

type Resolved = { readonly type: 'rules'; readonly rules: readonly PolicyRule[] } | { readonly type: 'error'; readonly message: string };

/** The rules a binding's roleRef names (kube's `GetRoleReferenceRules`). */
const roleReferenceRules = (snapshot: PolicySnapshot, binding: IndexedBinding): Resolved => {
  const { kind, name } = binding.roleRef;
  switch (kind) {
    case 'ClusterRole': {
      const rules = snapshot.clusterRoleRules(name);
      return rules ? { type: 'rules', rules } : { type: 'error', message: `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(name)} not found` };
    }
    case 'Role': {
      const rules = binding.kind === 'RoleBinding' ? snapshot.roleRules(binding.namespace, name) : undefined;
      return rules ? { type: 'rules', rules } : { type: 'error', message: `role.rbac.authorization.k8s.io ${JSON.stringify(name)} not found` };
    }
    default:
      return { type: 'error', message: `unsupported role reference kind: ${JSON.stringify(kind)}` };
  }
};

/**
 * Visits the rules that apply to `user` in `namespace` (kube's `VisitRulesFor`): `visit`
 * returns false to stop. Unresolvable role references are collected and returned.
 */
const visitRulesFor = (
  snapshot: PolicySnapshot,
  user: Subject,
  namespace: string,
  visit: (binding: IndexedBinding, rule: PolicyRule) => boolean,
): string[] => {
  const errors: string[] = [];
  const bindings = [...snapshot.clusterRoleBindingsFor(user), ...(namespace === '' ? [] : snapshot.roleBindingsFor(user, namespace))];
  for (const binding of bindings) {
    const resolved = roleReferenceRules(snapshot, binding);
    if (resolved.type === 'error') {
      errors.push(resolved.message);
      continue;
    }
    for (const rule of resolved.rules) if (!visit(binding, rule)) return errors;
  }
  return errors;
};

const aggregateErrors = (errors: readonly string[]): string => (errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);

/** The RBAC authorizer over the policy `index`. */
export const createRbacAuthorizer = (index: PolicySource): Authorizer => ({
  authorize: (attributes: Attributes): Decision => {
    const snapshot = index.current();
    let allowedBy: string | undefined;
    const errors = visitRulesFor(snapshot, attributes.user, attributes.type === 'resource' ? attributes.namespace : '', (binding, rule) => {
      if (!ruleAllows(attributes, rule)) return true;
      allowedBy = describeBinding(binding, attributes.user);
      return false;
    });
    if (allowedBy !== undefined) return { type: 'allow', reason: `RBAC: allowed by ${allowedBy}` };
    return { type: 'noOpinion', reason: errors.length > 0 ? `RBAC: ${aggregateErrors(errors)}` : '' };
  },
  rulesFor: (user: Subject, namespace: string): RulesReview => {
    const review: { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] } = { resourceRules: [], nonResourceRules: [] };
    const errors = visitRulesFor(index.current(), user, namespace, (_, rule) => {
      if ((rule.resources ?? []).length > 0) {
        review.resourceRules.push({
          verbs: rule.verbs,
          apiGroups: rule.apiGroups ?? [],
          resources: rule.resources ?? [],
          resourceNames: rule.resourceNames ?? [],
        });
      }
      if ((rule.nonResourceURLs ?? []).length > 0) review.nonResourceRules.push({ verbs: rule.verbs, nonResourceURLs: rule.nonResourceURLs ?? [] });
      return true;
    });
    return { ...review, incomplete: false, ...(errors.length > 0 ? { evaluationError: aggregateErrors(errors) } : {}) };
  },
});
