/**
 * Validation of the workload kinds served without a controller of their own yet
 * (DaemonSet, StatefulSet, Job, CronJob, ReplicationController, PodTemplate), after
 * pkg/apis/{apps,batch,core}/validation: selectors that match their template, the pod
 * template's spec, restart policies, counts that cannot be negative, immutable fields.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { CronJob, DaemonSet, Job, JobSpec, LabelSelector, PodTemplateSpec, ReplicationController, StatefulSet } from '../../schemas/index.ts';
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

export const validateCronJob = (causes: Causes, object: CronJob): void => {
  const spec = object.spec;
  if (!spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  if (!spec.schedule) causes.push(fieldErrors.required('spec.schedule'));
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
