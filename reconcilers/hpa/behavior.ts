/**
 * Normalization of a metric recommendation (kube-controller-manager 1.32 `horizontal.go`):
 * stabilization over recent recommendations and the scale rate limits of `spec.behavior`
 * (scaleUp/scaleDown policies, stabilizationWindowSeconds, selectPolicy), or, without a
 * behavior, kube's legacy rules (scale-down stabilized over `--horizontal-pod-autoscaler-
 * downscale-stabilization`, scale-up at most max(2 × current, 4)).
 *
 * kube keeps recent recommendations and scale events in the controller's memory; here they
 * are an explicit {@link ScalingHistory} value the functions take and return, so a decision
 * is a pure function of it (and the history a decision read is recorded with its commands).
 */
import type { HPAScalingRules, HorizontalPodAutoscalerBehavior } from '../../schemas/index.ts';

/** kube's `--horizontal-pod-autoscaler-downscale-stabilization` (5 min). */
export const DEFAULT_DOWNSCALE_STABILIZATION_SECONDS = 300;

/** One recommendation the HPA made (kube's timestampedRecommendation). */
export interface Recommendation {
  readonly replicas: number;
  /** Epoch ms. */
  readonly at: number;
}

/** One scale change the HPA made (kube's timestampedScaleEvent). */
export interface ScaleEvent {
  /** Replicas added (scale-up history) or removed (scale-down history); positive. */
  readonly change: number;
  /** Epoch ms. */
  readonly at: number;
}

/** What kube's controller remembers about one HPA between syncs. */
export interface ScalingHistory {
  readonly recommendations: readonly Recommendation[];
  readonly scaleUpEvents: readonly ScaleEvent[];
  readonly scaleDownEvents: readonly ScaleEvent[];
}

/** A history with nothing in it. */
export const EMPTY_HISTORY: ScalingHistory = { recommendations: [], scaleUpEvents: [], scaleDownEvents: [] };

/** Rules with every field set (kube's defaulted HPAScalingRules). */
export interface ScalingRules {
  readonly stabilizationWindowSeconds: number;
  readonly selectPolicy: 'Max' | 'Min' | 'Disabled';
  readonly policies: readonly { readonly type: 'Pods' | 'Percent'; readonly value: number; readonly periodSeconds: number }[];
}

/** A behavior with both directions defaulted. */
export interface Behavior {
  readonly scaleUp: ScalingRules;
  readonly scaleDown: ScalingRules;
}

const selectPolicyOf = (rules: HPAScalingRules | undefined): ScalingRules['selectPolicy'] =>
  rules?.selectPolicy === 'Min' || rules?.selectPolicy === 'Disabled' ? rules.selectPolicy : 'Max';

const policiesOf = (rules: HPAScalingRules | undefined, defaults: ScalingRules['policies']): ScalingRules['policies'] =>
  rules?.policies && rules.policies.length > 0
    ? rules.policies.map((p) => ({ type: p.type === 'Pods' ? 'Pods' : 'Percent', value: p.value, periodSeconds: p.periodSeconds }))
    : defaults;

/**
 * kube's `GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules` (the v2 defaults) with the
 * controller's `maybeInitScaleDownStabilizationWindow`: scale-up stabilizes 0 s and may add
 * 4 pods or 100 % per 15 s (the larger), scale-down stabilizes over `downscaleWindowSeconds`
 * and may remove 100 % per 15 s.
 */
export const defaultedBehavior = (behavior: HorizontalPodAutoscalerBehavior, downscaleWindowSeconds = DEFAULT_DOWNSCALE_STABILIZATION_SECONDS): Behavior => ({
  scaleUp: {
    stabilizationWindowSeconds: behavior.scaleUp?.stabilizationWindowSeconds ?? 0,
    selectPolicy: selectPolicyOf(behavior.scaleUp),
    policies: policiesOf(behavior.scaleUp, [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ]),
  },
  scaleDown: {
    stabilizationWindowSeconds: behavior.scaleDown?.stabilizationWindowSeconds ?? downscaleWindowSeconds,
    selectPolicy: selectPolicyOf(behavior.scaleDown),
    policies: policiesOf(behavior.scaleDown, [{ type: 'Percent', value: 100, periodSeconds: 15 }]),
  },
});

/** A condition a normalization sets (type, status, reason, message). */
export interface NormalizationCondition {
  readonly type: 'AbleToScale' | 'ScalingLimited';
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** The outcome of normalizing a recommendation. */
export interface Normalized {
  readonly replicas: number;
  readonly conditions: readonly NormalizationCondition[];
  /** The history with this recommendation recorded. */
  readonly history: ScalingHistory;
}

/** What a normalization starts from. */
export interface NormalizationArgs {
  readonly currentReplicas: number;
  /** The recommendation from the metrics. */
  readonly desiredReplicas: number;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly now: number;
}

const MAX_INT32 = 2_147_483_647;
const MIN_INT32 = -2_147_483_648;

/** Records `replicas` in place of the oldest expired sample, or appended (kube reuses a slot). */
const recorded = (recommendations: readonly Recommendation[], oldIndex: number | undefined, sample: Recommendation): Recommendation[] =>
  oldIndex === undefined ? [...recommendations, sample] : recommendations.map((rec, i) => (i === oldIndex ? sample : rec));

/** kube's `recordInitialRecommendation`: a new HPA's history starts with the current count. */
export const withInitialRecommendation = (history: ScalingHistory | undefined, currentReplicas: number, now: number): ScalingHistory =>
  history ?? { ...EMPTY_HISTORY, recommendations: [{ replicas: currentReplicas, at: now }] };

/** kube's `getReplicasChangePerPeriod`: replicas changed by `events` within the last `periodSeconds`. */
export const replicasChangePerPeriod = (periodSeconds: number, events: readonly ScaleEvent[], now: number): number => {
  const cutoff = now - periodSeconds * 1000;
  let replicas = 0;
  for (const event of events) if (event.at > cutoff) replicas += event.change;
  return replicas;
};

/** kube's `calculateScaleUpLimitWithScalingRules`. */
export const scaleUpLimit = (currentReplicas: number, history: ScalingHistory, rules: ScalingRules, now: number): number => {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? MAX_INT32 : MIN_INT32;
  for (const policy of rules.policies) {
    const added = replicasChangePerPeriod(policy.periodSeconds, history.scaleUpEvents, now);
    const deleted = replicasChangePerPeriod(policy.periodSeconds, history.scaleDownEvents, now);
    const periodStart = currentReplicas - added + deleted;
    const proposed = policy.type === 'Pods' ? periodStart + policy.value : Math.ceil(periodStart * (1 + policy.value / 100));
    result = pick(result, proposed);
  }
  return result;
};

/** kube's `calculateScaleDownLimitWithBehaviors`. */
export const scaleDownLimit = (currentReplicas: number, history: ScalingHistory, rules: ScalingRules, now: number): number => {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? MIN_INT32 : MAX_INT32;
  for (const policy of rules.policies) {
    const added = replicasChangePerPeriod(policy.periodSeconds, history.scaleUpEvents, now);
    const deleted = replicasChangePerPeriod(policy.periodSeconds, history.scaleDownEvents, now);
    const periodStart = currentReplicas - added + deleted;
    const proposed = policy.type === 'Pods' ? periodStart - policy.value : Math.trunc(periodStart * (1 - policy.value / 100));
    result = pick(result, proposed);
  }
  return result;
};

/** kube's `stabilizeRecommendationWithBehaviors`: the recommendation within the windows' bounds, and the history with it recorded. */
export const stabilizeWithBehavior = (
  args: NormalizationArgs,
  behavior: Behavior,
  history: ScalingHistory,
): { replicas: number; reason: string; message: string; history: ScalingHistory } => {
  const upCutoff = args.now - behavior.scaleUp.stabilizationWindowSeconds * 1000;
  const downCutoff = args.now - behavior.scaleDown.stabilizationWindowSeconds * 1000;
  let up = args.desiredReplicas;
  let down = args.desiredReplicas;
  let oldIndex: number | undefined;
  history.recommendations.forEach((rec, i) => {
    if (rec.at > upCutoff) up = Math.min(rec.replicas, up);
    if (rec.at > downCutoff) down = Math.max(rec.replicas, down);
    if (rec.at < upCutoff && rec.at < downCutoff) oldIndex = i;
  });
  let replicas = args.currentReplicas;
  if (replicas < up) replicas = up;
  if (replicas > down) replicas = down;
  const next = { ...history, recommendations: recorded(history.recommendations, oldIndex, { replicas: args.desiredReplicas, at: args.now }) };
  return args.desiredReplicas >= args.currentReplicas
    ? { replicas, history: next, reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
    : { replicas, history: next, reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' };
};

/** kube's `convertDesiredReplicasWithBehaviorRate`: the stabilized count within the rate limits and min/max. */
export const limitWithBehaviorRate = (
  args: NormalizationArgs,
  behavior: Behavior,
  history: ScalingHistory,
): { replicas: number; reason: string; message: string } => {
  if (args.desiredReplicas > args.currentReplicas) {
    const limit = Math.max(scaleUpLimit(args.currentReplicas, history, behavior.scaleUp, args.now), args.currentReplicas);
    const limited =
      args.maxReplicas > limit
        ? { replicas: limit, reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' }
        : { replicas: args.maxReplicas, reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
    if (args.desiredReplicas > limited.replicas) return limited;
  } else if (args.desiredReplicas < args.currentReplicas) {
    const limit = Math.min(scaleDownLimit(args.currentReplicas, history, behavior.scaleDown, args.now), args.currentReplicas);
    const limited =
      args.minReplicas < limit
        ? { replicas: limit, reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' }
        : { replicas: args.minReplicas, reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
    if (args.desiredReplicas < limited.replicas) return limited;
  }
  return { replicas: args.desiredReplicas, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
};

/** kube's `normalizeDesiredReplicasWithBehaviors`. */
export const normalizeWithBehavior = (args: NormalizationArgs, behavior: Behavior, history: ScalingHistory): Normalized => {
  const stabilized = stabilizeWithBehavior(args, behavior, history);
  const conditions: NormalizationCondition[] = [
    stabilized.replicas !== args.desiredReplicas
      ? { type: 'AbleToScale', status: 'True', reason: stabilized.reason, message: stabilized.message }
      : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
  ];
  const limited = limitWithBehaviorRate({ ...args, desiredReplicas: stabilized.replicas }, behavior, stabilized.history);
  conditions.push({ type: 'ScalingLimited', status: limited.replicas === stabilized.replicas ? 'False' : 'True', reason: limited.reason, message: limited.message });
  return { replicas: limited.replicas, conditions, history: stabilized.history };
};

/** kube's `calculateScaleUpLimit` (no behavior): max(2 × current, 4). */
export const legacyScaleUpLimit = (currentReplicas: number): number => Math.trunc(Math.max(2 * currentReplicas, 4));

/** kube's `normalizeDesiredReplicas` (no behavior): scale-down stabilization, then `convertDesiredReplicasWithRules`. */
export const normalizeLegacy = (args: NormalizationArgs, history: ScalingHistory, downscaleWindowSeconds = DEFAULT_DOWNSCALE_STABILIZATION_SECONDS): Normalized => {
  // stabilizeRecommendation
  const cutoff = args.now - downscaleWindowSeconds * 1000;
  let stabilized = args.desiredReplicas;
  let oldIndex: number | undefined;
  history.recommendations.forEach((rec, i) => {
    if (rec.at < cutoff) oldIndex = i;
    else if (rec.replicas > stabilized) stabilized = rec.replicas;
  });
  const next = { ...history, recommendations: recorded(history.recommendations, oldIndex, { replicas: args.desiredReplicas, at: args.now }) };
  const conditions: NormalizationCondition[] = [
    stabilized !== args.desiredReplicas
      ? { type: 'AbleToScale', status: 'True', reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
      : { type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' },
  ];
  // convertDesiredReplicasWithRules
  const upLimit = legacyScaleUpLimit(args.currentReplicas);
  let limited: { replicas: number; reason: string; message: string } =
    args.maxReplicas > upLimit
      ? { replicas: upLimit, reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' }
      : { replicas: args.maxReplicas, reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
  if (stabilized < args.minReplicas) {
    limited = { replicas: args.minReplicas, reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
  } else if (stabilized <= limited.replicas) {
    limited = { replicas: stabilized, reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
  }
  conditions.push({ type: 'ScalingLimited', status: limited.replicas === stabilized ? 'False' : 'True', reason: limited.reason, message: limited.message });
  return { replicas: limited.replicas, conditions, history: next };
};

const longestPolicyPeriod = (rules: ScalingRules): number => Math.max(0, ...rules.policies.map((p) => p.periodSeconds));

/** kube's `storeScaleEvent`: a scale change recorded (replacing an expired one) when the HPA has a behavior. */
export const withScaleEvent = (history: ScalingHistory, behavior: Behavior | undefined, previous: number, next: number, now: number): ScalingHistory => {
  if (!behavior) return history;
  const up = next > previous;
  const events = up ? history.scaleUpEvents : history.scaleDownEvents;
  const cutoff = now - longestPolicyPeriod(up ? behavior.scaleUp : behavior.scaleDown) * 1000;
  const oldIndex = events.findIndex((event) => event.at < cutoff);
  const event = { change: Math.abs(next - previous), at: now };
  const updated = oldIndex < 0 ? [...events, event] : events.map((e, i) => (i === oldIndex ? event : e));
  return up ? { ...history, scaleUpEvents: updated } : { ...history, scaleDownEvents: updated };
};
