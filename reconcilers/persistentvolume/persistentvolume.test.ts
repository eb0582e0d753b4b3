/**
 * The persistentvolume-binder and the local-path provisioner, decided against a real
 * projection (LMDB) fed by hand: static binding (smallest fit, selector, access modes,
 * pre-binding), WaitForFirstConsumer, dynamic provisioning on the selected or least-used
 * node, and release per reclaim policy.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node, PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, settle, type TestCluster } from '../testing.ts';
import { deleteCommand } from '../replicaset/objects.ts';
import { createLocalPathProvisioner, decideLocalPath, LOCAL_PATH_CLEANUP_FINALIZER, LOCAL_PATH_DIR_ANNOTATION } from '../local-path-provisioner/index.ts';
import { createPersistentVolumeBinder, decideBinding } from './index.ts';
import { findMatchingVolume } from './volumes.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

const volume = (name: string, storage: string, extra: { labels?: Record<string, string>; accessModes?: string[]; className?: string; policy?: string; node?: string } = {}): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, ...(extra.labels ? { labels: extra.labels } : {}) },
  spec: {
    capacity: { storage },
    accessModes: extra.accessModes ?? ['ReadWriteOnce'],
    storageClassName: extra.className ?? 'manual',
    persistentVolumeReclaimPolicy: extra.policy ?? 'Retain',
    volumeMode: 'Filesystem',
    hostPath: { path: `/tmp/${name}` },
    ...(extra.node ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [extra.node] }] }] } } } : {}),
  },
});

const claim = (name: string, storage: string, extra: { className?: string; accessModes?: string[]; selector?: Record<string, string>; volumeName?: string; annotations?: Record<string, string> } = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', ...(extra.annotations ? { annotations: extra.annotations } : {}) },
  spec: {
    accessModes: extra.accessModes ?? ['ReadWriteOnce'],
    resources: { requests: { storage } },
    storageClassName: extra.className ?? 'manual',
    volumeMode: 'Filesystem',
    ...(extra.selector ? { selector: { matchLabels: extra.selector } } : {}),
    ...(extra.volumeName ? { volumeName: extra.volumeName } : {}),
  },
});

const storageClass = (name: string, mode: 'Immediate' | 'WaitForFirstConsumer', policy = 'Delete', provisioner = 'rancher.io/local-path'): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner,
  reclaimPolicy: policy,
  volumeBindingMode: mode,
});

const readyNode = (name: string, dir?: string): Node => {
  const node = nodeObject(name);
  return { ...node, metadata: { ...node.metadata, labels: { 'kubernetes.io/hostname': name }, ...(dir ? { annotations: { [LOCAL_PATH_DIR_ANNOTATION]: dir } } : {}) } };
};

describe('persistentvolume-binder and local-path provisioner', () => {
  let cluster: TestCluster;
  const controllers = [createPersistentVolumeBinder(), createLocalPathProvisioner()];
  const run = (): number => settle(cluster, controllers, { now: NOW });
  const pv = (name: string): PersistentVolume => cluster.view().get(`PersistentVolume//${name}`) as PersistentVolume;
  const pvc = (name: string): PersistentVolumeClaim => cluster.view().get(`PersistentVolumeClaim/default/${name}`) as PersistentVolumeClaim;

  beforeEach(() => {
    cluster = createTestCluster();
  });
  afterEach(async () => {
    await cluster.close();
  });

  it('binds a claim to the smallest Available volume that fits, on both sides, and leaves the others Available', () => {
    for (const [name, size] of [['pv-1g', '1Gi'], ['pv-5g', '5Gi'], ['pv-3g', '3Gi']] as const) cluster.create(volume(name, size));
    cluster.create(volume('pv-other-class', '2Gi', { className: 'fast' }));
    const created = cluster.create(claim('data', '2Gi'));
    run();
    expect(pvc('data').spec?.volumeName).toBe('pv-3g');
    expect(pvc('data').metadata.annotations).toMatchObject({ 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(pvc('data').status).toMatchObject({ phase: 'Bound', capacity: { storage: '3Gi' }, accessModes: ['ReadWriteOnce'] });
    expect(pv('pv-3g').spec?.claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: created.metadata.uid });
    expect(pv('pv-3g').metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    expect(pv('pv-3g').status?.phase).toBe('Bound');
    expect(['pv-1g', 'pv-5g', 'pv-other-class'].map((name) => pv(name).status?.phase)).toEqual(['Available', 'Available', 'Available']);
    // Level-based: deciding every key again changes nothing.
    expect(run()).toBe(1);
  });

  it.each([
    ['a selector no volume carries', { selector: { tier: 'gold' } }, undefined],
    ['a selector one volume carries', { selector: { tier: 'fast' } }, 'pv-fast'],
    ['an access mode no volume offers', { accessModes: ['ReadWriteMany'] }, undefined],
    ['an access mode one volume offers', { accessModes: ['ReadOnlyMany'] }, 'pv-rox'],
  ])('matches a claim with %s', (_what, extra, expected) => {
    cluster.create(volume('pv-fast', '10Gi', { labels: { tier: 'fast' } }));
    cluster.create(volume('pv-rox', '10Gi', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] }));
    cluster.create(volume('pv-plain', '1Gi'));
    run();
    const volumes = cluster.view().list('PersistentVolume') as PersistentVolume[];
    expect(findMatchingVolume(claim('c', '1Gi', extra), volumes, undefined, false)?.metadata.name).toBe(expected);
  });

  it('honours a claim pre-bound by volumeName (without marking it bound by the controller) and a volume pre-bound by claimRef', () => {
    cluster.create(volume('small', '1Gi'));
    cluster.create(volume('big', '10Gi'));
    cluster.create({ ...volume('reserved', '1Gi'), spec: { ...volume('reserved', '1Gi').spec, claimRef: { namespace: 'default', name: 'wants-reserved' } } });
    cluster.create(claim('pinned', '1Gi', { volumeName: 'big' }));
    cluster.create(claim('wants-reserved', '1Gi'));
    cluster.create(claim('other', '1Gi'));
    run();
    expect(pvc('pinned').status?.phase).toBe('Bound');
    expect(pvc('pinned').metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    expect(pv('big').spec?.claimRef?.name).toBe('pinned');
    expect(pvc('wants-reserved').spec?.volumeName).toBe('reserved');
    // The user's claimRef: the volume is not marked bound by the controller.
    expect(pv('reserved').metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBeUndefined();
    expect(pvc('other').spec?.volumeName).toBe('small');
  });

  it('waits for the first consumer, then provisions a hostPath volume on the selected node and binds it', () => {
    cluster.create(readyNode('n1', '/data/nodes/n1/local-path'));
    cluster.create(storageClass('local-path', 'WaitForFirstConsumer'));
    const created = cluster.create(claim('www', '2Gi', { className: 'local-path' }));
    run();
    expect(pvc('www').spec?.volumeName).toBeUndefined();
    expect(pvc('www').metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBeUndefined();
    expect(cluster.view().list('PersistentVolume')).toEqual([]);
    expect(cluster.view().list('Event', 'default')).toEqual([]);

    const waiting = pvc('www');
    cluster.apply({ type: 'ObjectUpdated', object: { ...waiting, metadata: { ...waiting.metadata, annotations: { 'volume.kubernetes.io/selected-node': 'n1' } } }, expectedResourceVersion: null, subresource: null });
    run();
    const name = `pvc-${created.metadata.uid}`;
    expect(pvc('www').spec?.volumeName).toBe(name);
    expect(pvc('www').status?.phase).toBe('Bound');
    expect(pvc('www').metadata.annotations).toMatchObject({ 'volume.kubernetes.io/storage-provisioner': 'rancher.io/local-path', 'volume.beta.kubernetes.io/storage-provisioner': 'rancher.io/local-path' });
    expect(pv(name)).toMatchObject({
      metadata: { annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' }, finalizers: [LOCAL_PATH_CLEANUP_FINALIZER] },
      spec: {
        storageClassName: 'local-path',
        capacity: { storage: '2Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        hostPath: { path: `/data/nodes/n1/local-path/${name}_default_www`, type: 'DirectoryOrCreate' },
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] }] } },
        claimRef: { name: 'www', namespace: 'default', uid: created.metadata.uid },
      },
      status: { phase: 'Bound' },
    });
    const reasons = cluster.view().list('Event', 'default').map((event) => (event as { reason?: string }).reason).sort();
    expect(reasons).toEqual(['ExternalProvisioning', 'ProvisioningSucceeded']);
  });

  it('provisions an Immediate claim on the Ready node holding the fewest local-path volumes (rancher default path without the node annotation)', () => {
    cluster.create(readyNode('n1'));
    cluster.create(readyNode('n2'));
    cluster.create(storageClass('now', 'Immediate', 'Retain'));
    const first = cluster.create(claim('a', '1Gi', { className: 'now' }));
    run();
    const second = cluster.create(claim('b', '1Gi', { className: 'now' }));
    run();
    expect(pv(`pvc-${first.metadata.uid}`).spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual(['n1']);
    expect(pv(`pvc-${second.metadata.uid}`).spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual(['n2']);
    expect(pv(`pvc-${first.metadata.uid}`).spec?.hostPath?.path).toBe(`/opt/local-path-provisioner/pvc-${first.metadata.uid}_default_a`);
    expect(pv(`pvc-${first.metadata.uid}`).spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect([pvc('a').status?.phase, pvc('b').status?.phase]).toEqual(['Bound', 'Bound']);
  });

  it('releases a volume whose claim is gone: Retain stays Released, a provisioned Delete volume is deleted, a hand-made Delete volume fails', () => {
    cluster.create(readyNode('n1'));
    cluster.create(storageClass('keep', 'Immediate', 'Retain'));
    cluster.create(storageClass('drop', 'Immediate', 'Delete'));
    cluster.create(volume('manual-delete', '1Gi', { policy: 'Delete' }));
    const kept = cluster.create(claim('kept', '1Gi', { className: 'keep' }));
    const dropped = cluster.create(claim('dropped', '1Gi', { className: 'drop' }));
    cluster.create(claim('manual', '1Gi', { volumeName: 'manual-delete' }));
    run();
    expect([pvc('kept'), pvc('dropped'), pvc('manual')].map((c) => c.status?.phase)).toEqual(['Bound', 'Bound', 'Bound']);
    for (const name of ['kept', 'dropped', 'manual']) cluster.apply(deleteCommand(pvc(name)));
    run();
    expect(pv(`pvc-${kept.metadata.uid}`).status?.phase).toBe('Released');
    expect(pv(`pvc-${kept.metadata.uid}`).metadata.deletionTimestamp).toBeUndefined();
    expect(pv('manual-delete').status).toMatchObject({ phase: 'Failed', message: expect.stringContaining('no deletable volume plugin matched') });
    // Deleted by the provisioner, held by its cleanup finalizer until the node agent removed the directory.
    const releasedDrop = pv(`pvc-${dropped.metadata.uid}`);
    expect(releasedDrop.status?.phase).toBe('Released');
    expect(releasedDrop.metadata.deletionTimestamp).toBeDefined();
    expect(releasedDrop.metadata.finalizers).toEqual([LOCAL_PATH_CLEANUP_FINALIZER]);
    expect(decideLocalPath(`PersistentVolume//pvc-${dropped.metadata.uid}`, cluster.view()).commands).toEqual([]);
  });

  it('releases a volume whose claim was deleted and made again under the same name (another uid)', () => {
    cluster.create(volume('pv', '1Gi'));
    cluster.create(claim('data', '1Gi'));
    run();
    expect(pv('pv').status?.phase).toBe('Bound');
    cluster.apply(deleteCommand(pvc('data')));
    cluster.create(claim('data', '1Gi'));
    // Only the volume's key: the new claim finds no Available volume.
    const decision = decideBinding('PersistentVolume//pv', cluster.view(), { now: NOW });
    expect(decision.commands).toMatchObject([{ type: 'ObjectUpdated', subresource: 'status', object: { status: { phase: 'Released' } } }]);
    run();
    expect(pv('pv').status?.phase).toBe('Released');
    expect(pvc('data').status?.phase).toBeUndefined();
  });
});
