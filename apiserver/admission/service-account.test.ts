/**
 * The ServiceAccount admission plugin (kube 1.32's plugin/pkg/admission/serviceaccount)
 * through the real apiserver on the embedded log, with a token issuer (the plugin runs on an
 * apiserver that issues service-account tokens): the service account defaulted and checked,
 * the `kube-api-access-*` projected volume mounted unless automount is off, mounts already
 * at the path respected, mirror pods refused when they name an account; and the controller
 * create path naming the volume deterministically.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import type { Pod } from '../../schemas/index.ts';
import { createTokenIssuer } from '../serviceaccount-tokens/issuer.ts';
import { logEnd, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';
import { admitControllerCreate } from './controller-creates.ts';
import { API_TOKEN_MOUNT_PATH, apiAccessVolumeSource } from './service-account.ts';

type Reply = { status: number; body: any };

const VOLUME_NAME = /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/;
const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('ServiceAccount admission through the apiserver', () => {
  const temp = tempDir('sa-admission-');
  let log: EventLog;
  let api: TestApiServer;
  const pods = (namespace = 'default') => `/api/v1/namespaces/${namespace}/pods`;
  const post = (path: string, body: unknown): Promise<Reply> => api.client.request('POST', path, { body }) as Promise<Reply>;
  const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
    metadata: { name, ...metadata },
    spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], ...spec },
  });
  const created = async (body: unknown, path = pods()): Promise<any> => {
    const reply = await post(path, body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body;
  };
  /** A refused create: its Status, and proof that nothing was appended. */
  const refused = async (body: unknown, path = pods()): Promise<Reply> => {
    const before = await logEnd(log, 'desired');
    const reply = await post(path, body);
    expect(await logEnd(log, 'desired')).toBe(before);
    return reply;
  };
  const account = (name: string, namespace = 'default', extra: Record<string, unknown> = {}) =>
    created({ metadata: { name }, ...extra }, `/api/v1/namespaces/${namespace}/serviceaccounts`);
  const accessVolumes = (created: any) => (created.spec.volumes ?? []).filter((v: { name: string }) => v.name.startsWith('kube-api-access-'));

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir, { serviceAccountTokens: createTokenIssuer({ signingKey }) });
    await account('default');
    await account('shy', 'default', { automountServiceAccountToken: false });
    await account('puller', 'default', { imagePullSecrets: [{ name: 'registry' }] });
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('defaults the service account to default and mounts kube-api-access-* in every container and init container', async () => {
    const body = await created(pod('plain', { initContainers: [{ name: 'init', image: 'busybox:1.36' }] }));
    expect(body.spec.serviceAccountName).toBe('default');
    const [volume, ...more] = accessVolumes(body);
    expect(more).toEqual([]);
    expect(volume.name).toMatch(VOLUME_NAME);
    expect(volume.projected).toEqual(apiAccessVolumeSource());
    expect(volume.projected.sources[0].serviceAccountToken).toEqual({ expirationSeconds: 3607, path: 'token' });
    for (const container of [...body.spec.initContainers, ...body.spec.containers]) {
      expect(container.volumeMounts).toEqual([{ name: volume.name, readOnly: true, mountPath: API_TOKEN_MOUNT_PATH }]);
    }
    // Random per request, as kube's generated name.
    const other = accessVolumes(await created(pod('plain-2')))[0];
    expect(other.name).toMatch(VOLUME_NAME);
  });

  it('mounts nothing when automountServiceAccountToken is false on the pod, or on the account and not overridden by the pod', async () => {
    const offOnPod = await created(pod('off-on-pod', { automountServiceAccountToken: false }));
    expect(offOnPod.spec.serviceAccountName).toBe('default');
    expect(offOnPod.spec.volumes ?? []).toEqual([]);
    expect(offOnPod.spec.containers[0].volumeMounts ?? []).toEqual([]);
    const offOnAccount = await created(pod('off-on-account', { serviceAccountName: 'shy' }));
    expect(offOnAccount.spec.volumes ?? []).toEqual([]);
    // The pod's preference wins over the account's.
    const podSaysYes = await created(pod('pod-says-yes', { serviceAccountName: 'shy', automountServiceAccountToken: true }));
    expect(accessVolumes(podSaysYes)).toHaveLength(1);
  });

  it('leaves a container that mounts something at the path alone, and reuses a kube-api-access-* volume the pod has', async () => {
    const own = { name: 'own', mountPath: API_TOKEN_MOUNT_PATH };
    const body = await created(
      pod('own-mount', {
        volumes: [{ name: 'own', emptyDir: {} }],
        containers: [
          { name: 'mine', image: 'nginx:1.27', volumeMounts: [own] },
          { name: 'theirs', image: 'nginx:1.27' },
        ],
      }),
    );
    expect(body.spec.containers[0].volumeMounts).toEqual([own]);
    const [volume] = accessVolumes(body);
    expect(body.spec.containers[1].volumeMounts).toEqual([{ name: volume.name, readOnly: true, mountPath: API_TOKEN_MOUNT_PATH }]);
    // Every container has a mount there: no volume is added.
    const allOwn = await created(pod('all-own', { volumes: [{ name: 'own', emptyDir: {} }], containers: [{ name: 'mine', image: 'nginx:1.27', volumeMounts: [own] }] }));
    expect(accessVolumes(allOwn)).toEqual([]);
    // A volume already named kube-api-access-… is the one mounted.
    const kept = await created(pod('kept', { volumes: [{ name: 'kube-api-access-keep1', emptyDir: {} }] }));
    expect(kept.spec.volumes).toEqual([{ name: 'kube-api-access-keep1', emptyDir: {} }]);
    expect(kept.spec.containers[0].volumeMounts).toEqual([{ name: 'kube-api-access-keep1', readOnly: true, mountPath: API_TOKEN_MOUNT_PATH }]);
  });

  it("gives a pod without imagePullSecrets the account's", async () => {
    expect((await created(pod('pulls', { serviceAccountName: 'puller' }))).spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
    expect((await created(pod('pulls-own', { serviceAccountName: 'puller', imagePullSecrets: [{ name: 'mine' }] }))).spec.imagePullSecrets).toEqual([{ name: 'mine' }]);
  });

  it("refuses a pod whose service account does not exist with kube's 403, appending nothing", async () => {
    const reply = await refused(pod('orphan', { serviceAccountName: 'ghost' }));
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({
      reason: 'Forbidden',
      message: 'pods "orphan" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
      details: { name: 'orphan', kind: 'pods' },
    });
    // Even with automount off: the account must exist.
    expect((await refused(pod('orphan-2', { serviceAccountName: 'ghost', automountServiceAccountToken: false }))).status).toBe(403);
  });

  it("waits for a new namespace's default account (the controller makes it), and refuses when it never comes", async () => {
    await created({ metadata: { name: 'fresh' } }, '/api/v1/namespaces');
    const pending = post(pods('fresh'), pod('early'));
    await account('default', 'fresh');
    const early = await pending;
    expect(early.status, JSON.stringify(early.body)).toBe(201);
    expect(accessVolumes(early.body)).toHaveLength(1);

    await created({ metadata: { name: 'abandoned' } }, '/api/v1/namespaces');
    const reply = await refused(pod('never'), pods('abandoned'));
    expect(reply.status).toBe(403);
    expect(reply.body.message).toBe('pods "never" is forbidden: error looking up service account abandoned/default: serviceaccount "default" not found');
  });

  it('refuses a mirror pod that names a service account or a token projection, and leaves one that does not alone', async () => {
    const mirror = { 'kubernetes.io/config.mirror': 'hash' };
    expect((await refused(pod('mirror-sa', { serviceAccountName: 'default' }, { annotations: mirror }))).body.message).toBe(
      'pods "mirror-sa" is forbidden: a mirror pod may not reference service accounts',
    );
    const token = { name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } };
    expect((await refused(pod('mirror-token', { volumes: [token] }, { annotations: mirror }))).body.message).toBe(
      'pods "mirror-token" is forbidden: a mirror pod may not use ServiceAccountToken volume projections',
    );
    const plain = await created(pod('mirror-plain', {}, { annotations: mirror }));
    expect(plain.spec.serviceAccountName ?? '').toBe('');
    expect(plain.spec.volumes ?? []).toEqual([]);
  });

  it("names a controller-created pod's volume after the pod, so a decision re-runs to the same object", () => {
    const view = api.projection.view();
    const template = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-abcde', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } as unknown as Pod;
    const admitted = (object: Pod): Pod => {
      const result = admitControllerCreate(object, view);
      if (result.type !== 'admitted') throw new Error(result.message);
      return result.object as Pod;
    };
    const first = admitted(template);
    const again = admitted(template);
    expect(first.spec.volumes?.[0]?.name).toMatch(VOLUME_NAME);
    expect(again).toEqual(first);
    expect(template.spec.volumes).toBeUndefined();
    const sibling = admitted({ ...template, metadata: { ...template.metadata, name: 'web-fghjk' } } as Pod);
    expect(sibling.spec.volumes?.[0]?.name).not.toBe(first.spec.volumes?.[0]?.name);
    // A refusal, which the controller records as kube's FailedCreate.
    const ghost = admitControllerCreate({ ...template, spec: { ...template.spec, serviceAccountName: 'ghost' } } as Pod, view);
    expect(ghost.type === 'refused' && ghost.message).toMatch(/serviceaccount "ghost" not found/);
  });
});
