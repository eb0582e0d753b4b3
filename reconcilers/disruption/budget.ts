/**
 * The arithmetic of a PodDisruptionBudget, pure, as kube's disruption controller
 * (`pkg/controller/disruption/disruption.go`) and `component-helpers/apps/poddisruptionbudget`
 * compute it: the pods a budget selects, the expected pod count from their controllers'
 * scale, the desired and current healthy counts, the disrupted pods still pending, and
 * the status with its `DisruptionAllowed` condition.
 */
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { View } from '../../projections/index.ts';
import type { Condition, KubeObject, Pod, PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../schemas/index.ts';
import { storedKind } from '../../schemas/kinds/registry.ts';
import { controllerRef, isoTime, ownerKey, parseTime } from '../replicaset/objects.ts';
import { isPodReady } from '../replicaset/pods.ts';

/** How long an eviction's entry in `status.disruptedPods` waits for the pod's deletion (kube's `DeletionTimeout`). */
export const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/** The condition type and reasons of kube's policy API. */
export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const REASON = {
  SufficientPods: 'SufficientPods',
  InsufficientPods: 'InsufficientPods',
  SyncFailed: 'SyncFailed',
} as const;

/** The values of `spec.unhealthyPodEvictionPolicy`. */
export const UNHEALTHY_POD_EVICTION_POLICY = { IfHealthyBudget: 'IfHealthyBudget', AlwaysAllow: 'AlwaysAllow' } as const;

/** Why the expected pod count could not be computed (kube returns these as errors). */
export class ExpectedCountError extends Error {
  override readonly name = 'ExpectedCountError';
}

/**
 * intstr's `GetScaledValueFromIntOrPercent`: an integer as is, "N%" as N % of `total`
 * rounded up or down; any other string is an error, as in kube.
 */
export const scaledValue = (value: number | string, total: number, roundUp: boolean): number => {
  if (typeof value === 'number') return value;
  const percent = /^(-?\d+)%$/.exec(value);
  if (!percent) throw new ExpectedCountError(`invalid value for IntOrString: invalid type: string is not a percentage`);
  const exact = (Number(percent[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
};

/**
 * The pods the budget selects in its namespace: a missing selector selects none, an
 * empty one every pod (policy/v1); an invalid selector is an error.
 */
export const podsForBudget = (pdb: PodDisruptionBudget, view: View): Pod[] => {
  const selector = pdb.spec?.selector;
  if (!selector) return [];
  const parsed = labelSelectorToRequirements(selector);
  if (parsed.type === 'invalid') throw new ExpectedCountError(parsed.error.message);
  return (view.list('Pod', pdb.metadata.namespace) as Pod[]).filter((pod) => matchesLabels(parsed.requirements, pod.metadata.labels));
};

/** The budgets in `pod`'s namespace whose selector (present, valid) matches it. */
export const budgetsForPod = (pod: KubeObject, view: View): PodDisruptionBudget[] =>
  (view.list('PodDisruptionBudget', pod.metadata.namespace) as PodDisruptionBudget[]).filter((pdb) => {
    const selector = pdb.spec?.selector;
    if (!selector) return false;
    const parsed = labelSelectorToRequirements(selector);
    return parsed.type === 'ok' && matchesLabels(parsed.requirements, pod.metadata.labels);
  });

/** A controller of pods and its desired scale. */
interface ScaledController {
  readonly uid: string;
  readonly scale: number;
}

const replicasOf = (object: KubeObject): number => (object as { spec?: { replicas?: number } }).spec?.replicas ?? 1;

/**
 * The finders of kube's `getScaleController` chain: a ReplicaSet (its Deployment's scale
 * when a Deployment controls it), and any kind with a scale subresource. Undefined when
 * the controller is gone (or is another incarnation); an error when its kind has no scale.
 */
const scaledControllerOf = (pod: Pod, view: View): ScaledController | undefined => {
  const ref = controllerRef(pod);
  if (!ref) return undefined;
  const kind = storedKind(ref.kind);
  if (!kind?.subresources.some((sub) => sub.name === 'scale')) {
    const resource = kind ? (kind.group ? `${kind.plural}.${kind.group}` : kind.plural) : ref.kind;
    throw new ExpectedCountError(`${resource} does not implement the scale subresource`);
  }
  const owner = view.get(ownerKey(ref, pod.metadata.namespace));
  if (!owner || owner.metadata.uid !== ref.uid) return undefined;
  if (owner.kind === 'ReplicaSet') {
    const deploymentRef = controllerRef(owner);
    if (deploymentRef?.kind === 'Deployment') {
      const deployment = view.get(ownerKey(deploymentRef, owner.metadata.namespace));
      if (!deployment || deployment.metadata.uid !== deploymentRef.uid) return undefined;
      return { uid: deployment.metadata.uid ?? '', scale: replicasOf(deployment) };
    }
  }
  return { uid: owner.metadata.uid ?? '', scale: replicasOf(owner) };
};

/** What kube's `getExpectedScale` finds: the sum of the pods' controllers' scales, and the pods no controller manages. */
export const expectedScale = (pods: readonly Pod[], view: View): { expectedCount: number; unmanagedPods: string[] } => {
  const scales = new Map<string, number>();
  const unmanagedPods: string[] = [];
  for (const pod of pods) {
    const ref = controllerRef(pod);
    if (!ref) {
      unmanagedPods.push(pod.metadata.name);
      continue;
    }
    if (scales.has(ref.uid)) continue;
    const found = scaledControllerOf(pod, view);
    if (!found) throw new ExpectedCountError(`found no controllers for pod ${JSON.stringify(pod.metadata.name)}`);
    scales.set(found.uid, found.scale);
  }
  let expectedCount = 0;
  for (const scale of scales.values()) expectedCount += scale;
  return { expectedCount, unmanagedPods };
};

/** kube's `getExpectedPodCount`: the expected pods and desired healthy pods of the budget. */
export const expectedPodCount = (
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  view: View,
): { expectedCount: number; desiredHealthy: number; unmanagedPods: string[] } => {
  const spec = pdb.spec ?? {};
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    const { expectedCount, unmanagedPods } = expectedScale(pods, view);
    const maxUnavailable = scaledValue(spec.maxUnavailable, expectedCount, true);
    return { expectedCount, desiredHealthy: Math.max(0, expectedCount - maxUnavailable), unmanagedPods };
  }
  if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
    if (typeof spec.minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: spec.minAvailable, unmanagedPods: [] };
    const { expectedCount, unmanagedPods } = expectedScale(pods, view);
    return { expectedCount, desiredHealthy: scaledValue(spec.minAvailable, expectedCount, true), unmanagedPods };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
};

/**
 * kube's `buildDisruptedPodMap`: the entries of `status.disruptedPods` whose pod is still
 * there, not being deleted, and within {@link DELETION_TIMEOUT_MS}; the pods whose entry
 * expired (kube records NotDeleted on each); and when the first kept entry expires.
 */
export const pendingDisruptions = (
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  now: number,
): { disruptedPods: Record<string, string>; expired: Pod[]; recheckAt: number | undefined } => {
  const recorded = pdb.status?.disruptedPods ?? {};
  const disruptedPods: Record<string, string> = {};
  const expired: Pod[] = [];
  let recheckAt: number | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const name = pod.metadata.name;
    if (!Object.hasOwn(recorded, name)) continue;
    const since = recorded[name]!;
    const expectedDeletion = (parseTime(since) ?? 0) + DELETION_TIMEOUT_MS;
    if (expectedDeletion < now) {
      expired.push(pod);
      continue;
    }
    if (recheckAt === undefined || expectedDeletion < recheckAt) recheckAt = expectedDeletion;
    disruptedPods[name] = since;
  }
  return { disruptedPods, expired, recheckAt };
};

/** kube's `countHealthyPods`: ready pods that are neither being deleted nor about to be (a fresh disruptedPods entry). */
export const countHealthyPods = (pods: readonly Pod[], disruptedPods: Readonly<Record<string, string>>, now: number): number => {
  let healthy = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const name = pod.metadata.name;
    if (Object.hasOwn(disruptedPods, name) && (parseTime(disruptedPods[name]) ?? 0) + DELETION_TIMEOUT_MS > now) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
};

/** kube's `apimeta.SetStatusCondition`: replaces the condition of its type, keeping lastTransitionTime unless the status changes. */
export const setCondition = (conditions: readonly Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: number): Condition[] => {
  const existing = conditions.find((c) => c.type === next.type);
  if (!existing) return [...conditions, { ...next, lastTransitionTime: isoTime(now) }];
  const lastTransitionTime = existing.status === next.status ? existing.lastTransitionTime : isoTime(now);
  return conditions.map((c) => (c === existing ? { ...next, lastTransitionTime } : c));
};

/** pdbhelper's `UpdateDisruptionAllowedCondition`: True/SufficientPods when disruptions are allowed, else False/InsufficientPods. */
export const disruptionAllowedCondition = (status: PodDisruptionBudgetStatus, now: number): Condition[] =>
  setCondition(
    status.conditions ?? [],
    status.disruptionsAllowed > 0
      ? { type: DISRUPTION_ALLOWED_CONDITION, status: 'True', reason: REASON.SufficientPods, message: '', observedGeneration: status.observedGeneration ?? 0 }
      : { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: REASON.InsufficientPods, message: '', observedGeneration: status.observedGeneration ?? 0 },
    now,
  );

/** pdbhelper's `ConditionsAreUpToDate`. */
export const conditionsAreUpToDate = (pdb: PodDisruptionBudget): boolean => {
  const status = pdb.status;
  const condition = status?.conditions?.find((c) => c.type === DISRUPTION_ALLOWED_CONDITION);
  if (!status || !condition || (status.observedGeneration ?? 0) !== (pdb.metadata.generation ?? 0)) return false;
  return status.disruptionsAllowed > 0
    ? condition.status === 'True' && condition.reason === REASON.SufficientPods
    : condition.status === 'False' && condition.reason === REASON.InsufficientPods;
};

/** The counts of one sync, before they become a status. */
export interface BudgetCounts {
  readonly currentHealthy: number;
  readonly desiredHealthy: number;
  readonly expectedCount: number;
  readonly disruptedPods: Readonly<Record<string, string>>;
}

/** `disruptionsAllowed` as kube's `updatePdbStatus` computes it: never negative, and 0 while no pod is expected. */
export const disruptionsAllowed = (counts: Pick<BudgetCounts, 'currentHealthy' | 'desiredHealthy' | 'expectedCount'>): number => {
  const allowed = counts.currentHealthy - counts.desiredHealthy;
  return counts.expectedCount <= 0 || allowed <= 0 ? 0 : allowed;
};

const sameMap = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && b[key] === a[key]);
};

/**
 * kube's `updatePdbStatus`: the status the budget should report given the counts, or
 * undefined when it reports it already (no write).
 */
export const nextStatus = (pdb: PodDisruptionBudget, counts: BudgetCounts, now: number): PodDisruptionBudgetStatus | undefined => {
  const allowed = disruptionsAllowed(counts);
  const status = pdb.status;
  const generation = pdb.metadata.generation ?? 0;
  if (
    status &&
    status.currentHealthy === counts.currentHealthy &&
    status.desiredHealthy === counts.desiredHealthy &&
    status.expectedPods === counts.expectedCount &&
    status.disruptionsAllowed === allowed &&
    sameMap(status.disruptedPods ?? {}, counts.disruptedPods) &&
    (status.observedGeneration ?? 0) === generation &&
    conditionsAreUpToDate(pdb)
  ) {
    return undefined;
  }
  const next: PodDisruptionBudgetStatus = {
    currentHealthy: counts.currentHealthy,
    desiredHealthy: counts.desiredHealthy,
    expectedPods: counts.expectedCount,
    disruptionsAllowed: allowed,
    observedGeneration: generation,
    ...(Object.keys(counts.disruptedPods).length > 0 ? { disruptedPods: { ...counts.disruptedPods } } : {}),
    conditions: status?.conditions ?? [],
  };
  return { ...next, conditions: disruptionAllowedCondition(next, now) };
};

/** kube's `failSafe`: no disruptions allowed, and the condition says why the sync failed. */
export const failSafeStatus = (pdb: PodDisruptionBudget, message: string, now: number): PodDisruptionBudgetStatus => {
  const status = pdb.status ?? { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0 };
  return {
    ...status,
    disruptionsAllowed: 0,
    conditions: setCondition(
      status.conditions ?? [],
      { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: REASON.SyncFailed, message, observedGeneration: status.observedGeneration ?? 0 },
      now,
    ),
  };
};
