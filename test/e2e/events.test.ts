/**
 * Events end to end on both logs, with the real kubectl against `startCluster` (every
 * controller, one sim-runtime node agent): a Deployment created and scaled records
 * ScalingReplicaSet on the Deployment and SuccessfulCreate on its ReplicaSet; `kubectl
 * describe` shows them in its Events section, `kubectl get events` and `kubectl events`
 * list them, events.k8s.io/v1 serves the same objects; the replicaset decision that recorded
 * Events, re-run on the view at its position with its time, gives the same commands; an Event
 * deleted (as the event-ttl controller deletes it) is still listed by `logplane get events
 * --at` a moment before; a replay
 * of the log from offset 0 gives the live projection's state hash.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { audit, formatVector, type View } from '../../projections/index.ts';
import { parseVector } from '../../projections/positions.ts';
import { admitControllerCreate } from '../../apiserver/admission/controller-creates.ts';
import { CONTROLLER_FACTORIES } from '../../reconcilers/controllers.ts';
import { withCreateAdmission } from '../../reconcilers/create-admission.ts';
import { canonicalJson, sameJson } from '../../schemas/canonical-json.ts';
import { decodeEvent, type Deployment, type Event, type EventBody, type ReplicaSet } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster, watchKubectl } from './kubectl-harness.ts';
import { logplane, okJson } from './process.ts';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: logplane/echo:1
`;

describe.each(LOG_ADAPTERS)('Events with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-events', { simStartDelayMs: 50 });
  const { ok, file, waitUntil } = harness;
  const deployment = (view: View): Deployment | undefined => view.list('Deployment', 'default').find((d) => d.metadata.name === 'web') as Deployment | undefined;
  const replicaSet = (view: View): ReplicaSet | undefined => (view.list('ReplicaSet', 'default') as ReplicaSet[]).find((rs) => rs.metadata.labels?.['app'] === 'web');
  const events = (view: View): Event[] => view.list('Event', 'default') as Event[];

  it('records ScalingReplicaSet and SuccessfulCreate, shown by kubectl describe, get events and events', async () => {
    expect(await ok('apply', '-f', file('web.yaml', DEPLOYMENT))).toBe('deployment.apps/web created\n');
    await waitUntil('the Deployment has 2 available replicas', (view) => deployment(view)?.status?.availableReplicas === 2);
    expect(await ok('scale', 'deployment', 'web', '--replicas=3')).toBe('deployment.apps/web scaled\n');
    await waitUntil(
      'the Deployment has 3 available replicas and its Events are recorded',
      (view) => deployment(view)?.status?.availableReplicas === 3 && events(view).filter((e) => e.reason === 'SuccessfulCreate').length === 3,
    );
    const rs = replicaSet(harness.cluster.projection.view())?.metadata.name ?? '';
    expect(rs).toMatch(/^web-[a-z0-9]+$/);
    const pods = harness.cluster.projection.view().list('Pod', 'default').map((p) => p.metadata.name).sort();
    expect(pods).toHaveLength(3);

    const describedDeployment = await ok('describe', 'deployment', 'web');
    const deploymentEvents = describedDeployment.slice(describedDeployment.indexOf('\nEvents:'));
    expect(deploymentEvents).toMatch(/\n  Type\s+Reason\s+Age\s+From\s+Message\n/);
    expect(deploymentEvents).toMatch(new RegExp(`Normal\\s+ScalingReplicaSet\\s+\\S+\\s+deployment-controller\\s+Scaled up replica set ${rs} from 0 to 2\\n`));
    expect(deploymentEvents).toMatch(new RegExp(`Normal\\s+ScalingReplicaSet\\s+\\S+\\s+deployment-controller\\s+Scaled up replica set ${rs} from 2 to 3\\n`));

    const describedReplicaSet = await ok('describe', 'replicaset', rs);
    const replicaSetEvents = describedReplicaSet.slice(describedReplicaSet.indexOf('\nEvents:'));
    for (const pod of pods) expect(replicaSetEvents).toMatch(new RegExp(`Normal\\s+SuccessfulCreate\\s+\\S+\\s+replicaset-controller\\s+Created pod: ${pod}\\n`));

    const table = await ok('get', 'events');
    expect(table.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(table).toMatch(new RegExp(`Normal\\s+ScalingReplicaSet\\s+deployment/web\\s+Scaled up replica set ${rs} from 2 to 3`));
    for (const pod of pods) expect(table).toMatch(new RegExp(`Normal\\s+SuccessfulCreate\\s+replicaset/${rs}\\s+Created pod: ${pod}`));

    const listed = await ok('events', '--for', 'deployment/web');
    expect(listed).toMatch(/Normal\s+ScalingReplicaSet\s+Deployment\/web\s+Scaled up replica set \S+ from 0 to 2/);
    expect(listed).not.toMatch(/SuccessfulCreate/);

    // events.k8s.io/v1 serves the same objects, converted (regarding, note, reportingController).
    const core = JSON.parse(await ok('get', 'events.v1.', '-o', 'json')) as { items: Event[] };
    const grouped = JSON.parse(await ok('get', 'events.v1.events.k8s.io', '-o', 'json')) as { items: Record<string, unknown>[] };
    expect(grouped.items.map((e) => (e['metadata'] as { name: string }).name).sort()).toEqual(core.items.map((e) => e.metadata.name).sort());
    const scaled = grouped.items.find((e) => e['reason'] === 'ScalingReplicaSet' && String(e['note']).endsWith('from 0 to 2'));
    expect(scaled).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      regarding: { kind: 'Deployment', name: 'web', namespace: 'default', uid: deployment(harness.cluster.projection.view())?.metadata.uid },
      reportingController: 'deployment-controller',
      deprecatedCount: 1,
      deprecatedSource: { component: 'deployment-controller' },
      type: 'Normal',
    });
  }, 120_000);

  it('streams new Events with kubectl get events -w', async () => {
    const watch = watchKubectl(harness.cluster.kubeconfig, join(harness.dir, 'watch-cache'), ['get', 'events', '-w']);
    try {
      // The Events so far come first, then what happens next: a scale down's deletions.
      await watch.seen(/Normal\s+ScalingReplicaSet\s+deployment\/web\s+Scaled up replica set \S+ from 2 to 3/);
      expect(await ok('scale', 'deployment', 'web', '--replicas=1')).toBe('deployment.apps/web scaled\n');
      await watch.seen(/Normal\s+ScalingReplicaSet\s+deployment\/web\s+Scaled down replica set \S+ from 3 to 1/);
      await watch.seen(/Normal\s+SuccessfulDelete\s+replicaset\/web-[a-z0-9]+\s+Deleted pod: web-/);
    } finally {
      watch.stop();
    }
  }, 120_000);

  it('shows the Events of a past moment after they left the current view (logplane get events --at)', async () => {
    const [scaled] = events(harness.cluster.projection.view()).filter((e) => e.reason === 'ScalingReplicaSet');
    const name = scaled?.metadata.name ?? '';
    const before = formatVector(harness.cluster.projection.cursor());
    // What the event-ttl controller does an hour after the Event was last seen.
    expect(await ok('delete', 'event', name)).toBe(`event "${name}" deleted\n`);
    await waitUntil('the Event is gone', (view) => !events(view).some((e) => e.metadata.name === name));
    const names = async (...args: string[]): Promise<string[]> =>
      okJson<{ items: Event[] }>(await logplane(harness.cluster.kubeconfig, ['get', 'events', ...args, '-o', 'json'])).items.map((e) => e.metadata.name);
    expect(await names()).not.toContain(name);
    expect(await names('--at', before)).toContain(name);
  }, 60_000);

  it('re-runs a decision that recorded Events on the view it saw, at its time, into the same commands (debug reconcile)', async () => {
    const decided = audit(harness.cluster.projection.store, harness.cluster.log.layout.partitions, { allActors: true, limit: 100_000 }).filter(
      (e) => e.actor.type === 'controller' && e.actor.name === 'replicaset',
    );
    const recordedEvent = decided.find((e) => e.key.startsWith('Event/') && e.eventType === 'ObjectCreated');
    expect(recordedEvent).toBeDefined();
    const round = decided.filter((e) => e.decidedAt === recordedEvent?.decidedAt && e.time === recordedEvent?.time);
    const recorded: EventBody[] = [];
    for (const e of round) {
      const [record] = await harness.cluster.log.read(e.topic, e.partition, e.offset, e.offset + 1);
      if (record) recorded.push(decodeEvent(record.value).body);
    }
    const rs = replicaSet(harness.cluster.projection.view());
    const past = harness.cluster.projection.viewAt(parseVector(recordedEvent?.decidedAt ?? '', harness.cluster.log.layout.partitions));
    // As the running controllers (and debug reconcile) do: what it creates passes through the apiserver's create path.
    const again = withCreateAdmission(CONTROLLER_FACTORIES['replicaset']!(), admitControllerCreate).decide(`ReplicaSet/default/${rs?.metadata.name}`, past, { now: recordedEvent?.time ?? 0 });
    expect(again.commands.filter((c) => c.type === 'ObjectCreated' && c.object.kind === 'Event').length).toBeGreaterThan(0);
    // The round's commands span both topics (pods and Events on desired, the status on observed): compare them in one order.
    // By canonical JSON: two deletions of one round (a scale down's) must not compare by their order.
    const ordered = (bodies: readonly EventBody[]): EventBody[] => [...bodies].sort((a, b) => (canonicalJson(a) < canonicalJson(b) ? -1 : canonicalJson(a) > canonicalJson(b) ? 1 : 0));
    expect(again.commands).toHaveLength(recorded.length);
    expect(sameJson(ordered(again.commands), ordered(recorded))).toBe(true);
  }, 60_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.events).toBeGreaterThan(20);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
