/**
 * PersistentVolumes end to end on both logs (1 and 3 partitions): the statefulset
 * controller, the persistentvolume-binder and the local-path provisioner on the real
 * reconciler runtime, the node agents' local-path part (real directories in a temporary
 * data directory), and the test nodes standing in for the scheduler and the kubelets. An
 * Immediate local-path class, so the provisioner picks the nodes: a StatefulSet's claims are
 * provisioned and bound with their directories on disk; a Retain volume stays Released with
 * its data; a Delete volume's directory and then the volume go once its claim is deleted; a
 * pod's generic ephemeral volume gets its claim, volume and directory, all gone with the pod;
 * and a replay of the log from offset 0 gives the live state hash.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localPathAnnotations, startLocalPathVolumes, type LocalPathVolumes } from '../../node-agent/local-path.ts';
import type { View } from '../../projections/index.ts';
import { createEphemeralVolumeController } from '../../reconcilers/ephemeral-volume/index.ts';
import { createGarbageCollector } from '../../reconcilers/garbage-collector/index.ts';
import { createLocalPathProvisioner } from '../../reconcilers/local-path-provisioner/index.ts';
import { createPersistentVolumeBinder } from '../../reconcilers/persistentvolume/index.ts';
import { deleteCommand } from '../../reconcilers/replicaset/objects.ts';
import { createStatefulSetController } from '../../reconcilers/statefulset/index.ts';
import { LOG_ADAPTERS, podTemplate, startScenario, type Scenario } from '../../reconcilers/testing.ts';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, StatefulSet, StorageClass } from '../../schemas/index.ts';
import { replayToLive } from './helpers.ts';

const NODES = ['n1', 'n2', 'n3'];

const storageClass = (name: string, reclaimPolicy: string): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner: 'rancher.io/local-path',
  reclaimPolicy,
  volumeBindingMode: 'Immediate',
});

const statefulSet: StatefulSet = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', namespace: 'default' },
  spec: {
    replicas: 3,
    serviceName: 'db',
    podManagementPolicy: 'OrderedReady',
    selector: { matchLabels: { app: 'db' } },
    template: podTemplate('logplane/echo:1', { app: 'db' }),
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { storageClassName: 'local-delete', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  },
};

const claims = (view: View): PersistentVolumeClaim[] => view.list('PersistentVolumeClaim', 'default') as PersistentVolumeClaim[];
const volumes = (view: View): PersistentVolume[] => view.list('PersistentVolume') as PersistentVolume[];
const volumeOf = (view: View, claim: string): PersistentVolume | undefined =>
  volumes(view).find((volume) => volume.spec?.claimRef?.name === claim && volume.spec.claimRef.namespace === 'default');
const pathOf = (volume: PersistentVolume | undefined): string => volume?.spec?.hostPath?.path ?? '';

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('local-path PersistentVolumes on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  let agentVolumes: LocalPathVolumes;
  let dataDir: string;
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'logplane-local-path-'));
    scenario = await startScenario({ adapter, partitions, nodes: NODES, readyDelayMs: 20, controllers: [createStatefulSetController(), createPersistentVolumeBinder(), createLocalPathProvisioner(), createEphemeralVolumeController(), createGarbageCollector()] });
    // What the node agents say when they register: where their local-path volumes go.
    const view = scenario.projection.view();
    await scenario.apply(
      ...NODES.map((name) => {
        const node = view.get(`Node//${name}`) as Node;
        return { type: 'ObjectUpdated' as const, object: { ...node, metadata: { ...node.metadata, annotations: localPathAnnotations(dataDir, name) } }, expectedResourceVersion: null, subresource: null };
      }),
    );
    agentVolumes = startLocalPathVolumes({ log: scenario.log, projection: scenario.projection, logger: pino({ level: 'warn' }), nodes: NODES, dataDir });
  });
  afterEach(async () => {
    await agentVolumes.close();
    await scenario.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('provisions and binds a StatefulSet\'s claims with directories on disk, keeps a Retain volume, removes a Delete volume and its directory, and replays to the live hash', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: storageClass('local-delete', 'Delete') }, { type: 'ObjectCreated', object: storageClass('local-keep', 'Retain') });
    await scenario.apply({ type: 'ObjectCreated', object: statefulSet });
    await scenario.waitUntil('3 claims and volumes are Bound', (view) => {
      const bound = claims(view).filter((claim) => claim.status?.phase === 'Bound');
      return bound.length === 3 && bound.every((claim) => volumeOf(view, claim.metadata.name)?.status?.phase === 'Bound');
    });
    await scenario.waitUntil('3 pods run', (view) => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.status?.phase === 'Running').length === 3);
    const view = scenario.projection.view();
    expect(claims(view).map((claim) => claim.metadata.name).sort()).toEqual(['data-db-0', 'data-db-1', 'data-db-2']);
    // The provisioner spread them over the nodes (fewest local-path volumes first), each in its node's directory.
    const placed = claims(view).map((claim) => volumeOf(view, claim.metadata.name)?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values?.[0]);
    expect([...placed].sort()).toEqual(NODES);
    for (const claim of claims(view)) {
      const volume = volumeOf(view, claim.metadata.name);
      expect(claim.spec?.volumeName).toBe(volume?.metadata.name);
      const node = volume?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values?.[0] ?? '';
      expect(pathOf(volume)).toBe(join(dataDir, node, 'local-path', `${volume?.metadata.name}_default_${claim.metadata.name}`));
    }
    await scenario.waitUntil('every volume directory exists', (v) => volumes(v).every((volume) => existsSync(pathOf(volume))));

    // Retain: the claim goes, the volume stays Released with its directory.
    await scenario.apply({ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'scratch', namespace: 'default' }, spec: { storageClassName: 'local-keep', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } } });
    await scenario.waitUntil('scratch is Bound', (v) => (v.get('PersistentVolumeClaim/default/scratch') as PersistentVolumeClaim | undefined)?.status?.phase === 'Bound');
    const kept = volumeOf(scenario.projection.view(), 'scratch') as PersistentVolume;
    await scenario.waitUntil('the scratch directory exists', () => existsSync(pathOf(kept)));
    await scenario.apply(deleteCommand(scenario.projection.view().get('PersistentVolumeClaim/default/scratch') as PersistentVolumeClaim));
    await scenario.waitUntil('the Retain volume is Released', (v) => (v.get(`PersistentVolume//${kept.metadata.name}`) as PersistentVolume | undefined)?.status?.phase === 'Released');

    // Delete: db-2 goes (its claim stays, as the set's retention policy says), then its claim is deleted.
    const set = scenario.projection.view().get('StatefulSet/default/db') as StatefulSet;
    await scenario.apply({ type: 'ObjectUpdated', object: { ...set, spec: { ...set.spec!, replicas: 2 } }, expectedResourceVersion: null, subresource: null });
    await scenario.waitUntil('db-2 is gone', (v) => v.get('Pod/default/db-2') === undefined);
    const dropped = volumeOf(scenario.projection.view(), 'data-db-2') as PersistentVolume;
    expect(existsSync(pathOf(dropped))).toBe(true);
    await scenario.apply(deleteCommand(scenario.projection.view().get('PersistentVolumeClaim/default/data-db-2') as PersistentVolumeClaim));
    await scenario.waitUntil('the Delete volume is gone', (v) => v.get(`PersistentVolume//${dropped.metadata.name}`) === undefined);
    expect(existsSync(pathOf(dropped))).toBe(false);
    const final = scenario.projection.view();
    expect((final.get(`PersistentVolume//${kept.metadata.name}`) as PersistentVolume).status?.phase).toBe('Released');
    expect(existsSync(pathOf(kept))).toBe(true);
    expect(volumes(final).filter((volume) => volume.status?.phase === 'Bound')).toHaveLength(2);

    const replay = await replayToLive(scenario);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 120_000);

  it('gives a pod\'s ephemeral volume its claim, volume and directory, and takes them away with the pod', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: storageClass('local-delete', 'Delete') });
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'cache', namespace: 'default' },
      spec: {
        containers: [{ name: 'c', image: 'logplane/echo:1', volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
        volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: 'local-delete', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } }],
      },
    };
    await scenario.apply({ type: 'ObjectCreated', object: pod });
    await scenario.waitUntil('the claim cache-scratch is Bound', (v) => (v.get('PersistentVolumeClaim/default/cache-scratch') as PersistentVolumeClaim | undefined)?.status?.phase === 'Bound');
    const view = scenario.projection.view();
    const claim = view.get('PersistentVolumeClaim/default/cache-scratch') as PersistentVolumeClaim;
    expect(claim.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: 'cache', uid: view.get('Pod/default/cache')?.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    const volume = volumeOf(view, 'cache-scratch') as PersistentVolume;
    await scenario.waitUntil('its directory exists', () => existsSync(pathOf(volume)));

    await scenario.apply(deleteCommand(scenario.projection.view().get('Pod/default/cache') as Pod));
    await scenario.waitUntil('the pod, its claim and its volume are gone', (v) =>
      v.get('Pod/default/cache') === undefined && v.get('PersistentVolumeClaim/default/cache-scratch') === undefined && v.get(`PersistentVolume//${volume.metadata.name}`) === undefined,
    );
    expect(existsSync(pathOf(volume))).toBe(false);
    const replay = await replayToLive(scenario);
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 120_000);
});
