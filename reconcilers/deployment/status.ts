/**
 * Deployment status, pure: replica counts from the pods of its ReplicaSets and the
 * Available and Progressing conditions `rollout status` reads, with kube's reasons and
 * its rules for when timestamps move (so an unchanged rollout writes no status).
 */
import { assertNever, type Deployment, type DeploymentCondition, type DeploymentStatus } from '../../schemas/index.ts';
import { isoTime, parseTime } from '../replicaset/objects.ts';
import { DEFAULT_PROGRESS_DEADLINE_SECONDS, deploymentReplicas, minAvailable } from './strategy.ts';

/** Condition types of a Deployment. */
export const CONDITION = { Available: 'Available', Progressing: 'Progressing' } as const;

/** Condition reasons, as kube's deployment controller writes them. */
export const REASON = {
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  NewReplicaSetCreated: 'NewReplicaSetCreated',
  FoundNewReplicaSet: 'FoundNewReplicaSet',
  ReplicaSetUpdated: 'ReplicaSetUpdated',
  NewReplicaSetAvailable: 'NewReplicaSetAvailable',
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  DeploymentPaused: 'DeploymentPaused',
  DeploymentResumed: 'DeploymentResumed',
} as const;

/** Pod counts of a Deployment, summed over its ReplicaSets. */
export interface DeploymentCounts {
  /** Active pods of all its ReplicaSets. */
  readonly replicas: number;
  /** Active pods of the current ReplicaSet. */
  readonly updatedReplicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
  /** Sum of the ReplicaSets' spec.replicas. */
  readonly specReplicas: number;
}

/** What happened to the current ReplicaSet this round, for the Progressing condition. */
export type NewReplicaSetEvent =
  | { readonly type: 'created'; readonly name: string }
  | { readonly type: 'existing'; readonly name: string }
  | { readonly type: 'none' };

const conditionOf = (status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined =>
  (status?.conditions ?? []).find((c) => c.type === type);

/** Conditions in a fixed order (Available, Progressing, then others by type), so order never causes a write. */
const ordered = (conditions: Map<string, DeploymentCondition>): DeploymentCondition[] =>
  [...conditions.values()].sort((a, b) => rank(a.type) - rank(b.type) || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
const rank = (type: string): number => (type === CONDITION.Available ? 0 : type === CONDITION.Progressing ? 1 : 2);

/**
 * kube's `SetDeploymentCondition`: a condition with the same status and reason is kept
 * as is (no timestamp churn); a status change moves lastTransitionTime.
 */
const setCondition = (
  conditions: Map<string, DeploymentCondition>,
  type: string,
  status: string,
  reason: string,
  message: string,
  now: number,
): void => {
  const current = conditions.get(type);
  if (current && current.status === status && current.reason === reason) return;
  const at = isoTime(now);
  conditions.set(type, {
    type,
    status,
    reason,
    message,
    lastUpdateTime: at,
    lastTransitionTime: current && current.status === status ? (current.lastTransitionTime ?? at) : at,
  });
};

/** Seconds a rollout may go without progress before Progressing=False (undefined: no deadline). */
export const progressDeadlineSeconds = (d: Deployment): number | undefined => {
  const seconds = d.spec.progressDeadlineSeconds ?? DEFAULT_PROGRESS_DEADLINE_SECONDS;
  return seconds >= 2 ** 31 - 1 ? undefined : seconds;
};

/** kube's `DeploymentComplete`: every replica updated and available, nothing old left. */
export const isRolloutComplete = (d: Deployment, status: DeploymentStatus): boolean => {
  const replicas = deploymentReplicas(d);
  return (
    status.updatedReplicas === replicas &&
    status.replicas === replicas &&
    status.availableReplicas === replicas &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
};

/** kube's `DeploymentProgressing`: more updated/ready/available pods, or fewer old ones, than the last status said. */
const madeProgress = (previous: DeploymentStatus | undefined, next: DeploymentStatus): boolean => {
  const prev = {
    updated: previous?.updatedReplicas ?? 0,
    old: (previous?.replicas ?? 0) - (previous?.updatedReplicas ?? 0),
    ready: previous?.readyReplicas ?? 0,
    available: previous?.availableReplicas ?? 0,
  };
  return (
    (next.updatedReplicas ?? 0) > prev.updated ||
    (next.replicas ?? 0) - (next.updatedReplicas ?? 0) < prev.old ||
    (next.readyReplicas ?? 0) > prev.ready ||
    (next.availableReplicas ?? 0) > prev.available
  );
};

/** The status a Deployment should report, and when to look again for a time-based change. */
export interface StatusOutcome {
  readonly status: DeploymentStatus;
  /** When the progress deadline would pass (ms from now), if the rollout is still in progress. */
  readonly deadlineInMs?: number;
}

/**
 * The Deployment's status at `now`: counts as given, Available from replicas −
 * maxUnavailable, Progressing as kube's `syncRolloutStatus` (NewReplicaSetCreated /
 * FoundNewReplicaSet, ReplicaSetUpdated on progress, NewReplicaSetAvailable when complete,
 * ProgressDeadlineExceeded after the deadline, DeploymentPaused while paused).
 */
export const deploymentStatus = (
  d: Deployment,
  counts: DeploymentCounts,
  newReplicaSet: NewReplicaSetEvent,
  now: number,
  collisionCount?: number,
): StatusOutcome => {
  const previous = d.status;
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 1,
    replicas: counts.replicas,
    updatedReplicas: counts.updatedReplicas,
    readyReplicas: counts.readyReplicas,
    availableReplicas: counts.availableReplicas,
    unavailableReplicas: Math.max(0, counts.specReplicas - counts.availableReplicas),
  };
  const collisions = collisionCount ?? previous?.collisionCount;
  if (collisions !== undefined) status.collisionCount = collisions;

  const conditions = new Map((previous?.conditions ?? []).map((c) => [c.type, { ...c }]));
  if (counts.availableReplicas >= minAvailable(d)) {
    setCondition(conditions, CONDITION.Available, 'True', REASON.MinimumReplicasAvailable, 'Deployment has minimum availability.', now);
  } else {
    setCondition(conditions, CONDITION.Available, 'False', REASON.MinimumReplicasUnavailable, 'Deployment does not have minimum availability.', now);
  }

  const deadline = progressDeadlineSeconds(d);
  let deadlineInMs: number | undefined;
  if (deadline === undefined) {
    conditions.delete(CONDITION.Progressing);
  } else if (d.spec.paused) {
    if (conditions.get(CONDITION.Progressing)?.reason !== REASON.ProgressDeadlineExceeded) {
      setCondition(conditions, CONDITION.Progressing, 'Unknown', REASON.DeploymentPaused, 'Deployment is paused', now);
    }
  } else {
    if (conditions.get(CONDITION.Progressing)?.reason === REASON.DeploymentPaused) {
      setCondition(conditions, CONDITION.Progressing, 'Unknown', REASON.DeploymentResumed, 'Deployment is resumed', now);
    }
    switch (newReplicaSet.type) {
      case 'created':
        setCondition(conditions, CONDITION.Progressing, 'True', REASON.NewReplicaSetCreated, `Created new replica set "${newReplicaSet.name}"`, now);
        break;
      case 'existing':
        if (!conditions.has(CONDITION.Progressing)) {
          setCondition(conditions, CONDITION.Progressing, 'True', REASON.FoundNewReplicaSet, `Found new replica set "${newReplicaSet.name}"`, now);
        }
        break;
      case 'none':
        break;
      default:
        assertNever(newReplicaSet, 'new ReplicaSet event');
    }
    const name = newReplicaSet.type === 'none' ? d.metadata.name : newReplicaSet.name;
    const current = conditions.get(CONDITION.Progressing);
    const settled = status.replicas === status.updatedReplicas && current?.reason === REASON.NewReplicaSetAvailable;
    if (!settled) {
      if (isRolloutComplete(d, status)) {
        setCondition(conditions, CONDITION.Progressing, 'True', REASON.NewReplicaSetAvailable, `ReplicaSet "${name}" has successfully progressed.`, now);
      } else if (madeProgress(previous, status)) {
        const at = isoTime(now);
        conditions.set(CONDITION.Progressing, {
          type: CONDITION.Progressing,
          status: 'True',
          reason: REASON.ReplicaSetUpdated,
          message: `ReplicaSet "${name}" is progressing.`,
          lastUpdateTime: at,
          lastTransitionTime: current?.status === 'True' ? (current.lastTransitionTime ?? at) : at,
        });
      } else if (current && current.reason !== REASON.NewReplicaSetAvailable) {
        const since = parseTime(current.lastUpdateTime) ?? now;
        const expires = since + deadline * 1000;
        if (current.reason === REASON.ProgressDeadlineExceeded || expires < now) {
          setCondition(conditions, CONDITION.Progressing, 'False', REASON.ProgressDeadlineExceeded, `ReplicaSet "${name}" has timed out progressing.`, now);
        }
      }
    }
    const progressing = conditions.get(CONDITION.Progressing);
    if (progressing?.status === 'True' && progressing.reason !== REASON.NewReplicaSetAvailable && !isRolloutComplete(d, status)) {
      const since = parseTime(progressing.lastUpdateTime) ?? now;
      deadlineInMs = Math.max(0, since + deadline * 1000 - now) + 1000;
    }
  }
  if (conditions.size > 0) status.conditions = ordered(conditions);
  return deadlineInMs === undefined ? { status } : { status, deadlineInMs };
};
