import { afterEach, describe, expect, it } from 'vitest';
import type { AppliedChange } from '../../projections/index.ts';
import type { CronJob, CronJobSpec, EventBody, Job, JobStatus, ObjectCreated } from '../../schemas/index.ts';
import { isoTime, parseTime } from '../replicaset/objects.ts';
import { createTestCluster, type TestCluster } from '../testing.ts';
import {
  createCronJobController,
  cronJobKeysFor,
  decideCronJob,
  jobsOf,
  mostRecentScheduleTime,
  MISSED,
  parseSchedule,
  planCronJob,
  rfc3339InZone,
  SCHEDULED_TIMESTAMP_ANNOTATION,
  type Schedule,
} from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const KEY = 'CronJob.batch/default/tick';
const MINUTE = 60_000;

/** The first whole minute strictly after `ms`. */
const minuteAfter = (ms: number): number => (Math.floor(ms / MINUTE) + 1) * MINUTE;

const scheduleOf = (spec: string): Schedule => {
  const parsed = parseSchedule(spec);
  if (parsed.type !== 'ok') throw new Error(parsed.message);
  return parsed.schedule;
};

/** A CronJob as the apiserver stores it (defaults applied), created in a fresh test cluster. */
const setup = (spec: Partial<CronJobSpec> = {}) => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  const cj = cluster.create<CronJob>({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'tick', namespace: 'default' },
    spec: {
      schedule: '* * * * *',
      concurrencyPolicy: 'Allow',
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: {
        metadata: { labels: { app: 'tick' }, annotations: { team: 'batch' } },
        spec: {
          backoffLimit: 6,
          completions: 1,
          parallelism: 1,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } },
        },
      },
      ...spec,
    },
  });
  const created = parseTime(cj.metadata.creationTimestamp) ?? 0;
  const cronJob = (): CronJob => cluster.view().get(KEY) as CronJob;
  /** Decides at `now` and folds the commands; returns the decision. */
  const step = (now: number) => {
    const decision = decideCronJob(KEY, cluster.view(), now);
    for (const record of cluster.apply(...decision.commands)) expect(record.verdict.type).toBe('accepted');
    return decision;
  };
  const jobs = (): Job[] => jobsOf(cronJob(), cluster.view()).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const finishJob = (name: string, type: 'Complete' | 'Failed', startedAt: number, finishedAt: number): void => {
    const job = cluster.view().get(`Job.batch/default/${name}`) as Job;
    const condition = { type, status: 'True', lastProbeTime: isoTime(finishedAt), lastTransitionTime: isoTime(finishedAt) };
    const status: JobStatus = {
      startTime: isoTime(startedAt),
      conditions: [condition],
      ...(type === 'Complete' ? { succeeded: 1, completionTime: isoTime(finishedAt) } : { failed: 1 }),
    };
    cluster.apply({ type: 'ObjectUpdated', object: { ...job, status }, expectedResourceVersion: null, subresource: 'status' });
  };
  return { cluster, cronJob, step, jobs, finishJob, first: minuteAfter(created), created };
};

const createdJobs = (commands: readonly EventBody[]): Job[] =>
  commands.filter((c): c is ObjectCreated => c.type === 'ObjectCreated' && c.object.kind === 'Job').map((c) => c.object as Job);
const deletedNames = (commands: readonly EventBody[]): string[] =>
  commands.flatMap((c) => (c.type === 'ObjectDeleted' ? [c.name] : [])).sort();

describe('cron schedules as robfig ParseStandard reads them', () => {
  it.each([
    ['* * * * *', '2030-01-01T00:00:30Z', '2030-01-01T00:01:00Z'],
    ['*/15 * * * *', '2030-01-01T00:01:00Z', '2030-01-01T00:15:00Z'],
    ['5/15 * * * *', '2030-01-01T00:06:00Z', '2030-01-01T00:20:00Z'],
    ['0 9 * * mon-fri', '2030-01-05T10:00:00Z', '2030-01-07T09:00:00Z'],
    ['0 0 1 jan ?', '2030-03-01T00:00:00Z', '2031-01-01T00:00:00Z'],
    ['@hourly', '2030-01-01T00:00:00Z', '2030-01-01T01:00:00Z'],
    ['@daily', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z'],
    ['@midnight', '2030-01-01T13:00:00Z', '2030-01-02T00:00:00Z'],
    ['@weekly', '2030-01-01T00:00:00Z', '2030-01-06T00:00:00Z'],
    ['@monthly', '2030-01-15T00:00:00Z', '2030-02-01T00:00:00Z'],
    ['@yearly', '2030-01-15T00:00:00Z', '2031-01-01T00:00:00Z'],
    ['0 0 * JAN-MAR SUN', '2030-01-01T00:00:00Z', '2030-01-06T00:00:00Z'],
    ['0\t12  *  *  *', '2030-01-01T00:00:00Z', '2030-01-01T12:00:00Z'],
    // robfig's day rule: AND when either day field is a star (with step 1), OR otherwise.
    ['0 0 */1 * 1', '2030-01-01T00:00:00Z', '2030-01-07T00:00:00Z'],
    ['0 0 1,* * 1', '2030-01-01T00:00:00Z', '2030-01-07T00:00:00Z'],
    ['0 0 */2 * 1', '2030-01-01T00:00:00Z', '2030-01-03T00:00:00Z'],
    ['0 0 1-31 * 1', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z'],
    ['0 0 13 * fri', '2030-01-01T00:00:00Z', '2030-01-04T00:00:00Z'],
    ['0,0,30 */12 * * *', '2030-01-01T00:10:00Z', '2030-01-01T00:30:00Z'],
    ['@every 90s', '2030-01-01T00:00:00.400Z', '2030-01-01T00:01:30Z'],
    ['@every 500ms', '2030-01-01T00:00:00.400Z', '2030-01-01T00:00:01Z'],
    ['@every 1h30m', '2030-01-01T00:00:00Z', '2030-01-01T01:30:00Z'],
    ['CRON_TZ=Europe/Berlin 0 9 * * *', '2030-01-01T00:00:00Z', '2030-01-01T08:00:00Z'],
    ['TZ=Asia/Kolkata 30 9 * * *', '2030-01-01T00:00:00Z', '2030-01-01T04:00:00Z'],
  ])('%s after %s fires at %s', (spec, after, expected) => {
    expect(isoTime(scheduleOf(spec).next(Date.parse(after)) ?? 0)).toBe(expected);
  });

  it.each([
    ['', 'empty spec string'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['0 0 * * * *', 'expected exactly 5 fields, found 6: [0 0 * * * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['*/2/3 * * * *', 'too many slashes: */2/3'],
    ['0 0 L * *', 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'],
    ['0 0 * * 1#2', 'failed to parse int from 1#2: strconv.Atoi: parsing "1#2": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every soon', 'failed to parse duration soon: time: invalid duration "soon"'],
    ['TZ=Mars/Olympus * * * * *', 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus'],
  ])('refuses %j: %s', (spec, message) => {
    expect(parseSchedule(spec)).toEqual({ type: 'invalid', message });
  });

  it('has no next activation for a date that never comes (the 31st of February)', () => {
    expect(scheduleOf('0 0 31 2 *').next(Date.parse('2030-01-01T00:00:00Z'))).toBeUndefined();
  });

  it.each([
    ['UTC', '2030-01-01T09:00:00Z'],
    ['', '2030-01-01T09:00:00Z'],
    ['Europe/Berlin', '2030-01-01T10:00:00+01:00'],
    ['Europe/London', '2030-01-01T09:00:00Z'],
    ['Asia/Kolkata', '2030-01-01T14:30:00+05:30'],
    ['America/New_York', '2030-07-01T05:00:00-04:00'],
  ])('formats the scheduled timestamp in %j as Go RFC 3339: %s', (zone, expected) => {
    const at = zone === 'America/New_York' ? Date.parse('2030-07-01T09:00:00Z') : Date.parse('2030-01-01T09:00:00Z');
    expect(rfc3339InZone(at, zone)).toBe(expected);
  });
});

describe('most recent schedule time', () => {
  const cronJob = (created: string, lastScheduleTime?: string, startingDeadlineSeconds?: number): CronJob => ({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'c', creationTimestamp: created },
    spec: { schedule: '* * * * *', jobTemplate: {}, ...(startingDeadlineSeconds === undefined ? {} : { startingDeadlineSeconds }) },
    ...(lastScheduleTime === undefined ? {} : { status: { lastScheduleTime } }),
  });
  const everyMinute = scheduleOf('* * * * *');
  const T = Date.parse('2030-01-01T00:00:00Z');

  it('finds none before the first activation, the only one before the second, the latest of several missed', () => {
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z'), T + 30_000, everyMinute, true)).toMatchObject({ mostRecent: undefined, missed: MISSED.None });
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z'), T + 61_000, everyMinute, true)).toMatchObject({ mostRecent: T + MINUTE, missed: MISSED.None });
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z'), T + 5 * MINUTE + 1, everyMinute, true)).toMatchObject({ mostRecent: T + 5 * MINUTE, missed: MISSED.Few });
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z', '2030-01-01T00:04:00Z'), T + 5 * MINUTE + 1, everyMinute, true)).toMatchObject({ mostRecent: T + 5 * MINUTE, missed: MISSED.None });
  });

  it('counts more than 100 missed activations as many, unless startingDeadlineSeconds bounds the search', () => {
    const late = T + 200 * MINUTE + 5_000;
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z'), late, everyMinute, true)).toMatchObject({ mostRecent: T + 200 * MINUTE, missed: MISSED.Many });
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z', undefined, 120), late, everyMinute, true)).toMatchObject({ mostRecent: T + 200 * MINUTE, missed: MISSED.Few });
  });

  it('reports a schedule that never fires twice as an error', () => {
    expect(mostRecentScheduleTime(cronJob('2030-01-01T00:00:00Z'), T, scheduleOf('0 0 31 2 *'), true).error).toBe('time difference between two schedules is less than 1 second');
  });
});

describe('cronjob decide', () => {
  it('waits for the first activation, then creates its Job once, named by the scheduled minute', () => {
    const { step, cronJob, jobs, first, cluster } = setup();
    const early = decideCronJob(KEY, cluster.view(), first - 10_000);
    expect(early).toEqual({ commands: [], requeueAfterMs: 10_100 });

    const decision = step(first + 2_000);
    expect(decision.requeueAfterMs).toBe(MINUTE - 2_000 + 100);
    const [job] = jobs();
    const cj = cronJob();
    expect(job?.metadata.name).toBe(`tick-${first / MINUTE}`);
    expect(job?.metadata.labels).toEqual({ app: 'tick' });
    expect(job?.metadata.annotations).toEqual({ team: 'batch', [SCHEDULED_TIMESTAMP_ANNOTATION]: isoTime(first) });
    expect(job?.metadata.ownerReferences).toEqual([{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: cj.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(job?.spec?.selector).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': job?.metadata.uid } });
    expect(job?.spec?.template.metadata?.labels).toEqual({
      'batch.kubernetes.io/controller-uid': job?.metadata.uid,
      'batch.kubernetes.io/job-name': job?.metadata.name,
      'controller-uid': job?.metadata.uid,
      'job-name': job?.metadata.name,
    });
    expect(cj.status).toEqual({
      active: [{ apiVersion: 'batch/v1', kind: 'Job', name: job?.metadata.name, namespace: 'default', uid: job?.metadata.uid }],
      lastScheduleTime: isoTime(first),
    });
    // Level-based: the same activation decided again (a replay, a duplicate key) changes nothing.
    expect(decideCronJob(KEY, cluster.view(), first + 3_000)).toEqual({ commands: [], requeueAfterMs: MINUTE - 3_000 + 100 });
  });

  it('decides the same commands (the Job uid included) when re-run on the same view and clock', () => {
    const { cluster, first } = setup();
    expect(decideCronJob(KEY, cluster.view(), first + 1)).toEqual(decideCronJob(KEY, cluster.view(), first + 1));
  });

  it.each([
    { policy: 'Allow', created: 1, deleted: 0, active: 2 },
    { policy: 'Forbid', created: 0, deleted: 0, active: 1 },
    { policy: 'Replace', created: 1, deleted: 1, active: 1 },
  ])('concurrencyPolicy $policy with a Job still running at the next activation', ({ policy, created, deleted, active }) => {
    const { step, cronJob, cluster, first } = setup({ concurrencyPolicy: policy });
    step(first + 1_000);
    const events = planCronJob(cronJob(), jobsOf(cronJob(), cluster.view()), first + MINUTE + 1_000).events.map((e) => e.reason);
    const second = step(first + MINUTE + 1_000);
    expect(createdJobs(second.commands)).toHaveLength(created);
    expect(deletedNames(second.commands)).toEqual(deleted ? [`tick-${first / MINUTE}`] : []);
    expect(cronJob().status?.active).toHaveLength(active);
    expect(events).toEqual({ Allow: ['SuccessfulCreate'], Forbid: ['JobAlreadyActive'], Replace: ['SuccessfulDelete', 'SuccessfulCreate'] }[policy]);
    // The Forbid decision waits for the next activation.
    if (policy === 'Forbid') expect(second.requeueAfterMs).toBe(MINUTE - 1_000 + 100);
    // An active Job that is gone leaves the active list.
    expect(planCronJob(cronJob(), [], first + MINUTE + 2_000).events.map((e) => e.reason)).toContain('MissingJob');
  });

  it('starts the most recent missed activation after a downtime, unless startingDeadlineSeconds has passed for it', () => {
    const late = setup({ schedule: '*/10 * * * *' });
    const start = minuteAfter(late.created + 10 * MINUTE);
    const missedAt = Math.floor(start / (10 * MINUTE)) * 10 * MINUTE;
    const now = missedAt + 4 * MINUTE;
    const [job] = createdJobs(late.step(now).commands);
    expect(job?.metadata.name).toBe(`tick-${missedAt / MINUTE}`);

    const strict = setup({ schedule: '*/10 * * * *', startingDeadlineSeconds: 120 });
    const decision = decideCronJob(KEY, strict.cluster.view(), now);
    expect(decision.commands).toEqual([]);
    expect(decision.requeueAfterMs).toBe(missedAt + 10 * MINUTE + 100 - now);
  });

  it('warns of too many missed start times but still starts the most recent one', () => {
    const { cronJob, first } = setup();
    const now = first + 150 * MINUTE + 1_000;
    const plan = planCronJob(cronJob(), [], now);
    expect(plan.events.map((e) => e.reason)).toEqual(['TooManyMissedTimes', 'SuccessfulCreate']);
    expect(createdJobs(plan.commands).map((j) => j.metadata.name)).toEqual([`tick-${(first + 150 * MINUTE) / MINUTE}`]);
  });

  it('starts nothing while suspended, and nothing for a bad zone or schedule (with kube’s warning reasons)', () => {
    const suspended = setup({ suspend: true });
    expect(decideCronJob(KEY, suspended.cluster.view(), suspended.first + 1_000)).toEqual({ commands: [] });
    const badZone = setup({ timeZone: 'Mars/Olympus' });
    expect(planCronJob(badZone.cronJob(), [], badZone.first + 1_000)).toMatchObject({
      commands: [],
      events: [{ type: 'Warning', reason: 'UnknownTimeZone', message: 'invalid timeZone: "Mars/Olympus": unknown time zone Mars/Olympus' }],
    });
    const badSchedule = setup({ schedule: '* * * *' });
    expect(planCronJob(badSchedule.cronJob(), [], badSchedule.first + 1_000)).toMatchObject({
      commands: [],
      events: [{ type: 'Warning', reason: 'UnparseableSchedule', message: 'unparseable schedule: "* * * *" : expected exactly 5 fields, found 4: [* * * *]' }],
    });
    expect(planCronJob(badSchedule.cronJob(), [], badSchedule.first + 1_000).requeueAfterMs).toBeUndefined();
  });

  it('reads the schedule in spec.timeZone and stamps the Job with the activation in that zone', () => {
    const { cronJob, created } = setup({ schedule: '0 * * * *', timeZone: 'Asia/Kolkata' });
    // Kolkata is UTC+05:30: its whole hours fall on the half hours of UTC.
    const halfHour = Math.floor(created / (30 * MINUTE)) * 30 * MINUTE;
    const activation = [halfHour, halfHour + 30 * MINUTE, halfHour + 60 * MINUTE].find((t) => t > created && new Date(t).getUTCMinutes() === 30) ?? 0;
    const plan = planCronJob(cronJob(), [], activation + 1_000);
    const [job] = createdJobs(plan.commands);
    expect(job?.metadata.name).toBe(`tick-${activation / MINUTE}`);
    expect(job?.metadata.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION]).toBe(rfc3339InZone(activation, 'Asia/Kolkata'));
    expect(job?.metadata.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION]).toMatch(/T\d\d:00:00\+05:30$/);
  });

  it('runs a schedule with CRON_TZ but warns that it is not supported', () => {
    const { cronJob, first } = setup({ schedule: 'CRON_TZ=UTC * * * * *' });
    const plan = planCronJob(cronJob(), [], first + 1_000);
    expect(plan.events.map((e) => e.reason)).toEqual(['UnsupportedSchedule', 'SuccessfulCreate']);
  });

  it('keeps successfulJobsHistoryLimit and failedJobsHistoryLimit finished Jobs, oldest started go first', () => {
    const { step, cronJob, jobs, finishJob, first } = setup({ successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 1 });
    for (let i = 0; i < 6; i++) step(first + i * MINUTE + 1_000);
    const names = jobs().map((j) => j.metadata.name);
    expect(names).toHaveLength(6);
    names.forEach((name, i) => finishJob(name, i % 3 === 2 ? 'Failed' : 'Complete', first + i * MINUTE + 2_000, first + i * MINUTE + 30_000));
    const decision = step(first + 5 * MINUTE + 40_000);
    // Complete: 0, 1, 3, 4 → keep 3, 4; Failed: 2, 5 → keep 5.
    expect(deletedNames(decision.commands)).toEqual([names[0], names[1], names[2]].sort());
    expect(decision.commands.filter((c) => c.type === 'ObjectDeleted').every((c) => c.type === 'ObjectDeleted' && c.propagationPolicy === 'Background')).toBe(true);
    expect(cronJob().status).toEqual({ lastScheduleTime: isoTime(first + 5 * MINUTE), lastSuccessfulTime: isoTime(first + 4 * MINUTE + 30_000) });
    expect(jobs().map((j) => j.metadata.name)).toEqual([names[3], names[4], names[5]]);
  });

  it('does not count a Job it did not create as active, but keeps it in the history limits', () => {
    const { cluster, cronJob, step, first } = setup({ successfulJobsHistoryLimit: 0 });
    const cj = cronJob();
    const manual = cluster.create<Job>({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'tick-manual',
        namespace: 'default',
        annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', uid: cj.metadata.uid ?? '', controller: true }],
      },
      spec: structuredClone(cj.spec?.jobTemplate.spec ?? { template: { spec: { containers: [] } } }),
    });
    const plan = planCronJob(cronJob(), jobsOf(cronJob(), cluster.view()), first - 1_000);
    expect(plan.events).toEqual([{ type: 'Warning', reason: 'UnexpectedJob', message: 'Saw a job that the controller did not create or forgot: tick-manual' }]);
    expect(plan.commands).toEqual([]);
    const job = cluster.view().get('Job.batch/default/tick-manual') as Job;
    cluster.apply({
      type: 'ObjectUpdated',
      object: { ...job, status: { succeeded: 1, completionTime: isoTime(first - 500), conditions: [{ type: 'Complete', status: 'True' }] } },
      expectedResourceVersion: null,
      subresource: 'status',
    });
    const cleanup = step(first - 100);
    expect(deletedNames(cleanup.commands)).toEqual([manual.metadata.name]);
    expect(cronJob().status?.lastSuccessfulTime).toBe(isoTime(first - 500));
  });

  it('only updates the status of a CronJob being deleted', () => {
    const { cronJob, first } = setup();
    const cj = { ...cronJob(), metadata: { ...cronJob().metadata, deletionTimestamp: isoTime(first) } };
    expect(planCronJob(cj, [], first + 1_000).commands).toEqual([]);
  });

  it('maps a Job change to the CronJob controlling it and ignores its own status writes', () => {
    const { step, cluster, first } = setup();
    step(first + 1_000);
    const view = cluster.view();
    const [job] = jobsOf(view.get(KEY) as CronJob, view);
    const change = (object: AppliedChange['object'], topic: AppliedChange['topic'], type: AppliedChange['type'] = 'MODIFIED'): AppliedChange => ({
      type,
      key: 'x',
      eventId: 'e',
      object,
      topic,
      partition: 0,
      offset: 0,
    });
    expect(cronJobKeysFor({ ...change(view.get(KEY) as CronJob, 'desired'), key: KEY })).toEqual([KEY]);
    expect(cronJobKeysFor(change(view.get(KEY) as CronJob, 'observed'))).toEqual([]);
    expect(cronJobKeysFor(change(job as Job, 'observed'))).toEqual([KEY]);
    expect(cronJobKeysFor(change(job as Job, 'desired', 'DELETED'))).toEqual([KEY]);
    expect(createCronJobController().initialKeys(view)).toEqual([KEY]);
  });
});
