/**
 * DefaultIngressClass and DefaultStorageClass, as kube-apiserver's admission plugins: a
 * create naming no class gets the default one (the newest of several, then by name); one that
 * names a class, asks for none (`""`) or uses the legacy annotation keeps what it said.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import { openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';
import { newestDefault } from './index.ts';

const meta = (name: string, creationTimestamp: string, isDefault: boolean) => ({
  name,
  creationTimestamp,
  ...(isDefault ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } } : {}),
});

describe('newestDefault', () => {
  it('picks the newest default, then the first by name; none without a default', () => {
    const classes = [
      { metadata: meta('old', '2026-01-01T00:00:00Z', true) },
      { metadata: meta('new-b', '2026-06-01T00:00:00Z', true) },
      { metadata: meta('new-a', '2026-06-01T00:00:00Z', true) },
      { metadata: meta('newest-not-default', '2026-12-01T00:00:00Z', false) },
    ];
    expect(newestDefault(classes, ['ingressclass.kubernetes.io/is-default-class'])?.metadata.name).toBe('new-a');
    expect(newestDefault([classes[3]!], ['ingressclass.kubernetes.io/is-default-class'])).toBeUndefined();
  });
});

describe('class defaulting at admission', () => {
  const temp = tempDir('admission-');
  let log: EventLog;
  let api: TestApiServer;
  const create = async (path: string, body: unknown) => {
    const reply = await api.client.request('POST', path, { body });
    expect(reply.status).toBe(201);
    return reply.body;
  };
  const ingress = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, ...(extra['metadata'] as object) },
    spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } }, ...(extra['spec'] as object) },
  });
  const claim = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, ...(extra['metadata'] as object) },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(extra['spec'] as object) },
  });

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('gives an Ingress without a class the default IngressClass, and leaves one that names a class or uses the annotation', async () => {
    const ingresses = '/apis/networking.k8s.io/v1/namespaces/default/ingresses';
    expect((await create(ingresses, ingress('before'))).spec.ingressClassName).toBeUndefined();
    await create('/apis/networking.k8s.io/v1/ingressclasses', { metadata: { name: 'plain' }, spec: { controller: 'example.com/x' } });
    await create('/apis/networking.k8s.io/v1/ingressclasses', {
      metadata: { name: 'logplane', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
      spec: { controller: 'logplane.io/ingress' },
    });
    expect((await create(ingresses, ingress('defaulted'))).spec.ingressClassName).toBe('logplane');
    expect((await create(ingresses, ingress('named', { spec: { ingressClassName: 'plain' } }))).spec.ingressClassName).toBe('plain');
    const annotated = await create(ingresses, ingress('annotated', { metadata: { annotations: { 'kubernetes.io/ingress.class': 'nginx' } } }));
    expect(annotated.spec.ingressClassName).toBeUndefined();
  });

  it('gives a claim without a class the default StorageClass (beta annotation too); "" asks for none', async () => {
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    await create('/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name: 'local-path', annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'logplane.io/local-path',
    });
    expect((await create(claims, claim('defaulted'))).spec.storageClassName).toBe('local-path');
    expect((await create(claims, claim('none', { spec: { storageClassName: '' } }))).spec.storageClassName).toBe('');
    const legacy = await create(claims, claim('legacy', { metadata: { annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } } }));
    expect(legacy.spec.storageClassName).toBeUndefined();
  });
});
