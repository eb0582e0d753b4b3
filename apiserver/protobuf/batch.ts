/** Field numbers of k8s.io/api/batch/v1 generated.proto messages (kubectl create job|cronjob). */
import { f, list, m, OBJECT, zero, type Message } from './spec.ts';

export const BATCH: Readonly<Record<string, Message>> = {
  Job: OBJECT('JobSpec', 'JobStatus'),
  JobSpec: {
    1: f('parallelism', 'int32', zero), 2: f('completions', 'int32', zero), 3: f('activeDeadlineSeconds', 'int64', zero),
    4: f('selector', m('LabelSelector')), 5: f('manualSelector', 'bool', zero), 6: f('template', m('PodTemplateSpec')),
    7: f('backoffLimit', 'int32', zero), 8: f('ttlSecondsAfterFinished', 'int32', zero), 9: f('completionMode', 'string'),
    10: f('suspend', 'bool', zero), 11: f('podFailurePolicy', 'opaque'), 12: f('backoffLimitPerIndex', 'int32', zero),
    13: f('maxFailedIndexes', 'int32', zero), 14: f('podReplacementPolicy', 'string'), 15: f('managedBy', 'string'), 16: f('successPolicy', 'opaque'),
  },
  JobStatus: {},
  CronJob: OBJECT('CronJobSpec', 'CronJobStatus'),
  CronJobSpec: {
    1: f('schedule', 'string', zero), 2: f('startingDeadlineSeconds', 'int64', zero), 3: f('concurrencyPolicy', 'string'),
    4: f('suspend', 'bool', zero), 5: f('jobTemplate', m('JobTemplateSpec')), 6: f('successfulJobsHistoryLimit', 'int32', zero),
    7: f('failedJobsHistoryLimit', 'int32', zero), 8: f('timeZone', 'string', zero),
  },
  JobTemplateSpec: { 1: f('metadata', m('ObjectMeta')), 2: f('spec', m('JobSpec')) },
  CronJobStatus: { 1: f('active', m('ObjectReference'), list), 4: f('lastScheduleTime', 'time'), 5: f('lastSuccessfulTime', 'time') },
};
