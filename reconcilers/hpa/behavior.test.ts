/**
 * Behavior normalization, table-driven with the cases of kube's horizontal_test.go (as
 * ported by Karmada's FederatedHPA tests): stabilization windows, rate policies with
 * selectPolicy, replica changes per period, min/max limits and the legacy rules.
 */
import { describe, expect, it } from 'vitest';
import {
  defaultedBehavior,
  EMPTY_HISTORY,
  legacyScaleUpLimit,
  limitWithBehaviorRate,
  normalizeLegacy,
  normalizeWithBehavior,
  replicasChangePerPeriod,
  scaleDownLimit,
  scaleUpLimit,
  stabilizeWithBehavior,
  withScaleEvent,
  type Behavior,
  type ScalingHistory,
} from './behavior.ts';

const NOW = 1_000_000_000;
const s = (seconds: number): number => NOW - seconds * 1000;
const rules = (policies: Behavior['scaleUp']['policies'], selectPolicy: Behavior['scaleUp']['selectPolicy'] = 'Max', window = 300): Behavior['scaleUp'] => ({
  stabilizationWindowSeconds: window,
  selectPolicy,
  policies,
});
const args = (currentReplicas: number, desiredReplicas: number, minReplicas = 1, maxReplicas = 10) => ({ currentReplicas, desiredReplicas, minReplicas, maxReplicas, now: NOW });

describe('normalizeWithBehavior (kube TestNormalizeDesiredReplicasWithBehaviors)', () => {
  it.each([
    { name: 'scale up with behavior', up: 200, down: 100, current: 5, desired: 15, expected: 10 },
    { name: 'scale down with behavior', up: 200, down: 50, current: 8, desired: 2, expected: 4 },
  ])('$name', ({ up, down, current, desired, expected }) => {
    const behavior: Behavior = {
      scaleUp: rules([{ type: 'Percent', value: up, periodSeconds: 60 }]),
      scaleDown: rules([{ type: 'Percent', value: down, periodSeconds: 60 }]),
    };
    const out = normalizeWithBehavior(args(current, desired), behavior, EMPTY_HISTORY);
    expect(out.replicas).toBe(expected);
    expect(out.history.recommendations).toEqual([{ replicas: desired, at: NOW }]);
  });

  it('sets kube\'s conditions: stabilized and limited', () => {
    const behavior = defaultedBehavior({});
    const history: ScalingHistory = { ...EMPTY_HISTORY, recommendations: [{ replicas: 6, at: s(60) }] };
    const out = normalizeWithBehavior(args(6, 2), behavior, history);
    expect(out.replicas).toBe(6);
    expect(out.conditions).toEqual([
      { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' },
      { type: 'ScalingLimited', status: 'False', reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' },
    ]);
  });
});

describe('stabilizeWithBehavior (kube TestStabilizeRecommendationWithBehaviors)', () => {
  const behavior: Behavior = { scaleUp: rules([], 'Max', 300), scaleDown: rules([], 'Max', 600) };
  it.each([
    { name: 'scale up stabilized', current: 5, desired: 10, recs: [{ replicas: 8, at: s(120) }, { replicas: 7, at: s(240) }], expected: 7, reason: 'ScaleUpStabilized' },
    { name: 'scale down stabilized', current: 8, desired: 3, recs: [{ replicas: 5, at: s(300) }, { replicas: 4, at: s(480) }], expected: 5, reason: 'ScaleDownStabilized' },
    { name: 'no change needed', current: 5, desired: 5, recs: [{ replicas: 5, at: s(60) }], expected: 5, reason: 'ScaleUpStabilized' },
  ])('$name', ({ current, desired, recs, expected, reason }) => {
    const out = stabilizeWithBehavior(args(current, desired), behavior, { ...EMPTY_HISTORY, recommendations: recs });
    expect(out.replicas).toBe(expected);
    expect(out.reason).toBe(reason);
    expect(out.history.recommendations).toHaveLength(recs.length + 1);
  });

  it('reuses the slot of a recommendation older than both windows', () => {
    const out = stabilizeWithBehavior(args(5, 5), behavior, { ...EMPTY_HISTORY, recommendations: [{ replicas: 9, at: s(900) }] });
    expect(out.replicas).toBe(5);
    expect(out.history.recommendations).toEqual([{ replicas: 5, at: NOW }]);
  });
});

describe('limitWithBehaviorRate (kube TestConvertDesiredReplicasWithBehaviorRate)', () => {
  it.each([
    { name: 'scale up within limits', current: 5, desired: 8, expected: 8, reason: 'DesiredWithinRange' },
    { name: 'scale down within limits', current: 5, desired: 3, expected: 3, reason: 'DesiredWithinRange' },
    { name: 'scale up beyond MaxReplicas', current: 8, desired: 12, expected: 10, reason: 'TooManyReplicas' },
    { name: 'scale up faster than the rate', current: 2, desired: 9, expected: 6, reason: 'ScaleUpLimit' },
    { name: 'scale down below MinReplicas', current: 3, desired: 0, expected: 1, reason: 'TooFewReplicas' },
  ])('$name', ({ current, desired, expected, reason }) => {
    const behavior: Behavior = { scaleUp: rules([{ type: 'Percent', value: 200, periodSeconds: 60 }]), scaleDown: rules([{ type: 'Percent', value: 100, periodSeconds: 60 }]) };
    const out = limitWithBehaviorRate(args(current, desired), behavior, EMPTY_HISTORY);
    expect(out.replicas).toBe(expected);
    expect(out.reason).toBe(reason);
  });

  it('scales down no further than a Pods policy allows in its period', () => {
    const behavior: Behavior = { scaleUp: rules([]), scaleDown: rules([{ type: 'Pods', value: 1, periodSeconds: 60 }]) };
    const out = limitWithBehaviorRate(args(5, 1), behavior, EMPTY_HISTORY);
    expect(out).toEqual({ replicas: 4, reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' });
  });
});

describe('scale limits with policies and selectPolicy (kube TestScalingWithRules figures)', () => {
  const history = (up: [number, number][], down: [number, number][]): ScalingHistory => ({
    recommendations: [],
    scaleUpEvents: up.map(([change, ago]) => ({ change, at: s(ago) })),
    scaleDownEvents: down.map(([change, ago]) => ({ change, at: s(ago) })),
  });
  it.each([
    { name: 'Pods and Percent, Max picks the larger', current: 10, policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }], select: 'Max', events: history([], []), expected: 20 },
    { name: 'Pods and Percent, Min picks the smaller', current: 10, policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }], select: 'Min', events: history([], []), expected: 14 },
    { name: 'Disabled keeps the count', current: 10, policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }], select: 'Disabled', events: history([], []), expected: 10 },
    { name: 'replicas added in the period count against it', current: 10, policies: [{ type: 'Pods', value: 4, periodSeconds: 60 }], select: 'Max', events: history([[3, 30]], []), expected: 11 },
    { name: 'a percent rounds up', current: 3, policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }], select: 'Max', events: history([], []), expected: 4 },
  ] as const)('up: $name', ({ current, policies, select, events, expected }) => {
    expect(scaleUpLimit(current, events, rules(policies, select), NOW)).toBe(expected);
  });
  it.each([
    { name: 'Percent, Max picks the largest change', current: 10, policies: [{ type: 'Pods', value: 2, periodSeconds: 15 }, { type: 'Percent', value: 50, periodSeconds: 15 }], select: 'Max', events: history([], []), expected: 5 },
    { name: 'Min picks the smallest change', current: 10, policies: [{ type: 'Pods', value: 2, periodSeconds: 15 }, { type: 'Percent', value: 50, periodSeconds: 15 }], select: 'Min', events: history([], []), expected: 8 },
    { name: 'a percent rounds down', current: 3, policies: [{ type: 'Percent', value: 50, periodSeconds: 15 }], select: 'Max', events: history([], []), expected: 1 },
    { name: 'replicas removed in the period count against it', current: 6, policies: [{ type: 'Pods', value: 4, periodSeconds: 60 }], select: 'Max', events: history([], [[3, 30]]), expected: 5 },
  ] as const)('down: $name', ({ current, policies, select, events, expected }) => {
    expect(scaleDownLimit(current, events, rules(policies, select), NOW)).toBe(expected);
  });
});

describe('replicasChangePerPeriod (kube TestGetReplicasChangePerPeriod)', () => {
  it.each([
    { name: 'no events', events: [], expected: 0 },
    { name: 'single event within period', events: [{ change: 3, at: s(30) }], expected: 3 },
    { name: 'multiple events, some outside period', events: [{ change: 3, at: s(30) }, { change: 2, at: s(45) }, { change: 1, at: s(70) }], expected: 5 },
  ])('$name', ({ events, expected }) => {
    expect(replicasChangePerPeriod(60, events, NOW)).toBe(expected);
  });
});

describe('withScaleEvent (kube TestStoreScaleEvent)', () => {
  const behavior = defaultedBehavior({ scaleUp: { stabilizationWindowSeconds: 60 }, scaleDown: { stabilizationWindowSeconds: 60 } });
  it.each([
    { name: 'scale up event', previous: 5, next: 10, up: 1, down: 0 },
    { name: 'scale down event', previous: 10, next: 5, up: 0, down: 1 },
  ])('$name', ({ previous, next, up, down }) => {
    const out = withScaleEvent(EMPTY_HISTORY, behavior, previous, next, NOW);
    expect(out.scaleUpEvents).toHaveLength(up);
    expect(out.scaleDownEvents).toHaveLength(down);
  });
  it('stores nothing without a behavior', () => {
    expect(withScaleEvent(EMPTY_HISTORY, undefined, 5, 10, NOW)).toBe(EMPTY_HISTORY);
  });
});

describe('legacy rules without a behavior (kube TestConvertDesiredReplicasWithRules, TestCalculateScaleUpLimit)', () => {
  it.each([
    { name: 'desired within range', current: 5, desired: 7, min: 3, max: 10, expected: 7, reason: 'DesiredWithinRange' },
    { name: 'desired below min', current: 5, desired: 2, min: 3, max: 10, expected: 3, reason: 'TooFewReplicas' },
    { name: 'desired above max', current: 5, desired: 15, min: 3, max: 10, expected: 10, reason: 'TooManyReplicas' },
    { name: 'faster than max(2x, 4)', current: 1, desired: 9, min: 1, max: 10, expected: 4, reason: 'ScaleUpLimit' },
  ])('$name', ({ current, desired, min, max, expected, reason }) => {
    // No recommendations in the window: no stabilization.
    const out = normalizeLegacy(args(current, desired, min, max), EMPTY_HISTORY);
    expect(out.replicas).toBe(expected);
    expect(out.conditions[1]?.reason).toBe(reason);
  });
  it.each([
    [1, 4],
    [10, 20],
    [3, 6],
  ])('scale-up limit of %i replicas is %i', (current, limit) => {
    expect(legacyScaleUpLimit(current)).toBe(limit);
  });
  it('stabilizes a scale-down over the 300 s window', () => {
    const history: ScalingHistory = { ...EMPTY_HISTORY, recommendations: [{ replicas: 8, at: s(200) }, { replicas: 9, at: s(400) }] };
    const out = normalizeLegacy(args(8, 3), history);
    expect(out.replicas).toBe(8);
    expect(out.conditions[0]?.reason).toBe('ScaleDownStabilized');
    // The sample older than the window gives its slot to this recommendation.
    expect(out.history.recommendations).toEqual([{ replicas: 8, at: s(200) }, { replicas: 3, at: NOW }]);
  });
});
