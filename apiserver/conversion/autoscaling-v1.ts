/**
 * autoscaling/v1 HorizontalPodAutoscaler ⇄ autoscaling/v2 (the stored version), as kube's
 * pkg/apis/autoscaling/v1/conversion.go: v1 has one CPU utilization target; every other
 * metric, the current metrics, the conditions and `behavior` travel in annotations
 * (`autoscaling.alpha.kubernetes.io/*`) in v1's own metric format, so that a v1 client
 * that reads, edits and writes back an HPA keeps what it cannot see. A v1 HPA without a
 * CPU target or other metrics gets kube's implicit 80 % CPU utilization.
 */
import { arrayAt, defined, isJsonObject, objectAt, type Conversion, type JsonObject } from './types.ts';

const METRIC_SPECS = 'autoscaling.alpha.kubernetes.io/metrics';
const METRIC_STATUSES = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const ROUND_TRIP = [METRIC_SPECS, METRIC_STATUSES, CONDITIONS, BEHAVIOR] as const;
/** kube's `autoscaling.DefaultCPUUtilization`. */
const DEFAULT_CPU_UTILIZATION = 80;

// ---- metric specs: v2 (stored) ⇄ v1 (the annotation's format) ----

const identifier = (metric: JsonObject | undefined): { name: unknown; selector: unknown } => ({ name: metric?.['name'], selector: metric?.['selector'] });

const specToV1 = (metric: JsonObject): JsonObject => {
  const out: JsonObject = { type: metric['type'] };
  const source = (name: string) => objectAt(metric[name]);
  const target = (from: JsonObject | undefined) => objectAt(from?.['target']) ?? {};
  const object = source('object');
  if (object) {
    const t = target(object);
    const id = identifier(objectAt(object['metric']));
    out['object'] = defined({ target: object['describedObject'], metricName: id.name, targetValue: t['value'] ?? '0', selector: id.selector, averageValue: t['averageValue'] });
  }
  const pods = source('pods');
  if (pods) {
    const id = identifier(objectAt(pods['metric']));
    out['pods'] = defined({ metricName: id.name, targetAverageValue: target(pods)['averageValue'] ?? '0', selector: id.selector });
  }
  const resource = source('resource');
  if (resource) {
    const t = target(resource);
    out['resource'] = defined({ name: resource['name'], targetAverageUtilization: t['averageUtilization'], targetAverageValue: t['averageValue'] });
  }
  const container = source('containerResource');
  if (container) {
    const t = target(container);
    out['containerResource'] = defined({ name: container['name'], targetAverageUtilization: t['averageUtilization'], targetAverageValue: t['averageValue'], container: container['container'] });
  }
  const external = source('external');
  if (external) {
    const t = target(external);
    const id = identifier(objectAt(external['metric']));
    out['external'] = defined({ metricName: id.name, metricSelector: id.selector, targetValue: t['value'], targetAverageValue: t['averageValue'] });
  }
  return out;
};

const metricId = (name: unknown, selector: unknown): JsonObject => defined({ name, selector });

const specFromV1 = (metric: JsonObject): JsonObject => {
  const out: JsonObject = { type: metric['type'] };
  const object = objectAt(metric['object']);
  if (object) {
    const type = object['averageValue'] === undefined ? 'Value' : 'AverageValue';
    out['object'] = {
      describedObject: object['target'],
      metric: metricId(object['metricName'], object['selector']),
      target: defined({ type, value: object['targetValue'] ?? '0', averageValue: object['averageValue'] }),
    };
  }
  const pods = objectAt(metric['pods']);
  if (pods) {
    out['pods'] = { metric: metricId(pods['metricName'], pods['selector']), target: { type: 'AverageValue', averageValue: pods['targetAverageValue'] ?? '0' } };
  }
  const resourceTarget = (source: JsonObject): JsonObject =>
    defined({
      type: source['targetAverageUtilization'] === undefined ? 'AverageValue' : 'Utilization',
      averageUtilization: source['targetAverageUtilization'],
      averageValue: source['targetAverageValue'],
    });
  const resource = objectAt(metric['resource']);
  if (resource) out['resource'] = { name: resource['name'], target: resourceTarget(resource) };
  const container = objectAt(metric['containerResource']);
  if (container) out['containerResource'] = { name: container['name'], container: container['container'], target: resourceTarget(container) };
  const external = objectAt(metric['external']);
  if (external) {
    const type = external['targetValue'] === undefined ? 'AverageValue' : 'Value';
    out['external'] = {
      metric: metricId(external['metricName'], external['metricSelector']),
      target: defined({ type, value: external['targetValue'], averageValue: external['targetAverageValue'] }),
    };
  }
  return out;
};

// ---- metric statuses ----

const statusToV1 = (metric: JsonObject): JsonObject => {
  const out: JsonObject = { type: metric['type'] };
  const current = (from: JsonObject) => objectAt(from['current']) ?? {};
  const object = objectAt(metric['object']);
  if (object) {
    const c = current(object);
    const id = identifier(objectAt(object['metric']));
    out['object'] = defined({ target: object['describedObject'], metricName: id.name, currentValue: c['value'] ?? '0', selector: id.selector, averageValue: c['averageValue'] });
  }
  const pods = objectAt(metric['pods']);
  if (pods) {
    const id = identifier(objectAt(pods['metric']));
    out['pods'] = defined({ metricName: id.name, currentAverageValue: current(pods)['averageValue'] ?? '0', selector: id.selector });
  }
  const resource = objectAt(metric['resource']);
  if (resource) {
    const c = current(resource);
    out['resource'] = defined({ name: resource['name'], currentAverageUtilization: c['averageUtilization'], currentAverageValue: c['averageValue'] ?? '0' });
  }
  const container = objectAt(metric['containerResource']);
  if (container) {
    const c = current(container);
    out['containerResource'] = defined({ name: container['name'], currentAverageUtilization: c['averageUtilization'], currentAverageValue: c['averageValue'] ?? '0', container: container['container'] });
  }
  const external = objectAt(metric['external']);
  if (external) {
    const c = current(external);
    const id = identifier(objectAt(external['metric']));
    out['external'] = defined({ metricName: id.name, metricSelector: id.selector, currentValue: c['value'] ?? '0', currentAverageValue: c['averageValue'] });
  }
  return out;
};

const statusFromV1 = (metric: JsonObject): JsonObject => {
  const out: JsonObject = { type: metric['type'] };
  const object = objectAt(metric['object']);
  if (object) {
    out['object'] = {
      describedObject: object['target'],
      metric: metricId(object['metricName'], object['selector']),
      current: defined({ value: object['currentValue'] ?? '0', averageValue: object['averageValue'] }),
    };
  }
  const pods = objectAt(metric['pods']);
  if (pods) out['pods'] = { metric: metricId(pods['metricName'], pods['selector']), current: { averageValue: pods['currentAverageValue'] ?? '0' } };
  const resourceCurrent = (source: JsonObject): JsonObject =>
    defined({ averageValue: source['currentAverageValue'] ?? '0', averageUtilization: source['currentAverageUtilization'] });
  const resource = objectAt(metric['resource']);
  if (resource) out['resource'] = { name: resource['name'], current: resourceCurrent(resource) };
  const container = objectAt(metric['containerResource']);
  if (container) out['containerResource'] = { name: container['name'], container: container['container'], current: resourceCurrent(container) };
  const external = objectAt(metric['external']);
  if (external) {
    out['external'] = {
      metric: metricId(external['metricName'], external['metricSelector']),
      current: defined({ value: external['currentValue'] ?? '0', averageValue: external['currentAverageValue'] }),
    };
  }
  return out;
};

// ---- behavior: kube marshals its internal type, whose fields have no JSON tags ----

const GO_RULES = ['StabilizationWindowSeconds', 'SelectPolicy', 'Policies'] as const;
const GO_POLICY = ['Type', 'Value', 'PeriodSeconds'] as const;
const jsonName = (goName: string): string => goName[0]!.toLowerCase() + goName.slice(1);

const rulesToGo = (rules: unknown): unknown => {
  const from = objectAt(rules);
  if (!from) return null;
  const policies = arrayAt(from['policies'])?.map((policy) => Object.fromEntries(GO_POLICY.map((name) => [name, objectAt(policy)?.[jsonName(name)] ?? null])));
  return { StabilizationWindowSeconds: from['stabilizationWindowSeconds'] ?? null, SelectPolicy: from['selectPolicy'] ?? null, Policies: policies ?? null };
};

/** encoding/json matches field names case-insensitively: the Go names and the JSON names both read back. */
const caseInsensitive = (from: JsonObject, name: string): unknown => {
  const key = Object.keys(from).find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : from[key];
};

const rulesFromGo = (rules: unknown): JsonObject | undefined => {
  const from = objectAt(rules);
  if (!from) return undefined;
  const policies = arrayAt(caseInsensitive(from, 'Policies'))?.map((policy) =>
    defined(Object.fromEntries(GO_POLICY.map((name) => [jsonName(name), objectAt(policy) ? (caseInsensitive(objectAt(policy)!, name) ?? undefined) : undefined]))),
  );
  return defined(Object.fromEntries([...GO_RULES.slice(0, 2).map((name) => [jsonName(name), caseInsensitive(from, name) ?? undefined]), ['policies', policies]]));
};

// ---- the object ----

const isCpuUtilization = (metric: JsonObject): boolean => {
  const resource = objectAt(metric['resource']);
  return metric['type'] === 'Resource' && resource?.['name'] === 'cpu' && objectAt(resource['target'])?.['averageUtilization'] !== undefined;
};

const withoutRoundTrip = (annotations: unknown): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(objectAt(annotations) ?? {})) {
    if (!(ROUND_TRIP as readonly string[]).includes(key)) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
};

const fromStored = (stored: JsonObject): JsonObject => {
  const metadata = { ...(objectAt(stored['metadata']) ?? {}) };
  const spec = objectAt(stored['spec']) ?? {};
  const status = objectAt(stored['status']);
  const metrics = (arrayAt(spec['metrics']) ?? []).filter(isJsonObject);
  const annotations = withoutRoundTrip(metadata['annotations']);
  const others = metrics.filter((metric) => !isCpuUtilization(metric)).map(specToV1);
  if (others.length > 0) annotations[METRIC_SPECS] = JSON.stringify(others);
  const currentMetrics = (arrayAt(status?.['currentMetrics']) ?? []).filter(isJsonObject);
  if (currentMetrics.length > 0) annotations[METRIC_STATUSES] = JSON.stringify(currentMetrics.map(statusToV1));
  const conditions = arrayAt(status?.['conditions']) ?? [];
  if (conditions.length > 0) annotations[CONDITIONS] = JSON.stringify(conditions);
  const behavior = objectAt(spec['behavior']);
  if (behavior) annotations[BEHAVIOR] = JSON.stringify({ ScaleUp: rulesToGo(behavior['scaleUp']), ScaleDown: rulesToGo(behavior['scaleDown']) });
  if (Object.keys(annotations).length > 0) metadata['annotations'] = annotations;
  else delete metadata['annotations'];
  const cpu = metrics.find((metric) => metric['type'] === 'Resource' && objectAt(metric['resource'])?.['name'] === 'cpu');
  const cpuCurrent = currentMetrics.find((metric) => metric['type'] === 'Resource' && objectAt(metric['resource'])?.['name'] === 'cpu');
  return defined({
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: defined({
      scaleTargetRef: spec['scaleTargetRef'],
      minReplicas: spec['minReplicas'],
      maxReplicas: spec['maxReplicas'],
      targetCPUUtilizationPercentage: objectAt(objectAt(cpu?.['resource'])?.['target'])?.['averageUtilization'],
    }),
    status:
      status === undefined
        ? undefined
        : defined({
            observedGeneration: status['observedGeneration'],
            lastScaleTime: status['lastScaleTime'],
            currentReplicas: status['currentReplicas'] ?? 0,
            desiredReplicas: status['desiredReplicas'] ?? 0,
            currentCPUUtilizationPercentage: objectAt(objectAt(cpuCurrent?.['resource'])?.['current'])?.['averageUtilization'],
          }),
  });
};

/** An annotation's JSON, or undefined when absent; a malformed one throws (kube answers 400 for it). */
const annotationJson = (annotations: JsonObject, key: string): unknown => {
  const text = annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new SyntaxError(`metadata.annotations[${key}]: not valid JSON`);
  }
};

const toStored = (served: JsonObject): JsonObject => {
  const metadata = { ...(objectAt(served['metadata']) ?? {}) };
  const annotations = objectAt(metadata['annotations']) ?? {};
  const spec = objectAt(served['spec']) ?? {};
  const status = objectAt(served['status']);
  const target = spec['targetCPUUtilizationPercentage'];
  const cpu = target === undefined || target === null ? [] : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } }];
  const others = (arrayAt(annotationJson(annotations, METRIC_SPECS)) ?? []).filter(isJsonObject).map(specFromV1);
  let metrics: JsonObject[] = [...others, ...cpu];
  if (metrics.length === 0) metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } }];
  const behaviorJson = objectAt(annotationJson(annotations, BEHAVIOR));
  const behavior = behaviorJson ? defined({ scaleUp: rulesFromGo(caseInsensitive(behaviorJson, 'ScaleUp')), scaleDown: rulesFromGo(caseInsensitive(behaviorJson, 'ScaleDown')) }) : undefined;
  const statuses = arrayAt(annotationJson(annotations, METRIC_STATUSES));
  const currentCpu = status?.['currentCPUUtilizationPercentage'];
  const currentMetrics =
    statuses !== undefined
      ? statuses.filter(isJsonObject).map(statusFromV1)
      : currentCpu === undefined || currentCpu === null
        ? undefined
        : [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: currentCpu } } }];
  const conditions = arrayAt(annotationJson(annotations, CONDITIONS));
  const kept = withoutRoundTrip(annotations);
  if (Object.keys(kept).length > 0) metadata['annotations'] = kept;
  else delete metadata['annotations'];
  return defined({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: defined({ scaleTargetRef: spec['scaleTargetRef'], minReplicas: spec['minReplicas'], maxReplicas: spec['maxReplicas'], metrics, behavior }),
    status:
      status === undefined
        ? undefined
        : defined({
            observedGeneration: status['observedGeneration'],
            lastScaleTime: status['lastScaleTime'],
            currentReplicas: status['currentReplicas'],
            desiredReplicas: status['desiredReplicas'] ?? 0,
            currentMetrics,
            conditions,
          }),
  });
};

export const autoscalingV1HorizontalPodAutoscaler: Conversion = {
  group: 'autoscaling',
  version: 'v1',
  kind: 'HorizontalPodAutoscaler',
  definition: 'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler',
  toStored,
  fromStored,
};
