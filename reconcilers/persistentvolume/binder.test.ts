/**
 * The persistentvolume-binder's decisions (binder.ts, index.ts) against a real projection
 * (LMDB) fed by hand, in the cases kube's pv_controller tests cover beyond the happy path:
 * pre-binding to a missing or taken volume, classes without a provisioner or missing,
 * external provisioning, WaitForFirstConsumer with static local volumes, bound claims
 * whose volume is gone, unbound or taken (Lost), reclaim policies Recycle and unknown,
 * a volume the controller bound to a claim that bound elsewhere, and the keys a change wakes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { KubeObject, PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../schemas/index.ts';
import { deleteCommand, statusCommand, updateCommand } from '../replicaset/objects.ts';
import { createTestCluster, nodeObject, settle, type TestCluster } from '../testing.ts';
import { binderKeysFor, createPersistentVolumeBinder, decideBinding } from './index.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

type VolumeSpec = NonNullable<PersistentVolume['spec']>;
type ClaimSpec = NonNullable<PersistentVolumeClaim['spec']>;

const volume = (name: string, storage: string, spec: Partial<VolumeSpec> = {}, annotations?: Record<string, string>): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: {
    capacity: { storage },
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'manual',
    persistentVolumeReclaimPolicy: 'Retain',
    hostPath: { path: `/tmp/${name}` },
    ...spec,
  },
});

const claim = (name: string, storage: string, spec: Partial<ClaimSpec> = {}, annotations?: Record<string, string>): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, storageClassName: 'manual', ...spec },
});

const storageClass = (name: string, provisioner: string, mode: 'Immediate' | 'WaitForFirstConsumer' = 'Immediate'): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner,
  reclaimPolicy: 'Delete',
  volumeBindingMode: mode,
});

const onNode = (node: string): Partial<VolumeSpec> => ({
  nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
});

describe('persistentvolume-binder decisions', () => {
  let cluster: TestCluster;
  const binder = createPersistentVolumeBinder();
  const run = (): number => settle(cluster, [binder], { now: NOW });
  const decide = (key: string) => decideBinding(key, cluster.view(), { now: NOW });
  const pv = (name: string): PersistentVolume => cluster.view().get(`PersistentVolume//${name}`) as PersistentVolume;
  const pvc = (name: string): PersistentVolumeClaim => cluster.view().get(`PersistentVolumeClaim/default/${name}`) as PersistentVolumeClaim;
  const update = (current: KubeObject, next: KubeObject): void => {
    const [record] = cluster.apply(updateCommand(current, next));
    expect(record?.verdict.type).toBe('accepted');
  };

  beforeEach(() => {
    cluster = createTestCluster();
  });
  afterEach(async () => {
    await cluster.close();
  });

  it('leaves a claim pre-bound to a missing volume Pending until the volume appears, then binds it without marking it the controller\'s', () => {
    cluster.create(volume('other', '5Gi'));
    cluster.create(claim('data', '1Gi', { volumeName: 'later' }));
    run();
    expect(decide('PersistentVolumeClaim/default/data').commands).toEqual([]);
    expect(pvc('data').status?.phase).not.toBe('Bound');
    expect(pv('other').spec?.claimRef).toBeUndefined();
    cluster.create(volume('later', '2Gi'));
    run();
    expect(pvc('data').status).toMatchObject({ phase: 'Bound', capacity: { storage: '2Gi' } });
    expect(pvc('data').metadata.annotations).toEqual({ 'pv.kubernetes.io/bind-completed': 'yes' });
    expect(pv('later').metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    expect(pv('later').status?.phase).toBe('Bound');
  });

  it('does not take a volume a claim is pre-bound to when the volume is claimed by another claim', () => {
    cluster.create(volume('taken', '1Gi', { claimRef: { namespace: 'default', name: 'owner' } }));
    cluster.create(claim('owner', '1Gi'));
    cluster.create(claim('thief', '1Gi', { volumeName: 'taken' }));
    run();
    expect(pv('taken').spec?.claimRef?.name).toBe('owner');
    expect(pvc('owner').status?.phase).toBe('Bound');
    expect(decide('PersistentVolumeClaim/default/thief').commands).toEqual([]);
    expect(pvc('thief').status?.phase).not.toBe('Bound');
  });

  it('leaves a claim without a matching volume Pending when its class is missing or has no provisioner', () => {
    cluster.create(storageClass('local', 'kubernetes.io/no-provisioner'));
    cluster.create(claim('no-class-object', '1Gi', { storageClassName: 'ghost' }));
    cluster.create(claim('by-hand', '1Gi', { storageClassName: 'local' }));
    run();
    for (const name of ['no-class-object', 'by-hand']) {
      expect(decide(`PersistentVolumeClaim/default/${name}`).commands).toEqual([]);
      expect(pvc(name).metadata.annotations).toBeUndefined();
    }
    // A volume of the class appears: the claim binds to it.
    cluster.create(volume('made-by-hand', '1Gi', { storageClassName: 'local' }));
    run();
    expect(pvc('by-hand').spec?.volumeName).toBe('made-by-hand');
  });

  it('hands an Immediate claim of an external provisioner\'s class to that provisioner (both annotations), once', () => {
    cluster.create(storageClass('nfs', 'example.com/nfs'));
    cluster.create(volume('manual-pv', '10Gi'));
    cluster.create(claim('shared', '1Gi', { storageClassName: 'nfs' }));
    run();
    expect(pvc('shared').metadata.annotations).toEqual({
      'volume.kubernetes.io/storage-provisioner': 'example.com/nfs',
      'volume.beta.kubernetes.io/storage-provisioner': 'example.com/nfs',
    });
    expect(pvc('shared').spec?.volumeName).toBeUndefined();
    expect(pv('manual-pv').spec?.claimRef).toBeUndefined();
    expect(decide('PersistentVolumeClaim/default/shared').commands).toEqual([]);
    // The provisioner's volume appears pre-bound to the claim: the binder finishes the binding.
    const shared = pvc('shared');
    cluster.create(volume('pvc-shared', '1Gi', { storageClassName: 'nfs', claimRef: { namespace: 'default', name: 'shared', uid: shared.metadata.uid } }, { 'pv.kubernetes.io/provisioned-by': 'example.com/nfs' }));
    run();
    expect(pvc('shared').spec?.volumeName).toBe('pvc-shared');
    expect(pvc('shared').status?.phase).toBe('Bound');
  });

  it('binds a WaitForFirstConsumer claim only once a node is selected, to the smallest static volume on that node', () => {
    cluster.create(nodeObject('n1'));
    cluster.create(nodeObject('n2'));
    cluster.create(storageClass('local', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer'));
    for (const [name, size, node] of [['n1-small', '1Gi', 'n1'], ['n2-smaller', '500Mi', 'n2'], ['n2-big', '4Gi', 'n2']] as const) {
      cluster.create(volume(name, size, { storageClassName: 'local', ...onNode(node) }));
    }
    cluster.create(claim('data', '500Mi', { storageClassName: 'local' }));
    run();
    expect(pvc('data').spec?.volumeName).toBeUndefined();
    expect(['n1-small', 'n2-smaller', 'n2-big'].map((name) => pv(name).status?.phase)).toEqual(['Available', 'Available', 'Available']);
    const waiting = pvc('data');
    update(waiting, { ...waiting, metadata: { ...waiting.metadata, annotations: { 'volume.kubernetes.io/selected-node': 'n1' } } });
    run();
    expect(pvc('data').spec?.volumeName).toBe('n1-small');
    expect(pv('n1-small').status?.phase).toBe('Bound');
    expect(pv('n2-smaller').spec?.claimRef).toBeUndefined();
  });

  it('marks a bound claim Lost when its volume is deleted, once', () => {
    cluster.create(volume('pv', '1Gi'));
    cluster.create(claim('data', '1Gi'));
    run();
    expect(pvc('data').status?.phase).toBe('Bound');
    cluster.apply(deleteCommand(pv('pv')));
    expect(cluster.view().get('PersistentVolume//pv')).toBeUndefined();
    run();
    expect(pvc('data').status?.phase).toBe('Lost');
    expect(pvc('data').spec?.volumeName).toBe('pv');
    expect(decide('PersistentVolumeClaim/default/data').commands).toEqual([]);
  });

  it('marks a bound claim Lost when its volume points at another claim', () => {
    cluster.create(volume('pv', '1Gi'));
    cluster.create(claim('data', '1Gi'));
    cluster.create(claim('intruder', '1Gi', { volumeName: 'pv' }));
    run();
    const intruder = pvc('intruder');
    const current = pv('pv');
    const bindsTo = current.spec?.claimRef?.name;
    expect(bindsTo).toBe('data');
    // Someone repoints the volume at the other claim.
    update(current, { ...current, spec: { ...current.spec, claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'intruder', uid: intruder.metadata.uid } } });
    expect(decide('PersistentVolumeClaim/default/data').commands).toMatchObject([{ subresource: 'status', object: { status: { phase: 'Lost' } } }]);
    run();
    expect(pvc('data').status?.phase).toBe('Lost');
    expect(pvc('intruder').status?.phase).toBe('Bound');
    expect(decide('PersistentVolumeClaim/default/data').commands).toEqual([]);
  });

  it('binds the volume again when a bound claim\'s volume lost its claimRef (kube syncBoundClaim)', () => {
    cluster.create(volume('pv', '1Gi'));
    const created = cluster.create(claim('data', '1Gi'));
    run();
    const current = pv('pv');
    const { claimRef: _dropped, ...spec } = current.spec ?? {};
    update(current, { ...current, metadata: { ...current.metadata, annotations: {} }, spec });
    expect(pv('pv').spec?.claimRef).toBeUndefined();
    run();
    expect(pv('pv').spec?.claimRef).toMatchObject({ name: 'data', namespace: 'default', uid: created.metadata.uid });
    expect(pv('pv').metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    expect(pv('pv').status?.phase).toBe('Bound');
    expect(pvc('data').status?.phase).toBe('Bound');
  });

  it.each([
    ['Recycle', 'Failed', 'No recycler plugin found for the volume!'],
    ['Retain', 'Released', undefined],
    [undefined, 'Released', undefined],
  ])('reclaims a released volume with policy %s: %s', (policy, phase, message) => {
    const spec: Partial<VolumeSpec> = { persistentVolumeReclaimPolicy: policy };
    cluster.create(volume('pv', '1Gi', spec));
    cluster.create(claim('data', '1Gi'));
    run();
    expect(pv('pv').status?.phase).toBe('Bound');
    cluster.apply(deleteCommand(pvc('data')));
    run();
    expect(pv('pv').status?.phase).toBe(phase);
    expect(pv('pv').status?.message).toBe(message);
    expect(pv('pv').status?.lastPhaseTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(pv('pv').spec?.claimRef?.name).toBe('data');
    expect(decide('PersistentVolume//pv').commands).toEqual([]);
  });

  it('fails a released volume with an unknown reclaim policy, and leaves a Failed volume alone', () => {
    cluster.create(volume('pv', '1Gi'));
    const created = cluster.create(claim('data', '1Gi'));
    run();
    const bound = pv('pv');
    cluster.apply(statusCommand(bound, { phase: 'Released' }));
    cluster.apply(deleteCommand(pvc('data')));
    const released = pv('pv');
    update(released, { ...released, spec: { ...released.spec, persistentVolumeReclaimPolicy: 'Shred' } });
    if (pv('pv').spec?.persistentVolumeReclaimPolicy !== 'Shred') throw new Error('the fold did not keep the policy');
    expect(pv('pv').spec?.claimRef?.uid).toBe(created.metadata.uid);
    run();
    expect(pv('pv').status).toMatchObject({ phase: 'Failed', message: 'unknown reclaim policy Shred' });
    expect(decide('PersistentVolume//pv').commands).toEqual([]);
  });

  it('undoes its own binding of a volume whose claim bound to another volume, and leaves a user\'s pre-binding pre-bound without the uid (kube unbindVolume)', () => {
    const created = cluster.create(claim('data', '1Gi', { volumeName: 'chosen' }, { 'pv.kubernetes.io/bind-completed': 'yes' }));
    const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid: created.metadata.uid };
    cluster.create(volume('chosen', '1Gi', { claimRef: ref }));
    cluster.create(volume('stale', '1Gi', { claimRef: ref }, { 'pv.kubernetes.io/bound-by-controller': 'yes', keep: 'me' }));
    cluster.create(volume('users', '1Gi', { claimRef: ref }));
    const undo = decide('PersistentVolume//stale').commands;
    expect(undo).toHaveLength(1);
    expect(undo[0]).toMatchObject({ type: 'ObjectUpdated', subresource: null });
    run();
    expect(pv('stale').spec?.claimRef).toBeUndefined();
    expect(pv('stale').metadata.annotations).toEqual({ keep: 'me' });
    expect(pv('stale').status?.phase).toBe('Available');
    expect(pv('users').spec?.claimRef).toEqual({ kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data' });
    expect(pv('users').status?.phase).toBe('Available');
    expect(decide('PersistentVolume//users').commands).toEqual([]);
    expect(pv('chosen').status?.phase).toBe('Bound');
    expect(pvc('data').status?.phase).toBe('Bound');
    expect(pvc('data').spec?.volumeName).toBe('chosen');
  });

  it('releases a volume provisioned (policy Delete) for a claim that bound to another volume, and keeps a Failed one Failed', () => {
    const created = cluster.create(claim('data', '1Gi', { volumeName: 'chosen' }, { 'pv.kubernetes.io/bind-completed': 'yes' }));
    const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid: created.metadata.uid };
    const provisioned = { 'pv.kubernetes.io/provisioned-by': 'example.com/nfs' };
    cluster.create(volume('chosen', '1Gi', { claimRef: ref }));
    cluster.create(volume('unneeded', '1Gi', { claimRef: ref, persistentVolumeReclaimPolicy: 'Delete' }, provisioned));
    const failed = cluster.create(volume('failed', '1Gi', { claimRef: ref, persistentVolumeReclaimPolicy: 'Delete' }, provisioned));
    cluster.apply(statusCommand(failed, { phase: 'Failed', message: 'deleter said no' }));
    // Provisioned but Retain: unbound like any other volume (the user's, here: keeps the pre-binding without the uid).
    cluster.create(volume('retained', '1Gi', { claimRef: ref, persistentVolumeReclaimPolicy: 'Retain' }, provisioned));
    expect(decide('PersistentVolume//unneeded').commands).toMatchObject([{ subresource: 'status', object: { status: { phase: 'Released' } } }]);
    run();
    expect(pv('unneeded').status?.phase).toBe('Released');
    expect(pv('unneeded').spec?.claimRef?.uid).toBe(created.metadata.uid);
    // The provisioner deletes it; the binder has nothing more to do.
    expect(decide('PersistentVolume//unneeded').commands).toEqual([]);
    expect(pv('failed').status).toMatchObject({ phase: 'Failed', message: 'deleter said no' });
    expect(pv('retained').spec?.claimRef?.uid).toBeUndefined();
    expect(pv('retained').status?.phase).toBe('Available');
  });

  it('ignores keys of objects that are gone or of other kinds', () => {
    cluster.create(nodeObject('n1'));
    expect(decide('PersistentVolume//nothing').commands).toEqual([]);
    expect(decide('Node//n1').commands).toEqual([]);
  });

  it('wakes the claim and the volume it names, the volume and its claim, or the volume and every unbound claim', () => {
    cluster.create(claim('unbound', '1Gi'));
    cluster.create(claim('done', '1Gi', { volumeName: 'x' }, { 'pv.kubernetes.io/bind-completed': 'yes' }));
    const change = (type: AppliedChange['type'], object: KubeObject, key: string): AppliedChange =>
      ({ type, key, eventId: 'e', object, topic: 'desired', partition: 0 }) as AppliedChange;
    const view = cluster.view();
    expect(binderKeysFor(change('ADDED', claim('c', '1Gi', { volumeName: 'v1' }), 'PersistentVolumeClaim/default/c'), view)).toEqual([
      'PersistentVolumeClaim/default/c',
      'PersistentVolume//v1',
    ]);
    expect(binderKeysFor(change('ADDED', claim('c', '1Gi'), 'PersistentVolumeClaim/default/c'), view)).toEqual(['PersistentVolumeClaim/default/c']);
    expect(binderKeysFor(change('MODIFIED', volume('v1', '1Gi', { claimRef: { namespace: 'ns', name: 'c' } }), 'PersistentVolume//v1'), view)).toEqual([
      'PersistentVolume//v1',
      'PersistentVolumeClaim/ns/c',
    ]);
    expect(binderKeysFor(change('ADDED', volume('v1', '1Gi'), 'PersistentVolume//v1'), view)).toEqual(['PersistentVolume//v1', 'PersistentVolumeClaim/default/unbound']);
    expect(binderKeysFor(change('DELETED', volume('v1', '1Gi'), 'PersistentVolume//v1'), view)).toEqual([]);
    expect(binderKeysFor(change('ADDED', nodeObject('n1'), 'Node//n1'), view)).toEqual([]);
  });
});
