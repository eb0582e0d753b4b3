/**
 * The rule matcher and the RBAC authorizer against kube's own cases
 * (`plugin/pkg/auth/authorizer/rbac/rbac_test.go`: TestRuleMatches, TestAuthorizer), the
 * request attributes against kube's requestinfo, aggregation, and the 403 message.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from '../../schemas/generated/types.ts';
import { requestAttributes, type Attributes, type ResourceAttributes } from './attributes.ts';
import { unionAuthorizer, privilegedGroups, SYSTEM_MASTERS } from './decision.ts';
import { forbidden } from './errors.ts';
import { parseAuthorizationModes } from './modes.ts';
import { policySnapshot, type PolicyObjects } from './policy-index.ts';
import { createRbacAuthorizer } from './rbac.ts';
import { ruleAllows, type PolicyRule } from './rules.ts';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.ts';
import { REVIEW_RESOURCES } from './review-resources.ts';
import { answerReview } from './reviews.ts';
import { ApiError } from '../errors.ts';

const list = (csv: string): string[] => (csv === '' ? [] : csv.split(','));
/** kube's test `newRule(verbs, apiGroups, resources, nonResourceURLs)`. */
const newRule = (verbs: string, apiGroups: string, resources: string, urls: string): PolicyRule => ({
  verbs: list(verbs),
  apiGroups: list(apiGroups),
  resources: list(resources),
  nonResourceURLs: list(urls),
});
const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });

const resource = (verb: string, group: string, res: string, subresource = '', namespace = '', name = '', user = 'u', groups: string[] = []): ResourceAttributes => ({
  type: 'resource',
  user: { name: user, groups },
  verb,
  apiGroup: group,
  apiVersion: '*',
  resource: res,
  subresource,
  namespace,
  name,
});
const nonResource = (verb: string, path: string, user = 'u', groups: string[] = []): Attributes => ({ type: 'nonResource', user: { name: user, groups }, verb, path });

describe('ruleAllows (kube TestRuleMatches)', () => {
  const cross = (verbs: string[], groups: string[], resources: string[], sub = '') =>
    verbs.flatMap((v) => groups.flatMap((g) => resources.map((r) => ({ attributes: resource(v, g, r, sub), key: `${v}/${g}/${r}` }))));
  it.each([
    ['star verb, exact match other', rule(['*'], ['group1'], ['resource1']), ['verb1/group1/resource1', 'verb2/group1/resource1']],
    ['star group, exact match other', rule(['verb1'], ['*'], ['resource1']), ['verb1/group1/resource1', 'verb1/group2/resource1']],
    ['star resource, exact match other', rule(['verb1'], ['group1'], ['*']), ['verb1/group1/resource1', 'verb1/group1/resource2']],
    [
      'tuple expansion',
      rule(['verb1', 'verb2'], ['group1', 'group2'], ['resource1', 'resource2']),
      cross(['verb1', 'verb2'], ['group1', 'group2'], ['resource1', 'resource2']).map((c) => c.key),
    ],
  ])('%s', (_, policy, allowed) => {
    for (const { attributes, key } of cross(['verb1', 'verb2'], ['group1', 'group2'], ['resource1', 'resource2'])) {
      expect(ruleAllows(attributes, policy), key).toBe(allowed.includes(key));
    }
  });

  it('subresource expansion', () => {
    const policy = rule(['*'], ['*'], ['resource1/subresource1']);
    expect(ruleAllows(resource('verb1', 'group1', 'resource1', 'subresource1'), policy)).toBe(true);
    expect(ruleAllows(resource('verb1', 'group2', 'resource1', 'subresource2'), policy)).toBe(false);
    expect(ruleAllows(resource('verb1', 'group1', 'resource2', 'subresource1'), policy)).toBe(false);
    expect(ruleAllows(resource('verb2', 'group1', 'resource1', 'subresource1'), policy)).toBe(true);
    expect(ruleAllows(resource('verb2', 'group1', 'resource1'), policy)).toBe(false);
  });

  const URLS = ['/foo', '/foo/bar', '/foo/baz', '/foo/bar/one', '/foo/baz/one', '/notfoo', '/notfoo/bar'];
  it.each([
    ['star nonresource, exact match other', newRule('verb1', '', '', '*'), 'verb1', URLS],
    ['star nonresource subpath', newRule('verb1', '', '', '/foo/*'), 'verb1', ['/foo/bar', '/foo/baz', '/foo/bar/one', '/foo/baz/one']],
    ['star verb, exact nonresource', newRule('*', '', '', '/foo,/foo/bar/one'), 'verb1', ['/foo', '/foo/bar/one']],
    ['star verb, exact nonresource (another verb)', newRule('*', '', '', '/foo,/foo/bar/one'), 'verb2', ['/foo', '/foo/bar/one']],
    ['exact verb only', newRule('verb1', '', '', '*'), 'verb2', []],
  ])('%s', (_, policy, verb, allowed) => {
    for (const url of URLS) expect(ruleAllows(nonResource(verb, url), policy), url).toBe(allowed.includes(url));
  });

  it('resourceNames narrow a rule to names; a request without a name (list, create) does not match them', () => {
    const policy: PolicyRule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['mine'] };
    expect(ruleAllows(resource('get', '', 'configmaps', '', 'ns', 'mine'), policy)).toBe(true);
    expect(ruleAllows(resource('get', '', 'configmaps', '', 'ns', 'other'), policy)).toBe(false);
    expect(ruleAllows(resource('list', '', 'configmaps', '', 'ns'), policy)).toBe(false);
  });
});

const clusterRole = (name: string, ...rules: PolicyRule[]): ClusterRole => ({ kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', metadata: { name }, rules: rules.map((r) => ({ ...r })) as ClusterRole['rules'] });
const subjects = (...specs: string[]) =>
  specs.map((spec) => {
    const [kind, ...rest] = spec.split(':');
    const name = rest.join(':');
    return kind === 'ServiceAccount' ? { kind, namespace: name.split('/')[1] ?? '', name: name.split('/')[0]! } : { kind: kind!, name };
  });
const roleBinding = (namespace: string, roleName: string, roleKind: 'Role' | 'ClusterRole', ...specs: string[]): RoleBinding => ({
  kind: 'RoleBinding',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  metadata: { name: `${roleName}-binding`, namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
  subjects: subjects(...specs),
});
const clusterRoleBinding = (roleName: string, ...specs: string[]): ClusterRoleBinding => ({
  kind: 'ClusterRoleBinding',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  metadata: { name: roleName },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
  subjects: subjects(...specs),
});
const authorizerOf = (objects: Partial<PolicyObjects>) => {
  const snapshot = policySnapshot({ clusterRoles: [], roles: [], clusterRoleBindings: [], roleBindings: [], ...objects });
  return createRbacAuthorizer({ current: () => snapshot });
};
/** kube's `defaultAttributes{user, groups, verb, resource, subresource, namespace, apiGroup}`. */
const attrs = (user: string, groups: string, verb: string, res: string, sub: string, namespace: string, group: string) =>
  resource(verb, group, res, sub, namespace, '', user, list(groups));

describe('the RBAC authorizer (kube TestAuthorizer)', () => {
  it('a ClusterRole bound in one namespace by a RoleBinding, to a user and a group', () => {
    const authorizer = authorizerOf({
      clusterRoles: [clusterRole('admin', newRule('*', '*', '*', '*'))],
      roleBindings: [roleBinding('ns1', 'admin', 'ClusterRole', 'User:admin', 'Group:admins')],
    });
    for (const a of [
      attrs('admin', '', 'get', 'Pods', '', 'ns1', ''),
      attrs('admin', '', 'watch', 'Pods', '', 'ns1', ''),
      attrs('admin', 'group1', 'watch', 'Foobar', '', 'ns1', ''),
      attrs('joe', 'admins', 'watch', 'Foobar', '', 'ns1', ''),
      attrs('joe', 'group1,admins', 'watch', 'Foobar', '', 'ns1', ''),
    ]) {
      expect(authorizer.authorize(a).type, JSON.stringify(a)).toBe('allow');
    }
    for (const a of [
      attrs('admin', '', 'GET', 'Pods', '', 'ns2', ''),
      attrs('admin', '', 'GET', 'Nodes', '', '', ''),
      attrs('admin', 'admins', 'GET', 'Pods', '', 'ns2', ''),
      attrs('admin', 'admins', 'GET', 'Nodes', '', '', ''),
    ]) {
      expect(authorizer.authorize(a).type, JSON.stringify(a)).toBe('noOpinion');
    }
  });

  it('non-resource URLs, exact and prefixed', () => {
    const authorizer = authorizerOf({
      clusterRoles: [
        clusterRole('non-resource-url-getter', newRule('get', '', '', '/apis')),
        clusterRole('non-resource-url', newRule('*', '', '', '/apis')),
        clusterRole('non-resource-url-prefix', newRule('get', '', '', '/apis/*')),
      ],
      clusterRoleBindings: [
        clusterRoleBinding('non-resource-url-getter', 'User:foo', 'Group:bar'),
        clusterRoleBinding('non-resource-url', 'User:admin', 'Group:admin'),
        clusterRoleBinding('non-resource-url-prefix', 'User:prefixed', 'Group:prefixed'),
      ],
    });
    const pass = [
      nonResource('get', '/apis', 'foo'),
      nonResource('get', '/apis', '', ['bar']),
      nonResource('get', '/apis', 'admin'),
      nonResource('get', '/apis', '', ['admin']),
      nonResource('watch', '/apis', 'admin'),
      nonResource('get', '/apis/v1', 'prefixed'),
      nonResource('get', '/apis/v1', '', ['prefixed']),
      nonResource('get', '/apis/v1/foobar', 'prefixed'),
    ];
    const fail = [
      nonResource('watch', '/apis', 'foo'),
      nonResource('watch', '/apis', '', ['bar']),
      nonResource('get', '/api/v1', 'foo'),
      nonResource('get', '/api/v1', '', ['bar']),
      nonResource('get', '/api/v1', 'admin'),
      nonResource('get', '/api/v1', '', ['admin']),
      nonResource('get', '/api/v1', 'prefixed'),
      nonResource('get', '/api/v1', '', ['prefixed']),
    ];
    for (const a of pass) expect(authorizer.authorize(a).type, JSON.stringify(a)).toBe('allow');
    for (const a of fail) expect(authorizer.authorize(a).type, JSON.stringify(a)).toBe('noOpinion');
  });

  it('subresources: pods does not cover pods/status; pods/status and */scale do', () => {
    const plain = authorizerOf({
      clusterRoles: [clusterRole('admin', newRule('*', '*', 'pods', '*'))],
      roleBindings: [roleBinding('ns1', 'admin', 'ClusterRole', 'User:admin', 'Group:admins')],
    });
    expect(plain.authorize(attrs('admin', '', 'get', 'pods', '', 'ns1', '')).type).toBe('allow');
    expect(plain.authorize(attrs('admin', '', 'get', 'pods', 'status', 'ns1', '')).type).toBe('noOpinion');
    const sub = authorizerOf({
      clusterRoles: [clusterRole('admin', newRule('*', '*', 'pods/status', '*'), newRule('*', '*', '*/scale', '*'))],
      roleBindings: [roleBinding('ns1', 'admin', 'ClusterRole', 'User:admin', 'Group:admins')],
    });
    for (const [res, s] of [['pods', 'status'], ['pods', 'scale'], ['deployments', 'scale'], ['anything', 'scale']] as const) {
      expect(sub.authorize(attrs('admin', '', 'get', res, s, 'ns1', '')).type, `${res}/${s}`).toBe('allow');
    }
    expect(sub.authorize(attrs('admin', '', 'get', 'pods', '', 'ns1', '')).type).toBe('noOpinion');
  });

  it('service accounts: a namespace-less subject of a RoleBinding is the binding namespace\'s', () => {
    const authorizer = authorizerOf({
      roles: [{ kind: 'Role', apiVersion: 'rbac.authorization.k8s.io/v1', metadata: { name: 'reader', namespace: 'ns1' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] } as Role],
      roleBindings: [roleBinding('ns1', 'reader', 'Role', 'ServiceAccount:robot')],
    });
    expect(authorizer.authorize(resource('get', '', 'pods', '', 'ns1', '', 'system:serviceaccount:ns1:robot')).type).toBe('allow');
    expect(authorizer.authorize(resource('get', '', 'pods', '', 'ns1', '', 'system:serviceaccount:ns2:robot')).type).toBe('noOpinion');
    expect(authorizer.authorize(resource('get', '', 'pods', '', 'ns2', '', 'system:serviceaccount:ns1:robot')).type).toBe('noOpinion');
  });

  it('says which binding allowed, and which role could not be found', () => {
    const authorizer = authorizerOf({
      clusterRoles: [clusterRole('reader', rule(['get'], [''], ['pods']))],
      roleBindings: [roleBinding('ns1', 'reader', 'ClusterRole', 'Group:readers'), roleBinding('ns1', 'missing', 'ClusterRole', 'Group:readers')],
    });
    expect(authorizer.authorize(resource('get', '', 'pods', '', 'ns1', '', 'u', ['readers']))).toEqual({
      type: 'allow',
      reason: 'RBAC: allowed by RoleBinding "reader-binding/ns1" of ClusterRole "reader" to Group "readers"',
    });
    expect(authorizer.authorize(resource('list', '', 'pods', '', 'ns1', '', 'u', ['readers']))).toEqual({
      type: 'noOpinion',
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found',
    });
  });
});

describe('ClusterRole aggregation', () => {
  const objects = (): PolicyObjects => ({
    clusterRoles: bootstrapClusterRoles() as unknown as ClusterRole[],
    roles: [],
    clusterRoleBindings: [],
    roleBindings: [roleBinding('a', 'view', 'ClusterRole', 'User:viewer'), roleBinding('a', 'edit', 'ClusterRole', 'User:editor')],
  });

  it('view, edit and admin are built from the aggregate-to-* roles, transitively (view ⊂ edit ⊂ admin)', () => {
    const snapshot = policySnapshot(objects());
    const view = snapshot.clusterRoleRules('view')!;
    const edit = snapshot.clusterRoleRules('edit')!;
    const admin = snapshot.clusterRoleRules('admin')!;
    expect(view.length).toBeGreaterThan(0);
    expect(view.every((r) => edit.includes(r))).toBe(true);
    expect(edit.every((r) => admin.includes(r))).toBe(true);
    expect(admin.some((r) => (r.resources ?? []).includes('rolebindings'))).toBe(true);
    const authorizer = authorizerOf(objects());
    expect(authorizer.authorize(resource('list', '', 'pods', '', 'a', '', 'viewer')).type).toBe('allow');
    expect(authorizer.authorize(resource('get', '', 'secrets', '', 'a', 's', 'viewer')).type).toBe('noOpinion');
    expect(authorizer.authorize(resource('get', '', 'secrets', '', 'a', 's', 'editor')).type).toBe('allow');
  });

  it('a ClusterRole labelled aggregate-to-view extends view (and so edit)', () => {
    const widgets = { ...clusterRole('widget-reader', rule(['get', 'list'], ['example.com'], ['widgets'])), metadata: { name: 'widget-reader', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } } };
    const base = objects();
    const before = authorizerOf(base);
    const after = authorizerOf({ ...base, clusterRoles: [...base.clusterRoles, widgets] });
    const ask = resource('list', 'example.com', 'widgets', '', 'a', '', 'viewer');
    expect(before.authorize(ask).type).toBe('noOpinion');
    expect(after.authorize(ask).type).toBe('allow');
    expect(after.authorize({ ...ask, user: { name: 'editor', groups: [] } }).type).toBe('allow');
  });

  it('every bootstrap binding names a bootstrap role', () => {
    const names = new Set(bootstrapClusterRoles().map((r) => (r['metadata'] as { name: string }).name));
    for (const binding of bootstrapClusterRoleBindings()) expect(names.has((binding['roleRef'] as { name: string }).name)).toBe(true);
  });
});

describe('request attributes (kube requestinfo)', () => {
  const user = { name: 'u', groups: [] };
  const q = (text = '') => new URLSearchParams(text);
  it.each([
    ['GET', '/api/v1/namespaces/a/pods', '', { verb: 'list', resource: 'pods', namespace: 'a', name: '' }],
    ['GET', '/api/v1/namespaces/a/pods', 'watch=true', { verb: 'watch', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/watch/namespaces/a/pods', '', { verb: 'watch', resource: 'pods', namespace: 'a' }],
    ['GET', '/api/v1/namespaces/a/pods', 'fieldSelector=metadata.name%3Dx', { verb: 'list', name: 'x' }],
    ['GET', '/api/v1/namespaces/a/pods/x', '', { verb: 'get', name: 'x' }],
    ['PUT', '/api/v1/namespaces/a/pods/x/status', '', { verb: 'update', resource: 'pods', subresource: 'status', name: 'x' }],
    ['DELETE', '/apis/apps/v1/namespaces/a/deployments', '', { verb: 'deletecollection', apiGroup: 'apps', resource: 'deployments' }],
    ['POST', '/api/v1/namespaces/a/bindings', '', { verb: 'create', resource: 'bindings', namespace: 'a' }],
    ['GET', '/api/v1/namespaces/foo', '', { verb: 'get', resource: 'namespaces', namespace: 'foo', name: 'foo' }],
    ['PUT', '/api/v1/namespaces/foo/status', '', { verb: 'update', resource: 'namespaces', namespace: 'foo', name: 'foo', subresource: 'status' }],
    ['GET', '/api/v1/nodes', '', { verb: 'list', resource: 'nodes', namespace: '' }],
    ['POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', '', { verb: 'create', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectaccessreviews' }],
  ])('%s %s?%s', (method, path, query, expected) => {
    expect(requestAttributes(user, method, path, q(query))).toMatchObject({ type: 'resource', ...expected });
  });
  it.each([
    ['GET', '/api', 'get'],
    ['GET', '/api/v1', 'get'],
    ['GET', '/apis/apps/v1', 'get'],
    ['GET', '/version', 'get'],
    ['POST', '/logplane/v1/replay', 'post'],
  ])('%s %s is a non-resource request', (method, path, verb) => {
    expect(requestAttributes(user, method, path, q())).toEqual({ type: 'nonResource', user, verb, path });
  });
});

describe('denial', () => {
  it('403 Forbidden with kube\'s message and details, in a namespace, at the cluster scope, on a path', () => {
    expect(forbidden(resource('list', '', 'pods', '', 'default', '', 'x'), '').status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { kind: 'pods' },
      code: 403,
    });
    expect(forbidden(resource('update', '', 'pods', 'status', 'a', 'p', 'x'), '').status.message).toBe(
      'pods "p" is forbidden: User "x" cannot update resource "pods/status" in API group "" in the namespace "a"',
    );
    const deployments = forbidden(resource('list', 'apps', 'deployments', '', '', '', 'x'), 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found').status;
    expect(deployments.message).toBe(
      'deployments.apps is forbidden: User "x" cannot list resource "deployments" in API group "apps" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    );
    expect(deployments.details).toEqual({ group: 'apps', kind: 'deployments' });
    expect(forbidden(nonResource('get', '/metrics', 'x'), '').status).toMatchObject({ message: 'forbidden: User "x" cannot get path "/metrics"', details: {}, code: 403 });
  });

  it('system:masters is allowed whatever RBAC says; the union stops at the first decision', () => {
    const authorizer = unionAuthorizer([privilegedGroups(SYSTEM_MASTERS), authorizerOf({})]);
    expect(authorizer.authorize(resource('delete', '', 'nodes', '', '', 'n', 'root', [SYSTEM_MASTERS])).type).toBe('allow');
    expect(authorizer.authorize(resource('delete', '', 'nodes', '', '', 'n', 'root', [])).type).toBe('noOpinion');
  });

  it('--authorization-mode takes kube\'s names and refuses unknown and repeated modes', () => {
    expect(parseAuthorizationModes('AlwaysAllow,RBAC')).toEqual(['AlwaysAllow', 'RBAC']);
    expect(parseAuthorizationModes('Node,RBAC')).toEqual(['Node', 'RBAC']);
    expect(() => parseAuthorizationModes('ABAC')).toThrow('authorization mode "ABAC" is not a valid mode; supported modes: AlwaysAllow, AlwaysDeny, Node, RBAC');
    expect(() => parseAuthorizationModes('RBAC,RBAC')).toThrow(/more than once/);
  });
});

describe('review bodies', () => {
  const ssar = REVIEW_RESOURCES.find((r) => r.kind === 'SelfSubjectAccessReview')!;
  const ctx = { user: { name: 'u', uid: 'u', groups: ['system:authenticated'] }, namespace: undefined, authorizer: authorizerOf({}), authenticateToken: async () => undefined };
  it.each([
    [{ spec: { resourceAttributes: { verb: 7 } } }, 400, 'spec.resourceAttributes.verb: expected a string, got 7'],
    [{ spec: { resourceAttributes: [] } }, 400, 'spec.resourceAttributes: expected an object'],
    [{ metadata: 'x', spec: {} }, 400, 'metadata: expected an object'],
    [{ kind: 'Pod', spec: {} }, 400, 'the body is undefined, Kind=Pod; this endpoint takes authorization.k8s.io/v1, Kind=SelfSubjectAccessReview'],
    [{ spec: { resourceAttributes: {}, nonResourceAttributes: {} } }, 422, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: {}: cannot be specified in combination with resourceAttributes'],
    ['text', 400, 'the request body must be a SelfSubjectAccessReview object'],
  ])('%j is refused with %i naming the field', async (body, code, message) => {
    let error: unknown;
    try {
      await answerReview(ssar, body, ctx);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toMatchObject({ code, message });
  });
});
