/**
 * Deployment history and the CronJob controller end to end on both logs, with the real
 * kubectl against `startCluster` (every controller, one sim-runtime node agent):
 *
 * - a Deployment whose image changes twice has 3 revisions in `kubectl rollout history`,
 *   each with the change-cause it was annotated with; `rollout undo --to-revision=1`
 *   brings the first image back as revision 4 (kubectl reads the ReplicaSets and patches
 *   the template); `rollout pause` holds a template change back (Progressing
 *   DeploymentPaused, no new ReplicaSet) and refuses an undo, `rollout resume` rolls it
 *   out, `rollout restart` rolls out the restartedAt annotation; a smaller
 *   revisionHistoryLimit deletes the oldest ReplicaSets;
 * - a CronJob on `@every 2s` (robfig's descriptor, which kube accepts: a short clock
 *   through the same code path as `* * * * *`) starts a Job named by its scheduled minute
 *   with the scheduled-timestamp annotation; Jobs made with `kubectl create job
 *   --from=cronjob/…` are kept within successfulJobsHistoryLimit, oldest first, and go
 *   with the CronJob when it is deleted;
 * - a replay of the log from offset 0 gives the live projection's state hash.
 */
import { describe, expect, it } from 'vitest';
import { type View } from '../../projections/index.ts';
import type { CronJob, Deployment, Job, Pod, ReplicaSet } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    kubernetes.io/change-cause: create v1
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
        image: nginx:1
`;

const CRONJOB = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: every
spec:
  schedule: "@every 2s"
  successfulJobsHistoryLimit: 2
  failedJobsHistoryLimit: 1
  jobTemplate:
    metadata:
      labels:
        app: every
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: main
            image: logplane/crasher
            env:
            - name: EXIT_CODE
              value: "0"
            - name: EXIT_AFTER_MS
              value: "100"
`;

const isComplete = (job: Job | undefined): boolean => job?.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') === true;

describe.each(LOG_ADAPTERS)('rollout history and CronJobs with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-rollout', { simStartDelayMs: 50 }, { kubectlTimeoutMs: 120_000 });
  const { kubectl, ok, file, waitUntil } = harness;
  const deployment = (view: View): Deployment => view.get('Deployment/default/web') as Deployment;
  const replicaSets = (view: View): ReplicaSet[] => (view.list('ReplicaSet', 'default') as ReplicaSet[]).filter((rs) => rs.metadata.labels?.['app'] === 'web');
  const imageOf = (rs: ReplicaSet): string | undefined => rs.spec.template?.spec.containers[0]?.image;
  const rolledOut = async (): Promise<void> => {
    expect(await ok('rollout', 'status', 'deploy/web', '--timeout', '90s')).toContain('deployment "web" successfully rolled out');
  };
  /** `kubectl rollout history` as [revision, change-cause] rows. */
  const history = async (): Promise<string[][]> =>
    (await ok('rollout', 'history', 'deploy/web'))
      .split('\n')
      .slice(2)
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const [revision = '', ...cause] = line.trim().split(/\s+/);
        return [revision, cause.join(' ')];
      });

  it('keeps 3 revisions with their change-causes and rolls back to revision 1', async () => {
    expect(await ok('apply', '-f', file('web.yaml', DEPLOYMENT))).toBe('deployment.apps/web created\n');
    await rolledOut();
    for (const version of ['2', '3']) {
      expect(await ok('set', 'image', 'deploy/web', `web=nginx:${version}`)).toBe('deployment.apps/web image updated\n');
      expect(await ok('annotate', 'deploy/web', `kubernetes.io/change-cause=image ${version}`, '--overwrite')).toBe('deployment.apps/web annotated\n');
      await rolledOut();
    }
    expect(await history()).toEqual([
      ['1', 'create v1'],
      ['2', 'image 2'],
      ['3', 'image 3'],
    ]);
    const first = await ok('rollout', 'history', 'deploy/web', '--revision=1');
    expect(first).toMatch(/^deployment\.apps\/web with revision #1\nPod Template:\n/);
    expect(first).toMatch(/Image:\s+nginx:1\n/);
    expect((await kubectl('rollout', 'history', 'deploy/web', '--revision=7')).stderr).toBe('error: unable to find the specified revision\n');

    expect(await ok('rollout', 'undo', 'deploy/web', '--to-revision=1')).toBe('deployment.apps/web rolled back\n');
    await rolledOut();
    expect(await ok('get', 'deploy/web', '-o', 'jsonpath={.spec.template.spec.containers[0].image}')).toBe('nginx:1');
    expect(await history()).toEqual([
      ['2', 'image 2'],
      ['3', 'image 3'],
      ['4', 'create v1'],
    ]);
    const view = harness.cluster.projection.view();
    const reused = replicaSets(view).find((rs) => imageOf(rs) === 'nginx:1');
    expect(reused?.metadata.annotations).toMatchObject({ 'deployment.kubernetes.io/revision': '4', 'deployment.kubernetes.io/revision-history': '1' });
    expect(reused?.spec.replicas).toBe(2);
    expect(replicaSets(view)).toHaveLength(3);
    expect(deployment(view).metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('4');
    const pods = (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === 'web' && !pod.metadata.deletionTimestamp);
    expect(pods.map((pod) => pod.spec.containers[0]?.image)).toEqual(['nginx:1', 'nginx:1']);
    // Undoing to the revision that runs already changes nothing.
    expect(await ok('rollout', 'undo', 'deploy/web', '--to-revision=4')).toBe('deployment.apps/web skipped rollback (current template already matches revision 4)\n');
  }, 240_000);

  it('holds a rollout back while paused, refuses an undo, and rolls it out on resume', async () => {
    expect(await ok('rollout', 'pause', 'deploy/web')).toBe('deployment.apps/web paused\n');
    expect((await kubectl('rollout', 'pause', 'deploy/web')).stderr).toBe('error: deployments.apps "web" is already paused\n');
    await ok('set', 'image', 'deploy/web', 'web=nginx:4');
    await waitUntil('the controller has seen the paused template change', (view) => {
      const d = deployment(view);
      return d.status?.observedGeneration === d.metadata.generation && d.status?.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'DeploymentPaused') === true;
    });
    expect(replicaSets(harness.cluster.projection.view()).map(imageOf).sort()).toEqual(['nginx:1', 'nginx:2', 'nginx:3']);
    expect((await kubectl('rollout', 'undo', 'deploy/web')).stderr).toBe(
      "error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again\n",
    );
    expect((await kubectl('rollout', 'restart', 'deploy/web')).stderr).toBe('error: deployments.apps "web" can\'t restart paused deployment (run rollout resume first)\n');

    expect(await ok('rollout', 'resume', 'deploy/web')).toBe('deployment.apps/web resumed\n');
    await rolledOut();
    const current = replicaSets(harness.cluster.projection.view()).find((rs) => imageOf(rs) === 'nginx:4');
    expect(current?.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('5');
    expect((await history()).map(([revision]) => revision)).toEqual(['2', '3', '4', '5']);
  }, 180_000);

  it('restarts with the restartedAt annotation as a new revision, and keeps revisionHistoryLimit old ReplicaSets', async () => {
    expect(await ok('rollout', 'restart', 'deploy/web')).toBe('deployment.apps/web restarted\n');
    await rolledOut();
    const restartedAt = await ok('get', 'deploy/web', '-o', 'jsonpath={.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}');
    expect(restartedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const view = harness.cluster.projection.view();
    const pods = (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === 'web' && !pod.metadata.deletionTimestamp);
    expect(pods.map((pod) => pod.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'])).toEqual([restartedAt, restartedAt]);
    expect((await history()).map(([revision]) => revision)).toEqual(['2', '3', '4', '5', '6']);

    await ok('patch', 'deploy/web', '-p', '{"spec":{"revisionHistoryLimit":2}}');
    await waitUntil('old ReplicaSets beyond the limit are gone', (v) => replicaSets(v).length === 3);
    expect((await history()).map(([revision]) => revision)).toEqual(['4', '5', '6']);
  }, 180_000);

  it('starts a CronJob’s Job on its schedule and keeps successfulJobsHistoryLimit Jobs', async () => {
    expect(await ok('apply', '-f', file('cronjob.yaml', CRONJOB))).toBe('cronjob.batch/every created\n');
    const jobsOf = (view: View): Job[] =>
      (view.list('Job', 'default') as Job[]).filter((job) => job.metadata.ownerReferences?.some((ref) => ref.kind === 'CronJob' && ref.name === 'every'));
    let scheduled: Job | undefined;
    await waitUntil('the CronJob’s first scheduled Job completed', (view) => {
      scheduled = jobsOf(view).find((job) => job.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'] !== undefined && isComplete(job));
      return scheduled !== undefined && (view.get('CronJob.batch/default/every') as CronJob | undefined)?.status?.lastSuccessfulTime !== undefined;
    }, 30_000);
    const stamp = Date.parse(scheduled?.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'] ?? '');
    expect(scheduled?.metadata.name).toBe(`every-${Math.floor(stamp / 60_000)}`);
    expect(scheduled?.metadata.labels).toEqual({ app: 'every' });
    const cronJob = harness.cluster.projection.view().get('CronJob.batch/default/every') as CronJob;
    expect(Date.parse(cronJob.status?.lastScheduleTime ?? '')).toBeGreaterThanOrEqual(stamp);
    expect(scheduled?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'CronJob', name: 'every', uid: cronJob.metadata.uid, controller: true })]);
    expect(await ok('get', 'cronjob', 'every')).toMatch(/^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nevery\s+@every 2s\s+<none>\s+False\s+\d\s+\d+s\s+\d+s\n$/);

    expect(await ok('patch', 'cronjob', 'every', '-p', '{"spec":{"suspend":true}}')).toBe('cronjob.batch/every patched\n');
    for (const name of ['manual-1', 'manual-2', 'manual-3']) {
      expect(await ok('create', 'job', `--from=cronjob/every`, name)).toBe(`job.batch/${name} created\n`);
      await waitUntil(`${name} completed`, (view) => isComplete(view.get(`Job.batch/default/${name}`) as Job | undefined));
    }
    const manual = (view: View): Job => view.get('Job.batch/default/manual-3') as Job;
    const status = (view: View) => (view.get('CronJob.batch/default/every') as CronJob).status;
    await waitUntil(
      'only 2 successful Jobs are kept and lastSuccessfulTime is the last completion',
      (view) => jobsOf(view).filter(isComplete).length === 2 && status(view)?.lastSuccessfulTime === manual(view).status?.completionTime,
    );
    const kept = jobsOf(harness.cluster.projection.view()).map((job) => job.metadata.name).sort();
    expect(kept).toEqual(['manual-2', 'manual-3']);
    expect(manual(harness.cluster.projection.view()).metadata.annotations?.['cronjob.kubernetes.io/instantiate']).toBe('manual');
    expect(status(harness.cluster.projection.view())?.active).toBeUndefined();

    // Its Jobs are its dependents: deleting the CronJob deletes them (garbage collector).
    expect(await ok('delete', 'cronjob', 'every')).toBe('cronjob.batch "every" deleted\n');
    await waitUntil('the CronJob’s Jobs are gone', (view) => jobsOf(view).length === 0, 30_000);
  }, 120_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.events).toBeGreaterThan(100);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
