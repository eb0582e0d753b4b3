/**
 * Validation of the workload kinds served without a controller of their own yet
 * (DaemonSet, StatefulSet, Job, CronJob, ReplicationController, PodTemplate), after
 * pkg/apis/{apps,batch,core}/validation: selectors that match their template, the pod
 * template's spec, restart policies, counts that cannot be negative, immutable fields.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { CronJob, DaemonSet, Job, JobSpec, LabelSelector, PodTemplateSpec, ReplicationController, StatefulSet } from '../../schemas/index.ts';
import { parseSchedule } from '../../schemas/cron-schedule.ts';
import { fieldErrors } from '../errors.ts';
import { checkEnum, checkImmutableSelector, checkLabels, checkNonNegative, checkSelector, validatePodSpec, type Causes } from './objects.ts';

/** A pod template under `field`, its labels matched by `selector` when given, its restart policy one of `restartPolicies`. */
const checkTemplate = (
  causes: Causes,
  field: string,
  template: PodTemplateSpec | undefined,
  selector: { field: string; labels: (labels: Readonly<Record<string, string>>) => boolean } | undefined,
  restartPolicies: readonly string[],
  podSpec: { volumes?: boolean } = {},
): void => {
  if (!template) {
    causes.push(fieldErrors.required(field));
    return;
  }
  const labels = template.metadata?.labels;
  checkLabels(causes, `${field}.metadata.labels`, labels);
  if (selector && !selector.labels(labels ?? {})) {
    causes.push(fieldErrors.invalid(`${field}.metadata.labels`, labels ?? {}, '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodSpec(`${field}.spec`, template.spec, podSpec));
  const restartPolicy = template.spec.restartPolicy;
  if (restartPolicy !== undefined && !restartPolicies.includes(restartPolicy)) {
    causes.push(fieldErrors.notSupported(`${field}.spec.restartPolicy`, restartPolicy, restartPolicies));
  }
};

/** A required label selector under `field`, as a matcher of template labels (undefined when it is invalid). */
const selectorMatcher = (causes: Causes, field: string, selector: LabelSelector | undefined) => {
  if (!checkSelector(causes, field, selector) || !selector) return undefined;
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? { field, labels: (labels: Readonly<Record<string, string>>) => matchesLabels(parsed.requirements, labels) } : undefined;
};

export const validateDaemonSet = (causes: Causes, object: DaemonSet, old: DaemonSet | undefined): void => {
  const spec = object.spec;
  if (!spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  checkTemplate(causes, 'spec.template', spec.template, selectorMatcher(causes, 'spec.selector', spec.selector), ['Always']);
  checkNonNegative(causes, 'spec.minReadySeconds', spec.minReadySeconds);
  checkNonNegative(causes, 'spec.revisionHistoryLimit', spec.revisionHistoryLimit);
  checkEnum(causes, 'spec.updateStrategy.type', spec.updateStrategy?.type, ['RollingUpdate', 'OnDelete']);
  if (old?.spec) checkImmutableSelector(causes, spec.selector, old.spec.selector);
};

export const validateStatefulSet = (causes: Causes, object: StatefulSet, old: StatefulSet | undefined): void => {
  const spec = object.spec;
  if (!spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  checkNonNegative(causes, 'spec.replicas', spec.replicas);
  checkNonNegative(causes, 'spec.minReadySeconds', spec.minReadySeconds);
  checkEnum(causes, 'spec.podManagementPolicy', spec.podManagementPolicy, ['OrderedReady', 'Parallel']);
  checkEnum(causes, 'spec.updateStrategy.type', spec.updateStrategy?.type, ['RollingUpdate', 'OnDelete']);
  // kube's ValidatePodTemplateSpecForStatefulSet leaves volumes unchecked: containers mount the claim templates.
  checkTemplate(causes, 'spec.template', spec.template, selectorMatcher(causes, 'spec.selector', spec.selector), ['Always'], { volumes: false });
  if (old?.spec) {
    checkImmutableSelector(causes, spec.selector, old.spec.selector);
    if ((spec.serviceName ?? '') !== (old.spec.serviceName ?? '') || !sameJson(spec.volumeClaimTemplates ?? [], old.spec.volumeClaimTemplates ?? [])) {
      causes.push(
        fieldErrors.forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    }
  }
};

const validateJobSpec = (causes: Causes, field: string, spec: JobSpec, generatedSelector: boolean): void => {
  checkNonNegative(causes, `${field}.parallelism`, spec.parallelism);
  checkNonNegative(causes, `${field}.completions`, spec.completions);
  checkNonNegative(causes, `${field}.backoffLimit`, spec.backoffLimit);
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds <= 0) {
    causes.push(fieldErrors.invalid(`${field}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 'must be greater than 0'));
  }
  checkEnum(causes, `${field}.completionMode`, spec.completionMode, ['NonIndexed', 'Indexed']);
  if (spec.completionMode === 'Indexed' && spec.completions === undefined) {
    causes.push(fieldErrors.required(`${field}.completions`, 'when completion mode is Indexed'));
  }
  const selector = spec.selector !== undefined && !generatedSelector ? selectorMatcher(causes, `${field}.selector`, spec.selector) : undefined;
  checkTemplate(causes, `${field}.template`, spec.template, selector, ['OnFailure', 'Never']);
  if (spec.template?.spec.restartPolicy === undefined && spec.template) {
    causes.push(fieldErrors.notSupported(`${field}.template.spec.restartPolicy`, 'Always', ['OnFailure', 'Never']));
  }
};

export const validateJob = (causes: Causes, object: Job, old: Job | undefined): void => {
  if (!object.spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  validateJobSpec(causes, 'spec', object.spec, false);
  if (old?.spec) {
    if (!sameJson(object.spec.template, old.spec.template) && old.spec.suspend !== true) {
      causes.push(fieldErrors.invalid('spec.template', object.spec.template, 'field is immutable'));
    }
    if ((object.spec.completions ?? null) !== (old.spec.completions ?? null)) {
      causes.push(fieldErrors.invalid('spec.completions', object.spec.completions ?? null, 'field is immutable'));
    }
  }
};

/** Job names are at most 63 characters and the CronJob controller appends `-<minutes>` (11), so a CronJob's name is at most 52 (checked on create only, as kube). */
const CRONJOB_NAME_MAX = 52;

/** kube's `validTimeZoneCharacters`: one `/`-separated part of an IANA name. */
const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

/** The error Go's `time.LoadLocation` gives for `zone`, undefined when the zone exists (names are case-sensitive, as the tz database's files). */
const loadLocationError = (zone: string): string | undefined => {
  if (zone === 'UTC' || zone === 'Local') return undefined;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    // Intl folds case ("america/new_york"); the tz database does not.
    return resolved !== zone && resolved.toLowerCase() === zone.toLowerCase() ? `unknown time zone ${zone}` : undefined;
  } catch {
    return `unknown time zone ${zone}`;
  }
};

/** kube's `validateTimeZone` (pkg/apis/batch/validation). */
const validateTimeZone = (causes: Causes, timeZone: string | undefined): void => {
  if (timeZone === undefined) return;
  const field = 'spec.timeZone';
  if (timeZone === '') {
    causes.push(fieldErrors.invalid(field, timeZone, 'timeZone must be nil or non-empty string'));
    return;
  }
  if (timeZone.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !TIME_ZONE_PART.test(part))) {
    causes.push(fieldErrors.invalid(field, timeZone, `unknown time zone ${timeZone}`));
    return;
  }
  if (timeZone.toLowerCase() === 'local') {
    causes.push(fieldErrors.invalid(field, timeZone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  }
  const error = loadLocationError(timeZone);
  if (error !== undefined) causes.push(fieldErrors.invalid(field, timeZone, error));
};

/**
 * kube's `validateScheduleFormat`: the schedule must parse as robfig's `ParseStandard`, and
 * may not name a zone (`TZ=`/`CRON_TZ=`) unless the object already did (then not together
 * with `spec.timeZone`).
 */
const validateSchedule = (causes: Causes, schedule: string, timeZone: string | undefined, oldSchedule: string | undefined): void => {
  const field = 'spec.schedule';
  const parsed = parseSchedule(schedule);
  if (parsed.type === 'invalid') causes.push(fieldErrors.invalid(field, schedule, parsed.message));
  const allowTZInSchedule = oldSchedule?.includes('TZ') ?? false;
  if (allowTZInSchedule && schedule.includes('TZ') && timeZone !== undefined) {
    causes.push(fieldErrors.invalid(field, schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  } else if (!allowTZInSchedule && schedule.includes('TZ')) {
    causes.push(fieldErrors.invalid(field, schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
};

/** kube's `ValidateCronJobCreate`/`ValidateCronJobUpdate` (the spec, and the name length on create). */
export const validateCronJob = (causes: Causes, object: CronJob, old: CronJob | undefined): void => {
  const spec = object.spec;
  if (!spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  if (!old && object.metadata.name.length > CRONJOB_NAME_MAX) {
    causes.push(fieldErrors.invalid('metadata.name', object.metadata.name, `must be no more than ${CRONJOB_NAME_MAX} characters`));
  }
  if (!spec.schedule) causes.push(fieldErrors.required('spec.schedule'));
  else validateSchedule(causes, spec.schedule, spec.timeZone ?? undefined, old?.spec?.schedule);
  if (!old || (old.spec?.timeZone ?? undefined) !== (spec.timeZone ?? undefined)) validateTimeZone(causes, spec.timeZone ?? undefined);
  checkEnum(causes, 'spec.concurrencyPolicy', spec.concurrencyPolicy, ['Allow', 'Forbid', 'Replace']);
  checkNonNegative(causes, 'spec.startingDeadlineSeconds', spec.startingDeadlineSeconds);
  checkNonNegative(causes, 'spec.successfulJobsHistoryLimit', spec.successfulJobsHistoryLimit);
  checkNonNegative(causes, 'spec.failedJobsHistoryLimit', spec.failedJobsHistoryLimit);
  if (!spec.jobTemplate.spec) {
    causes.push(fieldErrors.required('spec.jobTemplate.spec'));
    return;
  }
  validateJobSpec(causes, 'spec.jobTemplate.spec', spec.jobTemplate.spec, true);
};

export const validateReplicationController = (causes: Causes, object: ReplicationController): void => {
  const spec = object.spec;
  if (!spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  checkNonNegative(causes, 'spec.replicas', spec.replicas);
  checkNonNegative(causes, 'spec.minReadySeconds', spec.minReadySeconds);
  const selector = spec.selector ?? {};
  if (Object.keys(selector).length === 0) causes.push(fieldErrors.required('spec.selector'));
  checkLabels(causes, 'spec.selector', selector);
  const matches = (labels: Readonly<Record<string, string>>): boolean => Object.entries(selector).every(([key, value]) => labels[key] === value);
  checkTemplate(causes, 'spec.template', spec.template, { field: 'spec.selector', labels: matches }, ['Always']);
};
