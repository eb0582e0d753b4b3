/**
 * The ephemeral volume controller: its decisions on a projection (claims created from the
 * templates, controlled by the pod; a claim of that name the pod does not control is left alone
 * and reported), its keys, and the controller on the real runtime on both logs with the garbage
 * collector (a deleted claim comes back while its pod stands; the claim goes with its pod).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { Event, EventBody, PersistentVolumeClaim, Pod } from '../../schemas/index.ts';
import { createGarbageCollector } from '../garbage-collector/index.ts';
import { createTestCluster, LOG_ADAPTERS, startScenario, type Scenario, type TestCluster } from '../testing.ts';
import { createEphemeralVolumeController, decideEphemeralVolumes, ephemeralVolumeKeysFor } from './index.ts';

const clusters: TestCluster[] = [];
const scenarios: Scenario[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
  for (const scenario of scenarios.splice(0)) await scenario.close();
});

const NOW = Date.parse('2026-12-07T06:00:00Z');
const POD_KEY = 'Pod/default/app';
const claimKey = (name: string) => `PersistentVolumeClaim/default/${name}`;

const ephemeral = (name: string, labels?: Record<string, string>): NonNullable<Pod['spec']['volumes']>[number] => ({
  name,
  ephemeral: {
    volumeClaimTemplate: {
      ...(labels ? { metadata: { labels, annotations: { note: name } } } : {}),
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local-path', resources: { requests: { storage: '1Gi' } } },
    },
  },
});

const pod = (volumes: NonNullable<Pod['spec']['volumes']>, name = 'app'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'logplane/echo:1' }], volumes },
});

const claim = (name: string): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

const deleteBody = (kind: 'Pod' | 'PersistentVolumeClaim', name: string): EventBody => ({
  type: 'ObjectDeleted',
  kind,
  namespace: 'default',
  name,
  expectedResourceVersion: null,
  uid: null,
  propagationPolicy: null,
  gracePeriodSeconds: null,
});

const setup = (): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  return cluster;
};

const created = (commands: readonly EventBody[]) => commands.flatMap((c) => (c.type === 'ObjectCreated' ? [c.object] : []));

describe('the ephemeral volume controller decides', () => {
  it('creates <pod>-<volume> for each ephemeral volume, controlled by the pod, with the template labels, annotations and spec; then nothing', () => {
    const cluster = setup();
    const stored = cluster.create(pod([ephemeral('scratch', { tier: 'cache' }), { name: 'plain', emptyDir: {} }, ephemeral('data')]));
    const decision = decideEphemeralVolumes(POD_KEY, cluster.view(), { now: NOW });
    const claims = created(decision.commands) as PersistentVolumeClaim[];
    expect(claims.map((c) => c.metadata.name)).toEqual(['app-scratch', 'app-data']);
    expect(claims[0]).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'app-scratch',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'app', uid: stored.metadata.uid, controller: true, blockOwnerDeletion: true }],
        annotations: { note: 'scratch' },
        labels: { tier: 'cache' },
      },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local-path', resources: { requests: { storage: '1Gi' } } },
    });
    expect(claims[1]?.metadata.labels).toBeUndefined();
    expect(cluster.apply(...decision.commands).map((r) => r.verdict.type)).toEqual(['accepted', 'accepted']);
    expect(decideEphemeralVolumes(POD_KEY, cluster.view(), { now: NOW })).toEqual({ commands: [] });
  });

  it('gives a pod being deleted, or no pod, nothing', () => {
    const cluster = setup();
    cluster.create({ ...pod([ephemeral('data')]), metadata: { name: 'app', namespace: 'default', finalizers: ['example.com/hold'] } });
    cluster.apply(deleteBody('Pod', 'app'));
    expect(cluster.view().get(POD_KEY)?.metadata.deletionTimestamp).toBeDefined();
    expect(decideEphemeralVolumes(POD_KEY, cluster.view(), { now: NOW })).toEqual({ commands: [] });
    expect(decideEphemeralVolumes('Pod/default/none', cluster.view(), { now: NOW })).toEqual({ commands: [] });
  });

  it('never takes over a claim of that name the pod does not control: that volume and the later ones wait, and the pod gets FailedBinding', () => {
    const cluster = setup();
    cluster.create(claim('app-data'));
    cluster.create(pod([ephemeral('cache'), ephemeral('data'), ephemeral('logs')]));
    const decision = decideEphemeralVolumes(POD_KEY, cluster.view(), { now: NOW });
    const objects = created(decision.commands);
    expect(objects.filter((o) => o.kind === 'PersistentVolumeClaim').map((o) => o.metadata.name)).toEqual(['app-cache']);
    const events = objects.filter((o): o is Event => o.kind === 'Event');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'Warning',
      reason: 'FailedBinding',
      message: 'ephemeral volume data: PVC default/app-data was not created for pod default/app (pod is not owner)',
      involvedObject: { kind: 'Pod', name: 'app', namespace: 'default' },
      source: { component: 'ephemeral_volume' },
    });
    expect(cluster.apply(...decision.commands).map((r) => r.verdict.type)).toEqual(['accepted', 'accepted']);
    expect(cluster.view().get(claimKey('app-data'))?.metadata.ownerReferences).toBeUndefined();
    // Without Events (the bench's switch) the decision only waits.
    expect(decideEphemeralVolumes(POD_KEY, cluster.view(), { now: NOW, recordEvents: false })).toEqual({ commands: [] });
  });

  it('looks at a pod with ephemeral volumes on its changes, and at the pods a deleted claim was for', () => {
    const cluster = setup();
    const withVolume = cluster.create(pod([ephemeral('data')]));
    const without = cluster.create(pod([{ name: 'plain', emptyDir: {} }], 'other'));
    const change = (type: AppliedChange['type'], key: string, object: AppliedChange['object']): AppliedChange => ({ type, key, object, eventId: 'e' }) as AppliedChange;
    const view = cluster.view();
    expect(ephemeralVolumeKeysFor(change('ADDED', POD_KEY, withVolume), view)).toEqual([POD_KEY]);
    expect(ephemeralVolumeKeysFor(change('DELETED', POD_KEY, withVolume), view)).toEqual([]);
    expect(ephemeralVolumeKeysFor(change('ADDED', 'Pod/default/other', without), view)).toEqual([]);
    expect(ephemeralVolumeKeysFor(change('DELETED', claimKey('app-data'), claim('app-data')), view)).toEqual([POD_KEY]);
    expect(ephemeralVolumeKeysFor(change('MODIFIED', claimKey('app-data'), claim('app-data')), view)).toEqual([]);
    expect(ephemeralVolumeKeysFor(change('DELETED', claimKey('other-plain'), claim('other-plain')), view)).toEqual([]);
  });
});

describe.each(LOG_ADAPTERS)('the ephemeral volume controller on the $name log', (adapter) => {
  it('creates the claim, creates it again when deleted while the pod stands, and the garbage collector deletes it with the pod', async () => {
    const scenario = await startScenario({ adapter, nodes: [], controllers: [createEphemeralVolumeController(), createGarbageCollector()] });
    scenarios.push(scenario);
    const claimOf = () => scenario.projection.view().get(claimKey('app-data'));
    await scenario.apply({ type: 'ObjectCreated', object: pod([ephemeral('data')]) });
    await scenario.waitUntil('the claim app-data exists', () => claimOf() !== undefined);
    const podUid = scenario.projection.view().get(POD_KEY)?.metadata.uid;
    expect(claimOf()?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Pod', name: 'app', uid: podUid, controller: true });
    const first = claimOf()?.metadata.uid;

    await scenario.apply(deleteBody('PersistentVolumeClaim', 'app-data'));
    await scenario.waitUntil('the claim app-data was created again', () => claimOf() !== undefined && claimOf()?.metadata.uid !== first);

    await scenario.apply(deleteBody('Pod', 'app'));
    await scenario.waitUntil('the claim went with its pod', () => scenario.projection.view().get(POD_KEY) === undefined && claimOf() === undefined);
  });
});
