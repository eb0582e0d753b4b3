/**
 * The replica calculation of kube-controller-manager 1.32's HPA (`replica_calculator.go`
 * and `metrics/utilization.go`), pure: pod metrics (milli-units: millicores, milli-bytes)
 * and the pods a target's selector picks give a replica proposal. Pods being deleted or
 * failed are ignored; pending pods, and (for CPU) pods not yet ready or measured too soon
 * after they became ready, count as unready; pods without a metric are missing. Within the
 * 10 % tolerance the current count stays; unready and missing pods are assumed to use
 * nothing on a scale-up and their request (or the target, if higher) on a scale-down, and a
 * proposal that would flip the direction keeps the current count.
 *
 * Errors are values (`{ type: 'error', message }`) carrying kube's own messages.
 */
import type { Pod } from '../../schemas/index.ts';
import { parseQuantity, quantityMilliValue } from '../../schemas/quantity.ts';
import { parseTime } from '../replicaset/objects.ts';
import { readyCondition } from '../replicaset/pods.ts';

/** kube's `--horizontal-pod-autoscaler-tolerance`. */
export const DEFAULT_TOLERANCE = 0.1;
/** kube's `--horizontal-pod-autoscaler-cpu-initialization-period` (5 min). */
export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** kube's `--horizontal-pod-autoscaler-initial-readiness-delay` (30 s). */
export const INITIAL_READINESS_DELAY_MS = 30_000;

/** One pod's measured usage (metricsclient.PodMetric). */
export interface PodMetric {
  /** When the sample was taken (epoch ms). */
  readonly timestamp: number;
  /** The sample's window (ms). */
  readonly windowMs: number;
  /** Usage in milli-units (millicores for cpu, thousandths of a byte for memory). */
  readonly value: number;
}

/** Pod name → metric (metricsclient.PodMetricsInfo). */
export type PodMetricsInfo = ReadonlyMap<string, PodMetric>;

/** A replica proposal, or why none could be made. */
export type Proposal<T> = ({ readonly type: 'ok' } & T) | { readonly type: 'error'; readonly message: string };

const error = (message: string): { type: 'error'; message: string } => ({ type: 'error', message });

/** The settings of the calculation (kube's flags). */
export interface CalculatorOptions {
  readonly tolerance?: number;
  readonly cpuInitializationPeriodMs?: number;
  readonly initialReadinessDelayMs?: number;
}

/** How `groupPods` sorts the target's pods. */
export interface PodGroups {
  readonly readyPodCount: number;
  readonly unready: ReadonlySet<string>;
  readonly missing: ReadonlySet<string>;
  readonly ignored: ReadonlySet<string>;
}

/** kube's `groupPods`: ready, unready, missing and ignored pods for `resource` at `now`. */
export const groupPods = (pods: readonly Pod[], metrics: PodMetricsInfo, resource: string, now: number, options: CalculatorOptions = {}): PodGroups => {
  const cpuInitializationPeriodMs = options.cpuInitializationPeriodMs ?? CPU_INITIALIZATION_PERIOD_MS;
  const initialReadinessDelayMs = options.initialReadinessDelayMs ?? INITIAL_READINESS_DELAY_MS;
  const unready = new Set<string>();
  const missing = new Set<string>();
  const ignored = new Set<string>();
  let readyPodCount = 0;
  for (const pod of pods) {
    const name = pod.metadata.name;
    if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Failed') {
      ignored.add(name);
      continue;
    }
    if ((pod.status?.phase ?? 'Pending') === 'Pending') {
      unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const condition = readyCondition(pod);
      const started = parseTime(pod.status?.startTime);
      let isUnready: boolean;
      if (!condition || started === undefined) {
        isUnready = true;
      } else {
        const transition = parseTime(condition.lastTransitionTime) ?? 0;
        if (started + cpuInitializationPeriodMs > now) {
          // Still initialising: unready, or not one whole window measured since it changed.
          isUnready = condition.status === 'False' || metric.timestamp < transition + metric.windowMs;
        } else {
          // Unready and never ready since it started.
          isUnready = condition.status === 'False' && started + initialReadinessDelayMs > transition;
        }
      }
      if (isUnready) {
        unready.add(name);
        continue;
      }
    }
    readyPodCount++;
  }
  return { readyPodCount, unready, missing, ignored };
};

const withoutPods = (metrics: PodMetricsInfo, pods: ReadonlySet<string>): Map<string, PodMetric> =>
  new Map([...metrics].filter(([name]) => !pods.has(name)));

/** The milli-value of a quantity, as a number. */
export const milliValue = (quantity: string): number => Number(quantityMilliValue(parseQuantity(quantity)));

/**
 * kube's `calculatePodRequests`: each pod's request of `resource` (milli-units), summed over
 * its containers and restartable init containers (or only `container`).
 */
export const calculatePodRequests = (pods: readonly Pod[], resource: string, container = ''): Proposal<{ requests: ReadonlyMap<string, number> }> => {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    const containers = [...pod.spec.containers, ...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
    for (const c of containers) {
      if (container !== '' && container !== c.name) continue;
      const request = c.resources?.requests?.[resource];
      if (request === undefined) return error(`missing request for ${resource} in container ${c.name} of Pod ${pod.metadata.name}`);
      sum += milliValue(request);
    }
    requests.set(pod.metadata.name, sum);
  }
  return { type: 'ok', requests };
};

/**
 * kube's `GetResourceUtilizationRatio`: usage over requests of the pods with both, as a
 * whole percentage (truncated), its ratio to the target, and the average raw usage.
 */
export const resourceUtilizationRatio = (
  metrics: PodMetricsInfo,
  requests: ReadonlyMap<string, number>,
  targetUtilization: number,
): Proposal<{ ratio: number; utilization: number; rawAverage: number }> => {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [name, metric] of metrics) {
    const request = requests.get(name);
    if (request === undefined) continue;
    metricsTotal += metric.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) return error('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { type: 'ok', ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / entries) };
};

/** kube's `GetMetricUsageRatio`: the average usage and its ratio to the target. */
export const metricUsageRatio = (metrics: PodMetricsInfo, targetUsage: number): { ratio: number; usage: number } => {
  let total = 0;
  for (const metric of metrics.values()) total += metric.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
};

/** The replicas of a utilization target, with the utilization (percent) and raw average usage kube reports. */
export type UtilizationProposal = Proposal<{ replicas: number; utilization: number; rawAverage: number }>;

/**
 * kube's `GetResourceReplicas` (after the metrics were fetched): the replicas that bring
 * the pods' average utilization of `resource` to `targetUtilization` percent of their requests.
 */
export const resourceReplicas = (
  currentReplicas: number,
  targetUtilization: number,
  resource: string,
  pods: readonly Pod[],
  measured: PodMetricsInfo,
  now: number,
  options: CalculatorOptions = {},
  container = '',
): UtilizationProposal => {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
  if (pods.length === 0) return error('no pods returned by selector while calculating replica count');
  const groups = groupPods(pods, measured, resource, now, options);
  const metrics = withoutPods(withoutPods(measured, groups.ignored), groups.unready);
  if (metrics.size === 0) return error('did not receive metrics for targeted pods (pods might be unready)');
  const requested = calculatePodRequests(pods, resource, container);
  if (requested.type === 'error') return requested;
  const { requests } = requested;
  const first = resourceUtilizationRatio(metrics, requests, targetUtilization);
  if (first.type === 'error') return first;
  const { ratio, utilization, rawAverage } = first;
  const ok = (replicas: number): UtilizationProposal => ({ type: 'ok', replicas, utilization, rawAverage });

  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1.0;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1.0 - ratio) <= tolerance) return ok(currentReplicas);
    return ok(Math.ceil(ratio * groups.readyPodCount));
  }
  if (groups.missing.size > 0) {
    if (ratio < 1.0) {
      // Scale-down: missing pods use their whole request (or the target, when above 100 %).
      const fallback = Math.max(100, targetUtilization);
      for (const name of groups.missing) metrics.set(name, { timestamp: 0, windowMs: 0, value: Math.trunc(((requests.get(name) ?? 0) * fallback) / 100) });
    } else if (ratio > 1.0) {
      for (const name of groups.missing) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });
    }
  }
  if (scaleUpWithUnready) for (const name of groups.unready) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });

  const second = resourceUtilizationRatio(metrics, requests, targetUtilization);
  if (second.type === 'error') return second;
  const newRatio = second.ratio;
  if (Math.abs(1.0 - newRatio) <= tolerance || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0)) return ok(currentReplicas);
  const replicas = Math.ceil(newRatio * metrics.size);
  if ((newRatio < 1.0 && replicas > currentReplicas) || (newRatio > 1.0 && replicas < currentReplicas)) return ok(currentReplicas);
  return ok(replicas);
};

/** The replicas of an average-value target, with the average usage (milli-units) kube reports. */
export type ValueProposal = Proposal<{ replicas: number; usage: number }>;

/**
 * kube's `GetRawResourceReplicas` / `calcPlainMetricReplicas`: the replicas that bring the
 * pods' average usage to `targetUsage` (milli-units).
 */
export const plainMetricReplicas = (
  currentReplicas: number,
  targetUsage: number,
  resource: string,
  pods: readonly Pod[],
  measured: PodMetricsInfo,
  now: number,
  options: CalculatorOptions = {},
): ValueProposal => {
  const tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
  if (pods.length === 0) return error('no pods returned by selector while calculating replica count');
  const groups = groupPods(pods, measured, resource, now, options);
  const metrics = withoutPods(withoutPods(measured, groups.ignored), groups.unready);
  if (metrics.size === 0) return error('did not receive metrics for targeted pods (pods might be unready)');
  const { ratio, usage } = metricUsageRatio(metrics, targetUsage);
  const ok = (replicas: number): ValueProposal => ({ type: 'ok', replicas, usage });

  const scaleUpWithUnready = groups.unready.size > 0 && ratio > 1.0;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1.0 - ratio) <= tolerance) return ok(currentReplicas);
    return ok(Math.ceil(ratio * groups.readyPodCount));
  }
  if (groups.missing.size > 0) {
    // Scale-down: missing pods use exactly the target; scale-up: nothing.
    const assumed = ratio < 1.0 ? targetUsage : 0;
    for (const name of groups.missing) metrics.set(name, { timestamp: 0, windowMs: 0, value: assumed });
  }
  if (scaleUpWithUnready) for (const name of groups.unready) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });

  const newRatio = metricUsageRatio(metrics, targetUsage).ratio;
  if (Math.abs(1.0 - newRatio) <= tolerance || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0)) return ok(currentReplicas);
  const replicas = Math.ceil(newRatio * metrics.size);
  if ((newRatio < 1.0 && replicas > currentReplicas) || (newRatio > 1.0 && replicas < currentReplicas)) return ok(currentReplicas);
  return ok(replicas);
};
