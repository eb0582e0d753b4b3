/**
 * The components' own identities against a real apiserver over HTTPS (`runApiserver`, the
 * Node and RBAC authorizers, kube's bootstrap policy), with real client certificates the
 * cluster CA issued: the controller manager and each node make the calls their components
 * make (token and access reviews, pod metrics, pods' service-account tokens) and nothing an
 * admin may; `system:node:node-1` touches none of node-2's objects.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { Pod } from '../schemas/index.ts';
import { ApiError, createClient, type Client } from './client.ts';
import { componentClient, type ComponentClient } from './component-identity.ts';
import { runApiserver, type Component } from './components.ts';
import { createDelegatedAuth } from './delegated-auth.ts';
import { resolveConnection } from './kubeconfig.ts';
import { remoteMetricsSource } from './metrics-source.ts';
import { ensureClusterCA, readClusterInfo } from './pki.ts';
import { remoteTokenRequests } from './service-account-tokens.ts';
import { adminCredentials } from './wiring.ts';

const logger = pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' });

/** What the apiserver answered: the status code, and the Status message of a refusal. */
const outcome = async (call: Promise<unknown>): Promise<{ code: number; message?: string }> => {
  try {
    await call;
    return { code: 200 };
  } catch (error) {
    if (error instanceof ApiError) return { code: error.code, message: error.message };
    throw error;
  }
};

const whoami = async (client: ComponentClient) =>
  (
    await client.request<{ status: { userInfo: { username: string; groups: string[] } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    })
  ).status.userInfo;

const mergePatch = (body: unknown) => ({ body: JSON.stringify(body), contentType: 'application/merge-patch+json' });

describe('component identities (client certificates of the cluster CA)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-identities-'));
  const pkiDir = join(dir, 'pki');
  const dirs = { controllers: join(dir, 'controllers'), node1: join(dir, 'node-1'), node2: join(dir, 'node-2') };
  let apiserver: Component & { kubeconfig: string };
  let admin: Client;
  let adminToken: string;
  let controllerManager: ComponentClient;
  let node1: ComponentClient;
  let node2: ComponentClient;
  const uids = new Map<string, string>();

  beforeAll(async () => {
    apiserver = await runApiserver({
      target: { type: 'embedded', dir: join(dir, 'log'), cluster: 'identities', partitions: 1 },
      dataDir: join(dir, 'api'),
      pkiDir,
      port: 0,
      host: '127.0.0.1',
      tls: true,
      logger,
      audit: false,
    });
    admin = createClient(resolveConnection({ kubeconfig: apiserver.kubeconfig }));
    adminToken = adminCredentials(join(dir, 'api')).token;
    await admin.request('POST', '/api/v1/namespaces/default/serviceaccounts', { body: { metadata: { name: 'default' } } });
    for (const [pod, node] of [['p1', 'node-1'], ['p2', 'node-2']] as const) {
      await admin.request('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: node } } });
      const created = await admin.request<Pod>('POST', '/api/v1/namespaces/default/pods', {
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: pod }, spec: { containers: [{ name: 'c', image: 'logplane/echo:1' }] } },
      });
      uids.set(pod, created.metadata.uid ?? '');
      await admin.request('POST', `/api/v1/namespaces/default/pods/${pod}/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: pod }, target: { kind: 'Node', name: node } } });
    }
    controllerManager = componentClient({ pkiDir, dataDir: dirs.controllers, identity: { type: 'controller-manager' } });
    node1 = componentClient({ pkiDir, dataDir: dirs.node1, identity: { type: 'node', node: 'node-1' } });
    node2 = componentClient({ pkiDir, dataDir: dirs.node2, identity: { type: 'node', node: 'node-2' } });
  }, 60_000);

  afterAll(async () => {
    await apiserver?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates each component as its own user, from a kubeconfig with a client certificate of the cluster CA in its data directory', async () => {
    expect(await whoami(controllerManager)).toEqual({ username: 'system:kube-controller-manager', groups: ['system:authenticated'] });
    expect(await whoami(node1)).toEqual({ username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] });
    const file = join(dirs.node1, 'kubelet-node-1.kubeconfig');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const user = YAML.parse(readFileSync(file, 'utf8')).users[0].user as Record<string, string>;
    expect(Object.keys(user).sort()).toEqual(['client-certificate-data', 'client-key-data']);
    const certificate = new X509Certificate(Buffer.from(user['client-certificate-data']!, 'base64'));
    expect(certificate.subject).toBe('O=system:nodes\nCN=system:node:node-1');
    expect(certificate.checkIssued(new X509Certificate(ensureClusterCA(pkiDir).cert))).toBe(true);
    expect(statSync(join(dirs.controllers, 'controller-manager.kubeconfig')).isFile()).toBe(true);
  });

  it('lets the controller manager review tokens and access and list pod metrics, and nothing an admin may', async () => {
    const auth = createDelegatedAuth({ client: controllerManager });
    expect(await auth.check(adminToken, { verb: 'get', path: '/metrics' })).toEqual({ type: 'allowed', user: 'admin' });
    expect(await auth.check('not-a-token', { verb: 'get', path: '/metrics' })).toEqual({ type: 'unauthenticated' });
    expect(await remoteMetricsSource(controllerManager).podMetrics('kube-system', new AbortController().signal)).toEqual([]);
    const denied = (verb: string, resource: string, scope: string) =>
      `is forbidden: User "system:kube-controller-manager" cannot ${verb} resource "${resource}" in API group "${scope}`;
    expect(await outcome(controllerManager.request('DELETE', '/api/v1/namespaces/default/pods/p1'))).toEqual({
      code: 403,
      message: `pods "p1" ${denied('delete', 'pods', '" in the namespace "default')}"`,
    });
    expect(await outcome(controllerManager.request('PATCH', '/api/v1/nodes/node-1/status', mergePatch({ metadata: { labels: { a: 'b' } } })))).toMatchObject({ code: 403 });
    const binding = { metadata: { name: 'mine' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [{ kind: 'User', name: 'system:kube-controller-manager' }] };
    expect(await outcome(controllerManager.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding }))).toMatchObject({ code: 403 });
    expect(await outcome(controllerManager.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'x' } } }))).toMatchObject({ code: 403 });
    expect(await outcome(controllerManager.request('GET', '/logplane/v1/audit'))).toMatchObject({ code: 403 });
  });

  it('gives a node the tokens of its own pods, and none of another node\'s pod', async () => {
    const request = (pod: string) => ({ namespace: 'default', serviceAccountName: 'default', audiences: [], expirationSeconds: 600, pod: { name: pod, uid: uids.get(pod) ?? '' } });
    const { token } = await remoteTokenRequests(node1)(request('p1'));
    const review = await admin.request<{ status: { user: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    expect(review.status.user.username).toBe('system:serviceaccount:default:default');
    expect(await outcome(remoteTokenRequests(node1)(request('p2')))).toEqual({
      code: 403,
      message: 'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    });
    expect(await outcome(remoteTokenRequests(node2)(request('p2')))).toEqual({ code: 200 });
  });

  it('lets system:node:node-1 write its own Node\'s and pods\' status, and touch none of node-2\'s objects', async () => {
    const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    expect(await outcome(node1.request('PATCH', '/api/v1/nodes/node-1/status', mergePatch(ready)))).toEqual({ code: 200 });
    expect(await outcome(node1.request('PATCH', '/api/v1/namespaces/default/pods/p1/status', mergePatch(ready)))).toEqual({ code: 200 });
    expect(await outcome(node1.request('PATCH', '/api/v1/nodes/node-2/status', mergePatch(ready)))).toEqual({
      code: 403,
      message: 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"',
    });
    expect(await outcome(node1.request('PATCH', '/api/v1/namespaces/default/pods/p2/status', mergePatch(ready)))).toEqual({
      code: 403,
      message: 'pods "p2" is forbidden: node "node-1" can only update pod status for pods with spec.nodeName set to itself',
    });
    expect(await outcome(node1.request('GET', '/api/v1/namespaces/default/pods/p2'))).toMatchObject({ code: 403 });
    expect(await outcome(node1.request('GET', '/api/v1/pods'))).toMatchObject({ code: 403 });
    expect(await outcome(node1.request('DELETE', '/api/v1/nodes/node-2'))).toMatchObject({ code: 403 });
    expect(await outcome(node1.request('GET', '/api/v1/namespaces/default/secrets'))).toMatchObject({ code: 403 });
    // Its /metrics checks tokens with the apiserver as the node (kube's system:node rules).
    expect(await createDelegatedAuth({ client: node1 }).check(adminToken, { verb: 'get', resource: 'nodes', subresource: 'metrics', name: 'node-1' })).toEqual({ type: 'allowed', user: 'admin' });
  });

  it('says what to do when no apiserver has published where it is', async () => {
    const lone = componentClient({ pkiDir: join(dir, 'other-pki'), dataDir: join(dir, 'lone'), identity: { type: 'node', node: 'node-3' } });
    await expect(lone.request('GET', '/version')).rejects.toThrow(/no apiserver has published its address in .*other-pki\/cluster-info\.kubeconfig yet .*: start one, or pass --kubeconfig/);
  });
});

describe('an apiserver that advertises another address (--advertise-address)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-advertise-'));
  const pkiDir = join(dir, 'pki');
  let apiserver: Component | undefined;
  afterAll(async () => {
    await apiserver?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes that address, which its new certificate names, and the components reach it there', async () => {
    apiserver = await runApiserver({
      target: { type: 'embedded', dir: join(dir, 'log'), cluster: 'advertise', partitions: 1 },
      dataDir: join(dir, 'api'),
      pkiDir,
      port: 0,
      host: '0.0.0.0',
      tls: true,
      logger,
      audit: false,
      advertiseAddress: '127.0.0.2',
    });
    expect(readClusterInfo(pkiDir)?.server).toMatch(/^https:\/\/127\.0\.0\.2:\d+$/);
    const node = componentClient({ pkiDir, dataDir: join(dir, 'node'), identity: { type: 'node', node: 'node-1' } });
    expect(await whoami(node)).toEqual({ username: 'system:node:node-1', groups: ['system:nodes', 'system:authenticated'] });
  }, 60_000);
});
