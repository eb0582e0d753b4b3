/**
 * The StatefulSet and DaemonSet controllers end to end on both logs, with the real kubectl
 * against `startCluster` (every controller, the scheduler, three sim-runtime nodes): a
 * StatefulSet with a headless Service and a volumeClaimTemplate applied with
 * `kubectl apply`, its pods created in ordinal order each after the one before is Ready,
 * each claim before its pod, `kubectl rollout status` finishing, an image change rolling
 * from the highest ordinal down and `kubectl rollout undo` rolling it back, a scale-down removing the highest ordinal; a DaemonSet
 * with one pod per node placed by the scheduler, rolled by an image change and back by
 * `kubectl rollout undo` (its ControllerRevisions in `rollout history`), a pod on a node
 * whose agent joins later and none on a tainted one; and a replay of the log from offset 0
 * giving the live state hash.
 */
import { join } from 'node:path';
import pino from 'pino';
import { type Subscription } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { startNodeAgent, type NodeAgent } from '../../node-agent/agent.ts';
import { type AppliedChange, type View } from '../../projections/index.ts';
import { isPodReady } from '../../reconcilers/replicaset/pods.ts';
import type { DaemonSet, PersistentVolumeClaim, Pod, StatefulSet } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';
import { STATEFUL } from './manifests.ts';

const DAEMON = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: logplane/echo:1
`;

const running = (pod: Pod): boolean => !pod.metadata.deletionTimestamp && pod.status?.phase === 'Running' && isPodReady(pod);
const podsWith = (view: View, app: string): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === app);
const imageOf = (pod: Pod): string | undefined => pod.spec.containers[0]?.image;

describe.each(LOG_ADAPTERS)('StatefulSet and DaemonSet controllers with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-apps', { nodes: 3, simStartDelayMs: 50 }, { kubectlTimeoutMs: 120_000 });
  const { kubectl, ok, file, waitUntil } = harness;
  const extraAgents: NodeAgent[] = [];

  /** Records, in log order, what `describe` says about each applied change (undefined: nothing). */
  const record = (describe: (change: AppliedChange, view: View) => string | undefined): { events: string[]; stop(): void } => {
    const events: string[] = [];
    const subscription: Subscription = harness.cluster.projection.changes$.subscribe((change) => {
      const text = describe(change, harness.cluster.projection.view());
      if (text !== undefined && events.at(-1) !== text) events.push(text);
    });
    return { events, stop: () => subscription.unsubscribe() };
  };

  // Registered after the harness's own afterAll, so it runs first (vitest runs afterAll hooks in reverse): the extra agents stop before the cluster.
  afterAll(async () => {
    for (const agent of extraAgents) await agent.close({ stopPods: true });
  }, 60_000);

  it('creates web-0..2 in order with their claims, rolls an image change from web-2 down and back with rollout undo, and scales down from the top', async () => {
    const order = record((change) => {
      const { object } = change;
      if (change.type === 'ADDED' && (object.kind === 'Pod' || object.kind === 'PersistentVolumeClaim') && /web-\d$/.test(object.metadata.name)) return `created ${object.metadata.name}`;
      if (object.kind === 'Pod' && object.metadata.labels?.['app'] === 'web' && running(object)) return `ready ${object.metadata.name}`;
      return undefined;
    });
    expect(await ok('apply', '-f', file('web.yaml', STATEFUL))).toBe('service/nginx created\nstatefulset.apps/web created\n');
    expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=90s')).toContain('partitioned roll out complete: 3 new pods have been updated');
    order.stop();
    // The first time each happened, in log order.
    expect([...new Set(order.events)]).toEqual([
      'created www-web-0',
      'created web-0',
      'ready web-0',
      'created www-web-1',
      'created web-1',
      'ready web-1',
      'created www-web-2',
      'created web-2',
      'ready web-2',
    ]);
    const pods = (JSON.parse(await ok('get', 'pods', '-l', 'app=web', '-o', 'json')) as { items: Pod[] }).items;
    expect(pods.map((pod) => [pod.metadata.name, pod.spec.hostname, pod.spec.subdomain, pod.metadata.labels?.['apps.kubernetes.io/pod-index'], pod.status?.phase])).toEqual([
      ['web-0', 'web-0', 'nginx', '0', 'Running'],
      ['web-1', 'web-1', 'nginx', '1', 'Running'],
      ['web-2', 'web-2', 'nginx', '2', 'Running'],
    ]);
    expect(pods.map((pod) => pod.spec.volumes?.find((v) => v.name === 'www')?.persistentVolumeClaim?.claimName)).toEqual(['www-web-0', 'www-web-1', 'www-web-2']);
    const claims = (JSON.parse(await ok('get', 'pvc', '-o', 'json')) as { items: PersistentVolumeClaim[] }).items;
    expect(claims.map((c) => [c.metadata.name, c.metadata.labels?.['app'], c.spec?.resources?.requests?.['storage']])).toEqual([
      ['www-web-0', 'web', '1Gi'],
      ['www-web-1', 'web', '1Gi'],
      ['www-web-2', 'web', '1Gi'],
    ]);
    const first = JSON.parse(await ok('get', 'statefulset', 'web', '-o', 'json')) as StatefulSet;
    expect(first.status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, availableReplicas: 3, observedGeneration: 1, collisionCount: 0 });
    expect(first.status?.currentRevision).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(pods.every((pod) => pod.metadata.labels?.['controller-revision-hash'] === first.status?.currentRevision)).toBe(true);

    const deletions = record((change) => (change.object.kind === 'Pod' && change.object.metadata.deletionTimestamp && change.object.metadata.labels?.['app'] === 'web' ? change.object.metadata.name : undefined));
    expect(await ok('set', 'image', 'statefulset/web', 'nginx=logplane/echo:2')).toBe('statefulset.apps/web image updated\n');
    expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=90s')).toContain('partitioned roll out complete: 3 new pods have been updated');
    await waitUntil('every web pod runs the new image', (view) => podsWith(view, 'web').filter(running).filter((pod) => imageOf(pod) === 'logplane/echo:2').length === 3);
    deletions.stop();
    expect([...new Set(deletions.events)]).toEqual(['web-2', 'web-1', 'web-0']);
    const rolled = JSON.parse(await ok('get', 'statefulset', 'web', '-o', 'json')) as StatefulSet;
    expect(rolled.status?.updateRevision).not.toBe(first.status?.currentRevision);
    await waitUntil('the update revision is current', (view) => (view.get('StatefulSet/default/web') as StatefulSet).status?.currentRevision === rolled.status?.updateRevision);
    const revisions = await ok('get', 'controllerrevisions', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.revision}{"\\n"}{end}');
    expect(revisions.trim().split('\n').sort()).toEqual([`${first.status?.currentRevision}=1`, `${rolled.status?.updateRevision}=2`].sort());

    expect(await ok('rollout', 'undo', 'statefulset/web')).toBe('statefulset.apps/web rolled back\n');
    expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=90s')).toContain('partitioned roll out complete: 3 new pods have been updated');
    await waitUntil('every web pod runs the first image again', (view) => podsWith(view, 'web').filter(running).filter((pod) => imageOf(pod) === 'logplane/echo:1').length === 3);
    expect(await ok('rollout', 'history', 'statefulset/web')).toMatch(/^statefulset\.apps\/web \nREVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>\n\n$/);
    expect((harness.cluster.projection.view().get('StatefulSet/default/web') as StatefulSet).status?.updateRevision).toBe(first.status?.currentRevision);

    expect(await ok('scale', 'statefulset', 'web', '--replicas=2')).toBe('statefulset.apps/web scaled\n');
    await waitUntil('web-2 is gone', (view) => view.get('Pod/default/web-2') === undefined && podsWith(view, 'web').filter(running).length === 2);
    expect(podsWith(harness.cluster.projection.view(), 'web').map((pod) => pod.metadata.name).sort()).toEqual(['web-0', 'web-1']);
    expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=60s')).toContain('partitioned roll out complete: 2 new pods have been updated');
    // The Retain policy keeps web-2's claim for when it comes back.
    expect(harness.cluster.projection.view().get('PersistentVolumeClaim/default/www-web-2')).toBeDefined();
  }, 240_000);

  it('runs one DaemonSet pod per node, rolls an image change and back with rollout undo, and adds a pod for a node that joins (none on a tainted one)', async () => {
    expect(await ok('apply', '-f', file('agent.yaml', DAEMON))).toBe('daemonset.apps/agent created\n');
    expect(await ok('rollout', 'status', 'daemonset/agent', '--timeout=90s')).toMatch(/daemon set "agent" successfully rolled out\n$/);
    const onNodes = (view: View): string[] => podsWith(view, 'agent').filter(running).map((pod) => pod.spec.nodeName ?? '?').sort();
    expect(onNodes(harness.cluster.projection.view())).toEqual(['node-1', 'node-2', 'node-3']);
    const pod = podsWith(harness.cluster.projection.view(), 'agent')[0] as Pod;
    expect(pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: [pod.spec.nodeName] }] },
    ]);
    expect(pod.spec.tolerations?.map((t) => `${t.key}:${t.effect}`)).toEqual(expect.arrayContaining(['node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unschedulable:NoSchedule']));
    expect(await ok('get', 'daemonset', 'agent')).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+3\s+3\s+3\s+3\s+3\s+<none>\s+\d+s\n$/);

    expect(await ok('set', 'image', 'daemonset/agent', 'agent=logplane/echo:2')).toBe('daemonset.apps/agent image updated\n');
    expect(await ok('rollout', 'status', 'daemonset/agent', '--timeout=90s')).toMatch(/daemon set "agent" successfully rolled out\n$/);
    await waitUntil('every agent pod runs the new image', (view) => podsWith(view, 'agent').filter(running).filter((p) => imageOf(p) === 'logplane/echo:2').length === 3);
    expect(onNodes(harness.cluster.projection.view())).toEqual(['node-1', 'node-2', 'node-3']);

    // rollout history lists the two ControllerRevisions; undo restores revision 1's template as revision 3.
    expect(await ok('rollout', 'history', 'daemonset/agent')).toMatch(/^daemonset\.apps\/agent \nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n\n$/);
    expect(await ok('rollout', 'undo', 'daemonset/agent')).toBe('daemonset.apps/agent rolled back\n');
    expect(await ok('rollout', 'status', 'daemonset/agent', '--timeout=90s')).toMatch(/daemon set "agent" successfully rolled out\n$/);
    await waitUntil('every agent pod runs the first image again', (view) => podsWith(view, 'agent').filter(running).filter((p) => imageOf(p) === 'logplane/echo:1').length === 3);
    expect(await ok('rollout', 'history', 'daemonset/agent')).toMatch(/^daemonset\.apps\/agent \nREVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>\n\n$/);

    for (const [name, taints] of [['node-4', []], ['node-5', [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]]] as const) {
      extraAgents.push(
        await startNodeAgent({
          log: harness.cluster.log,
          projection: harness.cluster.projection,
          logger: pino({ level: 'silent' }),
          nodes: [name],
          runtime: 'sim',
          simStartDelayMs: 50,
          taints,
          dataDir: join(harness.dir, `agent-${name}`),
          podCIDR: () => (name === 'node-4' ? '127.100.40.0/24' : '127.100.41.0/24'),
        }),
      );
    }
    await waitUntil('node-4 runs an agent pod', (view) => onNodes(view).includes('node-4') && (view.get('DaemonSet/default/agent') as DaemonSet).status?.numberAvailable === 4);
    expect(onNodes(harness.cluster.projection.view())).toEqual(['node-1', 'node-2', 'node-3', 'node-4']);
    expect((JSON.parse(await ok('get', 'daemonset', 'agent', '-o', 'json')) as DaemonSet).status).toMatchObject({
      desiredNumberScheduled: 4,
      currentNumberScheduled: 4,
      numberReady: 4,
      numberAvailable: 4,
      updatedNumberScheduled: 4,
      numberMisscheduled: 0,
      observedGeneration: 3,
    });
    expect(podsWith(harness.cluster.projection.view(), 'agent').some((p) => p.spec.nodeName === 'node-5')).toBe(false);
  }, 240_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
