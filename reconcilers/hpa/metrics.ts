/**
 * Where the HPA's pod figures come from: the {@link MetricsSource} port (a namespace's
 * PodMetrics, as `metrics.k8s.io/v1beta1` lists them), and the figures a decision used
 * ({@link MetricsSample}), which are recorded with its commands so the decision can be
 * re-run. Metrics are observed figures, never in the log: in `logplane up` the source reads
 * the agents' memory (the apiserver's metrics API in process), in distributed mode the
 * apiserver's metrics API over HTTPS with the controllers' credentials, as kube's HPA does.
 */
import type { Projection } from '../../projections/index.ts';
import type { HorizontalPodAutoscaler } from '../../schemas/index.ts';
import { milliValue, type PodMetric } from './replicas.ts';

/** One item of a PodMetricsList (metrics.k8s.io/v1beta1 PodMetrics), as served. */
export interface PodMetricsItem {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly timestamp: string;
  readonly window: string;
  readonly containers: readonly { readonly name: string; readonly usage: Readonly<Record<string, string>> }[];
}

/** The port the HPA controller reads pod metrics through. */
export interface MetricsSource {
  /** The PodMetrics of `namespace`'s measured pods; throws when the metrics API cannot be asked. */
  podMetrics(namespace: string, signal: AbortSignal): Promise<readonly PodMetricsItem[]>;
}

/** One pod's figures as a decision used them: usage per container, milli-units. */
export interface PodSample {
  readonly name: string;
  /** Epoch ms. */
  readonly timestamp: number;
  readonly windowMs: number;
  readonly containers: readonly { readonly name: string; readonly usage: Readonly<Record<string, number>> }[];
}

/** The figures one decision read: the pods' samples, or why there were none. */
export type MetricsSample =
  | { readonly type: 'ok'; readonly pods: readonly PodSample[] }
  | { readonly type: 'error'; readonly message: string };

const DURATION_UNITS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`15s`, `1.5s`, `1m0s`) in ms; 0 when unreadable. */
export const parseGoDuration = (text: string): number => {
  let total = 0;
  let rest = text;
  while (rest.length > 0) {
    const match = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/.exec(rest);
    if (!match) return 0;
    total += Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? 0);
    rest = rest.slice(match[0].length);
  }
  return total;
};

/** The samples of a PodMetricsList's items (quantities as milli-values). */
export const samplesOf = (items: readonly PodMetricsItem[]): PodSample[] =>
  items.map((item) => ({
    name: item.metadata.name,
    timestamp: Date.parse(item.timestamp),
    windowMs: parseGoDuration(item.window),
    containers: item.containers.map((c) => ({
      name: c.name,
      usage: Object.fromEntries(Object.entries(c.usage).map(([resource, quantity]) => [resource, milliValue(quantity)])),
    })),
  }));

/**
 * kube's `getPodMetrics` / `getContainerMetrics`: each pod's usage of `resource`, summed over
 * its containers (or only `container`); a pod with no containers, or a container without the
 * resource, has no metric. Undefined with kube's message when `container` is in no pod.
 */
export const podMetricsFor = (pods: readonly PodSample[], resource: string, container = ''): Map<string, PodMetric> | string => {
  const metrics = new Map<string, PodMetric>();
  let containerFound = container === '';
  for (const pod of pods) {
    if (container !== '') {
      const c = pod.containers.find((one) => one.name === container);
      if (!c) continue;
      containerFound = true;
      const value = c.usage[resource];
      if (value !== undefined) metrics.set(pod.name, { timestamp: pod.timestamp, windowMs: pod.windowMs, value });
      continue;
    }
    if (pod.containers.length === 0) continue;
    let sum = 0;
    let missing = false;
    for (const c of pod.containers) {
      const value = c.usage[resource];
      if (value === undefined) {
        missing = true;
        break;
      }
      sum += value;
    }
    if (!missing) metrics.set(pod.name, { timestamp: pod.timestamp, windowMs: pod.windowMs, value: sum });
  }
  if (!containerFound) return `failed to get container metrics: container ${container} not present in metrics`;
  return metrics;
};

/** The latest answer of the source for one namespace. */
interface CachedMetrics {
  readonly fetchedAt: number;
  readonly sample: MetricsSample;
}

/** The controller's copy of the source's latest answers, refreshed in the background. */
export interface MetricsCache {
  /** The latest sample of `namespace`; undefined before the first answer (a fetch is started). */
  latest(namespace: string): MetricsSample | undefined;
  /** Keeps refreshing the namespaces with HPAs in `projection` every `intervalMs`; returns what stops it. */
  attach(projection: Projection): () => void;
}

/**
 * A cache over `source`: every `intervalMs` (default 5 s) the namespaces that have HPAs are
 * asked again, one request at a time per namespace; a namespace asked for the first time is
 * fetched at once.
 */
export const createMetricsCache = (source: MetricsSource | undefined, options: { intervalMs?: number; timeoutMs?: number; now?: () => number } = {}): MetricsCache => {
  const intervalMs = options.intervalMs ?? 5_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, CachedMetrics>();
  const inFlight = new Set<string>();
  let stopped = false;

  const refresh = (namespace: string): void => {
    if (stopped || inFlight.has(namespace)) return;
    inFlight.add(namespace);
    const fetched = source
      ? source.podMetrics(namespace, AbortSignal.timeout(timeoutMs)).then(
          (items): MetricsSample => ({ type: 'ok', pods: samplesOf(items) }),
          (error: unknown): MetricsSample => ({ type: 'error', message: `unable to fetch metrics from resource metrics API: ${error instanceof Error ? error.message : String(error)}` }),
        )
      : Promise.resolve<MetricsSample>({ type: 'error', message: 'unable to fetch metrics from resource metrics API: this controller has no metrics source' });
    void fetched.then((sample) => {
      inFlight.delete(namespace);
      if (!stopped) cache.set(namespace, { fetchedAt: now(), sample });
    });
  };

  return {
    latest: (namespace) => {
      const cached = cache.get(namespace);
      if (!cached) refresh(namespace);
      return cached?.sample;
    },
    attach: (projection) => {
      stopped = false;
      const timer = setInterval(() => {
        const namespaces = new Set((projection.view().list('HorizontalPodAutoscaler') as HorizontalPodAutoscaler[]).map((hpa) => hpa.metadata.namespace ?? 'default'));
        for (const namespace of cache.keys()) if (!namespaces.has(namespace)) cache.delete(namespace);
        for (const namespace of namespaces) refresh(namespace);
      }, intervalMs);
      timer.unref();
      return () => {
        stopped = true;
        clearInterval(timer);
      };
    },
  };
};
