/**
 * The replica calculation, table-driven with kube's own cases (replica_calculator_test.go:
 * every test pod has two containers, each requesting the pod's request and using the pod's
 * level, so raw values are twice the level; pods started long ago unless "hot", i.e. within
 * the CPU initialization period and measured before a whole window since they became ready).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { plainMetricReplicas, resourceReplicas, type PodMetric } from './replicas.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const COOL = new Date(NOW - 10 * 60_000).toISOString();
const HOT = new Date(NOW - 60_000).toISOString();
/** kube's tests measure at the zero time (year 1), as their pods became ready. */
const YEAR_ONE = Date.parse('0001-01-01T00:00:00Z');

interface Case {
  readonly name: string;
  readonly currentReplicas: number;
  readonly expectedReplicas?: number;
  readonly expectedError?: string;
  readonly requests: readonly string[];
  readonly levels: readonly number[];
  readonly target: number;
  readonly expectedUtilization?: number;
  readonly expectedValue?: number;
  readonly readiness?: readonly ('True' | 'False')[];
  readonly phase?: readonly string[];
  readonly deleting?: readonly boolean[];
  readonly startTime?: readonly string[];
  readonly podNames?: readonly string[];
}

const podsOf = (c: Case): Pod[] => {
  const count = Math.max(c.currentReplicas, c.phase?.length ?? 0);
  return Array.from({ length: count }, (_, i): Pod => {
    const request = c.requests[i];
    const resources = request === undefined ? {} : { requests: { cpu: request } };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `test-pod-${i}`, namespace: 'test', ...(c.deleting?.[i] ? { deletionTimestamp: new Date(NOW).toISOString() } : {}) },
      spec: { containers: [{ name: 'a', image: 'x', resources }, { name: 'b', image: 'x', resources }] },
      status: {
        phase: c.phase?.[i] ?? 'Running',
        startTime: c.startTime?.[i] ?? '0001-01-01T00:00:00Z',
        conditions: [{ type: 'Ready', status: c.readiness?.[i] ?? 'True', lastTransitionTime: '0001-01-01T00:00:00Z' }],
      },
    };
  });
};

const metricsOf = (c: Case): Map<string, PodMetric> =>
  new Map(c.levels.map((level, i) => [c.podNames?.[i] ?? `test-pod-${i}`, { timestamp: YEAR_ONE, windowMs: 60_000, value: 2 * level }]));

const one = '1.0';

const CASES: readonly Case[] = [
  { name: 'DisjointResourcesMetrics', currentReplicas: 1, expectedError: 'no metrics returned matched known pods', requests: [one], levels: [100], podNames: ['an-older-pod-name'], target: 100 },
  { name: 'ScaleUp', currentReplicas: 3, expectedReplicas: 5, requests: [one, one, one], levels: [300, 500, 700], target: 30, expectedUtilization: 50, expectedValue: 1000 },
  { name: 'ScaleUpUnreadyLessScale', currentReplicas: 3, expectedReplicas: 4, readiness: ['False', 'True', 'True'], requests: [one, one, one], levels: [300, 500, 700], target: 30, expectedUtilization: 60, expectedValue: 1200 },
  { name: 'ScaleUpHotCpuLessScale', currentReplicas: 3, expectedReplicas: 4, startTime: [HOT, COOL, COOL], requests: [one, one, one], levels: [300, 500, 700], target: 30, expectedUtilization: 60, expectedValue: 1200 },
  { name: 'ScaleUpUnreadyNoScale', currentReplicas: 3, expectedReplicas: 3, readiness: ['True', 'False', 'False'], requests: [one, one, one], levels: [400, 500, 700], target: 30, expectedUtilization: 40, expectedValue: 800 },
  { name: 'ScaleHotCpuNoScale', currentReplicas: 3, expectedReplicas: 3, readiness: ['True', 'False', 'False'], startTime: [COOL, HOT, HOT], requests: [one, one, one], levels: [400, 500, 700], target: 30, expectedUtilization: 40, expectedValue: 800 },
  { name: 'ScaleUpIgnoresFailedPods', currentReplicas: 2, expectedReplicas: 4, readiness: ['True', 'True', 'False', 'False'], phase: ['Running', 'Running', 'Failed', 'Failed'], requests: [one, one, one, one], levels: [500, 700], target: 30, expectedUtilization: 60, expectedValue: 1200 },
  { name: 'ScaleUpIgnoresDeletionPods', currentReplicas: 2, expectedReplicas: 4, readiness: ['True', 'True', 'False', 'False'], phase: ['Running', 'Running', 'Running', 'Running'], deleting: [false, false, true, true], requests: [one, one, one, one], levels: [500, 700], target: 30, expectedUtilization: 60, expectedValue: 1200 },
  { name: 'ScaleDown', currentReplicas: 5, expectedReplicas: 3, requests: [one, one, one, one, one], levels: [100, 300, 500, 250, 250], target: 50, expectedUtilization: 28, expectedValue: 560 },
  { name: 'ScaleDownIncludeUnreadyPods', currentReplicas: 5, expectedReplicas: 2, readiness: ['True', 'True', 'True', 'False', 'False'], requests: [one, one, one, one, one], levels: [100, 300, 500, 250, 250], target: 50, expectedUtilization: 30, expectedValue: 600 },
  { name: 'ScaleDownExcludeUnscheduledPods', currentReplicas: 5, expectedReplicas: 1, readiness: ['True', 'False', 'False', 'False', 'False'], phase: ['Running', 'Pending', 'Pending', 'Pending', 'Pending'], requests: [one, one, one, one, one], levels: [100], target: 50, expectedUtilization: 10, expectedValue: 200 },
  { name: 'ScaleDownIgnoreHotCpuPods', currentReplicas: 5, expectedReplicas: 2, startTime: [COOL, COOL, COOL, HOT, HOT], requests: [one, one, one, one, one], levels: [100, 300, 500, 250, 250], target: 50, expectedUtilization: 30, expectedValue: 600 },
  { name: 'ScaleDownIgnoresFailedPods', currentReplicas: 5, expectedReplicas: 3, readiness: ['True', 'True', 'True', 'True', 'True', 'False', 'False'], phase: ['Running', 'Running', 'Running', 'Running', 'Running', 'Failed', 'Failed'], requests: [one, one, one, one, one, one, one], levels: [100, 300, 500, 250, 250], target: 50, expectedUtilization: 28, expectedValue: 560 },
  { name: 'Tolerance', currentReplicas: 3, expectedReplicas: 3, requests: ['0.9', '1.0', '1.1'], levels: [1010, 1030, 1020], target: 100, expectedUtilization: 102, expectedValue: 2040 },
  { name: 'SuperfluousMetrics', currentReplicas: 4, expectedReplicas: 24, requests: [one, one, one, one], levels: [4000, 9500, 3000, 7000, 3200, 2000], target: 100, expectedUtilization: 587, expectedValue: 11750 },
  { name: 'MissingMetrics', currentReplicas: 4, expectedReplicas: 3, requests: [one, one, one, one], levels: [400, 95], target: 100, expectedUtilization: 24, expectedValue: 495 },
  { name: 'EmptyMetrics', currentReplicas: 4, expectedError: 'unable to get metrics for resource cpu: no metrics returned from resource metrics API', requests: [one, one, one, one], levels: [], target: 100 },
  { name: 'EmptyCPURequest', currentReplicas: 1, expectedError: 'missing request for', requests: [], levels: [200], target: 100 },
  { name: 'MissingMetricsNoChangeEq', currentReplicas: 2, expectedReplicas: 2, requests: [one, one], levels: [1000], target: 100, expectedUtilization: 100, expectedValue: 2000 },
  { name: 'MissingMetricsNoChangeGt', currentReplicas: 2, expectedReplicas: 2, requests: [one, one], levels: [1900], target: 100, expectedUtilization: 190, expectedValue: 3800 },
  { name: 'MissingMetricsNoChangeLt', currentReplicas: 2, expectedReplicas: 2, requests: [one, one], levels: [600], target: 100, expectedUtilization: 60, expectedValue: 1200 },
  { name: 'MissingMetricsUnreadyChange', currentReplicas: 3, expectedReplicas: 3, readiness: ['False', 'True', 'True'], requests: [one, one, one], levels: [100, 450], target: 50, expectedUtilization: 45, expectedValue: 900 },
  { name: 'MissingMetricsUnreadyScaleUp', currentReplicas: 3, expectedReplicas: 4, readiness: ['False', 'True', 'True'], requests: [one, one, one], levels: [100, 2000], target: 50, expectedUtilization: 200, expectedValue: 4000 },
  { name: 'MissingMetricsUnreadyScaleDown', currentReplicas: 4, expectedReplicas: 3, readiness: ['False', 'True', 'True', 'True'], requests: [one, one, one, one], levels: [100, 100, 100], target: 50, expectedUtilization: 10, expectedValue: 200 },
  { name: 'DuringRollingUpdateWithMaxSurge', currentReplicas: 2, expectedReplicas: 2, phase: ['Running', 'Running', 'Running'], requests: [one, one, one], levels: [100, 100], target: 50, expectedUtilization: 10, expectedValue: 200 },
];

describe('resourceReplicas (kube replica_calculator_test.go, resource metrics)', () => {
  it.each(CASES)('$name', (c) => {
    // kube's metrics client turns "no PodMetrics" into this error before calculating.
    const metrics = metricsOf(c);
    if (metrics.size === 0) {
      expect(c.expectedError).toBe('unable to get metrics for resource cpu: no metrics returned from resource metrics API');
      return;
    }
    const out = resourceReplicas(c.currentReplicas, c.target, 'cpu', podsOf(c), metrics, NOW);
    if (c.expectedError !== undefined) {
      expect(out.type).toBe('error');
      if (out.type === 'error') expect(out.message).toContain(c.expectedError);
      return;
    }
    expect(out).toEqual({ type: 'ok', replicas: c.expectedReplicas, utilization: c.expectedUtilization, rawAverage: c.expectedValue });
  });
});

describe('plainMetricReplicas (AverageValue targets)', () => {
  const pods = (n: number): Pod[] => podsOf({ name: '', currentReplicas: n, requests: [], levels: [], target: 0 });
  const metrics = (levels: readonly number[]): Map<string, PodMetric> => new Map(levels.map((value, i) => [`test-pod-${i}`, { timestamp: 0, windowMs: 60_000, value }]));
  it.each([
    // kube's TestReplicaCalcScaleUpCM / ScaleDownCM figures as pod averages.
    { name: 'scale up', current: 3, levels: [20000, 10000, 30000], target: 15000, replicas: 4, usage: 20000 },
    { name: 'scale down', current: 5, levels: [12000, 12000, 12000, 12000, 12000], target: 20000, replicas: 3, usage: 12000 },
    { name: 'within tolerance', current: 2, levels: [1050, 1000], target: 1000, replicas: 2, usage: 1025 },
    { name: 'a missing pod counts as the target on a scale-down', current: 3, levels: [100, 100], target: 1000, replicas: 2, usage: 100 },
  ])('$name', ({ current, levels, target, replicas, usage }) => {
    expect(plainMetricReplicas(current, target, 'memory', pods(current), metrics(levels), NOW)).toEqual({ type: 'ok', replicas, usage });
  });
});
