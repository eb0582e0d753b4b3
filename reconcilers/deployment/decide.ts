/**
 * The Deployment decision, pure: from a Deployment, its ReplicaSets and their pods in a
 * view, the next step of its rollout (one step per round; the changes it causes bring the
 * key back) and the status it reports.
 *
 * Availability is counted from the pods in the view, and an old ReplicaSet is never
 * credited with more available pods than its spec.replicas, so a ReplicaSet status that
 * lags behind its pods cannot make a rolling update scale down too far: ready pods stay at
 * or above replicas − maxUnavailable.
 */
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { View } from '../../projections/index.ts';
import { assertNever, type Deployment, type EventBody, type Pod, type ReplicaSet } from '../../schemas/index.ts';
import { controlledPods } from '../replicaset/decide.ts';
import {
  byCreation,
  canonicalJson,
  controllerRef,
  controllerReferenceTo,
  deleteCommand,
  isBeingDeleted,
  isControlledBy,
  parseTime,
  statusCommand,
  updateCommand,
} from '../replicaset/objects.ts';
import { EMPTY_COUNTS, type PodCounts } from '../replicaset/pod-counts.ts';
import { countActivePods, isPodFinished, nextAvailabilityInMs } from '../replicaset/pods.ts';
import type { Decision } from '../runtime.ts';
import { deploymentStatus, type DeploymentCounts, type NewReplicaSetEvent } from './status.ts';
import { currentReplicaSetAnnotations } from './revision.ts';
import {
  DEFAULT_REVISION_HISTORY_LIMIT,
  deploymentReplicas,
  newReplicaSetReplicas,
  proportionalSizes,
  rollingBounds,
  scaleDownOldReplicaSets,
  STRATEGY,
  strategyOf,
  type ReplicaSetCounts,
} from './strategy.ts';
import {
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  maxRevision,
  NOT_COPIED_ANNOTATIONS,
  podTemplateHash,
  REVISION_ANNOTATION,
  revisionOf,
  sameTemplate,
  selectorWithHash,
  templateWithHash,
} from './template.ts';

/** A ReplicaSet of a Deployment with the pods it controls (in its namespace), counted at `now`. */
export interface ReplicaSetState {
  readonly rs: ReplicaSet;
  /** Pods it controls, in any state. */
  readonly pods: number;
  /** Pods it controls that are not Succeeded or Failed (terminating ones included). */
  readonly notFinished: number;
  /** Pods that count as replicas (not terminating, not finished). */
  readonly active: number;
  /** spec.replicas. */
  readonly replicas: number;
  readonly ready: number;
  readonly available: number;
  /** When the first ready but not yet available pod becomes available (ms from `now`). */
  readonly availableInMs: number | undefined;
}

/** The one thing a round does to move the rollout on. */
export type DeploymentStep =
  | { readonly type: 'adopt'; readonly replicaSets: readonly ReplicaSet[] }
  | { readonly type: 'collision'; readonly name: string }
  | { readonly type: 'create'; readonly replicaSet: ReplicaSet }
  | { readonly type: 'syncReplicaSet'; readonly current: ReplicaSet; readonly next: ReplicaSet }
  | { readonly type: 'annotateDeployment'; readonly revision: number }
  | { readonly type: 'scale'; readonly sizes: readonly { readonly rs: ReplicaSet; readonly replicas: number }[] }
  | { readonly type: 'cleanup'; readonly replicaSets: readonly ReplicaSet[] }
  | { readonly type: 'wait'; readonly reason: string }
  | { readonly type: 'idle' };

/** A Deployment's situation and the step to take. */
export interface DeploymentPlan {
  readonly deployment: Deployment;
  /** The ReplicaSet whose template is the Deployment's, if it exists. */
  readonly current: ReplicaSetState | undefined;
  /** Every other ReplicaSet it controls, oldest first. */
  readonly old: readonly ReplicaSetState[];
  readonly step: DeploymentStep;
}

const stateOf = (rs: ReplicaSet, view: View, minReadySeconds: number, now: number, podCounts: PodCounts | undefined): ReplicaSetState => {
  const namespace = rs.metadata.namespace;
  const replicas = rs.spec.replicas ?? 1;
  // The counts kept from the change feed, when exact (availability without minReadySeconds is readiness).
  if (podCounts && namespace !== undefined && rs.metadata.uid !== undefined && minReadySeconds <= 0) {
    const counts = podCounts.controlled(namespace, rs.metadata.uid) ?? EMPTY_COUNTS;
    const { pods, notFinished, active, ready } = counts;
    return { rs, pods, notFinished, active, replicas, ready, available: ready, availableInMs: undefined };
  }
  const pods = controlledPods(rs, view).filter((pod) => pod.metadata.namespace === namespace);
  const { active, ready, available } = countActivePods(pods, minReadySeconds, now);
  const notFinished = pods.reduce((sum, pod) => (isPodFinished(pod) ? sum : sum + 1), 0);
  const availableInMs = nextAvailabilityInMs(active, minReadySeconds, now);
  return { rs, pods: pods.length, notFinished, active: active.length, replicas, ready, available, availableInMs };
};

/** What the rollout arithmetic needs of a ReplicaSet: available pods capped at its size. */
const countsOf = (state: ReplicaSetState): ReplicaSetCounts => ({
  name: state.rs.metadata.name,
  replicas: state.replicas,
  available: Math.min(state.available, state.replicas),
});

/** The Deployment's counts summed over its ReplicaSets. */
export const deploymentCounts = (current: ReplicaSetState | undefined, old: readonly ReplicaSetState[]): DeploymentCounts => {
  const all = current ? [current, ...old] : [...old];
  return {
    replicas: all.reduce((sum, s) => sum + s.active, 0),
    updatedReplicas: current?.active ?? 0,
    readyReplicas: all.reduce((sum, s) => sum + s.ready, 0),
    availableReplicas: all.reduce((sum, s) => sum + s.available, 0),
    specReplicas: all.reduce((sum, s) => sum + s.replicas, 0),
  };
};

/** The ReplicaSet of `d` for template hash `hash`: the template labelled, revision and replica annotations set. */
export const newReplicaSetFor = (d: Deployment, hash: string, replicas: number, revision: number): ReplicaSet => {
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(d.metadata.annotations ?? {})) {
    if (!NOT_COPIED_ANNOTATIONS.has(key)) annotations[key] = value;
  }
  Object.assign(annotations, replicaAnnotations(d), { [REVISION_ANNOTATION]: String(revision) });
  const template = templateWithHash(d.spec.template, hash);
  const minReadySeconds = d.spec.minReadySeconds;
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace ?? 'default',
      labels: { ...template.metadata?.labels },
      annotations,
      ownerReferences: [controllerReferenceTo(d)],
    },
    spec: {
      replicas,
      ...(minReadySeconds === undefined ? {} : { minReadySeconds }),
      selector: selectorWithHash(d.spec.selector, hash),
      template,
    },
  };
};

/** The desired-replicas and max-replicas annotations a ReplicaSet gets whenever it is scaled. */
const replicaAnnotations = (d: Deployment): Record<string, string> => ({
  [DESIRED_REPLICAS_ANNOTATION]: String(deploymentReplicas(d)),
  [MAX_REPLICAS_ANNOTATION]: String(deploymentReplicas(d) + rollingBounds(d).maxSurge),
});

/** `rs` scaled to `replicas`, with the Deployment's replica annotations. */
export const scaledReplicaSet = (d: Deployment, rs: ReplicaSet, replicas: number): ReplicaSet => ({
  ...rs,
  metadata: { ...rs.metadata, annotations: { ...rs.metadata.annotations, ...replicaAnnotations(d) } },
  spec: { ...rs.spec, replicas },
});

const needsScale = (d: Deployment, state: ReplicaSetState, replicas: number): boolean => {
  const annotations = state.rs.metadata.annotations ?? {};
  return (
    state.replicas !== replicas ||
    Object.entries(replicaAnnotations(d)).some(([key, value]) => annotations[key] !== value)
  );
};

/** A scale step for the ReplicaSets whose size or replica annotations differ; undefined when none does. */
const scaleStep = (d: Deployment, sizes: readonly { state: ReplicaSetState; replicas: number }[]): DeploymentStep | undefined => {
  const changed = sizes.filter(({ state, replicas }) => needsScale(d, state, replicas));
  return changed.length === 0 ? undefined : { type: 'scale', sizes: changed.map(({ state, replicas }) => ({ rs: state.rs, replicas })) };
};

/** Orphan ReplicaSets in the Deployment's namespace whose labels its selector matches. */
const adoptableReplicaSets = (d: Deployment, view: View): ReplicaSet[] => {
  const selector = labelSelectorToRequirements(d.spec.selector);
  if (selector.type !== 'ok' || selector.requirements.length === 0) return [];
  return (view.list('ReplicaSet', d.metadata.namespace) as ReplicaSet[]).filter(
    (rs) => !controllerRef(rs) && !isBeingDeleted(rs) && matchesLabels(selector.requirements, rs.metadata.labels),
  );
};

/** kube's `isScalingEvent`: an active ReplicaSet was last scaled for another replica count. */
const isScalingEvent = (d: Deployment, all: readonly ReplicaSetState[]): boolean =>
  all.some((state) => {
    const desired = state.rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION];
    return state.replicas > 0 && desired !== undefined && Number(desired) !== deploymentReplicas(d);
  });

/**
 * kube's `scale` (used for scaling events and paused Deployments): one active ReplicaSet
 * takes the whole count; a saturated current one retires the old; otherwise a rolling
 * Deployment scales every active ReplicaSet in proportion.
 */
const syncScale = (d: Deployment, current: ReplicaSetState | undefined, old: readonly ReplicaSetState[]): DeploymentStep | undefined => {
  const replicas = deploymentReplicas(d);
  const all = current ? [current, ...old] : [...old];
  const active = all.filter((state) => state.replicas > 0);
  if (active.length <= 1) {
    const target = active[0] ?? current ?? old[old.length - 1];
    return target ? scaleStep(d, [{ state: target, replicas }]) : undefined;
  }
  const saturated =
    current !== undefined &&
    current.replicas === replicas &&
    current.rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION] === String(replicas) &&
    current.available >= replicas;
  if (saturated) return scaleStep(d, old.filter((s) => s.replicas > 0).map((state) => ({ state, replicas: 0 })));
  if (strategyOf(d) !== STRATEGY.RollingUpdate) return undefined;
  const sizes = proportionalSizes(
    d,
    active.map((state) => ({
      name: state.rs.metadata.name,
      replicas: state.replicas,
      maxReplicasBefore: Number(state.rs.metadata.annotations?.[MAX_REPLICAS_ANNOTATION] ?? '') || undefined,
      created: parseTime(state.rs.metadata.creationTimestamp) ?? 0,
    })),
    d.status?.replicas ?? 0,
  );
  return scaleStep(d, active.map((state) => ({ state, replicas: sizes.get(state.rs.metadata.name) ?? state.replicas })));
};

/** Old ReplicaSets beyond revisionHistoryLimit that are empty and can go, oldest revision first. */
const cleanupStep = (d: Deployment, old: readonly ReplicaSetState[]): DeploymentStep | undefined => {
  const limit = d.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
  const alive = old.filter((state) => !isBeingDeleted(state.rs));
  const excess = alive.length - limit;
  if (excess <= 0) return undefined;
  const byRevision = [...alive].sort((a, b) => revisionOf(a.rs) - revisionOf(b.rs) || byCreation(a.rs, b.rs));
  const removable = byRevision
    .slice(0, excess)
    .filter((state) => state.replicas === 0 && state.pods === 0)
    .map((state) => state.rs);
  return removable.length === 0 ? undefined : { type: 'cleanup', replicaSets: removable };
};

/** Whether any pod of the old ReplicaSets may still be running (terminating ones included). */
const oldPodsRunning = (old: readonly ReplicaSetState[]): boolean => old.some((state) => state.notFinished > 0);

const isComplete = (d: Deployment, counts: DeploymentCounts): boolean => {
  const replicas = deploymentReplicas(d);
  return counts.updatedReplicas === replicas && counts.replicas === replicas && counts.availableReplicas === replicas;
};

const nextStep = (d: Deployment, view: View, current: ReplicaSetState | undefined, old: readonly ReplicaSetState[]): DeploymentStep => {
  const orphans = adoptableReplicaSets(d, view);
  if (orphans.length > 0) return { type: 'adopt', replicaSets: orphans };
  const replicas = deploymentReplicas(d);
  const all = current ? [current, ...old] : [...old];
  const strategy = strategyOf(d);
  const complete = isComplete(d, deploymentCounts(current, old));

  if (!current) {
    if (d.spec.paused) return syncScale(d, current, old) ?? cleanupStep(d, old) ?? { type: 'idle' };
    if (strategy === STRATEGY.Recreate) {
      const retire = scaleStep(d, old.filter((s) => s.replicas > 0).map((state) => ({ state, replicas: 0 })));
      if (retire) return retire;
      if (oldPodsRunning(old)) return { type: 'wait', reason: 'old pods are still running' };
    }
    const hash = podTemplateHash(d.spec.template, d.status?.collisionCount);
    const name = `${d.metadata.name}-${hash}`;
    if (view.get(`ReplicaSet/${d.metadata.namespace ?? ''}/${name}`)) return { type: 'collision', name };
    const size = newReplicaSetReplicas(d, old.map(countsOf), undefined);
    return { type: 'create', replicaSet: newReplicaSetFor(d, hash, size, maxRevision(old.map((s) => s.rs)) + 1) };
  }

  // kube's getNewReplicaSet for an existing one: its annotations and minReadySeconds first,
  // then the Deployment takes the ReplicaSet's revision.
  const annotations = currentReplicaSetAnnotations(d, current.rs, maxRevision(old.map((s) => s.rs)) + 1);
  const minReadySeconds = d.spec.minReadySeconds;
  if (annotations !== undefined || current.rs.spec.minReadySeconds !== minReadySeconds) {
    const spec = { ...current.rs.spec };
    if (minReadySeconds === undefined) delete spec.minReadySeconds;
    else spec.minReadySeconds = minReadySeconds;
    const metadata = { ...current.rs.metadata, annotations: annotations ?? { ...current.rs.metadata.annotations } };
    return { type: 'syncReplicaSet', current: current.rs, next: { ...current.rs, metadata, spec } };
  }
  const revision = revisionOf(current.rs);
  if (d.metadata.annotations?.[REVISION_ANNOTATION] !== String(revision)) return { type: 'annotateDeployment', revision };

  if (d.spec.paused) return syncScale(d, current, old) ?? cleanupStep(d, old) ?? { type: 'idle' };
  if (isScalingEvent(d, all)) {
    const scaled = syncScale(d, current, old);
    if (scaled) return scaled;
  }

  switch (strategy) {
    case STRATEGY.Recreate: {
      const retire = scaleStep(d, old.filter((s) => s.replicas > 0).map((state) => ({ state, replicas: 0 })));
      if (retire) return retire;
      if (oldPodsRunning(old)) return { type: 'wait', reason: 'old pods are still running' };
      const grow = scaleStep(d, [{ state: current, replicas }]);
      if (grow) return grow;
      break;
    }
    case STRATEGY.RollingUpdate: {
      const target = current.replicas > replicas ? replicas : newReplicaSetReplicas(d, all.map(countsOf), countsOf(current));
      const grow = scaleStep(d, [{ state: current, replicas: target }]);
      if (grow) return grow;
      const shrink = scaleDownOldReplicaSets(d, countsOf(current), old.map(countsOf));
      const shrinkStep = scaleStep(d, old.filter((s) => shrink.has(s.rs.metadata.name)).map((state) => ({ state, replicas: shrink.get(state.rs.metadata.name) ?? state.replicas })));
      if (shrinkStep) return shrinkStep;
      break;
    }
    default:
      return assertNever(strategy, 'deployment strategy');
  }
  return (complete ? cleanupStep(d, old) : undefined) ?? { type: 'idle' };
};

/** Plans Deployment `d`: its ReplicaSets (the current one and the old ones) and the next step. */
export const planDeployment = (d: Deployment, view: View, now: number, podCounts?: PodCounts): DeploymentPlan => {
  const minReadySeconds = d.spec.minReadySeconds ?? 0;
  const owned = view
    .ownedBy(d.metadata.uid ?? '')
    .filter((o): o is ReplicaSet => o.kind === 'ReplicaSet' && isControlledBy(o, d.metadata.uid))
    .sort(byCreation)
    .map((rs) => stateOf(rs, view, minReadySeconds, now, podCounts));
  const current = owned.find((state) => sameTemplate(state.rs.spec.template, d.spec.template));
  const old = owned.filter((state) => state !== current);
  const step: DeploymentStep = isBeingDeleted(d) ? { type: 'idle' } : nextStep(d, view, current, old);
  return { deployment: d, current, old, step };
};

/** The commands that carry out `step` for Deployment `d`. */
export const stepCommands = (d: Deployment, step: DeploymentStep): EventBody[] => {
  switch (step.type) {
    case 'adopt':
      return step.replicaSets.map((rs) =>
        updateCommand(rs, { ...rs, metadata: { ...rs.metadata, ownerReferences: [...(rs.metadata.ownerReferences ?? []), controllerReferenceTo(d)] } }),
      );
    case 'create':
      return [{ type: 'ObjectCreated', object: step.replicaSet }];
    case 'syncReplicaSet':
      return [updateCommand(step.current, step.next)];
    case 'annotateDeployment':
      return [updateCommand(d, { ...d, metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, [REVISION_ANNOTATION]: String(step.revision) } } })];
    case 'scale':
      return step.sizes.map(({ rs, replicas }) => updateCommand(rs, scaledReplicaSet(d, rs, replicas)));
    case 'cleanup':
      return step.replicaSets.map((rs) => deleteCommand(rs, 'Background'));
    case 'collision':
    case 'wait':
    case 'idle':
      return [];
    default:
      return assertNever(step, 'deployment step');
  }
};

/** Decides Deployment `key`: the commands of its next step, and its status when that changed. */
export const decideDeployment = (key: string, view: View, now: number, podCounts?: PodCounts): Decision => {
  const d = view.get(key);
  if (!d || d.kind !== 'Deployment') return { commands: [] };
  const plan = planDeployment(d, view, now, podCounts);
  const { step, current, old } = plan;
  const event: NewReplicaSetEvent =
    step.type === 'create'
      ? { type: 'created', name: step.replicaSet.metadata.name }
      : current
        ? { type: 'existing', name: current.rs.metadata.name }
        : { type: 'none' };
  const collisionCount = step.type === 'collision' ? (d.status?.collisionCount ?? 0) + 1 : undefined;
  const { status, deadlineInMs } = deploymentStatus(d, deploymentCounts(current, old), event, now, collisionCount);
  const commands = stepCommands(d, step);
  if (canonicalJson(status) !== canonicalJson(d.status)) commands.push(statusCommand(d, status));
  const waits = [deadlineInMs, ...[current, ...old].map((s) => s?.availableInMs)].filter((ms): ms is number => ms !== undefined);
  return waits.length === 0 ? { commands } : { commands, requeueAfterMs: Math.min(...waits) };
};
