/**
 * The local-path provisioner's decisions against a real projection (LMDB) fed by hand,
 * in the cases external-provisioner's shouldProvision and rancher's provisioner decide:
 * which claims are ours (either annotation, our class, unbound), the node for Immediate
 * binding (Ready, schedulable, fewest of our volumes), the volume's shape (local vs
 * hostPath, mount options, reclaim policy, volume mode, hostname, base directory), and
 * which Released volumes it deletes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { KubeObject, Node, PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../schemas/index.ts';
import { statusCommand } from '../replicaset/objects.ts';
import { createTestCluster, nodeObject, type TestCluster } from '../testing.ts';
import { createLocalPathProvisioner, decideLocalPath, leastUsedNode, LOCAL_PATH_DIR_ANNOTATION, provisionedVolume } from './index.ts';

const PROVISIONER = 'rancher.io/local-path';

const localPathClass = (name: string, extra: Partial<StorageClass> = {}): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner: PROVISIONER,
  volumeBindingMode: 'Immediate',
  ...extra,
});

const claim = (name: string, extra: { className?: string; annotations?: Record<string, string>; volumeName?: string; volumeMode?: string } = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', annotations: extra.annotations ?? { 'volume.kubernetes.io/storage-provisioner': PROVISIONER } },
  spec: {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1Gi' } },
    storageClassName: extra.className ?? 'local-path',
    ...(extra.volumeName ? { volumeName: extra.volumeName } : {}),
    ...(extra.volumeMode ? { volumeMode: extra.volumeMode } : {}),
  },
});

const node = (name: string, extra: { ready?: boolean; unschedulable?: boolean; hostname?: string; dir?: string } = {}): Node => {
  const base = nodeObject(name);
  return {
    ...base,
    metadata: { name, labels: extra.hostname === undefined ? {} : { 'kubernetes.io/hostname': extra.hostname }, ...(extra.dir ? { annotations: { [LOCAL_PATH_DIR_ANNOTATION]: extra.dir } } : {}) },
    ...(extra.unschedulable ? { spec: { unschedulable: true } } : {}),
    status: { ...base.status, conditions: [{ type: 'Ready', status: extra.ready === false ? 'False' : 'True' }] },
  };
};

const pinnedVolume = (name: string, nodeName: string, provisionedBy?: string): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, ...(provisionedBy ? { annotations: { 'pv.kubernetes.io/provisioned-by': provisionedBy } } : {}) },
  spec: {
    capacity: { storage: '1Gi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Delete',
    hostPath: { path: `/tmp/${name}` },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [nodeName] }] }] } },
  },
});

describe('local-path provisioner decisions', () => {
  let cluster: TestCluster;
  const decide = (key: string) => decideLocalPath(key, cluster.view());
  const claimKey = (name: string): string => `PersistentVolumeClaim/default/${name}`;
  const created = (key: string): PersistentVolume[] =>
    decide(key).commands.map((command) => {
      if (command.type !== 'ObjectCreated') throw new Error(`expected a create, got ${command.type}`);
      return command.object as PersistentVolume;
    });

  beforeEach(() => {
    cluster = createTestCluster();
  });
  afterEach(async () => {
    await cluster.close();
  });

  it('picks the Ready, schedulable node holding the fewest of its own volumes, then by name; none when no node qualifies', () => {
    expect(leastUsedNode(cluster.view())).toBeUndefined();
    cluster.create(node('a-not-ready', { ready: false }));
    cluster.create(node('b-cordoned', { unschedulable: true }));
    expect(leastUsedNode(cluster.view())).toBeUndefined();
    cluster.create(node('d'));
    cluster.create(node('c'));
    expect(leastUsedNode(cluster.view())?.metadata.name).toBe('c');
    cluster.create(pinnedVolume('ours-on-c', 'c', PROVISIONER));
    // Volumes not provisioned by local-path do not count.
    cluster.create(pinnedVolume('theirs-on-d-1', 'd', 'example.com/nfs'));
    cluster.create(pinnedVolume('hand-made-on-d', 'd'));
    expect(leastUsedNode(cluster.view())?.metadata.name).toBe('d');
    cluster.create(pinnedVolume('ours-on-d', 'd', PROVISIONER));
    cluster.create(pinnedVolume('ours-on-d-2', 'd', PROVISIONER));
    expect(leastUsedNode(cluster.view())?.metadata.name).toBe('c');
  });

  it('shapes the volume from the class and the claim: local or hostPath, mount options, reclaim policy, volume mode, hostname label, base dir', () => {
    const stored = cluster.create(claim('data', { volumeMode: 'Block' }));
    const local = localPathClass('local-path', { parameters: { volumeType: 'local' }, mountOptions: ['noatime'], reclaimPolicy: 'Retain' });
    const onLabelled = provisionedVolume(stored, local, node('n1', { hostname: 'host-one', dir: '/data/n1/local-path//' }));
    const name = `pvc-${stored.metadata.uid}`;
    expect(onLabelled.spec).toMatchObject({
      local: { path: `/data/n1/local-path/${name}_default_data` },
      mountOptions: ['noatime'],
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Block',
      capacity: { storage: '1Gi' },
      claimRef: { name: 'data', namespace: 'default', uid: stored.metadata.uid, resourceVersion: stored.metadata.resourceVersion },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['host-one'] }] }] } },
    });
    expect(onLabelled.spec?.hostPath).toBeUndefined();
    const plain = provisionedVolume(claim('bare'), localPathClass('local-path'), node('n2'));
    expect(plain.metadata.name).toBe('pvc-');
    expect(plain.spec).toMatchObject({
      hostPath: { path: '/opt/local-path-provisioner/pvc-_default_bare', type: 'DirectoryOrCreate' },
      persistentVolumeReclaimPolicy: 'Delete',
      volumeMode: 'Filesystem',
      claimRef: { uid: '' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ values: ['n2'] }] }] } },
    });
    expect(plain.spec?.mountOptions).toBeUndefined();
    expect(plain.spec?.claimRef?.resourceVersion).toBeUndefined();
  });

  it('provisions a claim handed to it by either annotation, and not one handed elsewhere, of another class, pre-bound, or already provisioned', () => {
    cluster.create(node('n1'));
    cluster.create(localPathClass('local-path'));
    cluster.create(localPathClass('nfs', { provisioner: 'example.com/nfs' }));
    cluster.create(claim('beta', { annotations: { 'volume.beta.kubernetes.io/storage-provisioner': PROVISIONER } }));
    cluster.create(claim('elsewhere', { annotations: { 'volume.kubernetes.io/storage-provisioner': 'example.com/nfs' } }));
    cluster.create(claim('unannotated', { annotations: {} }));
    cluster.create(claim('wrong-class', { className: 'nfs' }));
    cluster.create(claim('no-class', { className: 'ghost' }));
    cluster.create(claim('pre-bound', { volumeName: 'somewhere' }));
    expect(created(claimKey('beta')).map((volume) => volume.spec?.claimRef?.name)).toEqual(['beta']);
    for (const name of ['elsewhere', 'unannotated', 'wrong-class', 'no-class', 'pre-bound']) expect(decide(claimKey(name)).commands).toEqual([]);
    const [volume] = created(claimKey('beta'));
    if (!volume) throw new Error('no volume');
    cluster.create(volume);
    expect(decide(claimKey('beta')).commands).toEqual([]);
  });

  it('waits for the selected node under WaitForFirstConsumer, and provisions nothing while that node is unknown; Immediate without a node waits too', () => {
    cluster.create(localPathClass('late', { volumeBindingMode: 'WaitForFirstConsumer' }));
    cluster.create(localPathClass('now'));
    cluster.create(claim('waiting', { className: 'late' }));
    cluster.create(claim('on-ghost', { className: 'late', annotations: { 'volume.kubernetes.io/storage-provisioner': PROVISIONER, 'volume.kubernetes.io/selected-node': 'ghost' } }));
    cluster.create(claim('immediate', { className: 'now' }));
    for (const name of ['waiting', 'on-ghost', 'immediate']) expect(decide(claimKey(name)).commands).toEqual([]);
    cluster.create(node('ghost', { hostname: 'ghost' }));
    expect(created(claimKey('on-ghost')).map((volume) => volume.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values)).toEqual([['ghost']]);
    expect(created(claimKey('immediate'))).toHaveLength(1);
    expect(decide(claimKey('waiting')).commands).toEqual([]);
  });

  it('deletes only its own Released volumes whose policy is Delete, once', () => {
    const ours = cluster.create(pinnedVolume('ours', 'n1', PROVISIONER));
    const theirs = cluster.create(pinnedVolume('theirs', 'n1', 'example.com/nfs'));
    const kept = cluster.create({ ...pinnedVolume('kept', 'n1', PROVISIONER), spec: { ...pinnedVolume('kept', 'n1').spec, persistentVolumeReclaimPolicy: 'Retain' } });
    cluster.create(pinnedVolume('bound', 'n1', PROVISIONER));
    for (const volume of [ours, theirs, kept]) cluster.apply(statusCommand(volume, { phase: 'Released' }));
    expect(decide('PersistentVolume//ours').commands).toMatchObject([{ type: 'ObjectDeleted', kind: 'PersistentVolume', name: 'ours', uid: ours.metadata.uid }]);
    for (const name of ['theirs', 'kept', 'bound']) expect(decide(`PersistentVolume//${name}`).commands).toEqual([]);
  });

  it('wakes only on claims and volumes, and ignores other keys', () => {
    const controller = createLocalPathProvisioner();
    const change = (object: KubeObject, key: string): AppliedChange => ({ type: 'ADDED', key, eventId: 'e', object, topic: 'desired', partition: 0 }) as AppliedChange;
    expect(controller.keysFor(change(claim('c'), claimKey('c')), cluster.view())).toEqual([claimKey('c')]);
    expect(controller.keysFor(change(pinnedVolume('v', 'n1'), 'PersistentVolume//v'), cluster.view())).toEqual(['PersistentVolume//v']);
    expect(controller.keysFor(change(node('n1'), 'Node//n1'), cluster.view())).toEqual([]);
    cluster.create(node('n1'));
    expect(decide('Node//n1').commands).toEqual([]);
    expect(decide('PersistentVolumeClaim/default/missing').commands).toEqual([]);
  });
});
