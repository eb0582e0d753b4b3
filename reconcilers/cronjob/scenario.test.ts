/**
 * Missed activations after a downtime, on the real runtime and both logs (1 and 3
 * partitions): CronJobs are created while no cronjob controller runs, then the controller
 * starts with its clock 10 minutes (and half a minute) later. As kube's, it starts only
 * the most recent missed activation of a CronJob (one Job, not ten), none of one whose
 * startingDeadlineSeconds has passed, and its clock is recorded with the Job it creates:
 * the decision re-run on the view it read, at the time recorded, gives the same commands.
 */
import pino from 'pino';
import { firstValueFrom } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { audit, type View } from '../../projections/index.ts';
import { parseVector } from '../../projections/positions.ts';
import { sameJson } from '../../schemas/canonical-json.ts';
import { decodeEvent, type CronJob, type CronJobSpec, type Event, type EventBody, type Job } from '../../schemas/index.ts';
import { isoTime, parseTime } from '../replicaset/objects.ts';
import { startReconciler, type ReconcilerRuntime } from '../runtime.ts';
import { LOG_ADAPTERS, startScenario, type Scenario } from '../testing.ts';
import { createCronJobController, jobsOf, SCHEDULED_TIMESTAMP_ANNOTATION } from './index.ts';

const MINUTE = 60_000;
const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

const cronJob = (name: string, spec: Partial<CronJobSpec>): CronJob => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name, namespace: 'default' },
  spec: {
    schedule: '* * * * *',
    concurrencyPolicy: 'Allow',
    suspend: false,
    successfulJobsHistoryLimit: 3,
    failedJobsHistoryLimit: 1,
    jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } } } },
    ...spec,
  },
});

describe.each(cases)('a CronJob controller started after a downtime on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  let runtime: ReconcilerRuntime | undefined;
  beforeEach(async () => {
    scenario = await startScenario({ adapter, partitions, nodes: ['n1'], controllers: [] });
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await scenario.close();
  });

  it('starts only the most recent missed activation, none past startingDeadlineSeconds, on its own clock', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: cronJob('tick', {}) }, { type: 'ObjectCreated', object: cronJob('strict', { startingDeadlineSeconds: 5 }) });
    // The clock of the restarted controller: 10 minutes on, in the middle of a minute, so
    // no activation lies within strict's 5 s deadline when it starts.
    const real = Date.now();
    const shift = 10 * MINUTE + (30_000 - (real % MINUTE));
    const clock = (): number => Date.now() + shift;
    runtime = await startReconciler({ controller: createCronJobController(), log: scenario.log, projection: scenario.projection, logger: pino({ level: 'warn' }), now: clock });
    // Rounds run on later turns of the event loop: this sees the first one.
    const firstRound = firstValueFrom(runtime.rounds$);

    const ofCronJob = (view: View, name: string): Job[] => {
      const cj = view.get(`CronJob.batch/default/${name}`) as CronJob | undefined;
      return cj ? jobsOf(cj, view) : [];
    };
    await scenario.waitUntil(
      'tick has a Job and its status records it',
      (view) => ofCronJob(view, 'tick').length > 0 && (view.get('CronJob.batch/default/tick') as CronJob).status?.lastScheduleTime !== undefined,
    );
    const view = scenario.projection.view();
    const jobs = ofCronJob(view, 'tick');
    expect(jobs).toHaveLength(1);
    const [job] = jobs;
    const scheduled = Date.parse(job?.metadata.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION] ?? '');
    expect(scheduled % MINUTE).toBe(0);
    expect(job?.metadata.name).toBe(`tick-${scheduled / MINUTE}`);
    // The most recent activation before the controller's clock, not the first missed one.
    expect(scheduled).toBeGreaterThan(real + 9 * MINUTE);
    // The Job's creation time is the decision's clock, recorded with the command.
    const created = parseTime(job?.metadata.creationTimestamp) ?? 0;
    expect(created - scheduled).toBeGreaterThanOrEqual(0);
    expect(created - scheduled).toBeLessThan(MINUTE);
    expect((view.get('CronJob.batch/default/tick') as CronJob).status).toEqual({
      active: [{ apiVersion: 'batch/v1', kind: 'Job', name: job?.metadata.name, namespace: 'default', uid: job?.metadata.uid }],
      lastScheduleTime: isoTime(scheduled),
    });
    // strict was decided in the same first round (the resync of both keys): its missed
    // activations are past its deadline.
    expect((await firstRound).keys).toBe(2);
    expect(ofCronJob(view, 'strict')).toEqual([]);
    expect((view.get('CronJob.batch/default/strict') as CronJob).status ?? {}).toEqual({});

    // The decision that created the Job, re-run on the view at its decidedAt with its
    // recorded time (what `debug reconcile` does), gives the Job (its uid too) and the status.
    const decided = audit(scenario.projection.store, partitions, { allActors: true, limit: 1000 }).filter(
      (e) => e.actor.type === 'controller' && e.actor.name === 'cronjob',
    );
    const creation = decided.find((e) => e.key === `Job.batch/default/${job?.metadata.name}`);
    const round = decided.filter((e) => e.decidedAt === creation?.decidedAt && e.time === creation?.time);
    // The Job, the CronJob's status, and its SuccessfulCreate Event.
    expect(round.map((e) => e.eventType).sort()).toEqual(['ObjectCreated', 'ObjectCreated', 'ObjectUpdated']);
    const recorded: EventBody[] = [];
    for (const e of round) {
      const [record] = await scenario.log.read(e.topic, e.partition, e.offset, e.offset + 1);
      if (record) recorded.push(decodeEvent(record.value).body);
    }
    const past = scenario.projection.viewAt(parseVector(creation?.decidedAt ?? '', partitions));
    const again = createCronJobController().decide('CronJob.batch/default/tick', past, { now: creation?.time ?? 0 });
    const kindOf = (body: EventBody): string => (body.type === 'ObjectCreated' || body.type === 'ObjectUpdated' ? body.object.kind : '');
    const byType = (bodies: readonly EventBody[]): EventBody[] =>
      [...bodies].sort((a, b) => a.type.localeCompare(b.type) || kindOf(a).localeCompare(kindOf(b)));
    expect(again.commands.some((c) => c.type === 'ObjectCreated' && c.object.kind === 'Event' && (c.object as Event).reason === 'SuccessfulCreate')).toBe(true);
    expect(sameJson(byType(again.commands), byType(recorded))).toBe(true);
  });
});
