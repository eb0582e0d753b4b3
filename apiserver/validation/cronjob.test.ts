/**
 * CronJob validation as kube 1.32's pkg/apis/batch/validation (ValidateCronJobCreate,
 * ValidateCronJobUpdate): the schedule parsed as robfig's ParseStandard, no zone in the
 * schedule, `spec.timeZone` an IANA name, and a name of at most 52 characters on create.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../schemas/index.ts';
import { ApiError } from '../errors.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitUpdate } from './admit.ts';

const jobTemplate = { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], restartPolicy: 'OnFailure' } } } };
const cronJob = (spec: Record<string, unknown>, name = 'nightly') => ({ metadata: { name }, spec: { jobTemplate, ...spec } });
const resource = resourceOfKind('CronJob');

const causesOf = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) {
      expect(error.status.code).toBe(422);
      return (error.status.details?.causes ?? []).map((cause) => `${cause.field}: ${cause.message}`);
    }
    throw error;
  }
  return [];
};

const refusalOfCreate = (body: Record<string, unknown>): string[] =>
  causesOf(() => admitCreate({ resource, body, fieldValidation: 'Strict', namespace: 'default' }));

const admitted = (body: Record<string, unknown>): KubeObject => {
  const { object } = admitCreate({ resource, body, fieldValidation: 'Strict', namespace: 'default' });
  return { ...object, metadata: { ...object.metadata, uid: 'u', resourceVersion: '1' } } as KubeObject;
};

describe('CronJob validation on create', () => {
  it.each([
    ['a five-field schedule', '*/5 * * * *'],
    ['names of months and days', '0 9 * jan-mar mon-fri'],
    ['a descriptor', '@hourly'],
    ['@every', '@every 1h30m'],
    ['? for a day', '0 0 ? * *'],
  ])('accepts %s', (_, schedule) => {
    expect(refusalOfCreate(cronJob({ schedule }))).toEqual([]);
  });

  it.each([
    ['six fields', '0 */5 * * * *', 'spec.schedule: Invalid value: "0 */5 * * * *": expected exactly 5 fields, found 6: [0 */5 * * * *]'],
    ['a minute past 59', '60 * * * *', 'spec.schedule: Invalid value: "60 * * * *": end of range (60) above maximum (59): 60'],
    ['an unknown descriptor', '@fortnightly', 'spec.schedule: Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly'],
    ['a zone in the schedule', 'TZ=Europe/Paris 0 9 * * *', 'spec.schedule: Invalid value: "TZ=Europe/Paris 0 9 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead'],
  ])('refuses %s, with kube\'s message', (_, schedule, message) => {
    expect(refusalOfCreate(cronJob({ schedule }))).toEqual([message]);
  });

  it.each([
    ['an IANA zone', 'Europe/Paris'],
    ['UTC', 'UTC'],
    ['an alias', 'US/Eastern'],
    ['Etc/UTC', 'Etc/UTC'],
  ])('accepts %s as the time zone', (_, timeZone) => {
    expect(refusalOfCreate(cronJob({ schedule: '@daily', timeZone }))).toEqual([]);
  });

  it.each([
    ['an empty zone', '', ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']],
    ['an unknown zone', 'Mars/Olympus', ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']],
    ['a zone in the wrong case', 'europe/paris', ['spec.timeZone: Invalid value: "europe/paris": unknown time zone europe/paris']],
    ['dot segments', '../etc/passwd', ['spec.timeZone: Invalid value: "../etc/passwd": unknown time zone ../etc/passwd']],
    ['a part of more than 14 characters', 'America/Argentina_Buenos', ['spec.timeZone: Invalid value: "America/Argentina_Buenos": unknown time zone America/Argentina_Buenos']],
    ['Local', 'Local', ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones']],
  ])('refuses %s', (_, timeZone, messages) => {
    expect(refusalOfCreate(cronJob({ schedule: '@daily', timeZone }))).toEqual(messages);
  });

  it('refuses a name of more than 52 characters (its Jobs would be longer than 63) and accepts 52', () => {
    expect(refusalOfCreate(cronJob({ schedule: '@daily' }, 'a'.repeat(53)))).toEqual([
      `metadata.name: Invalid value: "${'a'.repeat(53)}": must be no more than 52 characters`,
    ]);
    expect(refusalOfCreate(cronJob({ schedule: '@daily' }, 'a'.repeat(52)))).toEqual([]);
  });
});

describe('CronJob validation on update', () => {
  const update = (current: KubeObject, spec: Record<string, unknown>): string[] =>
    causesOf(() =>
      admitUpdate({ resource, body: { ...current, spec: { ...(current as unknown as { spec: object }).spec, ...spec } }, fieldValidation: 'Strict', namespace: 'default', name: current.metadata.name, current }),
    );

  it('keeps a zone in a schedule that had one (kube grandfathers it), but not together with spec.timeZone', () => {
    const current = admitted(cronJob({ schedule: '@daily' }));
    const grandfathered = { ...current, spec: { ...(current as unknown as { spec: object }).spec, schedule: 'CRON_TZ=UTC 0 1 * * *' } } as unknown as KubeObject;
    expect(update(grandfathered, { schedule: 'CRON_TZ=UTC 0 2 * * *' })).toEqual([]);
    expect(update(grandfathered, { schedule: 'CRON_TZ=UTC 0 2 * * *', timeZone: 'Europe/Paris' })).toEqual([
      'spec.schedule: Invalid value: "CRON_TZ=UTC 0 2 * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule',
    ]);
    expect(update(current, { schedule: 'TZ=UTC 0 2 * * *' })).toEqual([
      'spec.schedule: Invalid value: "TZ=UTC 0 2 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ]);
  });

  it('lets a CronJob with a long name be updated (the length is checked on create only)', () => {
    const current = admitted(cronJob({ schedule: '@daily' }));
    const long = { ...current, metadata: { ...current.metadata, name: 'b'.repeat(60) } } as KubeObject;
    expect(update(long, { schedule: '@hourly' })).toEqual([]);
  });
});
