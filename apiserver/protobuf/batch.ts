/** Field numbers of k8s.io/api/batch/v1 generated.proto messages. */
import { f, m, OBJECT, zero, type Message } from './spec.ts';

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
};
