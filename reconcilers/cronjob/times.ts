/**
 * When a CronJob should have started, as kube's cronjob utils (1.32): the most recent
 * unmet activation since its last schedule (or its creation), how many were missed (more
 * than 100 is "too many"), and how long to wait for the next one. Times are epoch ms; the
 * clock is the decision's `now`.
 */
import type { CronJob } from '../../schemas/index.ts';
import { parseTime } from '../replicaset/objects.ts';
import type { Schedule } from '../../schemas/cron-schedule.ts';

/** How many activations were missed since the earliest time considered. */
export const MISSED = { None: 'none', Few: 'few', Many: 'many' } as const;
export type Missed = (typeof MISSED)[keyof typeof MISSED];

/** kube's limit of missed activations before it warns TooManyMissedTimes. */
export const TOO_MANY_MISSED = 100;
/** kube's `nextScheduleDelta`: the requeue lands this long after the activation (clock skew). */
export const NEXT_SCHEDULE_DELTA_MS = 100;

/** The outcome of {@link mostRecentScheduleTime}. */
export interface MostRecentSchedule {
  /** The last schedule time, else the creation time (moved up to now − startingDeadlineSeconds when asked). */
  readonly earliest: number;
  /** The latest activation at or before now after `earliest`, if any. */
  readonly mostRecent: number | undefined;
  readonly missed: Missed;
  /** A schedule that parses but never fires twice (the 31st of February). */
  readonly error?: string;
}

const NEVER_TWICE = 'time difference between two schedules is less than 1 second';

/** kube's `mostRecentScheduleTime`. */
export const mostRecentScheduleTime = (cj: CronJob, now: number, schedule: Schedule, includeStartingDeadlineSeconds: boolean): MostRecentSchedule => {
  let earliest = parseTime(cj.status?.lastScheduleTime) ?? parseTime(cj.metadata.creationTimestamp) ?? 0;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (includeStartingDeadlineSeconds && deadline !== undefined) earliest = Math.max(earliest, now - deadline * 1000);
  const t1 = schedule.next(earliest);
  const t2 = t1 === undefined ? undefined : schedule.next(t1);
  if (t1 !== undefined && now < t1) return { earliest, mostRecent: undefined, missed: MISSED.None };
  if (t1 !== undefined && t2 !== undefined && now < t2) return { earliest, mostRecent: t1, missed: MISSED.None };
  if (t1 === undefined || t2 === undefined) return { earliest, mostRecent: undefined, missed: MISSED.None, error: NEVER_TWICE };
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) return { earliest, mostRecent: undefined, missed: MISSED.None, error: NEVER_TWICE };
  // A rough count (as kube's): how many intervals of the first two fit between t1 and now.
  const missedCount = Math.trunc((now - t1) / 1000 / between) + 1;
  const potentialEarliest = t1 + (missedCount - 2) * between * 1000;
  let mostRecent: number | undefined;
  for (let t = schedule.next(potentialEarliest); t !== undefined && t <= now; t = schedule.next(t)) mostRecent = t;
  const missed = missedCount > TOO_MANY_MISSED ? MISSED.Many : missedCount > 0 ? MISSED.Few : MISSED.None;
  return { earliest, mostRecent, missed };
};

/** kube's `nextScheduleTimeDuration`: ms until just after the next activation; undefined when the schedule never fires again. */
export const nextScheduleTimeDuration = (cj: CronJob, now: number, schedule: Schedule): number | undefined => {
  const { earliest, mostRecent, missed, error } = mostRecentScheduleTime(cj, now, schedule, false);
  const from = error !== undefined ? now : (mostRecent ?? (missed === MISSED.None ? earliest : now));
  const next = schedule.next(from);
  return next === undefined ? undefined : next + NEXT_SCHEDULE_DELTA_MS - now;
};

/** kube's `nextScheduleTime`: the activation to start now (at or before `now`), if one is unmet. */
export const nextScheduleTime = (cj: CronJob, now: number, schedule: Schedule): { readonly time?: number; readonly missed: Missed; readonly error?: string } => {
  const { mostRecent, missed, error } = mostRecentScheduleTime(cj, now, schedule, true);
  if (mostRecent === undefined || mostRecent > now) return { missed, ...(error === undefined ? {} : { error }) };
  return { time: mostRecent, missed };
};
