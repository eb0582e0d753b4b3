/**
 * kube's audit policy (audit.k8s.io/v1 Policy, `--audit-policy-file`): the level of a request
 * is the level of the first rule it matches (None when none does). A rule matches when every
 * list it has matches: `users`, `userGroups`, `verbs`, `namespaces` (`""` is cluster-scoped),
 * `resources` (group, resources with `*`, `pods/*`, `*\/status` and `pods/log`, resourceNames) for
 * resource requests, `nonResourceURLs` (a trailing `*` is a prefix) for the others.
 */
import { parse as parseYaml } from 'yaml';
import type { Attributes } from '../authorization/attributes.ts';
import { AuditPolicyError } from './errors.ts';

export const AUDIT_LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type AuditLevel = (typeof AUDIT_LEVELS)[number];

interface GroupResources {
  readonly group: string;
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

export interface AuditRule {
  readonly level: AuditLevel;
  readonly users?: readonly string[];
  readonly userGroups?: readonly string[];
  readonly verbs?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly resources?: readonly GroupResources[];
  readonly nonResourceURLs?: readonly string[];
}

export interface AuditPolicy {
  readonly rules: readonly AuditRule[];
}

/** Every request at Metadata: what `logplane up` records without a policy file. */
export const METADATA_POLICY: AuditPolicy = { rules: [{ level: 'Metadata' }] };

const stringList = (value: unknown, field: string): readonly string[] | undefined => {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new AuditPolicyError(`${field}: expected a list of strings`);
  return value as string[];
};

/** Parses a policy file's text (YAML or JSON); throws naming the field that is wrong. */
export const parseAuditPolicy = (text: string): AuditPolicy => {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new AuditPolicyError(`not YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  const policy = document as { apiVersion?: unknown; kind?: unknown; rules?: unknown } | null;
  if (!policy || typeof policy !== 'object') throw new AuditPolicyError('expected an audit.k8s.io/v1 Policy');
  if (policy.kind !== 'Policy' || policy.apiVersion !== 'audit.k8s.io/v1') throw new AuditPolicyError(`expected kind Policy of apiVersion audit.k8s.io/v1, got ${String(policy.kind)} of ${String(policy.apiVersion)}`);
  if (!Array.isArray(policy.rules) || policy.rules.length === 0) throw new AuditPolicyError('rules: at least one rule is required');
  const rules = policy.rules.map((raw: unknown, index: number): AuditRule => {
    const field = `rules[${index}]`;
    const rule = raw as Record<string, unknown>;
    if (!rule || typeof rule !== 'object') throw new AuditPolicyError(`${field}: expected a rule`);
    const level = rule['level'];
    if (typeof level !== 'string' || !(AUDIT_LEVELS as readonly string[]).includes(level)) throw new AuditPolicyError(`${field}.level: must be one of ${AUDIT_LEVELS.join(', ')}`);
    const resources = rule['resources'] === undefined ? undefined : (rule['resources'] as unknown[]);
    if (resources !== undefined && !Array.isArray(resources)) throw new AuditPolicyError(`${field}.resources: expected a list`);
    const nonResourceURLs = stringList(rule['nonResourceURLs'], `${field}.nonResourceURLs`);
    if (resources !== undefined && nonResourceURLs !== undefined) throw new AuditPolicyError(`${field}: rules may not apply to both resources and nonResourceURLs`);
    const optional = (name: 'users' | 'userGroups' | 'verbs' | 'namespaces') => {
      const list = stringList(rule[name], `${field}.${name}`);
      return list ? { [name]: list } : {};
    };
    return {
      level: level as AuditLevel,
      ...optional('users'),
      ...optional('userGroups'),
      ...optional('verbs'),
      ...optional('namespaces'),
      ...(resources
        ? {
            resources: resources.map((entry, i) => {
              const gr = entry as Record<string, unknown>;
              return {
                group: typeof gr['group'] === 'string' ? gr['group'] : '',
                resources: stringList(gr['resources'], `${field}.resources[${i}].resources`) ?? [],
                resourceNames: stringList(gr['resourceNames'], `${field}.resources[${i}].resourceNames`) ?? [],
              };
            }),
          }
        : {}),
      ...(nonResourceURLs ? { nonResourceURLs } : {}),
    };
  });
  return { rules };
};

/** kube's `ruleMatchesResource`: resources `*`, `pods`, `pods/*`, `*\/status`, `pods/log`. */
const resourceMatches = (entries: readonly GroupResources[], attributes: Extract<Attributes, { type: 'resource' }>): boolean =>
  entries.some((entry) => {
    if (entry.group !== attributes.apiGroup && entry.group !== '*') return false;
    if (entry.resourceNames.length > 0 && !entry.resourceNames.includes(attributes.name)) return false;
    if (entry.resources.length === 0) return true;
    const combined = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
    return entry.resources.some(
      (resource) =>
        resource === '*' ||
        resource === combined ||
        (resource === `${attributes.resource}/*` && attributes.subresource !== '') ||
        (attributes.subresource !== '' && resource === `*/${attributes.subresource}`),
    );
  });

const ruleMatches = (rule: AuditRule, attributes: Attributes): boolean => {
  if (rule.users && !rule.users.includes(attributes.user.name)) return false;
  if (rule.userGroups && !attributes.user.groups.some((group) => rule.userGroups!.includes(group))) return false;
  if (rule.verbs && !rule.verbs.includes(attributes.verb)) return false;
  if (attributes.type === 'resource') {
    if (rule.nonResourceURLs) return false;
    if (rule.namespaces && !rule.namespaces.includes(attributes.namespace)) return false;
    if (rule.resources && !resourceMatches(rule.resources, attributes)) return false;
    return true;
  }
  if (rule.resources || rule.namespaces) return false;
  if (rule.nonResourceURLs) return rule.nonResourceURLs.some((url) => url === '*' || url === attributes.path || (url.endsWith('*') && attributes.path.startsWith(url.slice(0, -1))));
  return true;
};

/** The level `policy` records the request `attributes` at. */
export const auditLevelOf = (policy: AuditPolicy, attributes: Attributes): AuditLevel => policy.rules.find((rule) => ruleMatches(rule, attributes))?.level ?? 'None';
