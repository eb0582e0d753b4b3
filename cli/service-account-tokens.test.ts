/**
 * A node agent's volume manager writes a pod's `kube-api-access-*` volume (token, ca.crt,
 * namespace) with a token the apiserver accepts as `system:serviceaccount:NS:SA`, whether it
 * asks for it in-process (`logplane up`) or over HTTP with its credentials (distributed mode);
 * the token stops working once its pod is deleted. Real apiserver, real LMDB, real files.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenIssuer } from '../apiserver/serviceaccount-tokens/issuer.ts';
import { ADMIN_TOKEN, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../apiserver/testing.ts';
import type { EventLog } from '../log/port.ts';
import { viewObjectSource } from '../node-agent/kubelet/pod-objects.ts';
import { createVolumeManager } from '../node-agent/kubelet/volumes/manager.ts';
import { createServiceAccountTokenManager, type RequestServiceAccountToken } from '../node-agent/kubelet/volumes/service-account-tokens.ts';
import type { Pod } from '../schemas/index.ts';
import { createClient } from './client.ts';
import { inProcessTokenRequests, remoteTokenRequests } from './service-account-tokens.ts';

type Reply = { status: number; body: any };
const logger = pino({ level: 'silent' });
const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const WHOAMI = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

describe('projected service-account tokens written by the agent', () => {
  const temp = tempDir('sa-token-volume-');
  const issuer = createTokenIssuer({ signingKey });
  let log: EventLog;
  let api: TestApiServer;
  const post = (path: string, body: unknown, token?: string): Promise<Reply> =>
    api.client.request('POST', path, { body, ...(token === undefined ? {} : { token }) }) as Promise<Reply>;

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir, { serviceAccountTokens: issuer });
    expect((await post('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'default' } })).status).toBe(201);
    expect((await post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': CA } })).status).toBe(201);
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const hooks: [string, () => RequestServiceAccountToken][] = [
    ['in-process (logplane up)', () => inProcessTokenRequests(issuer, () => api.projection.view())],
    ['over HTTP with the agent credentials (distributed mode)', () => remoteTokenRequests(createClient({ server: api.server.url, token: ADMIN_TOKEN }))],
  ];

  it.each(hooks)('%s: token, ca.crt and namespace in the volume; the apiserver authenticates the token until the pod goes', async (label, hook) => {
    const name = label.startsWith('in-process') ? 'reader-local' : 'reader-remote';
    const created = await post('/api/v1/namespaces/default/pods', { metadata: { name }, spec: { containers: [{ name: 'c', image: 'logplane/sleeper' }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const pod = created.body as Pod;
    const tokens = createServiceAccountTokenManager({ request: hook(), logger });
    const volumes = createVolumeManager({ root: mkdtempSync(join(temp.dir, 'volumes-')), node: 'node-1', objects: viewObjectSource(() => api.projection.view(), undefined, tokens), logger });
    try {
      const first = volumes.setUp(pod);
      expect(first.type).toBe('pending');
      if (first.type === 'pending') await first.ready;
      expect(volumes.setUp(pod)).toEqual({ type: 'ok', value: undefined });
      const mounts = volumes.mounts(pod, pod.spec.containers[0]!);
      if (mounts.type !== 'ok') throw new Error(mounts.message);
      const [mount] = mounts.value;
      expect(mount).toMatchObject({ containerPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true });
      const dir = mount!.hostPath;
      expect(readFileSync(join(dir, 'ca.crt'), 'utf8')).toBe(CA);
      expect(readFileSync(join(dir, 'namespace'), 'utf8')).toBe('default');
      const token = readFileSync(join(dir, 'token'), 'utf8');

      const whoami = await post(WHOAMI, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, token);
      expect(whoami.status, JSON.stringify(whoami.body)).toBe(201);
      expect(whoami.body.status.userInfo.username).toBe('system:serviceaccount:default:default');
      expect(whoami.body.status.userInfo.groups).toEqual(expect.arrayContaining(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']));

      // Bound to the pod: deleting it revokes the token.
      const deleted = (await api.client.request('DELETE', `/api/v1/namespaces/default/pods/${name}`, { body: { gracePeriodSeconds: 0 } })) as Reply;
      expect(deleted.status).toBe(200);
      expect((await post(WHOAMI, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, token)).status).toBe(401);
    } finally {
      volumes.close();
      tokens.close();
    }
  });

  it('rewrites the token file when the token is refreshed (80 % of its lifetime), with a token that still authenticates', async () => {
    const created = await post('/api/v1/namespaces/default/pods', { metadata: { name: 'rotated' }, spec: { containers: [{ name: 'c', image: 'logplane/sleeper' }] } });
    expect(created.status).toBe(201);
    const pod = created.body as Pod;
    const issue = inProcessTokenRequests(issuer, () => api.projection.view());
    // The apiserver's token, announced as living 1 s: refreshed after 800 ms.
    const shortLived: RequestServiceAccountToken = async (request) => ({ ...(await issue(request)), expiresAt: Date.now() + 1000 });
    const tokens = createServiceAccountTokenManager({ request: shortLived, logger });
    const volumes = createVolumeManager({ root: mkdtempSync(join(temp.dir, 'volumes-')), node: 'node-1', objects: viewObjectSource(() => api.projection.view(), undefined, tokens), logger });
    try {
      const first = volumes.setUp(pod);
      if (first.type === 'pending') await first.ready;
      expect(volumes.setUp(pod).type).toBe('ok');
      const mounts = volumes.mounts(pod, pod.spec.containers[0]!);
      if (mounts.type !== 'ok') throw new Error(mounts.message);
      const file = join(mounts.value[0]!.hostPath, 'token');
      const before = readFileSync(file, 'utf8');
      // The volume manager subscribed first: by the time this hears of the refresh, the file is rewritten.
      expect(await firstValueFrom(tokens.refreshed$)).toBe(pod.metadata.uid);
      const after = readFileSync(file, 'utf8');
      expect(after).not.toBe(before);
      const whoami = await post(WHOAMI, { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, after);
      expect(whoami.body.status.userInfo.username).toBe('system:serviceaccount:default:default');
    } finally {
      volumes.close();
      tokens.close();
    }
  });

  it('refuses a token for a pod that is not there (the agent reports kubelet\'s "failed to fetch token")', async () => {
    const tokens = createServiceAccountTokenManager({ request: inProcessTokenRequests(issuer, () => api.projection.view()), logger });
    const volumes = createVolumeManager({ root: mkdtempSync(join(temp.dir, 'volumes-')), node: 'node-1', objects: viewObjectSource(() => api.projection.view(), undefined, tokens), logger });
    const ghost = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'ghost', namespace: 'default', uid: 'uid-of-no-pod' },
      spec: { containers: [{ name: 'c' }], volumes: [{ name: 'kube-api-access-ghost', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } }] },
    } as unknown as Pod;
    try {
      const first = volumes.setUp(ghost);
      if (first.type === 'pending') await first.ready;
      expect(volumes.setUp(ghost)).toEqual({
        type: 'error',
        message: 'MountVolume.SetUp failed for volume "kube-api-access-ghost" : failed to fetch token: cannot bind token for serviceaccount "default" to pod "ghost": not found',
      });
    } finally {
      volumes.close();
      tokens.close();
    }
  });
});
