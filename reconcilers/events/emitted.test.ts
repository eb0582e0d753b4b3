/**
 * The Events each controller records, with kube's sources, reasons and messages, decided
 * through the controllers' own factories and folded into a projection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CronJob, DaemonSet, Deployment, Event, Job, Node, Pod, ReplicaSet, ReplicationController, StatefulSet } from '../../schemas/index.ts';
import { createCronJobController } from '../cronjob/index.ts';
import { createDaemonSetController } from '../daemonset/index.ts';
import { createDeploymentController } from '../deployment/index.ts';
import { createEventTtlController, decideEventTtl } from '../event-ttl/index.ts';
import { createJobController } from '../job/index.ts';
import { createNodeLifecycleController, type HeartbeatTracker } from '../node-lifecycle/index.ts';
import { createReplicaSetController } from '../replicaset/index.ts';
import { isoTime, keyOf } from '../replicaset/objects.ts';
import { createReplicationController } from '../replicationcontroller/index.ts';
import { createSchedulerController } from '../scheduler/controller.ts';
import type { Controller } from '../runtime.ts';
import { createStatefulSetController } from '../statefulset/index.ts';
import { createRecorder } from '../../projections/event-recorder.ts';
import { createTestCluster, deploymentObject, nodeObject, podTemplate, replicaSetObject, runningPodStatus, settle, type TestCluster } from '../testing.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const T0 = Date.UTC(2030, 0, 1, 12);

const setup = (): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  return cluster;
};

/** [source, type, reason, message, count] of the Events about `kind/name`, sorted. */
const eventsAbout = (cluster: TestCluster, kind: string, name: string): [string, string, string, string, number][] =>
  (cluster.view().list('Event') as Event[])
    .filter((e) => e.involvedObject.kind === kind && e.involvedObject.name === name)
    .map((e): [string, string, string, string, number] => [e.source?.component ?? '', e.type ?? '', e.reason ?? '', e.message ?? '', e.count ?? 0])
    .sort((a, b) => (a.join() < b.join() ? -1 : 1));

/** Decides `key` with `controller` at `now` and folds the commands (each accepted). */
const step = (cluster: TestCluster, controller: Controller, key: string, now: number): void => {
  for (const record of cluster.apply(...controller.decide(key, cluster.view(), { now }).commands)) expect(record.verdict.type).toBe('accepted');
};

const podNames = (cluster: TestCluster, label: string, value: string): string[] =>
  (cluster.view().list('Pod', 'default') as Pod[]).filter((p) => p.metadata.labels?.[label] === value).map((p) => p.metadata.name);

describe('Events the controllers record', () => {
  it('replicaset: SuccessfulCreate "Created pod: NAME" per pod, SuccessfulDelete "Deleted pod: NAME" on scale-down', () => {
    const cluster = setup();
    cluster.create(replicaSetObject({ name: 'web', replicas: 3 }));
    settle(cluster, [createReplicaSetController()], { now: T0, node: 'n1' });
    const created = podNames(cluster, 'app', 'web').sort();
    expect(eventsAbout(cluster, 'ReplicaSet', 'web')).toEqual(created.map((name) => ['replicaset-controller', 'Normal', 'SuccessfulCreate', `Created pod: ${name}`, 1]));
    const rs = cluster.view().get('ReplicaSet/default/web') as ReplicaSet;
    cluster.apply({ type: 'ObjectUpdated', object: { ...rs, spec: { ...rs.spec, replicas: 1 } } as ReplicaSet, expectedResourceVersion: null, subresource: null });
    settle(cluster, [createReplicaSetController()], { now: T0 + 10_000, node: 'n1' });
    const left = new Set(podNames(cluster, 'app', 'web'));
    const deleted = created.filter((name) => !left.has(name));
    expect(deleted).toHaveLength(2);
    expect(eventsAbout(cluster, 'ReplicaSet', 'web').filter((e) => e[2] === 'SuccessfulDelete')).toEqual(
      deleted.map((name) => ['replicaset-controller', 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`, 1]),
    );
  });

  it('replicationcontroller: the same Events from replication-controller', () => {
    const cluster = setup();
    cluster.create<ReplicationController>({ apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'mysql', namespace: 'default' }, spec: { replicas: 1, selector: { app: 'mysql' }, template: podTemplate('logplane/sleeper', { app: 'mysql' }) } });
    settle(cluster, [createReplicationController()], { now: T0, node: 'n1' });
    const [pod] = podNames(cluster, 'app', 'mysql');
    expect(eventsAbout(cluster, 'ReplicationController', 'mysql')).toEqual([['replication-controller', 'Normal', 'SuccessfulCreate', `Created pod: ${pod}`, 1]]);
  });

  it('deployment: ScalingReplicaSet "Scaled up replica set NAME from 0 to 2", then from 2 to 5 and down to 1', () => {
    const cluster = setup();
    cluster.create(deploymentObject({ name: 'web', replicas: 2 }));
    const controllers = [createDeploymentController(), createReplicaSetController()];
    settle(cluster, controllers, { now: T0, node: 'n1' });
    const [rs] = cluster.view().list('ReplicaSet', 'default') as ReplicaSet[];
    const name = rs?.metadata.name ?? '';
    expect(name).toMatch(/^web-[a-z0-9]+$/);
    expect(eventsAbout(cluster, 'Deployment', 'web')).toEqual([['deployment-controller', 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${name} from 0 to 2`, 1]]);
    const scale = (replicas: number, now: number): void => {
      const d = cluster.view().get(keyOf(deploymentObject({ name: 'web' }))) as Deployment;
      cluster.apply({ type: 'ObjectUpdated', object: { ...d, spec: { ...d.spec, replicas } } as Deployment, expectedResourceVersion: null, subresource: null });
      settle(cluster, controllers, { now, node: 'n1' });
    };
    scale(5, T0 + 10_000);
    scale(1, T0 + 20_000);
    expect(eventsAbout(cluster, 'Deployment', 'web').map((e) => e[3])).toEqual([
      `Scaled down replica set ${name} from 5 to 1`,
      `Scaled up replica set ${name} from 0 to 2`,
      `Scaled up replica set ${name} from 2 to 5`,
    ]);
    expect(eventsAbout(cluster, 'ReplicaSet', name).filter((e) => e[2] === 'SuccessfulCreate')).toHaveLength(5);
  });

  const jobObject = (name: string, backoffLimit: number): Job => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      completions: 1,
      parallelism: 1,
      backoffLimit,
      completionMode: 'NonIndexed',
      suspend: false,
      podReplacementPolicy: 'TerminatingOrFailed',
      template: { metadata: { labels: { app: name } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } },
    },
  });
  const finishPods = (cluster: TestCluster, app: string, exitCode: number, at: number): void => {
    for (const name of podNames(cluster, 'app', app)) {
      cluster.podStatus(name, {
        phase: exitCode === 0 ? 'Succeeded' : 'Failed',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: isoTime(at) }],
        containerStatuses: [{ name: 'main', image: 'logplane/crasher', ready: false, restartCount: 0, state: { terminated: { exitCode, finishedAt: isoTime(at), reason: exitCode === 0 ? 'Completed' : 'Error' } } }],
      });
    }
  };

  it('job: SuccessfulCreate for its pod and Completed "Job completed"', () => {
    const cluster = setup();
    cluster.create(jobObject('pi', 6));
    settle(cluster, [createJobController()], { now: T0, node: 'n1' });
    const [pod] = podNames(cluster, 'app', 'pi');
    finishPods(cluster, 'pi', 0, T0 + 5000);
    settle(cluster, [createJobController()], { now: T0 + 6000, node: 'n1' });
    expect(eventsAbout(cluster, 'Job', 'pi')).toEqual([
      ['job-controller', 'Normal', 'Completed', 'Job completed', 1],
      ['job-controller', 'Normal', 'SuccessfulCreate', `Created pod: ${pod}`, 1],
    ]);
  });

  it('job: Warning BackoffLimitExceeded "Job has reached the specified backoff limit"', () => {
    const cluster = setup();
    cluster.create(jobObject('fail', 0));
    settle(cluster, [createJobController()], { now: T0, node: 'n1' });
    finishPods(cluster, 'fail', 3, T0 + 5000);
    settle(cluster, [createJobController()], { now: T0 + 6000, node: 'n1' });
    expect(eventsAbout(cluster, 'Job', 'fail').filter((e) => e[1] === 'Warning')).toEqual([
      ['job-controller', 'Warning', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', 1],
    ]);
  });

  it('job: Warning DeadlineExceeded "Job was active longer than specified deadline"', () => {
    const cluster = setup();
    cluster.create({ ...jobObject('slow', 6), spec: { ...jobObject('slow', 6).spec, activeDeadlineSeconds: 10 } } as Job);
    settle(cluster, [createJobController()], { now: T0, node: 'n1' });
    const job = cluster.view().get('Job.batch/default/slow') as Job;
    const started = Date.parse(job.status?.startTime ?? '');
    settle(cluster, [createJobController()], { now: started + 11_000, node: 'n1' });
    const [pod] = eventsAbout(cluster, 'Job', 'slow').filter((e) => e[2] === 'SuccessfulCreate');
    expect(pod).toBeDefined();
    expect(eventsAbout(cluster, 'Job', 'slow').filter((e) => e[1] === 'Warning')).toEqual([
      ['job-controller', 'Warning', 'DeadlineExceeded', 'Job was active longer than specified deadline', 1],
    ]);
    expect(eventsAbout(cluster, 'Job', 'slow').some((e) => e[2] === 'SuccessfulDelete')).toBe(true);
  });

  it('statefulset: "create Claim data-web-0 Pod web-0 in StatefulSet web success" and "create Pod web-0 in StatefulSet web successful"', () => {
    const cluster = setup();
    cluster.create<StatefulSet>({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 2,
        serviceName: 'nginx',
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
        revisionHistoryLimit: 10,
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
        selector: { matchLabels: { app: 'web' } },
        template: podTemplate('logplane/echo:1', { app: 'web' }),
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' } }],
      },
    });
    settle(cluster, [createStatefulSetController()], { now: T0, node: 'n1' });
    expect(eventsAbout(cluster, 'StatefulSet', 'web')).toEqual([
      ['statefulset-controller', 'Normal', 'SuccessfulCreate', 'create Claim data-web-0 Pod web-0 in StatefulSet web success', 1],
      ['statefulset-controller', 'Normal', 'SuccessfulCreate', 'create Claim data-web-1 Pod web-1 in StatefulSet web success', 1],
      ['statefulset-controller', 'Normal', 'SuccessfulCreate', 'create Pod web-0 in StatefulSet web successful', 1],
      ['statefulset-controller', 'Normal', 'SuccessfulCreate', 'create Pod web-1 in StatefulSet web successful', 1],
    ]);
  });

  it('daemonset: SuccessfulCreate "Created pod: NAME" per node', () => {
    const cluster = setup();
    cluster.create(nodeObject('n2'));
    const ds = cluster.create<DaemonSet>({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: podTemplate('logplane/echo:1', { app: 'agent' }),
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        revisionHistoryLimit: 10,
      },
    });
    step(cluster, createDaemonSetController(), keyOf(ds), T0);
    const pods = podNames(cluster, 'app', 'agent').sort();
    expect(pods).toHaveLength(2);
    expect(eventsAbout(cluster, 'DaemonSet', 'agent')).toEqual(pods.map((name) => ['daemonset-controller', 'Normal', 'SuccessfulCreate', `Created pod: ${name}`, 1]));
  });

  it('cronjob: SuccessfulCreate "Created job NAME" from cronjob-controller', () => {
    const cluster = setup();
    cluster.create<CronJob>({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tick', namespace: 'default', creationTimestamp: isoTime(T0 - 90_000) },
      spec: {
        schedule: '* * * * *',
        concurrencyPolicy: 'Allow',
        suspend: false,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 1,
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } } } },
      },
    });
    const created = Date.parse((cluster.view().get('CronJob.batch/default/tick') as CronJob).metadata.creationTimestamp ?? '');
    step(cluster, createCronJobController(), 'CronJob.batch/default/tick', created + 61_000);
    const [job] = cluster.view().list('Job', 'default') as Job[];
    expect(job).toBeDefined();
    expect(eventsAbout(cluster, 'CronJob', 'tick')).toEqual([['cronjob-controller', 'Normal', 'SuccessfulCreate', `Created job ${job?.metadata.name}`, 1]]);
  });

  it('scheduler: Scheduled "Successfully assigned NS/NAME to NODE" for a binding, Warning FailedScheduling with the filter summary once per message', () => {
    const cluster = setup();
    cluster.create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'small', namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'logplane/echo:1' }] } });
    const huge = { name: 'main', image: 'logplane/echo:1', resources: { requests: { cpu: '100' } } };
    cluster.create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'huge', namespace: 'default' }, spec: { containers: [huge] } });
    const scheduler = createSchedulerController();
    step(cluster, scheduler, 'Pod/default/small', T0);
    expect((cluster.view().get('Pod/default/small') as Pod).spec.nodeName).toBe('n1');
    expect(eventsAbout(cluster, 'Pod', 'small')).toEqual([['default-scheduler', 'Normal', 'Scheduled', 'Successfully assigned default/small to n1', 1]]);
    step(cluster, scheduler, 'Pod/default/huge', T0);
    // Retried with nothing changed: the condition stands, so no second Event either.
    step(cluster, scheduler, 'Pod/default/huge', T0 + 1000);
    expect(eventsAbout(cluster, 'Pod', 'huge')).toEqual([['default-scheduler', 'Warning', 'FailedScheduling', '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..', 1]]);
  });

  it('scheduler: no Event for a pod held back by its scheduling gates', () => {
    const cluster = setup();
    cluster.create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gated', namespace: 'default' }, spec: { schedulingGates: [{ name: 'wait' }], containers: [{ name: 'main', image: 'logplane/echo:1' }] } });
    step(cluster, createSchedulerController(), 'Pod/default/gated', T0);
    expect((cluster.view().get('Pod/default/gated') as Pod).status?.conditions?.[0]).toMatchObject({ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' });
    expect(eventsAbout(cluster, 'Pod', 'gated')).toEqual([]);
  });

  it('node-lifecycle: NodeNotReady on the node and its ready pods, TaintManagerEviction on the pods it evicts', () => {
    const cluster = setup();
    cluster.create<Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'default' }, spec: { containers: [{ name: 'main', image: 'logplane/echo:1' }] } });
    cluster.apply({ type: 'PodBound', namespace: 'default', name: 'p1', node: 'n1', expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } });
    cluster.podStatus('p1', runningPodStatus(true, T0 - 600_000));
    const node = cluster.view().get('Node//n1') as Node;
    cluster.apply({ type: 'NodeStatusChanged', name: 'n1', status: { ...node.status, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } });
    const heartbeats: HeartbeatTracker = { lastSeen: () => T0 - 60_000, since: T0 - 60_000, horizon: T0 - 160_000, close: () => undefined };
    const controller = createNodeLifecycleController({ heartbeats, gracePeriodMs: 50_000, defaultTolerationSeconds: 0 });
    for (let i = 0; i < 4; i++) step(cluster, controller, 'Node//n1', T0 + i * 1000);
    expect(eventsAbout(cluster, 'Node', 'n1')).toEqual([['node-controller', 'Normal', 'NodeNotReady', 'Node n1 status is now: NodeNotReady', 1]]);
    expect(eventsAbout(cluster, 'Pod', 'p1')).toEqual([
      ['node-controller', 'Warning', 'NodeNotReady', 'Node is not ready', 1],
      ['taint-eviction-controller', 'Normal', 'TaintManagerEviction', 'Marking for deletion Pod default/p1', 1],
    ]);
  });
});

describe('event-ttl', () => {
  it('deletes an Event an hour after it was last seen, requeues until then, and the log keeps it for the past', () => {
    const cluster = setup();
    const rs = cluster.create(replicaSetObject({ name: 'web', replicas: 1 }));
    settle(cluster, [createReplicaSetController()], { now: T0, node: 'n1' });
    const [event] = cluster.view().list('Event', 'default') as Event[];
    const key = `Event/default/${event?.metadata.name}`;
    expect(decideEventTtl(key, cluster.view(), T0 + 1_800_000, 3_600_000)).toEqual({ commands: [], requeueAfterMs: 1_800_000 });
    const before = cluster.projection.cursor();
    const ttl = createEventTtlController();
    expect(ttl.initialKeys(cluster.view())).toEqual([key]);
    step(cluster, ttl, key, T0 + 3_600_000);
    expect(cluster.view().list('Event')).toEqual([]);
    expect(cluster.projection.viewAt(before).get(key)).toMatchObject({ reason: 'SuccessfulCreate', involvedObject: { uid: rs.metadata.uid } });
    // `--event-ttl` must be positive.
    expect(() => createEventTtlController({ ttlMs: 0 })).toThrow(/event TTL \(--event-ttl\) must be a positive number of ms/);
  });

  it('moves the expiry with each repeat (lastTimestamp), as kube renews the lease with each write', () => {
    const cluster = setup();
    const rs = cluster.create(replicaSetObject({ name: 'web', replicas: 1 }));
    const recordAt = (now: number): void => {
      const recorder = createRecorder(cluster.view(), now, { component: 'replicaset-controller' });
      recorder.event(rs, 'Warning', 'FailedCreate', 'Error creating: quota');
      cluster.apply(...recorder.commands());
    };
    recordAt(T0);
    recordAt(T0 + 1_800_000);
    const [event] = cluster.view().list('Event', 'default') as Event[];
    expect(event?.count).toBe(2);
    const key = `Event/default/${event?.metadata.name}`;
    expect(decideEventTtl(key, cluster.view(), T0 + 3_600_000, 3_600_000)).toEqual({ commands: [], requeueAfterMs: 1_800_000 });
    expect(decideEventTtl(key, cluster.view(), T0 + 5_400_000, 3_600_000).commands).toMatchObject([
      { type: 'ObjectDeleted', kind: 'Event', name: event?.metadata.name, uid: event?.metadata.uid, expectedResourceVersion: event?.metadata.resourceVersion },
    ]);
    // A short TTL (`--event-ttl 1m`) deletes sooner; a change of an Event maps to itself.
    expect(createEventTtlController({ ttlMs: 60_000 }).decide(key, cluster.view(), { now: T0 + 1_860_000 }).commands).toHaveLength(1);
    expect(createEventTtlController().keysFor({ type: 'MODIFIED', key, eventId: 'e', object: event as Event, topic: 'desired', partition: 0, offset: 0 }, cluster.view())).toEqual([key]);
  });
});
