/**
 * A controller's create that admission refuses, end to end with the real kubectl on `logplane
 * up --runtime sim`: with a LimitRange whose max a Deployment's pods exceed, the ReplicaSet
 * creates no pod and records kube's Warning FailedCreate "Error creating: pods "…" is
 * forbidden: …" (no SuccessfulCreate), `kubectl describe rs` shows it, and the controller
 * comes back to the ReplicaSet by itself (kube's rate-limited requeue; nothing about the
 * ReplicaSet changes): once the LimitRange is gone, its pods are created and run. A replay
 * from offset 0 gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import type { Event, Pod, ReplicaSet } from '../../schemas/index.ts';
import { replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const LIMITS = `apiVersion: v1
kind: LimitRange
metadata:
  name: small
spec:
  limits:
  - type: Container
    max:
      cpu: 500m
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: big
spec:
  replicas: 2
  selector:
    matchLabels: {app: big}
  template:
    metadata:
      labels: {app: big}
    spec:
      containers:
      - name: main
        image: logplane/sleeper
        resources:
          limits: {cpu: "1"}
`;

describe('a create refused by admission is a FailedCreate Event, and the controller retries', () => {
  const k = useKubectlCluster('embedded', 'e2e-failed-create', { nodes: 1 });
  const replicaSet = (): ReplicaSet | undefined => k.cluster.projection.view().list('ReplicaSet', 'default').find((rs) => rs.metadata.name.startsWith('big-')) as ReplicaSet | undefined;
  const eventsAbout = (name: string): Event[] =>
    (k.cluster.projection.view().list('Event', 'default') as Event[]).filter((event) => event.involvedObject.kind === 'ReplicaSet' && event.involvedObject.name === name);
  const bigPods = (): number => k.cluster.projection.view().list('Pod', 'default').filter((pod) => pod.metadata.name.startsWith('big-')).length;

  it('records FailedCreate with the apiserver’s message on the ReplicaSet and creates no pod', async () => {
    await k.expectOk('apply', '-f', k.file('limits.yaml', LIMITS));
    await k.expectOk('apply', '-f', k.file('big.yaml', DEPLOYMENT));
    await k.waitUntil('a FailedCreate event', () => {
      const rs = replicaSet();
      return rs !== undefined && eventsAbout(rs.metadata.name).some((event) => event.reason === 'FailedCreate');
    });
    const name = replicaSet()?.metadata.name ?? '';
    const failed = eventsAbout(name).filter((event) => event.reason === 'FailedCreate');
    expect(failed.length).toBeGreaterThan(0);
    for (const event of failed) {
      expect(event.type).toBe('Warning');
      expect(event.source?.component).toBe('replicaset-controller');
      expect(event.message).toMatch(/^Error creating: pods "big-[a-z0-9]+-[a-z0-9]+" is forbidden: maximum cpu usage per Container is 500m, but limit is 1$/);
    }
    expect(eventsAbout(name).filter((event) => event.reason === 'SuccessfulCreate')).toEqual([]);
    expect(bigPods()).toBe(0);
    const described = await k.expectOk('describe', 'rs', name);
    expect(described).toMatch(/Warning\s+FailedCreate\s+.*replicaset-controller\s+Error creating: pods "big-[a-z0-9-]+" is forbidden: maximum cpu usage per Container is 500m, but limit is 1/);
  }, 90_000);

  it('creates the pods once the LimitRange is gone, with no change to the ReplicaSet', async () => {
    await k.expectOk('delete', 'limitrange', 'small');
    await k.waitUntil('two big pods Running', (view) => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.name.startsWith('big-') && pod.status?.phase === 'Running').length === 2, 90_000);
    const name = replicaSet()?.metadata.name ?? '';
    expect(eventsAbout(name).filter((event) => event.reason === 'SuccessfulCreate').map((event) => event.message).sort()).toHaveLength(2);
    // Only the ReplicaSet's status moved: the retry was the controller's own requeue.
    expect(replicaSet()?.metadata.generation).toBe(1);
  }, 120_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(k.cluster);
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
