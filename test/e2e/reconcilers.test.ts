/**
 * Issue 4's acceptance on both logs, with the real controllers (`startCluster`) and real
 * node agents in `sim` runtime: Deployments (scale, rolling update, rollback), the
 * scheduler's constraints, node failure, cascading deletion; and, on Kafka with 3
 * partitions, scheduler and replicaset consumer groups in separate processes surviving
 * the SIGKILL of the scheduler that owns the scheduling partition.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { rollbackTemplate } from '../../cli/verbs/rollout.ts';
import { createKafkaLog } from '../../log/kafka/index.ts';
import { partitionOfKey } from '../../log/partitioner.ts';
import type { EventLog } from '../../log/port.ts';
import { startNodeAgent, type NodeAgent } from '../../node-agent/agent.ts';
import { addUsage, createProjection, nodeAllocatable, podUsage, type Projection, type View } from '../../projections/index.ts';
import { REVISION_ANNOTATION, rollingBounds } from '../../reconcilers/deployment/index.ts';
import { UNREACHABLE_TAINT } from '../../reconcilers/node-lifecycle/index.ts';
import { isPodReady } from '../../reconcilers/replicaset/pods.ts';
import { ADMIN, appendAndApply } from '../../reconcilers/testing.ts';
import type { Deployment, Node, Pod, ReplicaSet } from '../../schemas/index.ts';
import {
  allAppPods,
  appPods,
  deploymentManifest,
  imageOf,
  isRunningReady,
  pollUntil,
  scheduledCondition,
  spawnControllers,
  startE2ECluster,
  uniqueClusterName,
  waitUntil,
  type ControllerProcess,
  type E2ECluster,
  type LogCase,
} from './reconciler-helpers.ts';
import { kafkaBrokers } from '../kafka-env.ts';

const LOGS: readonly LogCase[] = [
  { name: 'embedded', partitions: 1 },
  { name: 'kafka', partitions: 3 },
];

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const MERGE_PATCH = 'application/merge-patch+json';

const replicaSetsOf = (view: View, app: string): ReplicaSet[] =>
  (view.list('ReplicaSet', 'default') as ReplicaSet[]).filter((rs) => rs.metadata.labels?.['app'] === app);

/** Nodes whose bound, unfinished pods request more cpu or memory than they offer, or are more pods than allowed. */
const overcommittedNodes = (view: View): string[] => {
  const problems: string[] = [];
  for (const node of view.list('Node') as Node[]) {
    const pods = view.podsOnNode(node.metadata.name).filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const requested = pods.reduce((sum, pod) => addUsage(sum, podUsage(pod)), { cpuMilli: 0, memoryBytes: 0, pods: 0 });
    const allocatable = nodeAllocatable(node);
    if (requested.cpuMilli > allocatable.cpuMilli || requested.memoryBytes > allocatable.memoryBytes || requested.pods > allocatable.pods) {
      problems.push(`${node.metadata.name}: ${JSON.stringify(requested)} requested of ${JSON.stringify(allocatable)}`);
    }
  }
  return problems;
};

describe.each(LOGS)('reconcilers end to end on the $name log ($partitions partition(s))', (logCase) => {
  let cluster: E2ECluster | undefined;
  const start = async (options: { nodeGracePeriodMs?: number; tolerationSeconds?: number } = {}): Promise<E2ECluster> => {
    cluster = await startE2ECluster({ log: logCase, cluster: uniqueClusterName('e2e-rec'), ...options });
    return cluster;
  };
  afterEach(async () => {
    await cluster?.close();
    cluster = undefined;
  });

  const deployment = (c: E2ECluster, name: string): Deployment => c.projection.view().get(`Deployment/default/${name}`) as Deployment;

  /** `replicas` pods of `app` run `image`, bound, Running and Ready, and the Deployment's status says so. */
  const rolledOut = (view: View, app: string, image: string, replicas: number): boolean => {
    const pods = appPods(view, app);
    const d = view.get(`Deployment/default/${app}`) as Deployment | undefined;
    return (
      pods.length === replicas &&
      allAppPods(view, app).length === replicas &&
      pods.every((pod) => imageOf(pod) === image && isRunningReady(pod)) &&
      d !== undefined &&
      (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) &&
      d.status?.updatedReplicas === replicas &&
      d.status?.availableReplicas === replicas &&
      d.status?.replicas === replicas
    );
  };

  it('runs a Deployment on fitting nodes, scales it, rolls it out and back', async () => {
    const c = await start();
    await c.startNodes(['node-1', 'node-2', 'node-3']);
    // A node too small for any of the pods: nothing may land there.
    await c.startNodes(['node-tiny'], { capacity: { cpu: '50m', memory: '8Gi', pods: '110' } });
    const fitting = ['node-1', 'node-2', 'node-3'];

    await c.api.request('POST', DEPLOYMENTS, { body: deploymentManifest('web', 5, 'app:A') });
    await c.waitUntil('5 pods run app:A', (view) => rolledOut(view, 'web', 'app:A', 5));
    const placement = appPods(c.projection.view(), 'web').map((pod) => pod.spec.nodeName ?? '');
    expect(placement.every((node) => fitting.includes(node))).toBe(true);
    // LeastAllocated spreads 5 equal pods over 3 equal nodes 2/2/1.
    expect(new Set(placement).size).toBe(3);

    await c.api.request('PATCH', `${DEPLOYMENTS}/web`, { body: { spec: { replicas: 10 } }, contentType: MERGE_PATCH });
    await c.waitUntil('10 pods run', (view) => rolledOut(view, 'web', 'app:A', 10));
    await c.api.request('PATCH', `${DEPLOYMENTS}/web`, { body: { spec: { replicas: 2 } }, contentType: MERGE_PATCH });
    await c.waitUntil('2 pods run', (view) => rolledOut(view, 'web', 'app:A', 2));
    await c.api.request('PATCH', `${DEPLOYMENTS}/web`, { body: { spec: { replicas: 5 } }, contentType: MERGE_PATCH });
    await c.waitUntil('5 pods run again', (view) => rolledOut(view, 'web', 'app:A', 5));
    expect(appPods(c.projection.view(), 'web').every((pod) => fitting.includes(pod.spec.nodeName ?? ''))).toBe(true);
    expect(overcommittedNodes(c.projection.view())).toEqual([]);

    // Rolling update A → B: the ready count never drops below replicas − maxUnavailable.
    const { maxUnavailable } = rollingBounds(deployment(c, 'web'));
    const readyCount = (): number => appPods(c.projection.view(), 'web').filter((p) => isPodReady(p) && p.status?.phase === 'Running').length;
    let lowest = readyCount();
    const watch = c.projection.cursor$.subscribe(() => {
      lowest = Math.min(lowest, readyCount());
    });
    try {
      const template = deployment(c, 'web').spec.template;
      const containers = template.spec.containers.map((container) => ({ ...container, image: 'app:B' }));
      await c.api.request('PATCH', `${DEPLOYMENTS}/web`, { body: { spec: { template: { spec: { containers } } } }, contentType: MERGE_PATCH });
      await c.waitUntil('every pod runs app:B', (view) => rolledOut(view, 'web', 'app:B', 5));
    } finally {
      watch.unsubscribe();
    }
    expect(maxUnavailable).toBe(1);
    expect(lowest).toBeGreaterThanOrEqual(5 - maxUnavailable);
    const afterUpdate = replicaSetsOf(c.projection.view(), 'web');
    expect(afterUpdate.map((rs) => [rs.metadata.annotations?.[REVISION_ANNOTATION], rs.spec.replicas]).sort()).toEqual([['1', 0], ['2', 5]]);

    // Rollback (what `logplane rollout undo` does): the old template, and its ReplicaSet, come back.
    const undo = rollbackTemplate(deployment(c, 'web'), afterUpdate);
    if (undo.type !== 'rollback') throw new Error(`expected a rollback plan, got ${JSON.stringify(undo)}`);
    expect(undo.revision).toBe(1);
    const current = deployment(c, 'web');
    await c.api.request('PUT', `${DEPLOYMENTS}/web`, { body: { ...current, spec: { ...current.spec, template: undo.template } } });
    await c.waitUntil('every pod runs app:A again', (view) => rolledOut(view, 'web', 'app:A', 5));
    const afterRollback = replicaSetsOf(c.projection.view(), 'web');
    expect(afterRollback.map((rs) => rs.metadata.uid).sort()).toEqual(afterUpdate.map((rs) => rs.metadata.uid).sort());
    const reused = afterRollback.find((rs) => rs.spec.template?.spec.containers[0]?.image === 'app:A');
    expect(reused?.spec.replicas).toBe(5);
    expect(reused?.metadata.annotations?.[REVISION_ANNOTATION]).toBe('3');
    expect(deployment(c, 'web').spec.template.spec.containers[0]?.image).toBe('app:A');
  }, 90_000);

  it('two tied replicas on two large empty nodes go to different nodes', async () => {
    const c = await start();
    await c.startNodes(['node-1', 'node-2'], { capacity: { cpu: '64', memory: '256Gi', pods: '110' } });
    await c.api.request('POST', DEPLOYMENTS, { body: deploymentManifest('pair', 2, 'app:A') });
    await c.waitUntil('2 pods run', (view) => rolledOut(view, 'pair', 'app:A', 2));
    expect(new Set(appPods(c.projection.view(), 'pair').map((pod) => pod.spec.nodeName))).toEqual(new Set(['node-1', 'node-2']));
  });

  it('honours nodeSelector, taints, resource fit and anti-affinity; binds a waiting pod once a fitting node registers', async () => {
    const c = await start();
    const std = { capacity: { cpu: '1', memory: '2Gi', pods: '20' }, labels: { tier: 'std' } };
    await c.startNodes(['std-1', 'std-2'], std);
    await c.startNodes(['gpu-1'], { labels: { accelerator: 'gpu' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    const gpuToleration = { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' };
    const create = (d: Deployment) => c.api.request('POST', DEPLOYMENTS, { body: d });
    const runningOn = (view: View, app: string): string[] => appPods(view, app).filter(isRunningReady).map((p) => p.spec.nodeName ?? '');
    const pending = (view: View, app: string): Pod[] => appPods(view, app).filter((p) => !p.spec.nodeName);
    const waitingWith = (app: string, message: string) =>
      c.waitUntil(`a pod of ${app} is unschedulable with "${message}"`, (view) => {
        const [pod] = pending(view, app);
        const condition = scheduledCondition(pod);
        return condition?.status === 'False' && condition.reason === 'Unschedulable' && condition.message === message;
      });

    // nodeSelector + toleration: only the tainted gpu node fits, and these pods tolerate it.
    await create(deploymentManifest('trainer', 2, 'train:1', { spec: { nodeSelector: { accelerator: 'gpu' }, tolerations: [gpuToleration] } }));
    await c.waitUntil('trainer runs on gpu-1', (view) => runningOn(view, 'trainer').join() === 'gpu-1,gpu-1');
    // Taint: 4 × 250m without the toleration fill the standard nodes, 2 each (LeastAllocated), never gpu-1.
    await create(deploymentManifest('web', 4, 'web:1', { cpu: '250m' }));
    await c.waitUntil('web runs on std-1 and std-2', (view) => runningOn(view, 'web').sort().join() === 'std-1,std-1,std-2,std-2');
    // Required anti-affinity on the hostname: one per node; the third has no node left.
    const antiAffinity = {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'spread' } }, topologyKey: 'kubernetes.io/hostname' }] },
    };
    await create(deploymentManifest('spread', 3, 'spread:1', { spec: { affinity: antiAffinity } }));
    await waitingWith('spread', "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..");
    await c.waitUntil('two spread pods run, on std-1 and std-2', (view) => runningOn(view, 'spread').sort().join() === 'std-1,std-2');
    // Resource fit: 600m does not fit in the 400m the standard nodes have left.
    await create(deploymentManifest('hungry', 1, 'hungry:1', { cpu: '600m' }));
    await waitingWith('hungry', '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..');
    // nodeSelector that no node matches.
    await create(deploymentManifest('picky', 1, 'picky:1', { spec: { nodeSelector: { accelerator: 'tpu' } } }));
    await waitingWith('picky', "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..");

    // A new standard node takes the third spread pod and the hungry one (100m + 600m of 1 cpu).
    await c.startNodes(['std-3'], std);
    await c.waitUntil('spread and hungry run on std-3', (view) => runningOn(view, 'spread').length === 3 && runningOn(view, 'hungry').join() === 'std-3');
    expect(runningOn(c.projection.view(), 'spread').sort()).toEqual(['std-1', 'std-2', 'std-3']);
    await waitingWith('picky', "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling..");
    // A node with the selected label takes the picky pod.
    await c.startNodes(['tpu-1'], { labels: { accelerator: 'tpu' } });
    await c.waitUntil('picky runs on tpu-1', (view) => runningOn(view, 'picky').join() === 'tpu-1');

    const view = c.projection.view();
    expect(view.podsOnNode('gpu-1').map((p) => p.metadata.labels?.['app'])).toEqual(['trainer', 'trainer']);
    expect(overcommittedNodes(view)).toEqual([]);
    for (const pod of view.list('Pod') as Pod[]) {
      expect(isRunningReady(pod), pod.metadata.name).toBe(true);
      expect(scheduledCondition(pod)?.status).toBe('True');
    }
  }, 60_000);

  it('moves the pods of a node whose heartbeats stop to other nodes after grace + toleration', async () => {
    const graceMs = 2_000;
    const tolerationSeconds = 2;
    const c = await start({ nodeGracePeriodMs: graceMs, tolerationSeconds });
    const lost = await c.startNodes(['node-1']);
    await c.startNodes(['node-2']);
    await c.startNodes(['node-3']);
    await c.api.request('POST', DEPLOYMENTS, { body: deploymentManifest('web', 6, 'app:A') });
    await c.waitUntil('6 pods run', (view) => rolledOut(view, 'web', 'app:A', 6));
    const stranded = c.projection.view().podsOnNode('node-1').map((p) => p.metadata.uid);
    expect(stranded).toHaveLength(2);

    const silentSince = Date.now();
    await lost.close({ stopPods: false });
    await c.waitUntil('node-1 is Ready=Unknown and tainted unreachable', (view) => {
      const node = view.get('Node//node-1') as Node;
      return (
        node.status?.conditions?.find((cond) => cond.type === 'Ready')?.status === 'Unknown' &&
        (node.spec?.taints ?? []).some((t) => t.key === UNREACHABLE_TAINT && t.effect === 'NoExecute')
      );
    }, 20_000);
    await c.waitUntil('6 pods run on node-2 and node-3', (view) => {
      const pods = appPods(view, 'web');
      return pods.length === 6 && pods.every((p) => isRunningReady(p) && p.spec.nodeName !== 'node-1') && view.podsOnNode('node-1').length === 0;
    }, 30_000);
    const movedAfterMs = Date.now() - silentSince;
    // The last heartbeat may have come up to one period (300 ms) before the agent closed, and
    // the taint's timeAdded has whole-second precision (as in Kubernetes), so eviction may
    // come up to 1 s before timeAdded + toleration.
    expect(movedAfterMs).toBeGreaterThanOrEqual(graceMs + tolerationSeconds * 1000 - 300 - 1000);
    const uids = appPods(c.projection.view(), 'web').map((p) => p.metadata.uid);
    expect(uids.filter((uid) => stranded.includes(uid))).toEqual([]);
  }, 60_000);

  it('deleting a Deployment removes its ReplicaSets and pods (Background) or keeps them without owner (Orphan)', async () => {
    const c = await start();
    await c.startNodes(['node-1', 'node-2', 'node-3']);
    await c.api.request('POST', DEPLOYMENTS, { body: deploymentManifest('gone', 3, 'app:A') });
    await c.api.request('POST', DEPLOYMENTS, { body: deploymentManifest('kept', 3, 'app:A') });
    await c.waitUntil('both run', (view) => rolledOut(view, 'gone', 'app:A', 3) && rolledOut(view, 'kept', 'app:A', 3));

    await c.api.request('DELETE', `${DEPLOYMENTS}/gone`, { query: { propagationPolicy: 'Background' } });
    await c.waitUntil('gone, its ReplicaSets and pods are deleted', (view) =>
      !view.get('Deployment/default/gone') && replicaSetsOf(view, 'gone').length === 0 && allAppPods(view, 'gone').length === 0,
    );

    const keptPods = appPods(c.projection.view(), 'kept').map((p) => p.metadata.uid).sort();
    const [keptRs] = replicaSetsOf(c.projection.view(), 'kept');
    await c.api.request('DELETE', `${DEPLOYMENTS}/kept`, { query: { propagationPolicy: 'Orphan' } });
    await c.waitUntil('kept is deleted and its ReplicaSet has no owner', (view) => {
      const rs = replicaSetsOf(view, 'kept');
      return !view.get('Deployment/default/kept') && rs.length === 1 && (rs[0]?.metadata.ownerReferences ?? []).length === 0;
    });
    const view = c.projection.view();
    expect(replicaSetsOf(view, 'kept').map((rs) => rs.metadata.uid)).toEqual([keptRs?.metadata.uid]);
    expect(appPods(view, 'kept').map((p) => p.metadata.uid).sort()).toEqual(keptPods);
    expect(appPods(view, 'kept').every((p) => isRunningReady(p) && p.metadata.ownerReferences?.[0]?.uid === keptRs?.metadata.uid)).toBe(true);
    // The orphaned ReplicaSet still keeps its pods: a deleted one is replaced.
    const victim = appPods(view, 'kept')[0]!;
    await c.api.request('DELETE', `/api/v1/namespaces/default/pods/${victim.metadata.name}`, { query: { gracePeriodSeconds: 0 } });
    await c.waitUntil('the orphaned ReplicaSet replaced its pod', (v) => {
      const pods = appPods(v, 'kept');
      return pods.length === 3 && pods.every(isRunningReady) && !pods.some((p) => p.metadata.uid === victim.metadata.uid);
    });
  });
});

describe('scheduler and replicaset consumer groups on kafka (3 partitions, separate processes)', () => {
  const PARTITIONS = 3;
  const NODES = Array.from({ length: 20 }, (_, i) => `n-${String(i + 1).padStart(2, '0')}`);
  /** 20 × 1600m for 300 × 100m: 94 % of the cluster's cpu is asked for. */
  const NODE_CAPACITY = { cpu: '1600m', memory: '8Gi', pods: '110' };
  const schedulingPartition = partitionOfKey('Pod/default/any', PARTITIONS);

  let log: EventLog | undefined;
  let projection: Projection | undefined;
  let agent: NodeAgent | undefined;
  const processes: ControllerProcess[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await agent?.close({ stopPods: true });
    await projection?.close();
    await log?.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** One ReplicaSet name per partition, so each replicaset instance owns one of them. */
  const replicaSetNames = (): string[] => {
    const byPartition = new Map<number, string>();
    for (let i = 0; byPartition.size < PARTITIONS; i++) {
      const name = `batch-${i}`;
      const partition = partitionOfKey(`ReplicaSet/default/${name}`, PARTITIONS);
      if (!byPartition.has(partition)) byPartition.set(partition, name);
    }
    return [...byPartition.values()];
  };

  const replicaSet = (name: string, replicas: number): ReplicaSet => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'main', image: 'batch:1', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
      },
    },
  });

  /** Accepted PodBound events per pod key, from the projection's record of every event. */
  const acceptedBindings = (p: Projection): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const { value } of p.store.events.getRange()) {
      if (value.eventType === 'PodBound' && value.verdict.type === 'accepted') counts.set(value.key, (counts.get(value.key) ?? 0) + 1);
    }
    return counts;
  };

  it('place 300 pods on 20 nodes without overcommit or double binding while the owning scheduler is SIGKILLed', async () => {
    const cluster = uniqueClusterName('e2e-groups');
    const base = mkdtempSync(join(tmpdir(), 'logplane-e2e-groups-'));
    dirs.push(base);
    const logger = pino({ level: 'warn' });
    log = await createKafkaLog({ brokers: kafkaBrokers(), cluster, partitions: PARTITIONS, logLevel: 'error' });
    projection = createProjection({ dir: join(base, 'projection'), log, logger });
    // The namespace and its default ServiceAccount (the serviceaccount controller's, not started here): the
    // ServiceAccount admission of the replicaset controllers' pod creates looks it up, as kube's does.
    await appendAndApply(log, projection, [
      { body: { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } }, actor: ADMIN },
      { body: { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'default' } } }, actor: ADMIN },
    ]);
    agent = await startNodeAgent({ log, projection, logger, nodes: NODES, runtime: 'sim', dataDir: join(base, 'nodes'), capacity: NODE_CAPACITY, heartbeatMs: 2_000, simStartDelayMs: 20 });

    const spawnGroup = (controller: string): ControllerProcess[] =>
      [1, 2, 3].map((i) => {
        const dataDir = join(base, `${controller}-${i}`);
        const child = spawnControllers({ label: `${controller}-${i}`, only: [controller], cluster, partitions: PARTITIONS, dataDir });
        processes.push(child);
        return child;
      });
    const schedulers = spawnGroup('scheduler');
    const replicaSetControllers = spawnGroup('replicaset');
    /** Each live member of the group owns exactly one partition, and together they own all. */
    const balanced = (members: readonly ControllerProcess[], controller: string): boolean => {
      const live = members.filter((m) => !m.exited());
      const owned = live.map((m) => m.assigned(controller) ?? []);
      return owned.every((partitions) => partitions.length === 1) && new Set(owned.flat()).size === PARTITIONS;
    };
    const describeGroups = (): string =>
      processes.map((p) => `${p.label} (pid ${p.pid}${p.exited() ? ', exited' : ''}): ${JSON.stringify(p.assigned(p.label.split('-')[0]!))}\n${p.tail()}`).join('\n');
    await pollUntil('both groups have one partition per member', () => balanced(schedulers, 'scheduler') && balanced(replicaSetControllers, 'replicaset'), 60_000, describeGroups);

    const names = replicaSetNames();
    const p = projection;
    const boundPods = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.spec.nodeName);
    await appendAndApply(log, p, names.map((name, i) => ({ body: { type: 'ObjectCreated', object: replicaSet(name, i === 0 ? 34 : 33) }, actor: ADMIN })));
    await waitUntil(p, 'the first 100 pods are bound', (view) => boundPods(view).length === 100, 60_000);

    // Kill the scheduler that owns the scheduling partition (the only one acting), mid-work.
    const owner = schedulers.find((s) => s.assigned('scheduler')?.includes(schedulingPartition));
    if (!owner) throw new Error(`no scheduler owns partition ${schedulingPartition}\n${describeGroups()}`);
    const killedAt = Date.now();
    owner.signal('SIGKILL');
    await appendAndApply(
      log,
      p,
      names.map((name) => {
        const rs = p.view().get(`ReplicaSet/default/${name}`) as ReplicaSet;
        return { body: { type: 'ObjectUpdated', object: { ...rs, spec: { ...rs.spec, replicas: 100 } }, expectedResourceVersion: null, subresource: null }, actor: ADMIN };
      }),
    );
    await waitUntil(
      p,
      'all 300 pods are bound and Running',
      (view) => {
        const pods = view.list('Pod', 'default') as Pod[];
        return pods.length === 300 && pods.every((pod) => pod.spec.nodeName && pod.status?.phase === 'Running');
      },
      90_000,
    );
    const doneAt = Date.now();

    const view = p.view();
    const survivors = schedulers.filter((s) => s !== owner);
    expect(survivors.some((s) => s.assigned('scheduler')?.includes(schedulingPartition))).toBe(true);
    expect(overcommittedNodes(view)).toEqual([]);
    const bindings = acceptedBindings(p);
    const podKeys = (view.list('Pod', 'default') as Pod[]).map((pod) => `Pod/default/${pod.metadata.name}`);
    expect(podKeys).toHaveLength(300);
    expect(podKeys.filter((key) => bindings.get(key) !== 1)).toEqual([]);
    expect([...bindings.keys()].filter((key) => !podKeys.includes(key))).toEqual([]);
    const createdPods = [...p.store.events.getRange()].filter(({ value }) => value.eventType === 'ObjectCreated' && value.key.startsWith('Pod/') && value.verdict.type === 'accepted');
    expect(createdPods).toHaveLength(300);
    const firstBindingAfterKill = Math.min(
      ...[...p.store.events.getRange()].filter(({ value }) => value.eventType === 'PodBound' && value.verdict.type === 'accepted' && value.time > killedAt).map(({ value }) => value.time),
    );
    console.info(`scheduler ${owner.label} killed; first binding by a survivor after ${firstBindingAfterKill - killedAt} ms; all 300 Running after ${doneAt - killedAt} ms`);
  }, 150_000);
});
