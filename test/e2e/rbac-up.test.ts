/**
 * `logplane up` authorizes with RBAC by default: the admin token's user (in
 * `system:masters`) may do everything, while another token of the token file is refused
 * until a binding allows it; the controllers and the node agent still run pods. With
 * `--authorization-mode AlwaysAllow` every authenticated user may do everything.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import type { Pod } from '../../schemas/index.ts';
import { waitForView } from './helpers.ts';

const start = async (authorizationModes?: ('RBAC' | 'AlwaysAllow')[]): Promise<{ cluster: RunningCluster; dir: string }> => {
  const dir = mkdtempSync(join(tmpdir(), 'rbac-up-'));
  writeFileSync(join(dir, 'tokens.csv'), 'admin-token,admin,admin,"system:masters"\nviewer-token,viewer,viewer,""\n', { mode: 0o600 });
  const cluster = await startCluster({
    dataDir: dir,
    nodes: 1,
    runtime: 'sim',
    proxy: 'none',
    port: 0,
    host: '127.0.0.1',
    tls: false,
    logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
    ...(authorizationModes ? { authorizationModes } : {}),
  });
  return { cluster, dir };
};

const call = async (url: string, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as any };
};

const POD = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } };

describe('logplane up authorization', () => {
  const started: { cluster: RunningCluster; dir: string }[] = [];
  afterAll(async () => {
    for (const { cluster, dir } of started) {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('defaults to RBAC: admin may do everything, another user nothing until bound; pods still run', async () => {
    const up = await start();
    started.push(up);
    const { url } = up.cluster;
    expect((await call(url, 'admin-token', 'POST', '/api/v1/namespaces/default/pods', POD)).status).toBe(201);
    const refused = await call(url, 'viewer-token', 'GET', '/api/v1/namespaces/default/pods');
    expect(refused).toMatchObject({
      status: 403,
      body: { reason: 'Forbidden', message: 'pods is forbidden: User "viewer" cannot list resource "pods" in API group "" in the namespace "default"' },
    });
    expect((await call(url, 'viewer-token', 'GET', '/api')).status).toBe(200);
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'viewer-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
    };
    expect((await call(url, 'admin-token', 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', binding)).status).toBe(201);
    const listed = await call(url, 'viewer-token', 'GET', '/api/v1/namespaces/default/pods');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((p: Pod) => p.metadata.name)).toEqual(['web']);
    // The scheduler, the agent and the fold did their part under RBAC too.
    await waitForView(up.cluster.projection, 'pod web Running', (view) => (view.get('Pod/default/web') as Pod | undefined)?.status?.phase === 'Running');
  });

  it('--authorization-mode AlwaysAllow lets every authenticated user do everything, and creates no bootstrap roles', async () => {
    const up = await start(['AlwaysAllow']);
    started.push(up);
    const { url } = up.cluster;
    expect((await call(url, 'viewer-token', 'POST', '/api/v1/namespaces/default/pods', POD)).status).toBe(201);
    expect((await call(url, 'viewer-token', 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles')).body.items).toEqual([]);
    expect((await call(url, 'missing-token', 'GET', '/api/v1/pods')).status).toBe(401);
  });
});
