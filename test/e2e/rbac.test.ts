/**
 * RBAC with the real kubectl (v1.32) on both logs: the apiserver runs `--authorization-mode
 * RBAC` with its bootstrap roles; a user bound to `view` in namespace `a` reads there and
 * nothing else (403 with kube's exact messages), `kubectl auth can-i` (and `--list`) and
 * `kubectl auth whoami` answer from the authorizer, a user bound to cluster-admin may do
 * everything, and a ClusterRole labelled aggregate-to-view extends `view` at once (and
 * stops when it is deleted).
 */
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateSelfSignedCertificate, parseTokenFile, writeKubeconfig } from '../../apiserver/index.ts';
import { ADMIN_TOKEN, describeOnBothLogs, logEnd, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../../apiserver/testing.ts';
import type { EventLog } from '../../log/port.ts';

interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const TOKENS = parseTokenFile(
  [`${ADMIN_TOKEN},alice,1001,"system:masters"`, 'viewer-token,viewer,2001,""', 'root-token,root,3001,"ops"'].join('\n'),
);

describeOnBothLogs('RBAC with kubectl', (adapter) => {
  const temp = tempDir('rbac-e2e-');
  let log: EventLog;
  let api: TestApiServer;

  const kubectlAs = (user: 'admin' | 'viewer' | 'root', ...args: string[]): Promise<KubectlResult> =>
    new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', join(temp.dir, `${user}.kubeconfig`), '--cache-dir', join(temp.dir, `cache-${user}`), '--request-timeout', '30s', ...args],
        { timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const admin = (...args: string[]) => kubectlAs('admin', ...args);
  let ca = '';
  /** One HTTPS request trusting the test's certificate (the admin's token unless told). */
  const call = (method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> =>
    new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        `${api.server.url}${path}`,
        {
          method,
          ca,
          headers: { Authorization: `Bearer ${options.token ?? ADMIN_TOKEN}`, Accept: 'application/json', 'Content-Type': 'application/json' },
        },
        (reply) => {
          let text = '';
          reply.on('data', (chunk) => (text += String(chunk)));
          reply.on('end', () => resolve({ status: reply.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    });
  const viewer = (...args: string[]) => kubectlAs('viewer', ...args);

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    const tls = generateSelfSignedCertificate();
    ca = tls.cert;
    api = await startTestApiServer(log, temp.dir, { tls, tokens: TOKENS, authorizationModes: ['RBAC'] });
    await api.server.ensureBootstrapPolicy();
    for (const [user, token] of [['admin', ADMIN_TOKEN], ['viewer', 'viewer-token'], ['root', 'root-token']] as const) {
      writeKubeconfig(join(temp.dir, `${user}.kubeconfig`), { server: api.server.url, token, certificateAuthority: tls.cert });
    }
    for (const ns of ['a', 'b']) {
      expect((await admin('create', 'namespace', ns)).stdout).toBe(`namespace/${ns} created\n`);
      expect((await admin('run', 'web', '--image=nginx:1.27', '-n', ns)).stdout).toBe('pod/web created\n');
    }
    expect((await admin('create', 'secret', 'generic', 'token', '--from-literal=k=v', '-n', 'a')).stdout).toBe('secret/token created\n');
    expect((await admin('create', 'rolebinding', 'viewer-view', '--clusterrole=view', '--user=viewer', '-n', 'a')).stdout).toBe(
      'rolebinding.rbac.authorization.k8s.io/viewer-view created\n',
    );
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('creates kube\'s bootstrap roles and bindings once, as ordinary objects', async () => {
    const roles = await admin('get', 'clusterroles', '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}');
    for (const name of ['admin', 'cluster-admin', 'edit', 'view', 'system:aggregate-to-view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer']) {
      expect(roles.stdout.split('\n')).toContain(name);
    }
    const view = JSON.parse((await admin('get', 'clusterrole', 'view', '-o', 'json')).stdout);
    expect(view.metadata.annotations).toEqual({ 'rbac.authorization.kubernetes.io/autoupdate': 'true' });
    expect(view.metadata.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults', 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' });
    expect(view.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] });
    const binding = JSON.parse((await admin('get', 'clusterrolebinding', 'system:public-info-viewer', '-o', 'json')).stdout);
    expect(binding.subjects.map((s: { name: string }) => s.name)).toEqual(['system:authenticated', 'system:unauthenticated']);
    // A second start appends nothing.
    const before = await logEnd(log, 'desired');
    await api.server.ensureBootstrapPolicy();
    expect(await logEnd(log, 'desired')).toBe(before);
  });

  it('reconciles an autoupdate bootstrap role at start (missing rules come back), and leaves one set to "false" alone', async () => {
    const rulesOf = async (name: string) => JSON.parse((await admin('get', 'clusterrole', name, '-o', 'json')).stdout).rules;
    const publicInfo = await rulesOf('system:public-info-viewer');
    expect(publicInfo).toEqual([{ nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] }]);
    for (const name of ['system:public-info-viewer', 'system:monitoring']) {
      expect((await admin('patch', 'clusterrole', name, '--type=json', '-p', '[{"op":"remove","path":"/rules"}]')).code).toBe(0);
    }
    expect((await admin('annotate', 'clusterrole', 'system:monitoring', 'rbac.authorization.kubernetes.io/autoupdate=false', '--overwrite')).code).toBe(0);
    await api.server.ensureBootstrapPolicy();
    expect(await rulesOf('system:public-info-viewer')).toEqual(publicInfo);
    expect(await rulesOf('system:monitoring')).toBeUndefined();
    const before = await logEnd(log, 'desired');
    await api.server.ensureBootstrapPolicy();
    expect(await logEnd(log, 'desired')).toBe(before);
  });

  it('the viewer gets and lists pods in its namespace', async () => {
    const list = await viewer('get', 'pods', '-n', 'a', '-o', 'name');
    expect(list).toMatchObject({ code: 0, stderr: '', stdout: 'pod/web\n' });
    expect((await viewer('get', 'pod', 'web', '-n', 'a', '-o', 'jsonpath={.metadata.name}')).stdout).toBe('web');
  });

  it('the viewer is refused everything else with kube\'s messages', async () => {
    const cases: [string[], string][] = [
      [['get', 'pods', '-n', 'b'], 'pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "b"'],
      [['get', 'secrets', '-n', 'a'], 'secrets is forbidden: User "viewer" cannot list resource "secrets" in API group "" in the namespace "a"'],
      [['get', 'secret', 'token', '-n', 'a'], 'secrets "token" is forbidden: User "viewer" cannot get resource "secrets" in API group "" in the namespace "a"'],
      [['run', 'mine', '--image=nginx:1.27', '-n', 'a'], 'pods is forbidden: User "viewer" cannot create resource "pods" in API group "" in the namespace "a"'],
      [
        ['patch', 'pod', 'web', '-n', 'a', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Failed"}}'],
        'pods "web" is forbidden: User "viewer" cannot patch resource "pods/status" in API group "" in the namespace "a"',
      ],
      [['get', 'nodes'], 'nodes is forbidden: User "viewer" cannot list resource "nodes" in API group "" at the cluster scope'],
      [['get', 'deployments.apps', '-A'], 'deployments.apps is forbidden: User "viewer" cannot list resource "deployments" in API group "apps" at the cluster scope'],
    ];
    for (const [args, message] of cases) {
      const result = await viewer(...args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toBe(`Error from server (Forbidden): ${message}\n`);
    }
    const update = await call('PUT', '/api/v1/namespaces/a/pods/web/status', {
      token: 'viewer-token',
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' } },
    });
    expect(update.status).toBe(403);
    expect(update.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "web" is forbidden: User "viewer" cannot update resource "pods/status" in API group "" in the namespace "a"',
      reason: 'Forbidden',
      details: { name: 'web', kind: 'pods' },
      code: 403,
    });
    // Binding a pod is the scheduler's (create on pods/binding): view does not grant it, and nothing is appended.
    const before = await logEnd(log, 'desired');
    const bind = await call('POST', '/api/v1/namespaces/a/pods/web/binding', {
      token: 'viewer-token',
      body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } },
    });
    expect(bind.status).toBe(403);
    expect(bind.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "web" is forbidden: User "viewer" cannot create resource "pods/binding" in API group "" in the namespace "a"',
      reason: 'Forbidden',
      details: { name: 'web', kind: 'pods' },
      code: 403,
    });
    expect(await logEnd(log, 'desired')).toBe(before);
    const metrics = await call('GET', '/metrics', { token: 'viewer-token' });
    expect(metrics.body).toMatchObject({ code: 403, reason: 'Forbidden', message: 'forbidden: User "viewer" cannot get path "/metrics"' });
  });

  it('kubectl auth can-i answers from the authorizer', async () => {
    const canI = async (...args: string[]) => {
      const result = await viewer('auth', 'can-i', ...args);
      return `${result.code} ${result.stdout.trim()}`;
    };
    expect(await canI('list', 'pods', '-n', 'a')).toBe('0 yes');
    expect(await canI('get', 'pods/log', '-n', 'a')).toBe('0 yes');
    expect(await canI('list', 'pods', '-n', 'b')).toBe('1 no');
    expect(await canI('get', 'secrets', '-n', 'a')).toBe('1 no');
    expect(await canI('create', 'pods', '-n', 'a')).toBe('1 no');
    expect(await canI('update', 'pods', '--subresource=status', '-n', 'a')).toBe('1 no');
    expect(await canI('get', '/api')).toBe('0 yes');
    const adminCanI = await admin('auth', 'can-i', '*', '*', '--all-namespaces');
    expect(adminCanI.stdout).toBe('yes\n');
  });

  it('kubectl auth can-i --list shows what the view binding gives in a, and only discovery in b', async () => {
    const inA = await viewer('auth', 'can-i', '--list', '-n', 'a');
    expect(inA).toMatchObject({ code: 0, stderr: '' });
    expect(inA.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
    expect(inA.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    expect(inA.stdout).toMatch(/^deployments\.apps\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    expect(inA.stdout).toMatch(/^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    expect(inA.stdout).toMatch(/^\s+\[\/api\/\*\]\s+\[\]\s+\[get\]$/m);
    expect(inA.stdout).not.toMatch(/^secrets\s/m);
    const inB = await viewer('auth', 'can-i', '--list', '-n', 'b');
    expect(inB.stdout).not.toMatch(/^pods\s/m);
    expect(inB.stdout).toMatch(/^selfsubjectrulesreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
  });

  it('kubectl auth whoami shows the user and its groups', async () => {
    const whoami = await viewer('auth', 'whoami');
    expect(whoami).toMatchObject({ code: 0, stderr: '' });
    expect(whoami.stdout).toMatch(/^Username\s+viewer$/m);
    expect(whoami.stdout).toMatch(/^UID\s+2001$/m);
    expect(whoami.stdout).toMatch(/^Groups\s+\[system:authenticated\]$/m);
  });

  it('a user bound to cluster-admin may do everything', async () => {
    const root = (...args: string[]) => kubectlAs('root', ...args);
    expect((await root('get', 'secrets', '-n', 'a')).code).not.toBe(0);
    expect((await admin('create', 'clusterrolebinding', 'ops-admin', '--clusterrole=cluster-admin', '--group=ops')).stdout).toBe(
      'clusterrolebinding.rbac.authorization.k8s.io/ops-admin created\n',
    );
    expect((await root('get', 'secrets', '-n', 'a', '-o', 'name')).stdout).toBe('secret/token\n');
    expect((await root('run', 'root-pod', '--image=nginx:1.27', '-n', 'b')).stdout).toBe('pod/root-pod created\n');
    expect((await root('delete', 'pod', 'root-pod', '-n', 'b', '--wait=false')).stdout).toBe('pod "root-pod" deleted\n');
    expect((await root('auth', 'can-i', '*', '*', '--all-namespaces')).stdout).toBe('yes\n');
    expect((await root('get', '--raw', '/metrics')).code).toBe(0);
  });

  it('a ClusterRole labelled aggregate-to-view extends view at once, and no longer once deleted', async () => {
    expect((await viewer('get', 'secrets', '-n', 'a')).code).not.toBe(0);
    const role = JSON.stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'secret-reader', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }],
    });
    const created = await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role });
    expect(created.status).toBe(201);
    expect((await viewer('get', 'secrets', '-n', 'a', '-o', 'name')).stdout).toBe('secret/token\n');
    expect((await viewer('auth', 'can-i', 'list', 'secrets', '-n', 'b')).stdout).toBe('no\n');
    expect((await admin('delete', 'clusterrole', 'secret-reader')).stdout).toBe('clusterrole.rbac.authorization.k8s.io "secret-reader" deleted\n');
    expect((await viewer('get', 'secrets', '-n', 'a')).stderr).toBe(
      'Error from server (Forbidden): secrets is forbidden: User "viewer" cannot list resource "secrets" in API group "" in the namespace "a"\n',
    );
  });

  it('a second apiserver on the same log: bootstrapping from both at once appends nothing more; a binding made (and removed) through one authorizes (and stops) through the other', async () => {
    const second = await startTestApiServer(log, temp.dir, { tokens: TOKENS, authorizationModes: ['RBAC'] });
    try {
      const before = await logEnd(log, 'desired');
      await Promise.all([second.server.ensureBootstrapPolicy(), api.server.ensureBootstrapPolicy()]);
      expect(await logEnd(log, 'desired')).toBe(before);
      const asViewer = (path: string) => second.client.request('GET', path, { token: 'viewer-token' });
      expect((await asViewer('/apis/apps/v1/namespaces/b/deployments')).status).toBe(403);
      expect((await admin('create', 'rolebinding', 'viewer-view', '--clusterrole=view', '--user=viewer', '-n', 'b')).code).toBe(0);
      await second.projection.waitFor(api.projection.cursor(), 10_000);
      expect((await asViewer('/apis/apps/v1/namespaces/b/deployments')).status).toBe(200);
      expect((await admin('delete', 'rolebinding', 'viewer-view', '-n', 'b')).code).toBe(0);
      await second.projection.waitFor(api.projection.cursor(), 10_000);
      expect((await asViewer('/apis/apps/v1/namespaces/b/deployments')).body.message).toBe(
        'deployments.apps is forbidden: User "viewer" cannot list resource "deployments" in API group "apps" in the namespace "b"',
      );
    } finally {
      await second.close();
    }
  });

  it('SubjectAccessReview answers for another user; a malformed review is 422 and appends nothing', async () => {
    const before = await logEnd(log, 'desired');
    const review = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'viewer', resourceAttributes: { namespace: 'a', verb: 'watch', resource: 'pods' } },
      },
    });
    expect(review.status).toBe(201);
    expect(review.body.status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "viewer-view/a" of ClusterRole "view" to User "viewer"',
    });
    const bad = await call('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token: 'viewer-token',
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: {} },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe(
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
    const forViewer = await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      token: 'viewer-token',
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'root', nonResourceAttributes: { path: '/metrics', verb: 'get' } } },
    });
    expect(forViewer.body.message).toBe(
      'subjectaccessreviews.authorization.k8s.io is forbidden: User "viewer" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope',
    );
    const local = await call('POST', '/apis/authorization.k8s.io/v1/namespaces/a/localsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'viewer', resourceAttributes: { namespace: 'a', verb: 'create', resource: 'pods' } } },
    });
    expect(local).toMatchObject({ status: 201, body: { metadata: { namespace: 'a' }, status: { allowed: false } } });
    const elsewhere = await call('POST', '/apis/authorization.k8s.io/v1/namespaces/a/localsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', spec: { user: 'viewer', resourceAttributes: { namespace: 'b', verb: 'get', resource: 'pods' } } },
    });
    expect(elsewhere).toMatchObject({ status: 400, body: { message: 'spec.resourceAttributes.namespace must match namespace: a' } });
    expect(await logEnd(log, 'desired')).toBe(before);
  });
});
