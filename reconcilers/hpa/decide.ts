/**
 * One sync of a HorizontalPodAutoscaler, pure (kube-controller-manager 1.32's
 * `reconcileAutoscaler`): the target's scale is read from the view (its `spec.replicas` and
 * selector, for any kind with a scale subresource in the kind registry), each metric gives a
 * replica proposal from the pods' figures (resource and container-resource metrics, as
 * utilization of the requests or an average value), the largest wins, and it is normalized
 * by `behavior` (or kube's legacy rules) and min/max. A changed count is written through the
 * target's scale subresource; the HPA's status (currentReplicas, desiredReplicas,
 * currentMetrics, lastScaleTime, the AbleToScale / ScalingActive / ScalingLimited conditions)
 * is written when it changed, and kube's Events are recorded.
 *
 * Its inputs besides the view are `now`, the metrics sample and the scaling history (kube's
 * in-memory recommendations and scale events); the plan returns the history to keep.
 */
import { encodeCustomObject, schemaRegistration, storageCodecOf, type View } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels, parseLabelSelector, type LabelRequirement } from '../../projections/selectors.ts';
import type {
  CustomResourceDefinition,
  EventBody,
  HorizontalPodAutoscaler,
  HorizontalPodAutoscalerCondition,
  HorizontalPodAutoscalerStatus,
  KubeObject,
  LabelSelector,
  MetricSpec,
  MetricStatus,
  MetricTarget,
  MetricValueStatus,
  ObjectUpdated,
  Pod,
} from '../../schemas/index.ts';
import { kindRef } from '../../schemas/keys.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { kindByGroupKind } from '../../schemas/kinds/registry.ts';
import { canonicalQuantity } from '../../schemas/quantity.ts';
import { canonicalJson, isoTime, statusCommand, withoutStatus } from '../replicaset/objects.ts';
import {
  defaultedBehavior,
  normalizeLegacy,
  normalizeWithBehavior,
  withInitialRecommendation,
  withScaleEvent,
  type NormalizationCondition,
  type ScalingHistory,
} from './behavior.ts';
import { podMetricsFor, type MetricsSample } from './metrics.ts';
import { milliValue, plainMetricReplicas, resourceReplicas, type CalculatorOptions } from './replicas.ts';

/** kube's component of the HPA's Events. */
export const HPA_EVENT_SOURCE = { component: 'horizontal-pod-autoscaler' } as const;

/** An Event the HPA controller records. */
export interface HpaEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** What a sync reads besides the view and the clock. */
export interface HpaInputs {
  readonly metrics: MetricsSample;
  /** kube's in-memory recommendations and scale events; undefined for an HPA not seen before. */
  readonly history: ScalingHistory | undefined;
}

/** The controller's settings (kube's flags). */
export interface HpaSettings extends CalculatorOptions {
  /** `--horizontal-pod-autoscaler-downscale-stabilization` in seconds (default 300). */
  readonly downscaleStabilizationSeconds?: number;
}

/** What one sync does. */
export interface HpaPlan {
  /** The scale write, if the count changes (a custom target's: its schema's registration, then the update). */
  readonly scale: readonly EventBody[] | undefined;
  readonly status: HorizontalPodAutoscalerStatus;
  /** Whether the status differs from the stored one. */
  readonly statusChanged: boolean;
  readonly events: readonly HpaEvent[];
  readonly history: ScalingHistory;
}

type ConditionType = 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';

/** kube's `setConditionInList`: a condition's transition time moves only when its status does. */
const setCondition = (
  conditions: HorizontalPodAutoscalerCondition[],
  type: ConditionType,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: number,
): void => {
  let existing = conditions.find((c) => c.type === type);
  if (!existing) {
    existing = { type, status: '' };
    conditions.push(existing);
  }
  if (existing.status !== status) existing.lastTransitionTime = isoTime(now);
  existing.status = status;
  existing.reason = reason;
  existing.message = message;
};

/** The Go error text of a failed metric (kube wraps errors with `%v`). */
type MetricOutcome =
  | { readonly type: 'ok'; readonly replicas: number; readonly name: string; readonly status: MetricStatus }
  | { readonly type: 'error'; readonly message: string; readonly condition: { reason: string; message: string } };

/** The scalable target: its object, replicas and selector, and how a custom resource's scale reads and writes it. */
interface ScaleTarget {
  readonly object: KubeObject;
  readonly replicas: number;
  readonly selector: readonly LabelRequirement[] | string;
  readonly custom?: { readonly crd: CustomResourceDefinition; readonly kind: string; readonly specReplicasPath: string };
}

const own = (value: unknown, field: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, field) ? (value as Record<string, unknown>)[field] : undefined;

/** `.spec.replicas` → `['spec', 'replicas']` (CRD validation admits only such field paths). */
const pathFields = (path: string): string[] => path.split('.').filter((field) => field !== '');

/** The selector a Scale carries as text, as requirements or kube's error text ('' when there is none). */
const selectorOfText = (text: string): readonly LabelRequirement[] | string => {
  if (text === '') return '';
  const parsed = parseLabelSelector(text);
  return parsed.type === 'ok' ? parsed.requirements : `couldn't convert selector into a corresponding internal selector object: ${parsed.error.message}`;
};

/**
 * A custom resource's scale target, as apiextensions-apiserver's /scale reads it: replicas at
 * the version's specReplicasPath, the selector text at its labelSelectorPath.
 */
const customScaleTargetOf = (hpa: HorizontalPodAutoscaler, view: View, group: string, version: string, kindName: string, name: string): ScaleTarget | { error: string } => {
  const crd = (view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[]).find(
    (candidate) => candidate.spec.group === group && (candidate.status?.acceptedNames?.kind || candidate.spec.names.kind) === kindName,
  );
  if (!crd) return { error: `no matches for kind "${kindName}" in group "${group}"` };
  const served = crd.spec.versions.find((v) => v.served && (version === '' || v.name === version));
  const scale = served?.subresources?.scale;
  if (!scale) return { error: 'the server could not find the requested resource' };
  const object = view.get(`${kindRefOf(group, kindName)}/${hpa.metadata.namespace ?? ''}/${name}`);
  const plural = crd.status?.acceptedNames?.plural || crd.spec.names.plural;
  if (!object) return { error: `${plural}.${group} "${name}" not found` };
  const replicas = pathFields(scale.specReplicasPath).reduce<unknown>(own, object);
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) return { error: `Internal error occurred: the spec replicas field "${scale.specReplicasPath}" does not exist` };
  const selector = scale.labelSelectorPath ? pathFields(scale.labelSelectorPath).reduce<unknown>(own, object) : undefined;
  return { object, replicas, selector: selectorOfText(typeof selector === 'string' ? selector : ''), custom: { crd, kind: kindName, specReplicasPath: scale.specReplicasPath } };
};

/** The target named by `spec.scaleTargetRef`, as kube's scale client would read it, or kube's error. */
export const scaleTargetOf = (hpa: HorizontalPodAutoscaler, view: View): ScaleTarget | { error: string } => {
  const ref = hpa.spec?.scaleTargetRef;
  if (!ref) return { error: 'the HPA has no scaleTargetRef' };
  const apiVersion = ref.apiVersion ?? '';
  const parts = apiVersion.split('/');
  if (parts.length > 2) return { error: `unexpected GroupVersion string: ${apiVersion}` };
  const group = parts.length === 2 ? (parts[0] ?? '') : '';
  const kind = kindByGroupKind(group, ref.kind);
  if (!kind) return group.includes('.') ? customScaleTargetOf(hpa, view, group, parts[1] ?? '', ref.kind, ref.name) : { error: `no matches for kind "${ref.kind}" in group "${group}"` };
  if (!kind.subresources.some((sub) => sub.name === 'scale')) return { error: 'the server could not find the requested resource' };
  const object = view.get(`${kindRef(ref.kind)}/${hpa.metadata.namespace ?? ''}/${ref.name}`);
  if (!object || object.kind !== ref.kind) return { error: `${kind.plural}${group ? `.${group}` : ''} "${ref.name}" not found` };
  const spec = (object as { spec?: { replicas?: number; selector?: LabelSelector | Record<string, string> } }).spec;
  const replicas = spec?.replicas ?? 1;
  const raw = spec?.selector;
  if (raw === undefined) return { object, replicas, selector: '' };
  const labelSelector: LabelSelector = object.kind === 'ReplicationController' ? { matchLabels: raw as Record<string, string> } : (raw as LabelSelector);
  const parsed = labelSelectorToRequirements(labelSelector);
  if (parsed.type !== 'ok') return { object, replicas, selector: `couldn't convert selector into a corresponding internal selector object: ${parsed.error.message}` };
  return { object, replicas, selector: parsed.requirements };
};

/**
 * The writes that set the target's replicas: a registry kind's scale update, or a custom
 * object's update at its specReplicasPath (its storage schema registered first; the fold
 * takes the same schema twice). A custom object whose content no longer encodes gives kube's
 * failed-update error text instead.
 */
const scaleWrites = (target: ScaleTarget, replicas: number): readonly EventBody[] | { error: string } => {
  const expectedResourceVersion = target.object.metadata.resourceVersion ?? null;
  if (!target.custom) {
    const scaled = withoutStatus(target.object) as KubeObject & { spec: { replicas?: number } };
    delete scaled.metadata.managedFields;
    scaled.spec.replicas = replicas;
    return [{ type: 'ObjectUpdated', object: scaled, expectedResourceVersion, subresource: 'scale' }];
  }
  const { crd, kind, specReplicasPath } = target.custom;
  const scaled = structuredClone(target.object) as unknown as Record<string, unknown>;
  const fields = pathFields(specReplicasPath);
  const parent = fields.slice(0, -1).reduce<unknown>(own, scaled);
  if (typeof parent !== 'object' || parent === null) return { error: `the spec replicas field "${specReplicasPath}" does not exist` };
  Object.defineProperty(parent, fields.at(-1)!, { value: replicas, enumerable: true, writable: true, configurable: true });
  const { codec, version } = storageCodecOf(crd, kind);
  try {
    const object = encodeCustomObject(scaled as unknown as KubeObject, codec, `${crd.spec.group}/${version}`);
    return [schemaRegistration(crd, kind, codec, version), { type: 'CustomObjectUpdated', object, expectedResourceVersion, subresource: null }];
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
};

/** A milli-value as kube's `resource.NewMilliQuantity(v, DecimalSI).String()`. */
export const milliQuantity = (milli: number): string => canonicalQuantity(`${milli}m`);

const resourceNameOf = (spec: MetricSpec): { source: string; name: string; container: string; target: MetricTarget } | undefined => {
  if (spec.type === 'Resource' && spec.resource) return { source: 'Resource', name: spec.resource.name, container: '', target: spec.resource.target };
  if (spec.type === 'ContainerResource' && spec.containerResource) {
    return { source: 'ContainerResource', name: spec.containerResource.name, container: spec.containerResource.container, target: spec.containerResource.target };
  }
  return undefined;
};

/** kube's `computeReplicasForMetric` for one metric spec; `warn` records the Event kube records. */
const replicasForMetric = (
  spec: MetricSpec,
  specReplicas: number,
  pods: readonly Pod[],
  sample: MetricsSample,
  now: number,
  settings: HpaSettings,
  warn: (reason: string, message: string) => void,
): MetricOutcome => {
  const unable = (reason: string, message: string, wrapped: string): MetricOutcome => {
    warn(reason, message);
    return { type: 'error', message: wrapped, condition: { reason, message: `the HPA was unable to compute the replica count: ${message}` } };
  };
  const resource = resourceNameOf(spec);
  if (!resource) {
    const known: Readonly<Record<string, string>> = { Pods: 'FailedGetPodsMetric', Object: 'FailedGetObjectMetric', External: 'FailedGetExternalMetric' };
    const reason = known[spec.type];
    if (reason) {
      const message = `unable to get metric: unable to fetch metrics from custom metrics API: the server could not find the requested resource (custom.metrics.k8s.io and external.metrics.k8s.io are not served)`;
      return unable(reason, message, `failed to get ${spec.type.toLowerCase()} metric value: ${message}`);
    }
    const message = `unknown metric source type "${spec.type}"`;
    return unable('InvalidMetricSourceType', message, message);
  }
  const reason = resource.source === 'Resource' ? 'FailedGetResourceMetric' : 'FailedGetContainerResourceMetric';
  const wrap = (message: string): string =>
    resource.source === 'Resource' ? `failed to get ${resource.name} resource metric value: ${message}` : `failed to get ${resource.name} container metric value: ${message}`;
  const { target } = resource;
  const fetched = ((): ReturnType<typeof podMetricsFor> => {
    if (sample.type === 'error') return sample.message;
    const selected = new Set(pods.map((pod) => pod.metadata.name));
    const items = sample.pods.filter((pod) => selected.has(pod.name));
    if (items.length === 0) return 'no metrics returned from resource metrics API';
    return podMetricsFor(items, resource.name, resource.container);
  })();
  if (target.averageValue !== undefined) {
    const failed = (message: string): MetricOutcome => {
      const text = `failed to get ${resource.name} usage: ${message}`;
      return unable(reason, text, wrap(text));
    };
    if (typeof fetched === 'string') return failed(`unable to get metrics for resource ${resource.name}: ${fetched}`);
    const proposal = plainMetricReplicas(specReplicas, milliValue(target.averageValue), resource.name, pods, fetched, now, settings);
    if (proposal.type === 'error') return failed(proposal.message);
    const current = { averageValue: milliQuantity(proposal.usage) };
    return { type: 'ok', replicas: proposal.replicas, name: `${resource.name} resource`, status: statusFor(resource, current) };
  }
  if (target.averageUtilization === undefined) {
    const text = 'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set';
    return unable(reason, text, wrap(text));
  }
  const failed = (message: string): MetricOutcome => {
    const text = `failed to get ${resource.name} utilization: ${message}`;
    return unable(reason, text, wrap(text));
  };
  if (typeof fetched === 'string') return failed(`unable to get metrics for resource ${resource.name}: ${fetched}`);
  const proposal = resourceReplicas(specReplicas, target.averageUtilization, resource.name, pods, fetched, now, settings, resource.container);
  if (proposal.type === 'error') return failed(proposal.message);
  const current = { averageUtilization: proposal.utilization, averageValue: milliQuantity(proposal.rawAverage) };
  const name =
    resource.source === 'Resource'
      ? `${resource.name} resource utilization (percentage of request)`
      : `${resource.name} container resource utilization (percentage of request)`;
  return { type: 'ok', replicas: proposal.replicas, name, status: statusFor(resource, current) };
};

const statusFor = (resource: { source: string; name: string; container: string }, current: MetricValueStatus): MetricStatus =>
  resource.source === 'Resource'
    ? { type: 'Resource', resource: { name: resource.name, current } }
    : { type: 'ContainerResource', containerResource: { name: resource.name, container: resource.container, current } };

/** Plans one sync of `hpa` on `view` at `now` with `inputs`. */
export const planHpa = (hpa: HorizontalPodAutoscaler, view: View, now: number, inputs: HpaInputs, settings: HpaSettings = {}): HpaPlan => {
  const original = hpa.status;
  const spec = hpa.spec!;
  const conditions: HorizontalPodAutoscalerCondition[] = structuredClone(original?.conditions ?? []);
  const events: HpaEvent[] = [];
  const warn = (reason: string, message: string): void => {
    events.push({ type: 'Warning', reason, message });
  };
  const condition = (type: ConditionType, status: 'True' | 'False', reason: string, message: string): void =>
    setCondition(conditions, type, status, reason, message, now);
  const base: HorizontalPodAutoscalerStatus = {
    ...(original?.currentReplicas !== undefined ? { currentReplicas: original.currentReplicas } : {}),
    desiredReplicas: original?.desiredReplicas ?? 0,
    ...(original?.currentMetrics !== undefined ? { currentMetrics: original.currentMetrics } : {}),
    ...(original?.lastScaleTime !== undefined ? { lastScaleTime: original.lastScaleTime } : {}),
  };
  const finish = (status: HorizontalPodAutoscalerStatus, history: ScalingHistory, scale?: readonly EventBody[]): HpaPlan => {
    const next: HorizontalPodAutoscalerStatus = { ...status, ...(conditions.length > 0 ? { conditions } : {}) };
    return { scale, status: next, statusChanged: canonicalJson(next) !== canonicalJson(original ?? {}), events, history };
  };

  const target = scaleTargetOf(hpa, view);
  if ('error' in target) {
    warn('FailedGetScale', target.error);
    condition('AbleToScale', 'False', 'FailedGetScale', `the HPA controller was unable to get the target's current scale: ${target.error}`);
    return finish(base, inputs.history ?? { recommendations: [], scaleUpEvents: [], scaleDownEvents: [] });
  }
  condition('AbleToScale', 'True', 'SucceededGetScale', "the HPA controller was able to get the target's current scale");
  const currentReplicas = target.replicas;
  let history = withInitialRecommendation(inputs.history, currentReplicas, now);
  const minReplicas = spec.minReplicas ?? 1;
  let desiredReplicas = 0;
  let rescaleReason = '';
  let rescale = true;
  let metricStatuses: MetricStatus[] | undefined;
  if (currentReplicas === 0 && minReplicas !== 0) {
    rescale = false;
    condition('ScalingActive', 'False', 'ScalingDisabled', 'scaling is disabled since the replica count of the target is zero');
  } else if (currentReplicas > spec.maxReplicas) {
    rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
    desiredReplicas = spec.maxReplicas;
  } else if (currentReplicas < minReplicas) {
    rescaleReason = 'Current number of replicas below Spec.MinReplicas';
    desiredReplicas = minReplicas;
  } else {
    // computeReplicasForMetrics
    const selector = target.selector;
    let failure: string | undefined;
    let metricReplicas = 0;
    let metricName = '';
    if (typeof selector === 'string') {
      const message = selector === '' ? 'selector is required' : selector;
      warn(selector === '' ? 'SelectorRequired' : 'InvalidSelector', message);
      condition('ScalingActive', 'False', 'InvalidSelector', selector === '' ? "the HPA target's scale is missing a selector" : message);
      failure = message;
      metricReplicas = -1;
    } else {
      const pods = (view.list('Pod', hpa.metadata.namespace) as Pod[]).filter((pod) => matchesLabels(selector, pod.metadata.labels));
      const metricSpecs = spec.metrics ?? [];
      const statuses: MetricStatus[] = [];
      let invalid = 0;
      let firstError: MetricOutcome | undefined;
      for (const metricSpec of metricSpecs) {
        const outcome = replicasForMetric(metricSpec, currentReplicas, pods, inputs.metrics, now, settings, warn);
        if (outcome.type === 'error') {
          statuses.push({ type: '' });
          if (invalid === 0) firstError = outcome;
          invalid++;
          continue;
        }
        statuses.push(outcome.status);
        if (metricReplicas === 0 || outcome.replicas > metricReplicas) {
          metricReplicas = outcome.replicas;
          metricName = outcome.name;
        }
      }
      metricStatuses = statuses;
      if (firstError?.type === 'error') failure = `invalid metrics (${invalid} invalid out of ${metricSpecs.length}), first error is: ${firstError.message}`;
      if (invalid >= metricSpecs.length || (invalid > 0 && metricReplicas < currentReplicas)) {
        if (firstError?.type === 'error') condition('ScalingActive', 'False', firstError.condition.reason, firstError.condition.message);
        metricReplicas = -1;
      } else {
        condition('ScalingActive', 'True', 'ValidMetricFound', `the HPA was able to successfully calculate a replica count from ${metricName}`);
      }
    }
    if (metricReplicas === -1) {
      // setCurrentReplicasAndMetricsInStatus; the desired count stays what it was.
      warn('FailedComputeMetricsReplicas', failure ?? '');
      const status: HorizontalPodAutoscalerStatus = { ...base, currentReplicas };
      if (metricStatuses !== undefined) status.currentMetrics = metricStatuses;
      else delete status.currentMetrics;
      return finish(status, history);
    }
    let rescaleMetric = '';
    if (metricReplicas > desiredReplicas) {
      desiredReplicas = metricReplicas;
      rescaleMetric = metricName;
    }
    if (desiredReplicas > currentReplicas) rescaleReason = `${rescaleMetric} above target`;
    if (desiredReplicas < currentReplicas) rescaleReason = 'All metrics below target';
    const args = { currentReplicas, desiredReplicas, minReplicas, maxReplicas: spec.maxReplicas, now };
    const normalized = spec.behavior
      ? normalizeWithBehavior(args, defaultedBehavior(spec.behavior, settings.downscaleStabilizationSeconds), history)
      : normalizeLegacy(args, history, settings.downscaleStabilizationSeconds);
    for (const c of normalized.conditions as NormalizationCondition[]) condition(c.type, c.status, c.reason, c.message);
    history = normalized.history;
    desiredReplicas = normalized.replicas;
    rescale = desiredReplicas !== currentReplicas;
  }

  let scale: readonly EventBody[] | undefined;
  if (rescale) {
    const writes = scaleWrites(target, desiredReplicas);
    if ('error' in writes) {
      // kube's failed scale update: the count stays, the next sync tries again.
      warn('FailedRescale', `New size: ${desiredReplicas}; reason: ${rescaleReason}; error: ${writes.error}`);
      condition('AbleToScale', 'False', 'FailedUpdateScale', `the HPA controller was unable to update the target scale: ${writes.error}`);
      return finish({ ...base, currentReplicas, desiredReplicas: currentReplicas, ...(metricStatuses !== undefined ? { currentMetrics: metricStatuses } : {}) }, history);
    }
    scale = writes;
    condition('AbleToScale', 'True', 'SucceededRescale', `the HPA controller was able to update the target scale to ${desiredReplicas}`);
    events.push({ type: 'Normal', reason: 'SuccessfulRescale', message: `New size: ${desiredReplicas}; reason: ${rescaleReason}` });
    history = withScaleEvent(history, spec.behavior ? defaultedBehavior(spec.behavior, settings.downscaleStabilizationSeconds) : undefined, currentReplicas, desiredReplicas, now);
  } else {
    desiredReplicas = currentReplicas;
  }
  // setStatus
  const status: HorizontalPodAutoscalerStatus = {
    currentReplicas,
    desiredReplicas,
    ...(metricStatuses !== undefined ? { currentMetrics: metricStatuses } : {}),
    ...(rescale ? { lastScaleTime: isoTime(now) } : original?.lastScaleTime !== undefined ? { lastScaleTime: original.lastScaleTime } : {}),
  };
  return finish(status, history, scale);
};

/** The status write of a plan's status, carrying `annotations` on the written copy (the fold keeps only the status). */
export const hpaStatusCommand = (hpa: HorizontalPodAutoscaler, status: HorizontalPodAutoscalerStatus, annotations: Readonly<Record<string, string>>): ObjectUpdated => {
  const command = statusCommand(hpa, status);
  command.object.metadata.annotations = { ...command.object.metadata.annotations, ...annotations };
  return command;
};

/** Whether a plan writes anything: a scale, a changed status, or Events. */
export const planWrites = (plan: HpaPlan): boolean => plan.scale !== undefined || plan.statusChanged || plan.events.length > 0;
