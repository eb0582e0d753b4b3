/**
 * Impersonation as kube-apiserver's filter: `Impersonate-*` headers make a request act as
 * another user once the authenticated user may `impersonate` each part (users or
 * serviceaccounts, groups, uids, userextras), judged by RBAC; 400 for parts without a user;
 * 403 naming the first part refused; the impersonated user is who the request's
 * authorization and events see.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenFile } from './auth.ts';
import { openTestLog, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';
import type { EventLog } from '../log/port.ts';
import { audit } from '../projections/index.ts';

const TOKENS = parseTokenFile(['admin-token,alice,1001,"system:masters"', 'bob-token,bob,2001,"staff"'].join('\n'));

interface Answer {
  readonly status: number;
  readonly body: any;
}

/** A request with repeated header lines (as kubectl sends `--as-group` twice), which fetch would join. */
const send = (url: string, method: string, path: string, token: string, headers: Record<string, string | string[]>, body?: unknown): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });

const whoami = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

const clusterRole = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules });
const bindingToBob = (name: string, role: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
});

describe('impersonation', () => {
  const temp = tempDir('impersonation-');
  let log: EventLog;
  let api: TestApiServer;
  const admin = (method: string, path: string, headers: Record<string, string | string[]> = {}, body?: unknown) => send(api.server.url, method, path, 'admin-token', headers, body);
  const bob = (method: string, path: string, headers: Record<string, string | string[]> = {}, body?: unknown) => send(api.server.url, method, path, 'bob-token', headers, body);

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir, { tokens: TOKENS, authorizationModes: ['RBAC'] });
    await api.server.ensureBootstrapPolicy();
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('acts as the impersonated user, its groups and extras, with system:authenticated added', async () => {
    const reply = await admin('POST', WHOAMI, { 'Impersonate-User': 'jane', 'Impersonate-Group': ['devs', 'ops'], 'Impersonate-Extra-Scopes': ['a', 'b'] }, whoami);
    expect(reply.status).toBe(201);
    expect(reply.body.status.userInfo).toEqual({ username: 'jane', groups: ['devs', 'ops', 'system:authenticated'], extra: { scopes: ['a', 'b'] } });
  });

  it('gives an impersonated service account its groups unless groups are asked for', async () => {
    const account = await admin('POST', WHOAMI, { 'Impersonate-User': 'system:serviceaccount:team:builder' }, whoami);
    expect(account.body.status.userInfo.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated']);
    const asked = await admin('POST', WHOAMI, { 'Impersonate-User': 'system:serviceaccount:team:builder', 'Impersonate-Group': 'x' }, whoami);
    expect(asked.body.status.userInfo.groups).toEqual(['x', 'system:authenticated']);
    // system:unauthenticated asked for: no system:authenticated (system:masters lets the review through).
    const unauthenticated = await admin('POST', WHOAMI, { 'Impersonate-User': 'jane', 'Impersonate-Group': ['system:unauthenticated', 'system:masters'] }, whoami);
    expect(unauthenticated.body.status.userInfo.groups).toEqual(['system:unauthenticated', 'system:masters']);
  });

  it('authorizes the request as the impersonated user, and records it as the actor of what it writes', async () => {
    const refused = await admin('GET', '/api/v1/namespaces/default/pods', { 'Impersonate-User': 'jane' });
    expect(refused).toMatchObject({ status: 403, body: { reason: 'Forbidden', message: 'pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"' } });
    const masters = await admin('POST', '/api/v1/namespaces/default/configmaps', { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters' }, { metadata: { name: 'by-jane' } });
    expect(masters.status).toBe(201);
    const writes = audit(api.projection.store, api.projection.partitions, { allActors: true, limit: 10_000 }).filter((e) => e.key === 'ConfigMap/default/by-jane');
    expect(writes.map((e) => e.actor)).toEqual([{ type: 'user', name: 'jane' }]);
  });

  it('refuses groups, a uid or extras without a user (400), and two users', async () => {
    const groupOnly = await admin('GET', '/api/v1/namespaces', { 'Impersonate-Group': 'devs' });
    expect(groupOnly).toMatchObject({ status: 400, body: { reason: 'BadRequest', message: 'requested [groups=devs] without impersonating a user' } });
    const uidOnly = await admin('GET', '/api/v1/namespaces', { 'Impersonate-Uid': 'u-1' });
    expect(uidOnly.body.message).toBe('requested [uid=u-1] without impersonating a user');
    expect((await admin('GET', '/api/v1/namespaces', { 'Impersonate-User': ['a', 'b'] })).status).toBe(400);
    expect((await admin('GET', '/api/v1/namespaces', { 'Impersonate-Extra-%zz': 'x', 'Impersonate-User': 'a' })).status).toBe(400);
  });

  it('lets a user impersonate only what RBAC grants it the impersonate verb on, naming the first part refused', async () => {
    const refused = await bob('GET', '/api/v1/namespaces', { 'Impersonate-User': 'jane' });
    expect(refused).toMatchObject({
      status: 403,
      body: { reason: 'Forbidden', message: 'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope' },
    });
    expect((await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {}, clusterRole('impersonate-jane', [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['jane'] }]))).status).toBe(201);
    expect((await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {}, bindingToBob('bob-as-jane', 'impersonate-jane'))).status).toBe(201);
    const asJane = await bob('POST', WHOAMI, { 'Impersonate-User': 'jane' }, whoami);
    expect(asJane.body.status.userInfo.username).toBe('jane');
    // The user, but not a group it did not get.
    const withGroup = await bob('POST', WHOAMI, { 'Impersonate-User': 'jane', 'Impersonate-Group': 'system:masters' }, whoami);
    expect(withGroup.body.message).toBe('groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope');
    const otherUser = await bob('POST', WHOAMI, { 'Impersonate-User': 'joe' }, whoami);
    expect(otherUser.status).toBe(403);
    const account = await bob('POST', WHOAMI, { 'Impersonate-User': 'system:serviceaccount:team:builder' }, whoami);
    expect(account.body.message).toBe('serviceaccounts "builder" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team"');
    const uid = await bob('POST', WHOAMI, { 'Impersonate-User': 'jane', 'Impersonate-Uid': 'u-1' }, whoami);
    expect(uid.body.message).toBe('uids.authentication.k8s.io "u-1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope');
    const extra = await bob('POST', WHOAMI, { 'Impersonate-User': 'jane', 'Impersonate-Extra-Scopes': 'a' }, whoami);
    expect(extra.body.message).toBe('userextras.authentication.k8s.io "a" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope');
  });
});
