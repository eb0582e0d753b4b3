/**
 * The ReplicationController and Job controllers end to end on both logs, with the real
 * kubectl against `startCluster` (every controller, one process-runtime node agent: pods
 * are real OS processes; a Job's pods run the built-in `logplane/crasher`, which exits
 * with EXIT_CODE): an RC created with `kubectl create -f`, scaled to 2, a deleted pod
 * recreated; a Job of 10 completions with parallelism 3 completing (COMPLETIONS 10/10);
 * a failing Job stopping at its backoffLimit with BackoffLimitExceeded; and a replay of the
 * log from offset 0 giving the live projection's state hash; and, on the sim runtime, an
 * Indexed Job (one pod per index, its hostname, completedIndexes).
 */
import { describe, expect, it } from 'vitest';
import { audit, type View } from '../../projections/index.ts';
import { isPodActive, isPodReady } from '../../reconcilers/replicaset/pods.ts';
import type { Job, Pod, ReplicationController } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const RC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: mysql
spec:
  replicas: 1
  template:
    metadata:
      labels:
        app: mysql
    spec:
      containers:
      - name: mysql
        image: logplane/sleeper
`;

const job = (name: string, spec: string, exitCode: number): string => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
spec:
${spec}
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: logplane/crasher
        env:
        - name: EXIT_CODE
          value: "${exitCode}"
        - name: EXIT_AFTER_MS
          value: "200"
`;

const podsOf = (view: View, label: string, value: string): Pod[] =>
  (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.[label] === value);

describe.each(LOG_ADAPTERS)('ReplicationController and Job controllers with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-workloads', { runtime: 'process' });
  const { kubectl, ok, file, waitUntil } = harness;

  it('creates an RC of 1, scales it to 2, and recreates a deleted pod', async () => {
    expect(await ok('create', '-f', file('rc.yaml', RC))).toBe('replicationcontroller/mysql created\n');
    const running = (view: View): Pod[] => podsOf(view, 'app', 'mysql').filter((pod) => isPodActive(pod) && pod.status?.phase === 'Running' && isPodReady(pod));
    const rcStatus = (view: View) => (view.get('ReplicationController/default/mysql') as ReplicationController | undefined)?.status;
    await waitUntil('1 mysql pod runs', (view) => running(view).length === 1 && rcStatus(view)?.readyReplicas === 1);
    const [first] = running(harness.cluster.projection.view());
    expect(first?.metadata.ownerReferences).toEqual([expect.objectContaining({ apiVersion: 'v1', kind: 'ReplicationController', name: 'mysql', controller: true })]);

    expect(await ok('scale', 'rc', 'mysql', '--replicas=2')).toBe('replicationcontroller/mysql scaled\n');
    await waitUntil('2 mysql pods run', (view) => running(view).length === 2 && rcStatus(view)?.readyReplicas === 2 && rcStatus(view)?.availableReplicas === 2);
    expect(rcStatus(harness.cluster.projection.view())).toMatchObject({ replicas: 2, fullyLabeledReplicas: 2, observedGeneration: 2 });
    const table = await ok('get', 'rc', 'mysql');
    expect(table).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\nmysql\s+2\s+2\s+2\s+\d+s\n$/);
    const pods = await ok('get', 'pods', '-l', 'app=mysql', '-o', 'jsonpath={.items[*].status.phase}');
    expect(pods.split(' ')).toEqual(['Running', 'Running']);

    const victim = first?.metadata.name ?? '';
    expect(await ok('delete', 'pod', victim)).toBe(`pod "${victim}" deleted\n`);
    await waitUntil(
      'the deleted pod is replaced and the RC reports 2 ready replicas',
      (view) => running(view).length === 2 && !running(view).some((pod) => pod.metadata.name === victim) && rcStatus(view)?.readyReplicas === 2,
    );
    expect(podsOf(harness.cluster.projection.view(), 'app', 'mysql').map((pod) => pod.metadata.name)).not.toContain(victim);
  }, 120_000);

  it('replaces an RC by a second one by hand, rolling-update style: scale the new one up and the old one down', async () => {
    const rc = (name: string, version: string, replicas: number): string => `apiVersion: v1
kind: ReplicationController
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    app: frontend
    version: "${version}"
  template:
    metadata:
      labels:
        app: frontend
        version: "${version}"
    spec:
      containers:
      - name: web
        image: logplane/sleeper
`;
    const running = (view: View, version: string): Pod[] =>
      podsOf(view, 'app', 'frontend').filter((pod) => pod.metadata.labels?.['version'] === version && isPodActive(pod) && pod.status?.phase === 'Running' && isPodReady(pod));
    const active = (view: View): Pod[] => podsOf(view, 'app', 'frontend').filter(isPodActive);
    expect(await ok('create', '-f', file('frontend-v1.yaml', rc('frontend-v1', '1', 2)))).toBe('replicationcontroller/frontend-v1 created\n');
    await waitUntil('2 v1 pods run', (view) => running(view, '1').length === 2);
    // The new RC's selector (version 2) does not match the old pods, so it starts from none.
    expect(await ok('create', '-f', file('frontend-v2.yaml', rc('frontend-v2', '2', 0)))).toBe('replicationcontroller/frontend-v2 created\n');
    for (const [v2, v1] of [[1, 1], [2, 0]] as const) {
      expect(await ok('scale', 'rc', 'frontend-v2', `--replicas=${v2}`)).toBe('replicationcontroller/frontend-v2 scaled\n');
      await waitUntil(`${v2} v2 pod(s) run`, (view) => running(view, '2').length === v2);
      expect(await ok('scale', 'rc', 'frontend-v1', `--replicas=${v1}`)).toBe('replicationcontroller/frontend-v1 scaled\n');
      await waitUntil(`${v1} v1 pod(s) left`, (view) => active(view).filter((pod) => pod.metadata.labels?.['version'] === '1').length === v1);
    }
    expect(await ok('delete', 'rc', 'frontend-v1')).toBe('replicationcontroller "frontend-v1" deleted\n');
    const left = active(harness.cluster.projection.view());
    expect(left.map((pod) => pod.metadata.labels?.['version'])).toEqual(['2', '2']);
    expect(left.every((pod) => pod.metadata.ownerReferences?.[0]?.name === 'frontend-v2')).toBe(true);
    await waitUntil('frontend-v2 reports 2 ready replicas', (view) => (view.get('ReplicationController/default/frontend-v2') as ReplicationController | undefined)?.status?.readyReplicas === 2);
    expect(await ok('get', 'rc', 'frontend-v2')).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\nfrontend-v2\s+2\s+2\s+2\s+\d+s\n$/);
  }, 120_000);

  it('completes a Job of 10 completions with parallelism 3', async () => {
    expect(await ok('create', '-f', file('job.yaml', job('pi', '  completions: 10\n  parallelism: 3', 0)))).toBe('job.batch/pi created\n');
    let most = 0;
    await waitUntil(
      'the Job is Complete',
      (view) => {
        const active = podsOf(view, 'job-name', 'pi').filter((pod) => isPodActive(pod)).length;
        most = Math.max(most, active);
        return (view.get('Job.batch/default/pi') as Job | undefined)?.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') === true;
      },
      120_000,
    );
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThan(1);
    const table = await ok('get', 'job', 'pi');
    expect(table).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\npi\s+Complete\s+10\/10\s+\d+s\s+\d+s\n$/);
    const stored = JSON.parse(await ok('get', 'job', 'pi', '-o', 'json')) as Job;
    expect(stored.status).toMatchObject({ succeeded: 10, ready: 0, terminating: 0 });
    expect(stored.status).not.toHaveProperty('failed');
    expect(stored.status).not.toHaveProperty('active');
    expect(stored.status?.completionTime).toEqual(expect.any(String));
    expect(stored.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
      ['Complete', 'True', 'CompletionsReached'],
    ]);
    const pods = JSON.parse(await ok('get', 'pods', '-l', 'batch.kubernetes.io/job-name=pi', '-o', 'json')) as { items: Pod[] };
    expect(pods.items).toHaveLength(10);
    expect(pods.items.every((pod) => pod.status?.phase === 'Succeeded' && pod.metadata.finalizers === undefined)).toBe(true);
    expect(new Set(pods.items.map((pod) => pod.metadata.labels?.['batch.kubernetes.io/controller-uid']))).toEqual(new Set([stored.metadata.uid]));
  }, 150_000);

  it('stops a failing Job at its backoffLimit with a Failed condition, reason BackoffLimitExceeded', async () => {
    expect(await ok('create', '-f', file('fail.yaml', job('fail', '  backoffLimit: 1', 3)))).toBe('job.batch/fail created\n');
    const failed = (view: View): Job | undefined => {
      const stored = view.get('Job.batch/default/fail') as Job | undefined;
      return stored?.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True') ? stored : undefined;
    };
    await waitUntil('the Job failed', (view) => failed(view) !== undefined, 90_000);
    const stored = JSON.parse(await ok('get', 'job', 'fail', '-o', 'json')) as Job;
    expect(stored.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
      ['Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
    ]);
    expect(stored.status).toMatchObject({ failed: 2 });
    expect(stored.status).not.toHaveProperty('active');
    expect(stored.status).not.toHaveProperty('succeeded');
    // backoffLimit 1: the first failure is retried once (after kube's 10 s backoff), the second ends it.
    const pods = podsOf(harness.cluster.projection.view(), 'job-name', 'fail');
    expect(pods.map((pod) => pod.status?.phase)).toEqual(['Failed', 'Failed']);
    const finished = pods.map((pod) => Date.parse(pod.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt ?? '')).sort((a, b) => a - b);
    const secondStarted = Math.max(...pods.map((pod) => Date.parse(pod.metadata.creationTimestamp ?? '')));
    expect(secondStarted - (finished[0] ?? 0)).toBeGreaterThanOrEqual(9_000);
    expect(await ok('get', 'job', 'fail')).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nfail\s+Failed\s+0\/1\s+\d+s\s+\d+s\n$/);
  }, 120_000);

  it('deletes a finished Job after ttlSecondsAfterFinished, its pods with it (ttl-after-finished and the garbage collector)', async () => {
    expect(await ok('create', '-f', file('ttl.yaml', job('short', '  ttlSecondsAfterFinished: 1', 0)))).toBe('job.batch/short created\n');
    let uid: string | undefined;
    let completionTime: string | undefined;
    await waitUntil('the Job completes', (view) => {
      const stored = view.get('Job.batch/default/short') as Job | undefined;
      uid = stored?.metadata.uid ?? uid;
      completionTime = stored?.status?.completionTime ?? completionTime;
      return stored?.status?.conditions?.some((c) => c.type === 'Complete') === true;
    });
    await waitUntil('the Job and its pod are gone', (view) => view.get('Job.batch/default/short') === undefined && podsOf(view, 'job-name', 'short').length === 0, 30_000);
    expect((await kubectl('get', 'job', 'short')).stderr).toBe('Error from server (NotFound): jobs.batch "short" not found\n');
    // The Job's deletion is the ttl-after-finished controller's, a second or more after it finished.
    const events = audit(harness.cluster.projection.store, harness.cluster.log.layout.partitions, { allActors: true, limit: 100_000 });
    const deletions = events.filter((e) => e.key === 'Job.batch/default/short' && e.eventType === 'ObjectDeleted' && e.verdict.type === 'accepted');
    expect(deletions.map((e) => e.actor)).toEqual([{ type: 'controller', name: 'ttl-after-finished' }]);
    expect((deletions[0]?.time ?? 0) - Date.parse(completionTime ?? '')).toBeGreaterThanOrEqual(1_000);
    expect(uid).toMatch(/^[0-9a-f-]{36}$/);
  }, 60_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.events).toBeGreaterThan(100);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});

describe.each(LOG_ADAPTERS)('an Indexed Job on the sim runtime with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-workloads-sim', { nodes: 2, simStartDelayMs: 50 });
  const { ok, file, waitUntil } = harness;

  it('runs one pod per completion index, with its hostname, to Complete with completedIndexes 0-3', async () => {
    expect(await ok('create', '-f', file('indexed.yaml', job('indexed', '  completions: 4\n  parallelism: 2\n  completionMode: Indexed', 0)))).toBe('job.batch/indexed created\n');
    await waitUntil('the Indexed Job completes', (view) => (view.get('Job.batch/default/indexed') as Job | undefined)?.status?.conditions?.some((c) => c.type === 'Complete') === true);
    expect(await ok('get', 'job', 'indexed')).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nindexed\s+Complete\s+4\/4\s+\d+s\s+\d+s\n$/);
    const stored = JSON.parse(await ok('get', 'job', 'indexed', '-o', 'json')) as Job;
    expect(stored.status).toMatchObject({ completedIndexes: '0-3', succeeded: 4 });
    const pods = (JSON.parse(await ok('get', 'pods', '-l', 'job-name=indexed', '-o', 'json')) as { items: Pod[] }).items;
    expect(pods.map((pod) => [pod.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], pod.spec.hostname]).sort()).toEqual([
      ['0', 'indexed-0'],
      ['1', 'indexed-1'],
      ['2', 'indexed-2'],
      ['3', 'indexed-3'],
    ]);
    expect(pods.every((pod) => pod.status?.phase === 'Succeeded')).toBe(true);
  }, 90_000);
});
