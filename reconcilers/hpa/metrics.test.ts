/**
 * Where the HPA's pod figures come from (metrics.ts): Go durations of a PodMetrics window,
 * a PodMetricsList read as samples, kube's getPodMetrics/getContainerMetrics (sum over
 * containers, one container, missing figures), and the cache over a metrics source
 * (first fetch, one request in flight per namespace, errors as kube words them, the
 * periodic refresh of the namespaces that have HPAs, driven by a real projection).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HorizontalPodAutoscaler } from '../../schemas/index.ts';
import { createTestCluster, namespaceObject, type TestCluster } from '../testing.ts';
import { createMetricsCache, parseGoDuration, podMetricsFor, samplesOf, type MetricsSource, type PodMetricsItem, type PodSample } from './metrics.ts';

/** Waits (polling) until `check` passes; generous, the machine is shared. */
const waitUntil = (check: () => void): Promise<void> => vi.waitFor(check, { timeout: 20_000, interval: 10 });

describe('reading PodMetrics', () => {
  it.each([
    ['15s', 15_000],
    ['1m0s', 60_000],
    ['1.5s', 1_500],
    ['1h2m3s', 3_723_000],
    ['500ms', 500],
    ['250us', 0.25],
    ['250µs', 0.25],
    ['2000000ns', 2],
    ['', 0],
    ['soon', 0],
    ['15', 0],
    ['10s garbage', 0],
  ])('reads the Go duration %j as %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it('reads items as samples: timestamp in epoch ms, window in ms, usage as milli-values', () => {
    const items: PodMetricsItem[] = [
      {
        metadata: { name: 'web-1', namespace: 'default' },
        timestamp: '2026-01-01T00:00:10Z',
        window: '15s',
        containers: [
          { name: 'main', usage: { cpu: '250m', memory: '1Ki' } },
          { name: 'sidecar', usage: { cpu: '1' } },
        ],
      },
    ];
    expect(samplesOf(items)).toEqual([
      {
        name: 'web-1',
        timestamp: Date.parse('2026-01-01T00:00:10Z'),
        windowMs: 15_000,
        containers: [
          { name: 'main', usage: { cpu: 250, memory: 1_024_000 } },
          { name: 'sidecar', usage: { cpu: 1000 } },
        ],
      },
    ]);
  });
});

describe('podMetricsFor (kube getPodMetrics / getContainerMetrics)', () => {
  const sample = (name: string, containers: PodSample['containers']): PodSample => ({ name, timestamp: 1000, windowMs: 15_000, containers });
  const pods = [
    sample('both', [
      { name: 'main', usage: { cpu: 200, memory: 5 } },
      { name: 'sidecar', usage: { cpu: 50 } },
    ]),
    sample('main-only', [{ name: 'main', usage: { cpu: 100 } }]),
    sample('empty', []),
    sample('sidecar-without-cpu', [
      { name: 'main', usage: { cpu: 300 } },
      { name: 'sidecar', usage: { memory: 7 } },
    ]),
  ];
  const values = (result: ReturnType<typeof podMetricsFor>): Record<string, number> | string =>
    typeof result === 'string' ? result : Object.fromEntries([...result].map(([name, metric]) => [name, metric.value]));

  it('sums a pod\'s containers, skipping pods without containers and pods with a container lacking the resource', () => {
    expect(values(podMetricsFor(pods, 'cpu'))).toEqual({ both: 250, 'main-only': 100 });
    expect(values(podMetricsFor(pods, 'memory'))).toEqual({});
    const metric = podMetricsFor(pods, 'cpu');
    if (typeof metric === 'string') throw new Error(metric);
    expect(metric.get('both')).toEqual({ timestamp: 1000, windowMs: 15_000, value: 250 });
  });

  it('reads one container where the pod has it and the resource, and says so when no pod has the container', () => {
    expect(values(podMetricsFor(pods, 'cpu', 'sidecar'))).toEqual({ both: 50 });
    expect(values(podMetricsFor(pods, 'cpu', 'main'))).toEqual({ both: 200, 'main-only': 100, 'sidecar-without-cpu': 300 });
    expect(podMetricsFor(pods, 'cpu', 'proxy')).toBe('failed to get container metrics: container proxy not present in metrics');
    expect(values(podMetricsFor([], 'cpu'))).toEqual({});
  });
});

describe('the metrics cache', () => {
  const item = (name: string): PodMetricsItem => ({ metadata: { name }, timestamp: '2026-01-01T00:00:00Z', window: '30s', containers: [{ name: 'main', usage: { cpu: '100m' } }] });

  /** A source answering one pod per namespace, counting its calls per namespace; `gate` holds the answers back. */
  const countingSource = (answer: (namespace: string) => Promise<readonly PodMetricsItem[]>) => {
    const calls = new Map<string, number>();
    const source: MetricsSource = {
      podMetrics: (namespace) => {
        calls.set(namespace, (calls.get(namespace) ?? 0) + 1);
        return answer(namespace);
      },
    };
    return { source, calls };
  };

  let cluster: TestCluster | undefined;
  beforeEach(() => {
    cluster = undefined;
  });
  afterEach(async () => {
    await cluster?.close();
  });

  it('answers nothing at first, asks the source once while the request is in flight, then serves its answer', async () => {
    let release: (items: readonly PodMetricsItem[]) => void = () => undefined;
    const { source, calls } = countingSource(() => new Promise((resolve) => (release = resolve)));
    const cache = createMetricsCache(source);
    expect(cache.latest('default')).toBeUndefined();
    expect(cache.latest('default')).toBeUndefined();
    expect(calls.get('default')).toBe(1);
    release([item('web-1')]);
    await waitUntil(() => expect(cache.latest('default')).toBeDefined());
    expect(cache.latest('default')).toEqual({ type: 'ok', pods: [{ name: 'web-1', timestamp: Date.parse('2026-01-01T00:00:00Z'), windowMs: 30_000, containers: [{ name: 'main', usage: { cpu: 100 } }] }] });
    expect(calls.get('default')).toBe(1);
  });

  it.each([
    ['an Error', new Error('connection refused'), 'unable to fetch metrics from resource metrics API: connection refused'],
    ['a string', 'no route', 'unable to fetch metrics from resource metrics API: no route'],
  ])('words a source failing with %s as kube does', async (_what, failure, message) => {
    const cache = createMetricsCache({ podMetrics: () => Promise.reject(failure) });
    expect(cache.latest('default')).toBeUndefined();
    await waitUntil(() => expect(cache.latest('default')).toEqual({ type: 'error', message }));
  });

  it('without a source, answers that it has none', async () => {
    const cache = createMetricsCache(undefined);
    expect(cache.latest('default')).toBeUndefined();
    await waitUntil(() =>
      expect(cache.latest('default')).toEqual({ type: 'error', message: 'unable to fetch metrics from resource metrics API: this controller has no metrics source' }),
    );
  });

  it('once attached, refreshes the namespaces with HPAs, drops the others, and stops when told', async () => {
    const test = createTestCluster();
    cluster = test;
    test.create(namespaceObject('apps'));
    const hpa: HorizontalPodAutoscaler = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web', namespace: 'apps' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3 },
    };
    test.create(hpa);
    const { source, calls } = countingSource(async (namespace) => [item(`${namespace}-pod`)]);
    const cache = createMetricsCache(source, { intervalMs: 5 });
    cache.latest('stale');
    await waitUntil(() => expect(cache.latest('stale')).toBeDefined());
    const stop = cache.attach(test.projection);
    // The HPA's namespace is asked without anyone reading it, again and again.
    await waitUntil(() => expect(calls.get('apps') ?? 0).toBeGreaterThanOrEqual(2));
    expect(cache.latest('apps')).toMatchObject({ type: 'ok', pods: [{ name: 'apps-pod' }] });
    // The namespace without an HPA is dropped (reading it again asks anew).
    const staleCalls = calls.get('stale');
    await waitUntil(() => expect(cache.latest('stale')).toBeUndefined());
    expect(calls.get('stale')).toBeGreaterThan(staleCalls ?? 0);
    stop();
    expect(cache.latest('unseen')).toBeUndefined();
    expect(calls.has('unseen')).toBe(false);
  });
});
