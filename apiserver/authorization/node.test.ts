/**
 * The Node authorizer and NodeRestriction (kube-apiserver 1.32, `--authorization-mode
 * Node,RBAC`): `system:node:node-1` reads what its pods name and nothing of node-2's, lists
 * pods only for itself, modifies only its own Node, pods and Lease, and gets service-account
 * tokens only bound to its own pods.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import { parseTokenFile } from '../auth.ts';
import { createTokenIssuer } from '../serviceaccount-tokens/issuer.ts';
import { openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';

const TOKENS = parseTokenFile(
  ['admin-token,alice,1001,"system:masters"', 'node-1-token,system:node:node-1,n1,"system:nodes"', 'node-2-token,system:node:node-2,n2,"system:nodes"', 'bob-token,bob,b,""'].join('\n'),
);

const pod = (name: string, refs: { secret: string; configMap: string }) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    containers: [{ name: 'c', image: 'busybox', env: [{ name: 'PASSWORD', valueFrom: { secretKeyRef: { name: refs.secret, key: 'password' } } }] }],
    volumes: [{ name: 'config', configMap: { name: refs.configMap } }],
  },
});

describe('the Node authorizer and NodeRestriction', () => {
  const temp = tempDir('node-authorizer-');
  let log: EventLog;
  let api: TestApiServer;
  const as = (token: string) => (method: string, path: string, body?: unknown, contentType?: string) =>
    api.client.request(method, path, { token, ...(body !== undefined ? { body } : {}), ...(contentType ? { contentType } : {}) });
  const admin = as('admin-token');
  const node1 = as('node-1-token');

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    api = await startTestApiServer(log, temp.dir, { tokens: TOKENS, authorizationModes: ['Node', 'RBAC'], serviceAccountTokens: createTokenIssuer({ signingKey }) });
    await api.server.ensureBootstrapPolicy();
    // The ServiceAccount admission of a token-issuing apiserver wants the pods' account to exist.
    for (const account of ['default', 'unused']) expect((await admin('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: account } })).status).toBe(201);
    for (const name of ['node-1', 'node-2']) expect((await admin('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name } })).status).toBe(201);
    for (const [name, secret, configMap, node] of [['p1', 's1', 'c1', 'node-1'], ['p2', 's2', 'c2', 'node-2']] as const) {
      expect((await admin('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: secret }, stringData: { password: 'x' } })).status).toBe(201);
      expect((await admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: configMap }, data: { a: 'b' } })).status).toBe(201);
      expect((await admin('POST', '/api/v1/namespaces/default/pods', pod(name, { secret, configMap }))).status).toBe(201);
      const bound = await admin('POST', `/api/v1/namespaces/default/pods/${name}/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name }, target: { kind: 'Node', name: node } });
      expect(bound.status).toBe(201);
    }
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('lets a node read the Secrets and ConfigMaps its pods name, one by one, and nothing of another node\'s pods', async () => {
    expect((await node1('GET', '/api/v1/namespaces/default/secrets/s1')).status).toBe(200);
    expect((await node1('GET', '/api/v1/namespaces/default/configmaps/c1')).status).toBe(200);
    const other = await node1('GET', '/api/v1/namespaces/default/secrets/s2');
    expect(other.status).toBe(403);
    expect(other.body.message).toBe(
      'secrets "s2" is forbidden: User "system:node:node-1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'node-1\' and this object',
    );
    expect((await node1('GET', '/api/v1/namespaces/default/configmaps/c2')).status).toBe(403);
    const all = await node1('GET', '/api/v1/namespaces/default/secrets');
    expect(all.status).toBe(403);
    expect(all.body.message).toContain('can only get individual resources of this type');
    // A node's graph changes with its pods: node-2 reads s2, not s1.
    expect((await as('node-2-token')('GET', '/api/v1/namespaces/default/secrets/s2')).status).toBe(200);
    expect((await as('node-2-token')('GET', '/api/v1/namespaces/default/secrets/s1')).status).toBe(403);
  });

  it('lets a node read only its own Node, its own pods, and list pods only for itself', async () => {
    expect((await node1('GET', '/api/v1/nodes/node-1')).status).toBe(200);
    const otherNode = await node1('GET', '/api/v1/nodes/node-2');
    expect(otherNode.status).toBe(403);
    expect(otherNode.body.message).toContain("node 'node-1' cannot read 'node-2', only its own Node object");
    expect((await node1('GET', '/api/v1/namespaces/default/pods/p1')).status).toBe(200);
    expect((await node1('GET', '/api/v1/namespaces/default/pods/p2')).status).toBe(403);
    const mine = await node1('GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1');
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['p1']);
    const everyone = await node1('GET', '/api/v1/pods');
    expect(everyone.status).toBe(403);
    expect(everyone.body.message).toContain('can only list/watch pods with spec.nodeName field selector');
  });

  it('lets a node modify only its own Node and the status of its own pods (NodeRestriction)', async () => {
    const patch = { metadata: { labels: { zone: 'a' } } };
    expect((await node1('PATCH', '/api/v1/nodes/node-1', patch, 'application/merge-patch+json')).status).toBe(200);
    const otherNode = await node1('PATCH', '/api/v1/nodes/node-2', patch, 'application/merge-patch+json');
    expect(otherNode).toMatchObject({ status: 403, body: { reason: 'Forbidden', message: 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"' } });
    const otherStatus = await node1('PATCH', '/api/v1/nodes/node-2/status', { status: { phase: 'Running' } }, 'application/merge-patch+json');
    expect(otherStatus.status).toBe(403);
    const status = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    expect((await node1('PATCH', '/api/v1/namespaces/default/pods/p1/status', status, 'application/merge-patch+json')).status).toBe(200);
    const otherPod = await node1('PATCH', '/api/v1/namespaces/default/pods/p2/status', status, 'application/merge-patch+json');
    expect(otherPod.body.message).toBe('pods "p2" is forbidden: node "node-1" can only update pod status for pods with spec.nodeName set to itself');
    const deleted = await node1('DELETE', '/api/v1/namespaces/default/pods/p2');
    expect(deleted.body.message).toBe('pods "p2" is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself');
    expect((await admin('GET', '/api/v1/namespaces/default/pods/p2')).status).toBe(200);
    const created = await node1('POST', '/api/v1/namespaces/default/pods', { ...pod('p3', { secret: 's1', configMap: 'c1' }), spec: { ...pod('p3', { secret: 's1', configMap: 'c1' }).spec, nodeName: 'node-1' } });
    expect(created.body.message).toBe('pods "p3" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node-1" can only create mirror pods');
    const otherCreate = await node1('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-9' } });
    expect(otherCreate.body.message).toBe('nodes "node-9" is forbidden: node "node-1" is not allowed to modify node "node-9"');
  });

  it('lets a node use only its own Lease in kube-node-lease, and write Events (kube\'s system:node rules)', async () => {
    const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
    expect((await node1('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-1'))).status).toBe(201);
    expect((await admin('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', lease('node-2'))).status).toBe(201);
    const other = await node1('PATCH', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2', { spec: { holderIdentity: 'x' } }, 'application/merge-patch+json');
    expect(other.status).toBe(403);
    expect(other.body.message).toContain('can only access node lease with the same name as the requesting node');
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'p1.1' }, involvedObject: { kind: 'Pod', name: 'p1', namespace: 'default' }, reason: 'Started', message: 'Started container c', type: 'Normal' };
    expect((await node1('POST', '/api/v1/namespaces/default/events', event)).status).toBe(201);
    expect((await node1('DELETE', '/api/v1/namespaces/default/events/p1.1')).status).toBe(403);
  });

  it('gives a node tokens of its pods\' service account only bound to its own pods, with their uids (NodeRestriction)', async () => {
    const uidOf = async (name: string): Promise<string> => (await admin('GET', `/api/v1/namespaces/default/pods/${name}`)).body.metadata.uid;
    const tokenRequest = (account: string, boundObjectRef?: Record<string, string>) =>
      node1('POST', `/api/v1/namespaces/default/serviceaccounts/${account}/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600, ...(boundObjectRef ? { boundObjectRef } : {}) },
      });
    const own = await tokenRequest('default', { apiVersion: 'v1', kind: 'Pod', name: 'p1', uid: await uidOf('p1') });
    expect(own.status).toBe(201);
    expect(own.body.spec.boundObjectRef).toMatchObject({ kind: 'Pod', name: 'p1' });
    const forbidden = (reason: string) => ({ status: 403, body: { reason: 'Forbidden', message: `serviceaccounts "default" is forbidden: ${reason}` } });
    // p2 runs as the same account, on node-2: the Node authorizer allows the account, NodeRestriction refuses the pod.
    expect(await tokenRequest('default', { apiVersion: 'v1', kind: 'Pod', name: 'p2', uid: await uidOf('p2') })).toMatchObject(
      forbidden('node requested token bound to a pod scheduled on a different node'),
    );
    expect(await tokenRequest('default')).toMatchObject(forbidden('node requested token not bound to a pod'));
    expect(await tokenRequest('default', { apiVersion: 'v1', kind: 'Node', name: 'node-1' })).toMatchObject(forbidden('node requested token not bound to a pod'));
    expect(await tokenRequest('default', { apiVersion: 'v1', kind: 'Pod', name: 'p1' })).toMatchObject(forbidden('node requested token with a pod binding without a uid'));
    expect(await tokenRequest('default', { apiVersion: 'v1', kind: 'Pod', name: 'p1', uid: 'stale' })).toMatchObject(
      forbidden('the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated'),
    );
    expect(await tokenRequest('default', { apiVersion: 'v1', kind: 'Pod', name: 'gone', uid: 'x' })).toMatchObject({ status: 404, body: { message: 'pods "gone" not found' } });
    // No pod of node-1 runs as "unused": the Node authorizer finds no relationship.
    const unrelated = await tokenRequest('unused', { apiVersion: 'v1', kind: 'Pod', name: 'p1', uid: await uidOf('p1') });
    expect(unrelated.status).toBe(403);
    expect(unrelated.body.message).toContain("no relationship found between node 'node-1' and this object");
  });

  it('has no opinion about other users (RBAC decides)', async () => {
    expect((await as('bob-token')('GET', '/api/v1/namespaces/default/secrets/s1')).status).toBe(403);
    expect((await admin('GET', '/api/v1/namespaces/default/secrets/s2')).status).toBe(200);
  });
});
