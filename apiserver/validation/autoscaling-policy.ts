/**
 * HorizontalPodAutoscaler (autoscaling/v2) and PodDisruptionBudget (policy/v1) validation,
 * after kube's pkg/apis/autoscaling/validation and pkg/apis/policy/validation: replica
 * bounds, a scale target and complete metric sources; one of minAvailable/maxUnavailable,
 * each a non-negative count or a percentage up to 100 %.
 */
import type { HorizontalPodAutoscaler, PodDisruptionBudget } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { StatusCause } from '../status.ts';
import { checkEnum } from './objects.ts';
import { pathSegmentProblem } from './names.ts';

type Causes = StatusCause[];

/** Each metric source type and the member of a MetricSpec that must describe it. */
const METRIC_SOURCES = { Object: 'object', Pods: 'pods', Resource: 'resource', ContainerResource: 'containerResource', External: 'external' } as const;

export const validateHorizontalPodAutoscaler = (causes: Causes, hpa: HorizontalPodAutoscaler): void => {
  const spec = hpa.spec;
  if (!spec) {
    causes.push(fieldErrors.required('spec'));
    return;
  }
  if (spec.minReplicas !== undefined && spec.minReplicas < 1) {
    causes.push(fieldErrors.invalid('spec.minReplicas', spec.minReplicas, 'must be greater than or equal to 1'));
  }
  if (spec.maxReplicas < 1) causes.push(fieldErrors.invalid('spec.maxReplicas', spec.maxReplicas, 'must be greater than 0'));
  if (spec.minReplicas !== undefined && spec.maxReplicas < spec.minReplicas) {
    causes.push(fieldErrors.invalid('spec.maxReplicas', spec.maxReplicas, 'must be greater than or equal to `minReplicas`'));
  }
  const target = spec.scaleTargetRef;
  if (!target.kind) causes.push(fieldErrors.required('spec.scaleTargetRef.kind'));
  else if (pathSegmentProblem(target.kind)) causes.push(fieldErrors.invalid('spec.scaleTargetRef.kind', target.kind, pathSegmentProblem(target.kind)!));
  if (!target.name) causes.push(fieldErrors.required('spec.scaleTargetRef.name'));
  else if (pathSegmentProblem(target.name)) causes.push(fieldErrors.invalid('spec.scaleTargetRef.name', target.name, pathSegmentProblem(target.name)!));
  (spec.metrics ?? []).forEach((metric, i) => {
    const field = `spec.metrics[${i}]`;
    const types = Object.keys(METRIC_SOURCES);
    if (!types.includes(metric.type)) {
      causes.push(fieldErrors.notSupported(`${field}.type`, metric.type, types));
      return;
    }
    const member = METRIC_SOURCES[metric.type as keyof typeof METRIC_SOURCES];
    if ((metric as Record<string, unknown>)[member] === undefined) causes.push(fieldErrors.required(`${field}.${member}`, 'must populate information for the given metric source'));
    for (const other of Object.values(METRIC_SOURCES)) {
      if (other !== member && (metric as Record<string, unknown>)[other] !== undefined) {
        causes.push(fieldErrors.forbidden(`${field}.${other}`, 'must populate the given metric source only'));
      }
    }
  });
  for (const direction of ['scaleUp', 'scaleDown'] as const) {
    const rules = spec.behavior?.[direction];
    if (!rules) continue;
    const field = `spec.behavior.${direction}`;
    checkEnum(causes, `${field}.selectPolicy`, rules.selectPolicy, ['Max', 'Min', 'Disabled']);
    if (rules.stabilizationWindowSeconds !== undefined && (rules.stabilizationWindowSeconds < 0 || rules.stabilizationWindowSeconds > 3600)) {
      causes.push(fieldErrors.invalid(`${field}.stabilizationWindowSeconds`, rules.stabilizationWindowSeconds, 'must be between 0 and 3600, inclusive'));
    }
    (rules.policies ?? []).forEach((policy, j) => {
      const path = `${field}.policies[${j}]`;
      checkEnum(causes, `${path}.type`, policy.type, ['Pods', 'Percent']);
      if (policy.value <= 0) causes.push(fieldErrors.invalid(`${path}.value`, policy.value, 'must be greater than zero'));
      if (policy.periodSeconds <= 0 || policy.periodSeconds > 1800) {
        causes.push(fieldErrors.invalid(`${path}.periodSeconds`, policy.periodSeconds, 'must be greater than zero and less than or equal to 1800'));
      }
    });
  }
};

/** ValidatePositiveIntOrPercent and IsNotMoreThan100Percent of kube's apps/policy validation. */
const checkIntOrPercent = (causes: Causes, field: string, value: number | string | undefined): void => {
  if (value === undefined) return;
  if (typeof value === 'number') {
    if (value < 0) causes.push(fieldErrors.invalid(field, value, 'must be greater than or equal to 0'));
    return;
  }
  const match = /^(\d+)%$/.exec(value);
  if (!match) causes.push(fieldErrors.invalid(field, value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
  else if (Number(match[1]) > 100) causes.push(fieldErrors.invalid(field, value, 'must not be greater than 100%'));
};

export const validatePodDisruptionBudget = (causes: Causes, pdb: PodDisruptionBudget): void => {
  const spec = pdb.spec ?? {};
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    causes.push(fieldErrors.invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  checkIntOrPercent(causes, 'spec.minAvailable', spec.minAvailable);
  checkIntOrPercent(causes, 'spec.maxUnavailable', spec.maxUnavailable);
  checkEnum(causes, 'spec.unhealthyPodEvictionPolicy', spec.unhealthyPodEvictionPolicy, ['IfHealthyBudget', 'AlwaysAllow']);
};
