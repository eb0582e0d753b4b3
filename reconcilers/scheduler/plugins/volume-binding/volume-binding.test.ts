/**
 * VolumeBinding against a real projection: the filter's verdict per node for each state of
 * a pod's claims, PreBind's selected-node annotation, and a whole scheduling decision (the
 * pod waits for its claim, then goes to the node its volume is pinned to).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../../../schemas/index.ts';
import { createTestCluster, type TestCluster } from '../../../testing.ts';
import { clusterListerOf, decidePods, defaultSchedulerProfiles } from '../../controller.ts';
import { createSchedulingContext, type FilterResult } from '../../framework.ts';
import { buildNodeInfos } from '../../node-info.ts';
import { makeNode } from '../../test-fixtures.ts';
import {
  BIND_CONFLICT_REASON,
  createVolumeBinding,
  NODE_CONFLICT_REASON,
  preBindVolumes,
  PV_NOT_EXIST_REASON,
  UNBOUND_IMMEDIATE_REASON,
} from './index.ts';

const NODES = ['n1', 'n2', 'n3'];

const pod = (claims: readonly string[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default' },
  spec: {
    containers: [{ name: 'c', image: 'logplane/echo:1' }],
    volumes: claims.map((claimName, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName } })),
  },
});

const storageClass = (name: string, mode: string, provisioner = 'rancher.io/local-path', zone?: string): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner,
  volumeBindingMode: mode,
  ...(zone ? { allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: [zone] }] }] } : {}),
});

const claim = (name: string, className: string, extra: { volumeName?: string; selectedNode?: string; bound?: boolean } = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', ...(extra.selectedNode ? { annotations: { 'volume.kubernetes.io/selected-node': extra.selectedNode } } : {}) },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: className, ...(extra.volumeName ? { volumeName: extra.volumeName } : {}) },
  ...(extra.bound ? { status: { phase: 'Bound' } } : {}),
});

const localVolume = (name: string, node: string, className: string): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: {
    capacity: { storage: '5Gi' },
    accessModes: ['ReadWriteOnce'],
    storageClassName: className,
    volumeMode: 'Filesystem',
    local: { path: `/mnt/${name}` },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
  },
  status: { phase: 'Available' },
});

describe('VolumeBinding', () => {
  let cluster: TestCluster;
  beforeEach(() => {
    cluster = createTestCluster();
    cluster.create(makeNode({ name: 'n1', labels: { zone: 'a' } }));
    cluster.create(makeNode({ name: 'n2', labels: { zone: 'b' } }));
    cluster.create(makeNode({ name: 'n3', labels: { zone: 'b' } }));
    cluster.create(storageClass('wffc', 'WaitForFirstConsumer'));
    cluster.create(storageClass('zoned', 'WaitForFirstConsumer', 'rancher.io/local-path', 'b'));
    cluster.create(storageClass('manual', 'WaitForFirstConsumer', 'kubernetes.io/no-provisioner'));
    cluster.create(storageClass('now', 'Immediate'));
  });
  afterEach(async () => {
    await cluster.close();
  });

  /** The filter's verdict on n1..n3, as "fit" or the first reason. */
  const verdicts = (target: Pod): string[] => {
    const view = cluster.view();
    const infos = buildNodeInfos(NODES.map((name) => view.get(`Node//${name}`)) as never, []);
    const ctx = createSchedulingContext(target, infos, clusterListerOf(view));
    const plugin = createVolumeBinding();
    return infos.map((info) => {
      const result: FilterResult = plugin.filter(target, info, ctx);
      return result.type === 'fit' ? 'fit' : `${result.reasons[0]}${result.unresolvable ? ' (unresolvable)' : ''}`;
    });
  };

  it.each<[string, () => void, readonly string[], string[]]>([
    ['no claims', () => undefined, [], ['fit', 'fit', 'fit']],
    ['a claim that does not exist', () => undefined, ['gone'], Array(3).fill('persistentvolumeclaim "gone" not found (unresolvable)')],
    ['an unbound claim of an Immediate class', () => cluster.create(claim('data', 'now')), ['data'], Array(3).fill(`${UNBOUND_IMMEDIATE_REASON} (unresolvable)`)],
    [
      'a claim bound to a volume pinned to n2',
      () => {
        cluster.create(localVolume('pv-n2', 'n2', 'wffc'));
        cluster.create(claim('data', 'wffc', { volumeName: 'pv-n2', bound: true }));
      },
      ['data'],
      [`${NODE_CONFLICT_REASON} (unresolvable)`, 'fit', `${NODE_CONFLICT_REASON} (unresolvable)`],
    ],
    ['a claim bound to a volume that is gone', () => cluster.create(claim('data', 'wffc', { volumeName: 'nowhere', bound: true })), ['data'], Array(3).fill(`${PV_NOT_EXIST_REASON} (unresolvable)`)],
    ['an unbound WaitForFirstConsumer claim local-path provisions anywhere', () => cluster.create(claim('data', 'wffc')), ['data'], ['fit', 'fit', 'fit']],
    ['an unbound claim whose class allows zone b only', () => cluster.create(claim('data', 'zoned')), ['data'], [`${BIND_CONFLICT_REASON} (unresolvable)`, 'fit', 'fit']],
    ['an unbound claim with a selected node', () => cluster.create(claim('data', 'wffc', { selectedNode: 'n3' })), ['data'], [`${BIND_CONFLICT_REASON} (unresolvable)`, `${BIND_CONFLICT_REASON} (unresolvable)`, 'fit']],
    [
      'an unbound claim of a class without provisioner and one local volume on n1',
      () => {
        cluster.create(localVolume('pv-n1', 'n1', 'manual'));
        cluster.create(claim('data', 'manual'));
      },
      ['data'],
      ['fit', `${BIND_CONFLICT_REASON} (unresolvable)`, `${BIND_CONFLICT_REASON} (unresolvable)`],
    ],
  ])('a pod with %s', (_what, setUp, claims, expected) => {
    setUp();
    expect(verdicts(pod(claims))).toEqual(expected);
  });

  it('PreBind: annotates each unbound claim without a selected node and waits; binds once every claim is Bound', () => {
    cluster.create(claim('fresh', 'wffc'));
    cluster.create(claim('chosen', 'wffc', { selectedNode: 'n2' }));
    const lister = clusterListerOf(cluster.view());
    const result = preBindVolumes(pod(['fresh', 'chosen']), 'n2', lister);
    expect(result.type).toBe('wait');
    expect(result.type === 'wait' ? result.commands : []).toMatchObject([
      { type: 'ObjectUpdated', object: { metadata: { name: 'fresh', annotations: { 'volume.kubernetes.io/selected-node': 'n2' } } }, expectedResourceVersion: expect.any(String) },
    ]);
    cluster.create(localVolume('pv-n2', 'n2', 'wffc'));
    cluster.create(claim('ready', 'wffc', { volumeName: 'pv-n2', bound: true }));
    expect(preBindVolumes(pod(['ready']), 'n2', clusterListerOf(cluster.view()))).toEqual({ type: 'bind' });
    expect(preBindVolumes(pod([]), 'n2', clusterListerOf(cluster.view()))).toEqual({ type: 'bind' });
  });

  it('a scheduling decision: the pod waits while its claim binds, then is bound to the node its volume is pinned to', () => {
    cluster.create(claim('www', 'wffc'));
    cluster.create(pod(['www']));
    const key = 'Pod/default/web-0';
    const first = decidePods([key], cluster.view(), { now: 0 }, defaultSchedulerProfiles()).get(key);
    expect(first?.commands.map((command) => command.type)).toEqual(['ObjectUpdated']);
    const [annotate] = first?.commands ?? [];
    cluster.apply(annotate as never);
    const chosen = (cluster.view().get('PersistentVolumeClaim/default/www') as PersistentVolumeClaim).metadata.annotations?.['volume.kubernetes.io/selected-node'] as string;
    expect(NODES).toContain(chosen);
    // Still waiting (the claim is not bound yet): nothing more to write.
    expect(decidePods([key], cluster.view(), { now: 0 }, defaultSchedulerProfiles()).get(key)?.commands).toEqual([]);
    // The provisioner and the binder did their part: a volume pinned to the chosen node, both sides bound.
    cluster.create(localVolume('pvc-www', chosen, 'wffc'));
    const waiting = cluster.view().get('PersistentVolumeClaim/default/www') as PersistentVolumeClaim;
    cluster.apply({ type: 'ObjectUpdated', object: { ...waiting, spec: { ...waiting.spec, volumeName: 'pvc-www' } }, expectedResourceVersion: null, subresource: null });
    cluster.apply({ type: 'ObjectUpdated', object: { ...waiting, status: { phase: 'Bound' } }, expectedResourceVersion: null, subresource: 'status' });
    const bound = decidePods([key], cluster.view(), { now: 0 }, defaultSchedulerProfiles()).get(key);
    expect(bound?.commands.find((command) => command.type === 'PodBound')).toMatchObject({ type: 'PodBound', node: chosen });
  });

  it('an unbound Immediate claim leaves the pod unschedulable with kube\'s message', () => {
    cluster.create(claim('data', 'now'));
    cluster.create(pod(['data']));
    const key = 'Pod/default/web-0';
    const decision = decidePods([key], cluster.view(), { now: 0 }, defaultSchedulerProfiles()).get(key);
    const update = decision?.commands.find((command) => command.type === 'ObjectUpdated');
    const condition = update?.type === 'ObjectUpdated' ? (update.object as Pod).status?.conditions?.find((c) => c.type === 'PodScheduled') : undefined;
    expect(condition).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(condition?.message).toContain(`0/3 nodes are available: 3 ${UNBOUND_IMMEDIATE_REASON}.`);
  });
});
