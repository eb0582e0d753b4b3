import { afterEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { ControllerRevision, EventBody, ObjectCreated, ObjectDeleted, PersistentVolumeClaim, Pod, StatefulSet, StatefulSetSpec } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, podTemplate, runningPodStatus, settle, type TestCluster } from '../testing.ts';
import { CONTROLLER_REVISION_HASH_LABEL, fnv32, fnv32a, hashControllerRevision, ownedRevisions, templateOfRevision } from '../history/index.ts';
import { createGarbageCollector } from '../garbage-collector/index.ts';
import { createStatefulSetController, decideStatefulSet, ordinalOf, statefulSetKeysFor } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const KEY = 'StatefulSet/default/web';
const NOW = Date.UTC(2030, 0, 1);
const controller = createStatefulSetController();

/** A StatefulSet `web` as the apiserver stores it (defaults applied), with a `data` claim template. */
const statefulSet = (spec: Partial<StatefulSetSpec> = {}): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    replicas: 3,
    serviceName: 'nginx',
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    revisionHistoryLimit: 10,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    selector: { matchLabels: { app: 'web' } },
    template: podTemplate('logplane/echo:1', { app: 'web' }),
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' } }],
    ...spec,
  },
});

const setup = (spec: Partial<StatefulSetSpec> = {}) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  const set = cluster.create(statefulSet(spec));
  return { cluster, set };
};

const created = (commands: readonly EventBody[]) => commands.filter((c): c is ObjectCreated => c.type === 'ObjectCreated').map((c) => c.object);
const deleted = (commands: readonly EventBody[]) => commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted').map((c) => `${c.kind}/${c.name}`);
const podsOf = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).sort((a, b) => ordinalOf(a) - ordinalOf(b));
const setOf = (view: View): StatefulSet => view.get(KEY) as StatefulSet;
const update = (cluster: TestCluster, change: (set: StatefulSet) => StatefulSet): void => {
  const set = setOf(cluster.view());
  const next = change(set);
  cluster.apply({ type: 'ObjectUpdated', object: { ...next, metadata: { ...next.metadata, generation: (set.metadata.generation ?? 1) + 1 } }, expectedResourceVersion: null, subresource: null });
};
const withImage = (image: string) => (set: StatefulSet): StatefulSet => ({ ...set, spec: { ...set.spec!, template: podTemplate(image, { app: 'web' }) } });
const imageOf = (pod: Pod): string | undefined => pod.spec.containers[0]?.image;
const run = (cluster: TestCluster, options: { readyPerRound?: number; check?: (view: View) => void } = {}): number =>
  settle(cluster, [controller], { now: NOW, node: 'n1', ...options });

/** OrderedReady's guarantee: pods exist for a prefix of the ordinals, and only the last of them may be not Running and Ready. */
const orderedReady = (view: View): void => {
  const pods = podsOf(view).filter((pod) => !pod.metadata.deletionTimestamp);
  pods.forEach((pod, i) => expect(ordinalOf(pod)).toBe(i));
  const notReady = pods.filter((pod) => !(pod.status?.phase === 'Running' && pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')));
  expect(notReady.length).toBeLessThanOrEqual(1);
  if (notReady[0]) expect(notReady[0]).toBe(pods.at(-1));
};

describe('statefulset decide', () => {
  it('creates the first revision, then web-0 alone, its claim first, with its identity and revision', () => {
    const { cluster, set } = setup();
    const { commands } = decideStatefulSet(KEY, cluster.view(), NOW);
    const objects = created(commands);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([expect.stringMatching(/^ControllerRevision\/web-[bcdfghjklmnpqrstvwxz2456789]+$/), 'PersistentVolumeClaim/data-web-0', 'Pod/web-0']);
    const [revision, claim, pod] = objects as [ControllerRevision, PersistentVolumeClaim, Pod];
    expect(revision.revision).toBe(1);
    expect(revision.metadata.labels).toEqual({ app: 'web', [CONTROLLER_REVISION_HASH_LABEL]: revision.metadata.name.slice('web-'.length) });
    expect(revision.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', name: 'web', uid: set.metadata.uid, controller: true })]);
    expect(templateOfRevision(revision)).toEqual(set.spec?.template);
    expect(claim.metadata.labels).toEqual({ app: 'web' });
    expect(claim.metadata.ownerReferences).toBeUndefined();
    expect(claim.spec?.resources?.requests).toEqual({ storage: '1Gi' });
    expect(pod.metadata.labels).toEqual({
      app: 'web',
      'statefulset.kubernetes.io/pod-name': 'web-0',
      'apps.kubernetes.io/pod-index': '0',
      [CONTROLLER_REVISION_HASH_LABEL]: revision.metadata.name,
    });
    expect(pod.spec.hostname).toBe('web-0');
    expect(pod.spec.subdomain).toBe('nginx');
    expect(pod.spec.volumes).toEqual([{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }]);
    expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid: set.metadata.uid, controller: true })]);
    const status = (commands.at(-1) as { object: StatefulSet }).object.status;
    expect(status).toEqual({ observedGeneration: 1, replicas: 0, availableReplicas: 0, currentRevision: revision.metadata.name, updateRevision: revision.metadata.name, collisionCount: 0 });
    // The same view decides the same commands (a retried round, another instance).
    expect(decideStatefulSet(KEY, cluster.view(), NOW)).toEqual({ commands });
  });

  it('OrderedReady: creates each pod only once the one before is Running and Ready, and reports status', () => {
    const { cluster } = setup();
    run(cluster, { readyPerRound: 1, check: orderedReady });
    const pods = podsOf(cluster.view());
    expect(pods.map((p) => p.metadata.name)).toEqual(['web-0', 'web-1', 'web-2']);
    expect((cluster.view().list('PersistentVolumeClaim', 'default') as PersistentVolumeClaim[]).map((c) => c.metadata.name).sort()).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
    const status = setOf(cluster.view()).status;
    expect(status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3, currentReplicas: 3, updatedReplicas: 3, observedGeneration: 1 });
    expect(status?.currentRevision).toBe(status?.updateRevision);
  });

  it('Parallel: creates every pod in one round; spec.ordinals.start shifts the names', () => {
    const { cluster } = setup({ podManagementPolicy: 'Parallel', ordinals: { start: 5 } });
    const pods = created(decideStatefulSet(KEY, cluster.view(), NOW).commands).filter((o) => o.kind === 'Pod');
    expect(pods.map((p) => p.metadata.name)).toEqual(['web-5', 'web-6', 'web-7']);
    expect((pods[1] as Pod).metadata.labels?.['apps.kubernetes.io/pod-index']).toBe('6');
  });

  it('scales down from the highest ordinal, one at a time, keeping the claims (Retain)', () => {
    const { cluster } = setup();
    run(cluster);
    update(cluster, (set) => ({ ...set, spec: { ...set.spec!, replicas: 1 } }));
    expect(deleted(decideStatefulSet(KEY, cluster.view(), NOW).commands)).toEqual(['Pod/web-2']);
    const order: string[] = [];
    run(cluster, { check: (view) => order.push(...podsOf(view).filter((p) => p.metadata.deletionTimestamp).map((p) => p.metadata.name)) });
    expect([...new Set(order)]).toEqual(['web-2', 'web-1']);
    expect(podsOf(cluster.view()).map((p) => p.metadata.name)).toEqual(['web-0']);
    expect(cluster.view().list('PersistentVolumeClaim', 'default')).toHaveLength(3);
  });

  it('whenScaled Delete: a scaled-down pod owns its claim (for the garbage collector); whenDeleted Delete: the set owns the others', () => {
    const { cluster, set } = setup({ persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' } });
    run(cluster);
    const claim = (name: string) => cluster.view().get(`PersistentVolumeClaim/default/${name}`) as PersistentVolumeClaim;
    expect(claim('data-web-2').metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid: set.metadata.uid, controller: true })]);
    update(cluster, (s) => ({ ...s, spec: { ...s.spec!, replicas: 2 } }));
    const web2 = cluster.view().get('Pod/default/web-2') as Pod;
    const { commands } = decideStatefulSet(KEY, cluster.view(), NOW);
    expect(deleted(commands)).toEqual(['Pod/web-2']);
    cluster.apply(...commands);
    expect(claim('data-web-2').metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Pod', name: 'web-2', uid: web2.metadata.uid, controller: true })]);
    expect(claim('data-web-1').metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid: set.metadata.uid })]);
  });

  it.each([
    { whenDeleted: 'Delete', claims: [] as string[] },
    { whenDeleted: 'Retain', claims: ['data-web-0', 'data-web-1', 'data-web-2'] },
  ])('whenDeleted $whenDeleted: deleting the set leaves claims $claims (with the garbage collector)', ({ whenDeleted, claims }) => {
    const { cluster, set } = setup({ persistentVolumeClaimRetentionPolicy: { whenDeleted, whenScaled: 'Retain' } });
    run(cluster);
    cluster.apply({ type: 'ObjectDeleted', kind: 'StatefulSet', namespace: 'default', name: 'web', expectedResourceVersion: null, uid: set.metadata.uid ?? null, propagationPolicy: 'Background', gracePeriodSeconds: null });
    settle(cluster, [controller, createGarbageCollector()], { now: NOW, node: 'n1' });
    expect(cluster.view().list('Pod', 'default')).toEqual([]);
    expect(cluster.view().list('PersistentVolumeClaim', 'default').map((c) => c.metadata.name).sort()).toEqual(claims);
  });

  it('rolls an image change from the highest ordinal down, each pod ready before the next, then makes the update revision current', () => {
    const { cluster } = setup();
    run(cluster);
    const first = setOf(cluster.view()).status?.currentRevision;
    update(cluster, withImage('logplane/echo:2'));
    const decision = decideStatefulSet(KEY, cluster.view(), NOW);
    const revision = created(decision.commands)[0] as ControllerRevision;
    expect(revision.revision).toBe(2);
    expect(deleted(decision.commands)).toEqual(['Pod/web-2']);
    const order: string[] = [];
    run(cluster, { readyPerRound: 1, check: (view) => order.push(...podsOf(view).filter((p) => p.metadata.deletionTimestamp).map((p) => p.metadata.name)) });
    expect([...new Set(order)]).toEqual(['web-2', 'web-1', 'web-0']);
    expect(podsOf(cluster.view()).map(imageOf)).toEqual(['logplane/echo:2', 'logplane/echo:2', 'logplane/echo:2']);
    const status = setOf(cluster.view()).status;
    expect(status?.updateRevision).toBe(revision.metadata.name);
    expect(status?.currentRevision).toBe(revision.metadata.name);
    expect(status?.currentRevision).not.toBe(first);
    expect(status).toMatchObject({ replicas: 3, currentReplicas: 3, updatedReplicas: 3, readyReplicas: 3 });
  });

  it('a partition of 2 updates only web-2; new pods below it get the current revision', () => {
    const { cluster } = setup({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    run(cluster);
    expect(podsOf(cluster.view()).map(imageOf)).toEqual(['logplane/echo:1', 'logplane/echo:1', 'logplane/echo:2']);
    const status = setOf(cluster.view()).status;
    expect(status).toMatchObject({ currentReplicas: 2, updatedReplicas: 1 });
    expect(status?.currentRevision).not.toBe(status?.updateRevision);
    // A deleted web-0 comes back at the current revision, web-2 would at the update revision.
    const web0 = cluster.view().get('Pod/default/web-0') as Pod;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: 'web-0', expectedResourceVersion: null, uid: web0.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: 0 });
    const recreated = created(decideStatefulSet(KEY, cluster.view(), NOW).commands).find((o) => o.kind === 'Pod') as Pod;
    expect(recreated.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL]).toBe(status?.currentRevision);
    expect(imageOf(recreated)).toBe('logplane/echo:1');
  });

  it('maxUnavailable 2 replaces two pods at once', () => {
    const { cluster } = setup({ podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0, maxUnavailable: 2 } } });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    expect(deleted(decideStatefulSet(KEY, cluster.view(), NOW).commands)).toEqual(['Pod/web-2', 'Pod/web-1']);
  });

  it('OnDelete: a template change replaces nothing; a deleted pod comes back at the update revision', () => {
    const { cluster } = setup({ updateStrategy: { type: 'OnDelete' } });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    run(cluster);
    expect(podsOf(cluster.view()).map(imageOf)).toEqual(['logplane/echo:1', 'logplane/echo:1', 'logplane/echo:1']);
    const web1 = cluster.view().get('Pod/default/web-1') as Pod;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: 'web-1', expectedResourceVersion: null, uid: web1.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: 0 });
    run(cluster);
    expect(podsOf(cluster.view()).map(imageOf)).toEqual(['logplane/echo:1', 'logplane/echo:2', 'logplane/echo:1']);
    expect(setOf(cluster.view()).status).toMatchObject({ currentReplicas: 2, updatedReplicas: 1 });
  });

  it('replaces a failed pod under the same name', () => {
    const { cluster } = setup();
    run(cluster);
    cluster.podStatus('web-1', { phase: 'Failed', reason: 'Error' });
    const failed = cluster.view().get('Pod/default/web-1') as Pod;
    expect(deleted(decideStatefulSet(KEY, cluster.view(), NOW).commands)).toEqual(['Pod/web-1']);
    run(cluster);
    const web1 = cluster.view().get('Pod/default/web-1') as Pod;
    expect(web1.metadata.uid).not.toBe(failed.metadata.uid);
    expect(web1.status?.phase).toBe('Running');
  });

  it('a rollback to an earlier template renumbers its revision instead of making a new one; old revisions go beyond the limit', () => {
    const { cluster } = setup({ revisionHistoryLimit: 1 });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    run(cluster);
    update(cluster, withImage('logplane/echo:1'));
    run(cluster);
    const revisions = ownedRevisions(setOf(cluster.view()), cluster.view());
    expect(revisions.map((r) => [r.revision, templateOfRevision(r)?.spec.containers[0]?.image])).toEqual([
      [2, 'logplane/echo:2'],
      [3, 'logplane/echo:1'],
    ]);
    update(cluster, withImage('logplane/echo:3'));
    run(cluster);
    expect(ownedRevisions(setOf(cluster.view()), cluster.view()).map((r) => r.revision)).toEqual([3, 4]);
  });

  it('adopts an orphan member pod matching the selector, and restores its identity labels', () => {
    const { cluster, set } = setup({ replicas: 1 });
    cluster.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'x' }] } });
    const adoption = decideStatefulSet(KEY, cluster.view(), NOW);
    expect(adoption.commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    cluster.apply(...adoption.commands);
    const pod = cluster.view().get('Pod/default/web-0') as Pod;
    expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: set.metadata.uid, controller: true })]);
    cluster.podStatus('web-0', runningPodStatus(true, NOW - 1000));
    run(cluster);
    expect((cluster.view().get('Pod/default/web-0') as Pod).metadata.labels).toMatchObject({ 'statefulset.kubernetes.io/pod-name': 'web-0', 'apps.kubernetes.io/pod-index': '0' });
  });

  it('maps pods, claims and revisions to their set', () => {
    const { cluster } = setup();
    run(cluster);
    const view = cluster.view();
    const change = (object: Pod | PersistentVolumeClaim | ControllerRevision) => ({ type: 'MODIFIED' as const, key: `${object.kind}/default/${object.metadata.name}`, eventId: 'e', object, topic: 'desired' as const, partition: 0, offset: 0 });
    expect(statefulSetKeysFor(change(view.get('Pod/default/web-1') as Pod), view)).toEqual([KEY]);
    const revision = ownedRevisions(setOf(view), view)[0] as ControllerRevision;
    expect(statefulSetKeysFor(change(revision), view)).toEqual([KEY]);
  });
});

describe('controller revision hashing', () => {
  it('uses FNV-1 and FNV-1a as Go does', () => {
    expect(fnv32(Buffer.from('a'))).toBe(0x050c5d7e);
    expect(fnv32a(Buffer.from('a'))).toBe(0xe40c292c);
  });
  it('is stable for the same data, and differs with the collision count', () => {
    const data = { spec: { template: { metadata: { labels: { app: 'web' } }, $patch: 'replace' } } };
    expect(hashControllerRevision(data, 0)).toBe(hashControllerRevision(structuredClone(data), 0));
    expect(hashControllerRevision(data, 0)).not.toBe(hashControllerRevision(data, 1));
    expect(hashControllerRevision(data, 0)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
  });
});
