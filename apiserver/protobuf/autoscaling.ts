/**
 * Field numbers of k8s.io/api autoscaling/v1 and autoscaling/v2 generated.proto messages
 * (`kubectl autoscale` sends a v1 HorizontalPodAutoscaler; typed clients may send v2).
 * The two versions' HorizontalPodAutoscaler messages differ, so the v2 ones are named
 * `autoscaling/v2.<Message>`: a kind's message is `<apiVersion>.<kind>` where one exists.
 */
import { f, list, m, OBJECT, zero, type Message } from './spec.ts';

const V2 = 'autoscaling/v2.';

export const AUTOSCALING: Readonly<Record<string, Message>> = {
  Scale: { 1: f('metadata', m('ObjectMeta')), 2: f('spec', m('ScaleSpec')), 3: f('status', m('ScaleStatus')) },
  ScaleSpec: { 1: f('replicas', 'int32', zero) },
  ScaleStatus: { 1: f('replicas', 'int32', zero), 2: f('selector', 'string') },

  // autoscaling/v1.
  HorizontalPodAutoscaler: OBJECT('HorizontalPodAutoscalerSpec', 'HorizontalPodAutoscalerStatus'),
  HorizontalPodAutoscalerSpec: {
    1: f('scaleTargetRef', m('CrossVersionObjectReference')), 2: f('minReplicas', 'int32', zero), 3: f('maxReplicas', 'int32', zero),
    4: f('targetCPUUtilizationPercentage', 'int32', zero),
  },
  HorizontalPodAutoscalerStatus: {
    1: f('observedGeneration', 'int64', zero), 2: f('lastScaleTime', 'time'), 3: f('currentReplicas', 'int32', zero),
    4: f('desiredReplicas', 'int32', zero), 5: f('currentCPUUtilizationPercentage', 'int32', zero),
  },
  // The same message in v1 and v2.
  CrossVersionObjectReference: { 1: f('kind', 'string', zero), 2: f('name', 'string', zero), 3: f('apiVersion', 'string') },

  // autoscaling/v2.
  [`${V2}HorizontalPodAutoscaler`]: OBJECT(`${V2}HorizontalPodAutoscalerSpec`, `${V2}HorizontalPodAutoscalerStatus`),
  [`${V2}HorizontalPodAutoscalerSpec`]: {
    1: f('scaleTargetRef', m('CrossVersionObjectReference')), 2: f('minReplicas', 'int32', zero), 3: f('maxReplicas', 'int32', zero),
    4: f('metrics', m('MetricSpec'), list), 5: f('behavior', m('HorizontalPodAutoscalerBehavior')),
  },
  [`${V2}HorizontalPodAutoscalerStatus`]: {
    1: f('observedGeneration', 'int64', zero), 2: f('lastScaleTime', 'time'), 3: f('currentReplicas', 'int32'),
    4: f('desiredReplicas', 'int32', zero), 5: f('currentMetrics', m('MetricStatus'), list),
    6: f('conditions', m('HorizontalPodAutoscalerCondition'), list),
  },
  MetricSpec: {
    1: f('type', 'string', zero), 2: f('object', m('ObjectMetricSource')), 3: f('pods', m('PodsMetricSource')),
    4: f('resource', m('ResourceMetricSource')), 5: f('external', m('ExternalMetricSource')), 7: f('containerResource', m('ContainerResourceMetricSource')),
  },
  ObjectMetricSource: { 1: f('describedObject', m('CrossVersionObjectReference')), 2: f('target', m('MetricTarget')), 3: f('metric', m('MetricIdentifier')) },
  PodsMetricSource: { 1: f('metric', m('MetricIdentifier')), 2: f('target', m('MetricTarget')) },
  ResourceMetricSource: { 1: f('name', 'string', zero), 2: f('target', m('MetricTarget')) },
  ContainerResourceMetricSource: { 1: f('name', 'string', zero), 2: f('target', m('MetricTarget')), 3: f('container', 'string', zero) },
  ExternalMetricSource: { 1: f('metric', m('MetricIdentifier')), 2: f('target', m('MetricTarget')) },
  MetricIdentifier: { 1: f('name', 'string', zero), 2: f('selector', m('LabelSelector')) },
  MetricTarget: { 1: f('type', 'string', zero), 2: f('value', 'quantity'), 3: f('averageValue', 'quantity'), 4: f('averageUtilization', 'int32', zero) },
  HorizontalPodAutoscalerBehavior: { 1: f('scaleUp', m('HPAScalingRules')), 2: f('scaleDown', m('HPAScalingRules')) },
  HPAScalingRules: { 1: f('selectPolicy', 'string', zero), 2: f('policies', m('HPAScalingPolicy'), list), 3: f('stabilizationWindowSeconds', 'int32', zero) },
  HPAScalingPolicy: { 1: f('type', 'string', zero), 2: f('value', 'int32', zero), 3: f('periodSeconds', 'int32', zero) },
  MetricStatus: {
    1: f('type', 'string', zero), 2: f('object', m('ObjectMetricStatus')), 3: f('pods', m('PodsMetricStatus')),
    4: f('resource', m('ResourceMetricStatus')), 5: f('external', m('ExternalMetricStatus')), 7: f('containerResource', m('ContainerResourceMetricStatus')),
  },
  ObjectMetricStatus: { 1: f('metric', m('MetricIdentifier')), 2: f('current', m('MetricValueStatus')), 3: f('describedObject', m('CrossVersionObjectReference')) },
  PodsMetricStatus: { 1: f('metric', m('MetricIdentifier')), 2: f('current', m('MetricValueStatus')) },
  ResourceMetricStatus: { 1: f('name', 'string', zero), 2: f('current', m('MetricValueStatus')) },
  ContainerResourceMetricStatus: { 1: f('name', 'string', zero), 2: f('current', m('MetricValueStatus')), 3: f('container', 'string', zero) },
  ExternalMetricStatus: { 1: f('metric', m('MetricIdentifier')), 2: f('current', m('MetricValueStatus')) },
  MetricValueStatus: { 1: f('value', 'quantity'), 2: f('averageValue', 'quantity'), 3: f('averageUtilization', 'int32', zero) },
  HorizontalPodAutoscalerCondition: {
    1: f('type', 'string', zero), 2: f('status', 'string', zero), 3: f('lastTransitionTime', 'time'), 4: f('reason', 'string'),
    5: f('message', 'string'),
  },
};
