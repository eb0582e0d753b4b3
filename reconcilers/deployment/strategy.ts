/**
 * The arithmetic of rollouts, pure and kube-compatible: maxSurge/maxUnavailable
 * resolution, how far the new ReplicaSet may grow, how far old ones may shrink, and
 * proportional scaling of a Deployment resized mid-rollout.
 */
import type { Deployment } from '../../schemas/index.ts';

/** Deployment strategies. */
export const STRATEGY = { RollingUpdate: 'RollingUpdate', Recreate: 'Recreate' } as const;
export type StrategyType = (typeof STRATEGY)[keyof typeof STRATEGY];

/** Defaults of `spec.strategy.rollingUpdate` (apps/v1). */
export const DEFAULT_MAX_SURGE = '25%';
export const DEFAULT_MAX_UNAVAILABLE = '25%';
/** Default `spec.revisionHistoryLimit` (apps/v1). */
export const DEFAULT_REVISION_HISTORY_LIMIT = 10;
/** Default `spec.progressDeadlineSeconds` (apps/v1). */
export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/** The Deployment's strategy type (RollingUpdate unless it says Recreate). */
export const strategyOf = (d: Deployment): StrategyType =>
  d.spec.strategy?.type === STRATEGY.Recreate ? STRATEGY.Recreate : STRATEGY.RollingUpdate;

/** `spec.replicas`, default 1. */
export const deploymentReplicas = (d: Deployment): number => d.spec.replicas ?? 1;

/**
 * An int-or-percent against `total`: a number as is, "N%" as N% of total rounded up or
 * down. A malformed value resolves to 0.
 */
export const resolveIntOrPercent = (value: number | string, total: number, roundUp: boolean): number => {
  if (typeof value === 'number') return Math.max(0, Math.trunc(value));
  const percent = /^(\d+)%$/.exec(value.trim());
  if (percent) {
    const exact = (Number(percent[1]) * total) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  }
  return /^\d+$/.test(value.trim()) ? Number(value.trim()) : 0;
};

/** The resolved rolling-update bounds of a Deployment. */
export interface RollingBounds {
  readonly maxSurge: number;
  readonly maxUnavailable: number;
}

/**
 * maxSurge (rounded up) and maxUnavailable (rounded down) as kube's `ResolveFenceposts`:
 * both 0 would deadlock, so maxUnavailable becomes 1; maxUnavailable never exceeds
 * replicas. Recreate has neither.
 */
export const rollingBounds = (d: Deployment): RollingBounds => {
  if (strategyOf(d) !== STRATEGY.RollingUpdate) return { maxSurge: 0, maxUnavailable: 0 };
  const replicas = deploymentReplicas(d);
  const rolling = d.spec.strategy?.rollingUpdate;
  const maxSurge = resolveIntOrPercent(rolling?.maxSurge ?? DEFAULT_MAX_SURGE, replicas, true);
  let maxUnavailable = resolveIntOrPercent(rolling?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE, replicas, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
};

/** The minimum available pods a rollout keeps: replicas − maxUnavailable. */
export const minAvailable = (d: Deployment): number => deploymentReplicas(d) - rollingBounds(d).maxUnavailable;

/** A ReplicaSet as the rollout arithmetic sees it. */
export interface ReplicaSetCounts {
  readonly name: string;
  /** spec.replicas. */
  readonly replicas: number;
  /** Available pods it will keep: min(available pods now, spec.replicas). */
  readonly available: number;
}

/**
 * The size the new ReplicaSet should grow to now (kube's `NewRSNewReplicas` for
 * RollingUpdate): up to replicas + maxSurge pods in total across all ReplicaSets.
 */
export const newReplicaSetReplicas = (d: Deployment, all: readonly ReplicaSetCounts[], current: ReplicaSetCounts | undefined): number => {
  const replicas = deploymentReplicas(d);
  const currentSize = current?.replicas ?? 0;
  if (strategyOf(d) === STRATEGY.Recreate) return replicas;
  const maxTotal = replicas + rollingBounds(d).maxSurge;
  const total = all.reduce((sum, rs) => sum + rs.replicas, 0);
  if (total >= maxTotal) return currentSize;
  return currentSize + Math.max(0, Math.min(maxTotal - total, replicas - currentSize));
};

/**
 * New sizes of the old ReplicaSets (by name; only the changed ones) for one rolling step
 * (kube's `reconcileOldReplicaSets`): unhealthy replicas go first, then healthy ones as
 * long as `replicas − maxUnavailable` pods stay available. Old ReplicaSets in `old` must
 * be oldest first.
 */
export const scaleDownOldReplicaSets = (
  d: Deployment,
  newRs: ReplicaSetCounts,
  old: readonly ReplicaSetCounts[],
): Map<string, number> => {
  const targets = new Map<string, number>();
  const oldTotal = old.reduce((sum, rs) => sum + rs.replicas, 0);
  if (oldTotal === 0) return targets;
  const all = [...old, newRs];
  const allTotal = all.reduce((sum, rs) => sum + rs.replicas, 0);
  const minimum = minAvailable(d);
  const newUnavailable = newRs.replicas - newRs.available;
  const maxScaledDown = allTotal - minimum - newUnavailable;
  if (maxScaledDown <= 0) return targets;

  const size = (rs: ReplicaSetCounts): number => targets.get(rs.name) ?? rs.replicas;
  let cleaned = 0;
  for (const rs of old) {
    if (cleaned >= maxScaledDown) break;
    const unhealthy = rs.replicas - rs.available;
    if (rs.replicas === 0 || unhealthy <= 0) continue;
    const count = Math.min(maxScaledDown - cleaned, unhealthy);
    targets.set(rs.name, rs.replicas - count);
    cleaned += count;
  }

  const available = all.reduce((sum, rs) => sum + Math.min(rs.available, size(rs)), 0);
  if (available <= minimum) return targets;
  const toScaleDown = available - minimum;
  let scaled = 0;
  for (const rs of old) {
    if (scaled >= toScaleDown) break;
    const current = size(rs);
    if (current === 0) continue;
    const count = Math.min(current, toScaleDown - scaled);
    targets.set(rs.name, current - count);
    scaled += count;
  }
  return targets;
};

/** A ReplicaSet as proportional scaling sees it. */
export interface ScalableReplicaSet {
  readonly name: string;
  readonly replicas: number;
  /** The max-replicas annotation: the Deployment's replicas + maxSurge when it was last scaled. */
  readonly maxReplicasBefore: number | undefined;
  /** Creation order (ms) for tie-breaks; larger is newer. */
  readonly created: number;
}

/**
 * New sizes of the active ReplicaSets when a Deployment is resized mid-rollout (kube's
 * proportional scaling): each gets its share of the change in proportion to its size,
 * the largest takes the rounding leftover. `fallbackMaxBefore` stands in for a missing
 * max-replicas annotation (kube uses the Deployment's status.replicas).
 */
export const proportionalSizes = (
  d: Deployment,
  active: readonly ScalableReplicaSet[],
  fallbackMaxBefore: number,
): Map<string, number> => {
  const replicas = deploymentReplicas(d);
  const current = active.reduce((sum, rs) => sum + rs.replicas, 0);
  const allowed = replicas > 0 ? replicas + rollingBounds(d).maxSurge : 0;
  const toAdd = allowed - current;
  const sizes = new Map(active.map((rs) => [rs.name, rs.replicas]));
  if (toAdd === 0) return sizes;
  const ordered = [...active].sort((a, b) =>
    a.replicas !== b.replicas ? b.replicas - a.replicas : toAdd > 0 ? b.created - a.created : a.created - b.created,
  );
  let added = 0;
  for (const rs of ordered) {
    if (rs.replicas === 0 || added === toAdd) continue;
    const before = rs.maxReplicasBefore && rs.maxReplicasBefore > 0 ? rs.maxReplicasBefore : fallbackMaxBefore;
    const fraction = replicas === 0 ? -rs.replicas : before > 0 ? Math.round((rs.replicas * allowed) / before) - rs.replicas : 0;
    const proportion = toAdd > 0 ? Math.min(fraction, toAdd - added) : Math.max(fraction, toAdd - added);
    sizes.set(rs.name, rs.replicas + proportion);
    added += proportion;
  }
  const largest = ordered[0];
  if (largest) sizes.set(largest.name, Math.max(0, (sizes.get(largest.name) ?? 0) + toAdd - added));
  return sizes;
};
