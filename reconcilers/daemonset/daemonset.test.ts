import { afterEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { ControllerRevision, DaemonSet, DaemonSetSpec, EventBody, Node, ObjectCreated, ObjectDeleted, Pod, Taint } from '../../schemas/index.ts';
import { CONTROLLER_REVISION_HASH_LABEL, ownedRevisions, templateOfRevision } from '../history/index.ts';
import { deleteCommand } from '../replicaset/objects.ts';
import { isPodReady } from '../replicaset/pods.ts';
import { createTestCluster, nodeObject, podTemplate, runningPodStatus, type TestCluster } from '../testing.ts';
import { createDaemonSetController, daemonSetKeysFor, decideDaemonSet, DEFAULT_DAEMON_TOLERATIONS, targetNodeName } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const KEY = 'DaemonSet/default/agent';
const NOW = Date.UTC(2030, 0, 1);
const controller = createDaemonSetController();

/** A DaemonSet `agent` as the apiserver stores it (defaults applied). */
const daemonSet = (spec: Partial<DaemonSetSpec> = {}): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: podTemplate('logplane/echo:1', { app: 'agent' }),
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    revisionHistoryLimit: 10,
    ...spec,
  },
});

const node = (name: string, change: { labels?: Record<string, string>; taints?: Taint[]; ready?: boolean } = {}): Node => {
  const base = nodeObject(name);
  return {
    ...base,
    metadata: { ...base.metadata, labels: { ...base.metadata.labels, ...change.labels } },
    ...(change.taints ? { spec: { taints: change.taints } } : {}),
    status: { ...base.status, conditions: [{ type: 'Ready', status: change.ready === false ? 'False' : 'True' }] },
  };
};

const setup = (spec: Partial<DaemonSetSpec> = {}, nodes: readonly Node[] = [node('n1'), node('n2'), node('n3')]) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  for (const n of nodes) cluster.create(n);
  const ds = cluster.create(daemonSet(spec));
  return { cluster, ds };
};

const createdPods = (commands: readonly EventBody[]): Pod[] =>
  commands.filter((c): c is ObjectCreated => c.type === 'ObjectCreated' && c.object.kind === 'Pod').map((c) => c.object as Pod);
const deletedPods = (commands: readonly EventBody[]): string[] =>
  commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted' && c.kind === 'Pod').map((c) => c.name);
const livePods = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => !pod.metadata.deletionTimestamp);
const podNodes = (view: View): string[] => livePods(view).map((pod) => targetNodeName(pod) ?? '?').sort();
const dsOf = (view: View): DaemonSet => view.get(KEY) as DaemonSet;
const imageOf = (pod: Pod): string | undefined => pod.spec.containers[0]?.image;
const update = (cluster: TestCluster, change: (ds: DaemonSet) => DaemonSet): void => {
  const ds = dsOf(cluster.view());
  const next = change(ds);
  cluster.apply({ type: 'ObjectUpdated', object: { ...next, metadata: { ...next.metadata, generation: (ds.metadata.generation ?? 1) + 1 } }, expectedResourceVersion: null, subresource: null });
};
const withImage = (image: string) => (ds: DaemonSet): DaemonSet => ({ ...ds, spec: { ...ds.spec!, template: podTemplate(image, { app: 'agent' }) } });
const replaceNode = (cluster: TestCluster, next: Node): void => {
  const current = cluster.view().get(`Node//${next.metadata.name}`) as Node;
  cluster.apply({ type: 'ObjectUpdated', object: { ...current, metadata: { ...current.metadata, labels: next.metadata.labels }, spec: next.spec ?? {} }, expectedResourceVersion: null, subresource: null });
};

/**
 * Runs the controller and a node agent standing in for the scheduler and kubelets until
 * nothing changes: a pod is bound to the node its affinity names, reported Running, then
 * Ready (at most `readyPerRound` a round); a terminating pod is removed.
 */
const run = (cluster: TestCluster, options: { readyPerRound?: number; check?: (view: View) => void; now?: number } = {}): void => {
  const now = options.now ?? NOW;
  const fold = (commands: readonly EventBody[]): boolean => {
    for (const command of commands) {
      cluster.apply(command);
      options.check?.(cluster.view());
    }
    return commands.length > 0;
  };
  for (let round = 0; round < 200; round++) {
    let changed = false;
    for (const key of controller.initialKeys(cluster.view())) changed = fold(decideDaemonSet(key, cluster.view(), now).commands) || changed;
    const view = cluster.view();
    const agent: EventBody[] = [];
    for (const pod of view.unscheduledPods()) {
      const target = targetNodeName(pod);
      if (pod.metadata.deletionTimestamp || !target || !view.get(`Node//${target}`)) continue;
      agent.push({ type: 'PodBound', namespace: 'default', name: pod.metadata.name, node: target, expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } });
    }
    let readied = 0;
    for (const n of view.list('Node') as Node[]) {
      for (const pod of view.podsOnNode(n.metadata.name)) {
        const report = (ready: boolean): EventBody => ({ type: 'PodStatusChanged', namespace: 'default', name: pod.metadata.name, uid: pod.metadata.uid ?? null, status: runningPodStatus(ready, now) });
        if (pod.metadata.deletionTimestamp) agent.push({ ...deleteCommand(pod), gracePeriodSeconds: 0 });
        else if (pod.status?.phase === 'Pending') agent.push(report(false));
        else if (pod.status?.phase === 'Running' && !isPodReady(pod) && readied < (options.readyPerRound ?? Infinity)) {
          readied += 1;
          agent.push(report(true));
        }
      }
    }
    changed = fold(agent) || changed;
    if (!changed) return;
  }
  throw new Error('the DaemonSet did not settle in 200 rounds');
};

describe('daemonset decide', () => {
  it('creates one pod per node, unscheduled, with the node-name affinity, the default tolerations and the revision hash', () => {
    const { cluster, ds } = setup();
    const { commands } = decideDaemonSet(KEY, cluster.view(), NOW);
    const revision = (commands[0] as ObjectCreated).object as ControllerRevision;
    expect(revision.kind).toBe('ControllerRevision');
    expect(revision.revision).toBe(1);
    const hash = revision.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
    expect(revision.metadata.name).toBe(`agent-${hash}`);
    expect(templateOfRevision(revision)).toEqual(ds.spec?.template);
    const pods = createdPods(commands);
    expect(pods.map(targetNodeName)).toEqual(['n1', 'n2', 'n3']);
    for (const pod of pods) {
      expect(pod.metadata.name).toMatch(/^agent-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(pod.spec.nodeName).toBeUndefined();
      expect(pod.metadata.labels).toEqual({ app: 'agent', [CONTROLLER_REVISION_HASH_LABEL]: hash });
      expect(pod.spec.tolerations).toEqual(DEFAULT_DAEMON_TOLERATIONS);
      expect(pod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'DaemonSet', uid: ds.metadata.uid, controller: true })]);
    }
    expect(pods[1]?.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toEqual({
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }],
    });
    expect(decideDaemonSet(KEY, cluster.view(), NOW)).toEqual({ commands });
    run(cluster);
    expect(podNodes(cluster.view())).toEqual(['n1', 'n2', 'n3']);
    expect(dsOf(cluster.view()).status).toEqual({
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      desiredNumberScheduled: 3,
      numberReady: 3,
      numberAvailable: 3,
      updatedNumberScheduled: 3,
      observedGeneration: 1,
    });
  });

  it('runs only on nodes matching the node selector and required affinity, and tolerating the taints', () => {
    const nodes = [
      node('n1', { labels: { disk: 'ssd' } }),
      node('n2', { labels: { disk: 'ssd' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      node('n3', { labels: { disk: 'hdd' } }),
      node('n4', { labels: { disk: 'ssd' }, ready: false }),
      node('n5', { labels: { disk: 'ssd' }, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }] }),
    ];
    const template = podTemplate('logplane/echo:1', { app: 'agent' });
    const { cluster } = setup({ template: { ...template, spec: { ...template.spec, nodeSelector: { disk: 'ssd' } } } }, nodes);
    run(cluster);
    expect(podNodes(cluster.view())).toEqual(['n1', 'n5']);
    expect(dsOf(cluster.view()).status).toMatchObject({ desiredNumberScheduled: 2, currentNumberScheduled: 2, numberMisscheduled: 0 });

    const tolerating = { ...template, spec: { ...template.spec, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } };
    update(cluster, (ds) => ({ ...ds, spec: { ...ds.spec!, template: tolerating } }));
    run(cluster);
    expect(podNodes(cluster.view())).toEqual(['n1', 'n2', 'n3', 'n5']);
  });

  it('keeps a pod on a node newly tainted NoSchedule (misscheduled), removes it for an untolerated NoExecute taint', () => {
    const { cluster } = setup();
    run(cluster);
    replaceNode(cluster, node('n2', { taints: [{ key: 'maintenance', effect: 'NoSchedule' }] }));
    run(cluster);
    expect(podNodes(cluster.view())).toEqual(['n1', 'n2', 'n3']);
    expect(dsOf(cluster.view()).status).toMatchObject({ desiredNumberScheduled: 2, numberMisscheduled: 1 });
    replaceNode(cluster, node('n2', { taints: [{ key: 'maintenance', effect: 'NoExecute' }] }));
    const { commands } = decideDaemonSet(KEY, cluster.view(), NOW);
    expect(deletedPods(commands)).toHaveLength(1);
    run(cluster);
    expect(podNodes(cluster.view())).toEqual(['n1', 'n3']);
  });

  it('adds a pod for a node added, and drops the unscheduled pod of a node that is gone', () => {
    const { cluster } = setup();
    run(cluster);
    cluster.create(node('n4'));
    expect(daemonSetKeysFor({ type: 'ADDED', key: 'Node//n4', eventId: 'e', object: cluster.view().get('Node//n4') as Node, topic: 'desired', partition: 0, offset: 0 }, cluster.view())).toEqual([KEY]);
    const pods = createdPods(decideDaemonSet(KEY, cluster.view(), NOW).commands);
    expect(pods.map(targetNodeName)).toEqual(['n4']);
    cluster.apply(...decideDaemonSet(KEY, cluster.view(), NOW).commands);
    const n4 = cluster.view().get('Node//n4') as Node;
    cluster.apply(deleteCommand(n4));
    expect(deletedPods(decideDaemonSet(KEY, cluster.view(), NOW).commands)).toEqual([pods[0]?.metadata.name]);
  });

  it('replaces a failed pod', () => {
    const { cluster } = setup();
    run(cluster);
    const victim = livePods(cluster.view())[0] as Pod;
    cluster.podStatus(victim.metadata.name, { phase: 'Failed' });
    expect(deletedPods(decideDaemonSet(KEY, cluster.view(), NOW).commands)).toEqual([victim.metadata.name]);
    run(cluster);
    expect(podNodes(cluster.view())).toEqual(['n1', 'n2', 'n3']);
    expect(livePods(cluster.view()).map((p) => p.metadata.uid)).not.toContain(victim.metadata.uid);
  });

  it('rolls an image change one node at a time with maxUnavailable 1', () => {
    const { cluster } = setup();
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    const { commands } = decideDaemonSet(KEY, cluster.view(), NOW);
    expect(deletedPods(commands)).toHaveLength(1);
    expect(createdPods(commands)).toEqual([]);
    const unavailableNodes = (view: View): number => 3 - livePods(view).filter((pod) => isPodReady(pod)).length;
    let worst = 0;
    run(cluster, { readyPerRound: 1, check: (view) => (worst = Math.max(worst, unavailableNodes(view))) });
    expect(worst).toBe(1);
    expect(livePods(cluster.view()).map(imageOf)).toEqual(['logplane/echo:2', 'logplane/echo:2', 'logplane/echo:2']);
    expect(dsOf(cluster.view()).status).toMatchObject({ updatedNumberScheduled: 3, numberAvailable: 3, observedGeneration: 2 });
    expect(ownedRevisions(dsOf(cluster.view()), cluster.view()).map((r) => r.revision)).toEqual([1, 2]);
  });

  it('with maxSurge 1 starts the new pod next to the old one and removes the old once the new is available', () => {
    const { cluster } = setup({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    const { commands } = decideDaemonSet(KEY, cluster.view(), NOW);
    expect(deletedPods(commands)).toEqual([]);
    expect(createdPods(commands)).toHaveLength(1);
    let fewestReady = 3;
    run(cluster, { readyPerRound: 1, check: (view) => (fewestReady = Math.min(fewestReady, new Set(livePods(view).filter(isPodReady).map(targetNodeName)).size)) });
    expect(fewestReady).toBe(3);
    expect(livePods(cluster.view()).map(imageOf)).toEqual(['logplane/echo:2', 'logplane/echo:2', 'logplane/echo:2']);
  });

  it('OnDelete: replaces nothing on a template change; a deleted pod comes back with the new template', () => {
    const { cluster } = setup({ updateStrategy: { type: 'OnDelete' } });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    run(cluster);
    expect(livePods(cluster.view()).map(imageOf)).toEqual(['logplane/echo:1', 'logplane/echo:1', 'logplane/echo:1']);
    const victim = livePods(cluster.view()).find((pod) => targetNodeName(pod) === 'n2') as Pod;
    cluster.apply({ ...deleteCommand(victim), gracePeriodSeconds: 0 });
    run(cluster);
    const byNode = new Map(livePods(cluster.view()).map((pod) => [targetNodeName(pod), imageOf(pod)]));
    expect([...byNode].sort()).toEqual([['n1', 'logplane/echo:1'], ['n2', 'logplane/echo:2'], ['n3', 'logplane/echo:1']]);
    expect(dsOf(cluster.view()).status).toMatchObject({ updatedNumberScheduled: 1 });
  });

  it('a rollback renumbers the earlier revision; unused revisions beyond the limit go', () => {
    const { cluster } = setup({ revisionHistoryLimit: 1 });
    run(cluster);
    update(cluster, withImage('logplane/echo:2'));
    run(cluster);
    update(cluster, withImage('logplane/echo:1'));
    run(cluster);
    const revisions = () => ownedRevisions(dsOf(cluster.view()), cluster.view()).map((r) => [r.revision, templateOfRevision(r)?.spec.containers[0]?.image]);
    expect(revisions()).toEqual([
      [2, 'logplane/echo:2'],
      [3, 'logplane/echo:1'],
    ]);
    update(cluster, withImage('logplane/echo:3'));
    run(cluster);
    expect(revisions()).toEqual([
      [3, 'logplane/echo:1'],
      [4, 'logplane/echo:3'],
    ]);
  });

  it('a template toleration matching a default one loses its tolerationSeconds; others are kept', () => {
    const template = podTemplate('logplane/echo:1', { app: 'agent' });
    const own = [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' },
    ];
    const { cluster } = setup({ template: { ...template, spec: { ...template.spec, tolerations: own } } });
    const [pod] = createdPods(decideDaemonSet(KEY, cluster.view(), NOW).commands);
    expect(pod?.spec.tolerations).toEqual([DEFAULT_DAEMON_TOLERATIONS[0], own[1], ...DEFAULT_DAEMON_TOLERATIONS.slice(1)]);
  });

  it('a hostNetwork pod also tolerates network-unavailable', () => {
    const template = podTemplate('logplane/echo:1', { app: 'agent' });
    const { cluster } = setup({ template: { ...template, spec: { ...template.spec, hostNetwork: true } } });
    const [pod] = createdPods(decideDaemonSet(KEY, cluster.view(), NOW).commands);
    expect(pod?.spec.tolerations?.map((t) => t.key)).toContain('node.kubernetes.io/network-unavailable');
  });
});
