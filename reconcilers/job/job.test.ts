import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, Job, JobSpec, JobStatus, ObjectCreated, ObjectDeleted, ObjectUpdated, Pod } from '../../schemas/index.ts';
import { isoTime } from '../replicaset/objects.ts';
import { createTestCluster, nodeObject, podKey, settle, type TestCluster } from '../testing.ts';
import {
  createJobController,
  decideJob,
  formatIndexes,
  JOB_COMPLETION_INDEX,
  JOB_TRACKING_FINALIZER,
  jobKeysFor,
  matchSuccessPolicy,
  parseIndexes,
  remainingBackoffMs,
} from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const KEY = 'Job.batch/default/pi';
const T0 = Date.UTC(2030, 0, 1);

/** A Job as the apiserver stores it (defaults applied). */
const jobObject = (spec: Partial<JobSpec> = {}): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'pi', namespace: 'default' },
  spec: {
    completions: 1,
    parallelism: 1,
    backoffLimit: 6,
    completionMode: 'NonIndexed',
    suspend: false,
    podReplacementPolicy: 'TerminatingOrFailed',
    template: { metadata: { labels: { app: 'pi' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } },
    ...spec,
  },
});

const setup = (spec: Partial<JobSpec> = {}) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  const job = cluster.create(jobObject(spec));
  return { cluster, job };
};

const job = (cluster: TestCluster): Job => cluster.view().get(KEY) as Job;
const pods = (cluster: TestCluster): Pod[] => cluster.view().list('Pod', 'default') as Pod[];
const running = (cluster: TestCluster): Pod[] => pods(cluster).filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
const creates = (commands: readonly EventBody[]): Pod[] =>
  commands.filter((c): c is ObjectCreated => c.type === 'ObjectCreated').map((c) => c.object as Pod);
const deletes = (commands: readonly EventBody[]): string[] =>
  commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted').map((c) => c.name);
const statusOf = (commands: readonly EventBody[]): JobStatus | undefined =>
  (commands.find((c): c is ObjectUpdated => c.type === 'ObjectUpdated' && c.subresource === 'status')?.object as Job | undefined)?.status;
const conditionsOf = (cluster: TestCluster): [string, string, string | undefined][] =>
  (job(cluster).status?.conditions ?? []).map((c) => [c.type, c.status, c.reason]);

/** Runs the job controller and the simulated node agent to a fixed point at `now`. */
const run = (cluster: TestCluster, now: number, options = {}): void => {
  settle(cluster, [createJobController(options)], { now, node: 'n1' });
};

/** The node agent reports `pod`'s container exited with `exitCode` at `at`. */
const finish = (cluster: TestCluster, pod: Pod, exitCode: number, at: number): void => {
  cluster.podStatus(pod.metadata.name, {
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: isoTime(at) }],
    containerStatuses: [
      { name: 'main', image: 'logplane/crasher', ready: false, restartCount: 0, state: { terminated: { exitCode, finishedAt: isoTime(at), reason: exitCode === 0 ? 'Completed' : 'Error' } } },
    ],
  });
};

describe('job decide', () => {
  it('creates min(parallelism, completions) pods from the template: Job labels, tracking finalizer, controller reference, deterministic names', () => {
    const { cluster, job: stored } = setup({ completions: 5, parallelism: 2 });
    const decision = decideJob(KEY, cluster.view(), T0);
    const created = creates(decision.commands);
    expect(created).toHaveLength(2);
    const uid = stored.metadata.uid ?? '';
    for (const pod of created) {
      expect(pod.metadata.name).toMatch(/^pi-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(pod.metadata.labels).toEqual({
        app: 'pi',
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': 'pi',
        'controller-uid': uid,
        'job-name': 'pi',
      });
      expect(pod.metadata.finalizers).toEqual([JOB_TRACKING_FINALIZER]);
      expect(pod.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid, controller: true, blockOwnerDeletion: true }]);
    }
    expect(statusOf(decision.commands)).toEqual({ active: 2, ready: 0, terminating: 0, uncountedTerminatedPods: {}, startTime: isoTime(T0) });
    expect(decideJob(KEY, cluster.view(), T0)).toEqual(decision);
    cluster.apply(...decision.commands);
    expect(creates(decideJob(KEY, cluster.view(), T0).commands)).toEqual([]);
  });

  it('counts finished pods through uncountedTerminatedPods before removing their finalizers, then completes', () => {
    const { cluster } = setup({ completions: 3, parallelism: 2 });
    run(cluster, T0);
    const [first] = running(cluster);
    finish(cluster, first as Pod, 0, T0 + 1_000);
    // Round 1 records the uid and creates the next pod; the finalizer stays.
    const record = decideJob(KEY, cluster.view(), T0 + 2_000);
    expect(statusOf(record.commands)?.uncountedTerminatedPods).toEqual({ succeeded: [first?.metadata.uid] });
    expect(record.commands.filter((c) => c.type === 'ObjectUpdated' && c.subresource === null)).toEqual([]);
    expect(creates(record.commands)).toHaveLength(1);
    cluster.apply(...record.commands);
    // Round 2: the record is stored, so the finalizer goes.
    const release = decideJob(KEY, cluster.view(), T0 + 2_000);
    const update = release.commands.find((c): c is ObjectUpdated => c.type === 'ObjectUpdated' && c.subresource === null);
    expect(update?.object.metadata.name).toBe(first?.metadata.name);
    expect(update?.object.metadata.finalizers).toBeUndefined();
    cluster.apply(...release.commands);
    // Round 3: the uid moves into the counter.
    const count = decideJob(KEY, cluster.view(), T0 + 2_000);
    expect(statusOf(count.commands)).toMatchObject({ succeeded: 1, uncountedTerminatedPods: {} });
    cluster.apply(...count.commands);
    run(cluster, T0 + 2_000);
    expect(running(cluster)).toHaveLength(2);

    for (const pod of running(cluster)) finish(cluster, pod, 0, T0 + 3_000);
    run(cluster, T0 + 6_000);
    expect(running(cluster)).toHaveLength(0);
    const status = job(cluster).status;
    expect(status).toMatchObject({ succeeded: 3, completionTime: isoTime(T0 + 6_000) });
    expect(status).not.toHaveProperty('failed');
    expect(status).not.toHaveProperty('active');
    expect(conditionsOf(cluster)).toEqual([
      ['SuccessCriteriaMet', 'True', 'CompletionsReached'],
      ['Complete', 'True', 'CompletionsReached'],
    ]);
    expect(job(cluster).status?.conditions?.[1]?.message).toBe('Reached expected number of succeeded pods');
    expect(pods(cluster)).toHaveLength(3);
    expect(pods(cluster).every((p) => p.metadata.finalizers === undefined)).toBe(true);
  });

  it('retries a failed pod after the exponential backoff, and fails at its backoffLimit with BackoffLimitExceeded', () => {
    const { cluster } = setup({ backoffLimit: 1 });
    run(cluster, T0);
    finish(cluster, running(cluster)[0] as Pod, 1, T0 + 1_000);
    run(cluster, T0 + 2_000);
    expect(job(cluster).status).toMatchObject({ failed: 1 });
    expect(job(cluster).status).not.toHaveProperty('active');
    // The second pod waits for 10 s after the failure.
    const waiting = decideJob(KEY, cluster.view(), T0 + 2_000);
    expect(creates(waiting.commands)).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(9_000);
    run(cluster, T0 + 11_000);
    expect(running(cluster)).toHaveLength(1);
    finish(cluster, running(cluster)[0] as Pod, 1, T0 + 12_000);
    run(cluster, T0 + 13_000);
    expect(conditionsOf(cluster)).toEqual([
      ['FailureTarget', 'True', 'BackoffLimitExceeded'],
      ['Failed', 'True', 'BackoffLimitExceeded'],
    ]);
    expect(job(cluster).status).toMatchObject({ failed: 2 });
    expect(job(cluster).status).not.toHaveProperty('active');
    expect(job(cluster).status).not.toHaveProperty('succeeded');
    expect(job(cluster).status?.completionTime).toBeUndefined();
    // Finished: nothing more, even much later.
    expect(decideJob(KEY, cluster.view(), T0 + 3_600_000)).toEqual({ commands: [] });
  });

  it.each([
    { failures: 0, since: 0, remaining: 0 },
    { failures: 1, since: 4_000, remaining: 6_000 },
    { failures: 3, since: 0, remaining: 40_000 },
    { failures: 3, since: 50_000, remaining: 0 },
    { failures: 20, since: 60_000, remaining: 300_000 },
  ])('backoff after $failures failures, $since ms ago: $remaining ms', ({ failures, since, remaining }) => {
    expect(remainingBackoffMs(failures, T0 - since, T0, 10_000, 360_000)).toBe(remaining);
  });

  it('fails a Job active longer than activeDeadlineSeconds: requeues for the deadline, deletes its pods, DeadlineExceeded', () => {
    const { cluster } = setup({ activeDeadlineSeconds: 30, parallelism: 2, completions: 2 });
    const first = decideJob(KEY, cluster.view(), T0);
    expect(first.requeueAfterMs).toBe(30_000);
    run(cluster, T0);
    expect(running(cluster)).toHaveLength(2);
    const late = decideJob(KEY, cluster.view(), T0 + 30_000);
    expect(deletes(late.commands)).toHaveLength(2);
    expect(statusOf(late.commands)?.conditions).toEqual([
      { type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline', lastProbeTime: isoTime(T0 + 30_000), lastTransitionTime: isoTime(T0 + 30_000) },
    ]);
    run(cluster, T0 + 31_000);
    expect(conditionsOf(cluster)).toEqual([
      ['FailureTarget', 'True', 'DeadlineExceeded'],
      ['Failed', 'True', 'DeadlineExceeded'],
    ]);
    expect(pods(cluster)).toEqual([]);
    expect(job(cluster).status).toMatchObject({ failed: 2, terminating: 0 });
    expect(job(cluster).status).not.toHaveProperty('active');
  });

  it('runs an Indexed Job: one pod per index with its annotation, label, env and hostname; completedIndexes as intervals', () => {
    const { cluster } = setup({ completionMode: 'Indexed', completions: 4, parallelism: 4 });
    const created = creates(decideJob(KEY, cluster.view(), T0).commands);
    expect(created.map((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX])).toEqual(['0', '1', '2', '3']);
    const pod = created[2] as Pod;
    expect(pod.metadata.name).toMatch(/^pi-2-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(pod.metadata.labels?.[JOB_COMPLETION_INDEX]).toBe('2');
    expect(pod.spec.hostname).toBe('pi-2');
    expect(pod.spec.containers[0]?.env).toEqual([
      { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" } } },
    ]);
    run(cluster, T0);
    const byIndex = (index: number): Pod => running(cluster).find((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX] === String(index)) as Pod;
    finish(cluster, byIndex(0), 0, T0 + 1_000);
    finish(cluster, byIndex(2), 0, T0 + 1_000);
    finish(cluster, byIndex(3), 0, T0 + 1_000);
    run(cluster, T0 + 2_000);
    expect(job(cluster).status).toMatchObject({ completedIndexes: '0,2,3', succeeded: 3, active: 1 });
    // A failed index is retried with a new pod of the same index.
    finish(cluster, byIndex(1), 1, T0 + 3_000);
    run(cluster, T0 + 20_000);
    const retry = running(cluster);
    expect(retry.map((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX])).toEqual(['1']);
    finish(cluster, retry[0] as Pod, 0, T0 + 21_000);
    run(cluster, T0 + 22_000);
    expect(job(cluster).status).toMatchObject({ completedIndexes: '0-3', succeeded: 4, failed: 1 });
    expect(conditionsOf(cluster).map(([type]) => type)).toEqual(['SuccessCriteriaMet', 'Complete']);
  });

  it('limits failures per index (backoffLimitPerIndex): a retry carries the failure count, waits its own backoff, and the Job fails with FailedIndexes', () => {
    const { cluster } = setup({ completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimit: 2147483647, backoffLimitPerIndex: 1 });
    run(cluster, T0);
    const byIndex = (index: number): Pod => running(cluster).find((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX] === String(index)) as Pod;
    expect(byIndex(1).metadata.annotations?.['batch.kubernetes.io/job-index-failure-count']).toBe('0');
    finish(cluster, byIndex(1), 1, T0 + 1_000);
    finish(cluster, byIndex(0), 0, T0 + 1_000);
    run(cluster, T0 + 2_000);
    // Index 1 waits for its backoff; the Job's other indexes are not held back.
    const waiting = decideJob(KEY, cluster.view(), T0 + 2_000);
    expect(creates(waiting.commands)).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(9_000);
    expect(job(cluster).status).toMatchObject({ failed: 1, failedIndexes: '', completedIndexes: '0' });
    run(cluster, T0 + 11_000);
    const retry = byIndex(1);
    expect(retry.metadata.annotations?.['batch.kubernetes.io/job-index-failure-count']).toBe('1');
    finish(cluster, retry, 1, T0 + 12_000);
    run(cluster, T0 + 13_000);
    expect(job(cluster).status).toMatchObject({ failed: 2, failedIndexes: '1', completedIndexes: '0' });
    expect(conditionsOf(cluster)).toEqual([]);
    // No third pod for index 1; the Job fails once index 2 is done too.
    expect(running(cluster).map((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX])).toEqual(['2']);
    finish(cluster, byIndex(2), 0, T0 + 14_000);
    run(cluster, T0 + 15_000);
    expect(conditionsOf(cluster)).toEqual([
      ['FailureTarget', 'True', 'FailedIndexes'],
      ['Failed', 'True', 'FailedIndexes'],
    ]);
    expect(job(cluster).status).toMatchObject({ failed: 2, succeeded: 2, failedIndexes: '1', completedIndexes: '0,2' });
  });

  it('succeeds by its success policy: the matched rule completes the Job and its other pods are deleted uncounted', () => {
    const { cluster } = setup({ completionMode: 'Indexed', completions: 4, parallelism: 4, successPolicy: { rules: [{ succeededIndexes: '0,3', succeededCount: 5 }, { succeededIndexes: '1-2' }] } });
    run(cluster, T0);
    const byIndex = (index: number): Pod => running(cluster).find((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX] === String(index)) as Pod;
    finish(cluster, byIndex(1), 0, T0 + 1_000);
    run(cluster, T0 + 2_000);
    expect(conditionsOf(cluster)).toEqual([]);
    finish(cluster, byIndex(2), 0, T0 + 3_000);
    run(cluster, T0 + 4_000);
    expect(conditionsOf(cluster)).toEqual([
      ['SuccessCriteriaMet', 'True', 'SuccessPolicy'],
      ['Complete', 'True', 'SuccessPolicy'],
    ]);
    expect(job(cluster).status?.conditions?.[0]?.message).toBe('Matched rules at index 1');
    expect(job(cluster).status).toMatchObject({ succeeded: 2, completedIndexes: '1,2' });
    expect(job(cluster).status).not.toHaveProperty('failed');
    expect(running(cluster)).toEqual([]);
  });

  it.each([
    { rules: [{ succeededCount: 2 }], succeeded: [0, 5], matched: 'Matched rules at index 0' },
    { rules: [{ succeededCount: 3 }], succeeded: [0, 5], matched: undefined },
    { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }], succeeded: [1, 2, 7], matched: 'Matched rules at index 0' },
    { rules: [{ succeededIndexes: 'x' }, { succeededIndexes: '4' }], succeeded: [4], matched: 'Matched rules at index 1' },
    { rules: [{ succeededIndexes: '0-2' }], succeeded: [0, 2], matched: undefined },
  ])('success policy $rules with $succeeded succeeded: $matched', ({ rules, succeeded, matched }) => {
    expect(matchSuccessPolicy(rules, 10, new Set(succeeded))).toBe(matched);
  });

  it('suspends: no pods and no startTime while suspended; resuming sets startTime and creates the pods', () => {
    const { cluster } = setup({ suspend: true, parallelism: 2, completions: 2 });
    run(cluster, T0);
    expect(pods(cluster)).toEqual([]);
    expect(job(cluster).status?.startTime).toBeUndefined();
    expect(conditionsOf(cluster)).toEqual([['Suspended', 'True', 'JobSuspended']]);
    const stored = job(cluster);
    cluster.apply({ type: 'ObjectUpdated', object: { ...stored, spec: { ...stored.spec, suspend: false } as JobSpec }, expectedResourceVersion: null, subresource: null });
    run(cluster, T0 + 5_000);
    expect(running(cluster)).toHaveLength(2);
    expect(conditionsOf(cluster)).toEqual([['Suspended', 'False', 'JobResumed']]);
    expect(job(cluster).status?.startTime).toBe(isoTime(T0 + 5_000));
    // Suspending a running Job deletes its active pods, their finalizers first: they are not counted as failures.
    const resumed = job(cluster);
    cluster.apply({ type: 'ObjectUpdated', object: { ...resumed, spec: { ...resumed.spec, suspend: true } as JobSpec }, expectedResourceVersion: null, subresource: null });
    const suspension = decideJob(KEY, cluster.view(), T0 + 6_000);
    const steps = suspension.commands.slice(0, 4).map((c) => (c.type === 'ObjectUpdated' ? `release ${c.object.metadata.name}` : c.type === 'ObjectDeleted' ? `delete ${c.name}` : c.type));
    // Pod by pod: the release, then the delete.
    const pairs = [steps.slice(0, 2), steps.slice(2, 4)].map(([release, remove]) => [release?.replace('release ', ''), remove?.replace('delete ', '')]);
    expect(pairs.every(([released, deleted]) => released === deleted)).toBe(true);
    expect(pairs.map(([name]) => name).sort()).toEqual(running(cluster).map((pod) => pod.metadata.name).sort());
    expect(steps.filter((step) => step.startsWith('release'))).toHaveLength(2);
    expect(statusOf(suspension.commands)).toMatchObject({ terminating: 2, ready: 0 });
    run(cluster, T0 + 7_000);
    expect(pods(cluster)).toEqual([]);
    expect(job(cluster).status).not.toHaveProperty('failed');
    expect(conditionsOf(cluster)).toEqual([['Suspended', 'True', 'JobSuspended']]);
  });

  it('applies the pod failure policy: Ignore does not count, FailJob fails the Job with PodFailurePolicy', () => {
    const { cluster } = setup({
      backoffLimit: 0,
      podReplacementPolicy: 'Failed',
      podFailurePolicy: {
        rules: [
          { action: 'Ignore', onExitCodes: { operator: 'In', values: [3] } },
          { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
        ],
      },
    });
    run(cluster, T0);
    finish(cluster, running(cluster)[0] as Pod, 3, T0 + 1_000);
    run(cluster, T0 + 2_000);
    expect(job(cluster).status).toMatchObject({ active: 1 });
    expect(job(cluster).status).not.toHaveProperty('failed');
    expect(conditionsOf(cluster)).toEqual([]);
    const second = running(cluster)[0] as Pod;
    finish(cluster, second, 42, T0 + 3_000);
    run(cluster, T0 + 4_000);
    expect(conditionsOf(cluster)).toEqual([
      ['FailureTarget', 'True', 'PodFailurePolicy'],
      ['Failed', 'True', 'PodFailurePolicy'],
    ]);
    expect(job(cluster).status?.conditions?.[0]?.message).toBe(`Container main for pod default/${second.metadata.name} failed with exit code 42 matching FailJob rule at index 1`);
    expect(job(cluster).status?.failed).toBe(1);
  });

  it('counts a deleted pod as failed and replaces it', () => {
    const { cluster } = setup({ completions: 1 });
    run(cluster, T0);
    const pod = running(cluster)[0] as Pod;
    cluster.apply({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name: pod.metadata.name, expectedResourceVersion: null, uid: pod.metadata.uid ?? null, propagationPolicy: null, gracePeriodSeconds: null });
    run(cluster, T0 + 1_000);
    expect(cluster.view().get(podKey(pod.metadata.name))).toBeUndefined();
    expect(job(cluster).status?.failed).toBe(1);
    run(cluster, T0 + 20_000);
    expect(running(cluster)).toHaveLength(1);
  });

  it('releases the finalizers of the pods of a deleted Job (orphan pod keys)', () => {
    const { cluster, job: stored } = setup({ completions: 2, parallelism: 2 });
    run(cluster, T0);
    const before = pods(cluster);
    expect(before.every((p) => p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER))).toBe(true);
    const [record] = cluster.apply({ type: 'ObjectDeleted', kind: 'Job', namespace: 'default', name: 'pi', expectedResourceVersion: null, uid: stored.metadata.uid ?? null, propagationPolicy: 'Orphan', gracePeriodSeconds: null });
    expect(record?.verdict.type).toBe('accepted');
    // With the orphan finalizer the Job stays until the garbage collector releases it: delete it outright.
    cluster.apply({ type: 'ObjectUpdated', object: { ...job(cluster), metadata: { ...job(cluster).metadata, finalizers: [] } }, expectedResourceVersion: null, subresource: null });
    expect(cluster.view().get(KEY)).toBeUndefined();
    const controller = createJobController();
    expect([...controller.initialKeys(cluster.view())].sort()).toEqual(before.map((p) => podKey(p.metadata.name)).sort());
    const change = { eventId: 'e', partition: 0, offset: 0, type: 'MODIFIED', key: podKey(before[0]?.metadata.name ?? ''), object: before[0] as Pod, topic: 'desired' } as const;
    expect(jobKeysFor(change, cluster.view())).toEqual([change.key]);
    run(cluster, T0 + 1_000);
    expect(pods(cluster).every((p) => p.metadata.finalizers === undefined)).toBe(true);
  });
});

describe('completed indexes', () => {
  it.each([
    { indexes: [], text: '' },
    { indexes: [0], text: '0' },
    { indexes: [0, 1], text: '0,1' },
    { indexes: [0, 1, 2], text: '0-2' },
    { indexes: [7, 1, 3, 4, 5, 3], text: '1,3-5,7' },
  ])('$indexes ↔ "$text"', ({ indexes, text }) => {
    expect(formatIndexes(indexes)).toBe(text);
    expect(parseIndexes(text, 100)).toEqual([...new Set(indexes)].sort((a, b) => a - b));
  });

  it('drops indexes at or above completions and malformed parts', () => {
    expect(parseIndexes('1,3-9,x,5-2', 5)).toEqual([1, 3, 4]);
  });
});
