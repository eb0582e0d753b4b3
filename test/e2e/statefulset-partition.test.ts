/**
 * A StatefulSet's partitioned rolling update end to end on both logs, with the real kubectl
 * against `startCluster` (every controller, the scheduler, two sim-runtime nodes): a
 * StatefulSet of 3 rolled out; one `kubectl patch` changing its template's image and
 * setting `rollingUpdate.partition: 2` updates only web-2 (its `controller-revision-hash`
 * the update revision, web-0 and web-1 untouched on the current one, `kubectl rollout
 * status` reporting the partitioned roll out); a second patch to `partition: 0` updates
 * web-1 and then web-0 (reverse ordinal order) until the update revision is current; and a
 * replay of the log from offset 0 giving the live state hash.
 */
import type { Subscription } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import { isPodReady } from '../../reconcilers/replicaset/pods.ts';
import type { Pod, StatefulSet } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const WEB = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector:
    app: web
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
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

const REVISION_LABEL = 'controller-revision-hash';
const running = (pod: Pod): boolean => !pod.metadata.deletionTimestamp && pod.status?.phase === 'Running' && isPodReady(pod);
const webPods = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === 'web');
const statefulSet = (view: View): StatefulSet => view.get('StatefulSet/default/web') as StatefulSet;
/** Each web pod's name, image and revision label, by name. */
const revisions = (view: View): string[][] =>
  webPods(view)
    .map((pod) => [pod.metadata.name, pod.spec.containers[0]?.image ?? '', pod.metadata.labels?.[REVISION_LABEL] ?? ''])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

describe.each(LOG_ADAPTERS)('StatefulSet rolling update with a partition, with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-sts-partition', { nodes: 2, simStartDelayMs: 50 }, { kubectlTimeoutMs: 120_000 });
  const { ok, file, waitUntil } = harness;
  let current = '';

  /** The web pods, in log order, whose deletion started while `run` ran. */
  const deletedDuring = async (run: () => Promise<void>): Promise<string[]> => {
    const deleted: string[] = [];
    const subscription: Subscription = harness.cluster.projection.changes$.subscribe(({ object }) => {
      if (object.kind === 'Pod' && object.metadata.labels?.['app'] === 'web' && object.metadata.deletionTimestamp && !deleted.includes(object.metadata.name)) deleted.push(object.metadata.name);
    });
    try {
      await run();
    } finally {
      subscription.unsubscribe();
    }
    return deleted;
  };

  it('rolls out web-0..2 on one revision', async () => {
    expect(await ok('apply', '-f', file('web.yaml', WEB))).toBe('service/web created\nstatefulset.apps/web created\n');
    expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=90s')).toContain('partitioned roll out complete: 3 new pods have been updated');
    current = statefulSet(harness.cluster.projection.view()).status?.currentRevision ?? '';
    expect(current).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(revisions(harness.cluster.projection.view())).toEqual([
      ['web-0', 'logplane/echo:1', current],
      ['web-1', 'logplane/echo:1', current],
      ['web-2', 'logplane/echo:1', current],
    ]);
  }, 180_000);

  it('with partition 2, a template change updates only web-2', async () => {
    let update = '';
    const deleted = await deletedDuring(async () => {
      const patch = { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } }, template: { spec: { containers: [{ name: 'web', image: 'logplane/echo:2' }] } } } };
      expect(await ok('patch', 'statefulset', 'web', '-p', JSON.stringify(patch))).toBe('statefulset.apps/web patched\n');
      await waitUntil('web-2 runs the update revision and the status counts it', (view) => {
        const status = statefulSet(view).status;
        update = status?.updateRevision ?? '';
        const web2 = view.get('Pod/default/web-2') as Pod | undefined;
        return update !== current && web2 !== undefined && running(web2) && web2.metadata.labels?.[REVISION_LABEL] === update && status?.updatedReplicas === 1 && status.readyReplicas === 3;
      }, 90_000);
      expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=60s')).toContain('partitioned roll out complete: 1 new pods have been updated');
    });
    expect(deleted).toEqual(['web-2']);
    const view = harness.cluster.projection.view();
    expect(revisions(view)).toEqual([
      ['web-0', 'logplane/echo:1', current],
      ['web-1', 'logplane/echo:1', current],
      ['web-2', 'logplane/echo:2', update],
    ]);
    expect(statefulSet(view).status).toMatchObject({ replicas: 3, currentReplicas: 2, updatedReplicas: 1, currentRevision: current, updateRevision: update });
  }, 180_000);

  it('with partition 0, web-1 and then web-0 are updated, and the update revision becomes current', async () => {
    const update = statefulSet(harness.cluster.projection.view()).status?.updateRevision ?? '';
    const deleted = await deletedDuring(async () => {
      const patch = { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } };
      expect(await ok('patch', 'statefulset', 'web', '-p', JSON.stringify(patch))).toBe('statefulset.apps/web patched\n');
      expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=90s')).toContain('partitioned roll out complete: 3 new pods have been updated');
      await waitUntil('the update revision is current', (view) => statefulSet(view).status?.currentRevision === update && webPods(view).filter(running).length === 3, 90_000);
    });
    expect(deleted).toEqual(['web-1', 'web-0']);
    const view = harness.cluster.projection.view();
    expect(revisions(view)).toEqual([
      ['web-0', 'logplane/echo:2', update],
      ['web-1', 'logplane/echo:2', update],
      ['web-2', 'logplane/echo:2', update],
    ]);
    expect(statefulSet(view).status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, currentRevision: update, updateRevision: update });
  }, 180_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
