/**
 * Whether one RBAC PolicyRule allows a request: kube's `RuleAllows`
 * (`plugin/pkg/auth/authorizer/rbac/rbac.go`) and the matchers of `pkg/apis/rbac/v1/evaluation_helpers.go`.
 * `*` matches every verb, group, resource and URL; `*\/status` every resource's status;
 * a non-resource URL ending in `*` matches every path it prefixes.
 */
import type { Attributes } from './attributes.ts';

/** An RBAC rule as Roles and ClusterRoles hold it (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
}

const ALL = '*';

export const verbMatches = (rule: PolicyRule, verb: string): boolean => rule.verbs.some((v) => v === ALL || v === verb);

export const apiGroupMatches = (rule: PolicyRule, group: string): boolean => (rule.apiGroups ?? []).some((g) => g === ALL || g === group);

/** `combined` is `resource` or `resource/subresource`. */
export const resourceMatches = (rule: PolicyRule, combined: string, subresource: string): boolean =>
  (rule.resources ?? []).some(
    (r) =>
      r === ALL ||
      r === combined ||
      (subresource !== '' && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)),
  );

/** An empty `resourceNames` allows every name. */
export const resourceNameMatches = (rule: PolicyRule, name: string): boolean =>
  (rule.resourceNames ?? []).length === 0 || (rule.resourceNames ?? []).includes(name);

export const nonResourceURLMatches = (rule: PolicyRule, path: string): boolean =>
  (rule.nonResourceURLs ?? []).some(
    (url) => url === ALL || url === path || (url.endsWith(ALL) && path.startsWith(url.slice(0, -1))),
  );

/** Whether `rule` allows the request `attributes`. */
export const ruleAllows = (attributes: Attributes, rule: PolicyRule): boolean => {
  if (attributes.type === 'nonResource') return verbMatches(rule, attributes.verb) && nonResourceURLMatches(rule, attributes.path);
  const combined = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  return (
    verbMatches(rule, attributes.verb) &&
    apiGroupMatches(rule, attributes.apiGroup) &&
    resourceMatches(rule, combined, attributes.subresource) &&
    resourceNameMatches(rule, attributes.name)
  );
};
