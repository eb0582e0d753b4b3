/**
 * The StatefulSet decision, pure (kube's `defaultStatefulSetControl.UpdateStatefulSet`):
 * adopt orphans, settle the revisions, then one sync of kube's loop on the view — replicas
 * in ordinal order (delete a failed pod, create a missing one after its claims, wait for it
 * to be Running, Ready and available before the next with OrderedReady), condemned pods
 * (out of range) from the highest ordinal, then the rolling update from the highest
 * ordinal down to the partition — the status, and the revisions beyond the history limit.
 */
import type { View } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels, type LabelRequirement } from '../../projections/selectors.ts';
import type { EventBody, PersistentVolumeClaim, Pod, StatefulSet, StatefulSetStatus } from '../../schemas/index.ts';
import { resolveIntOrPercent } from '../deployment/strategy.ts';
import { adoptRevisions, orphanRevisions, ownedRevisions, truncateHistory } from '../history/index.ts';
import { canonicalJson, controllerRef, controllerReferenceTo, deleteCommand, isBeingDeleted, statusCommand, updateCommand } from '../replicaset/objects.ts';
import { isPodAvailable, isPodFinished, nextAvailabilityInMs } from '../replicaset/pods.ts';
import type { Decision } from '../runtime.ts';
import {
  claimOwnerReferences,
  claimOwnerUpToDate,
  claimsFor,
  initialClaimOwners,
  identityMatches,
  inOrdinalRange,
  isHealthy,
  isMemberOf,
  isRunningAndReady,
  isTerminating,
  newStatefulSetPod,
  ordinalOf,
  podRevision,
  POD_MANAGEMENT,
  SET_UPDATE,
  setReplicas,
  startOrdinal,
  withIdentity,
} from './pods.ts';
import { setRevisions, type SetRevisions } from './revisions.ts';

const EMPTY: Decision = { commands: [] };

/** The set's selector requirements; empty (selects nothing) when absent or invalid. */
export const setSelector = (set: StatefulSet): readonly LabelRequirement[] => {
  const selector = set.spec?.selector;
  if (!selector) return [];
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? parsed.requirements : [];
};

/** The status of `set` counted over its member pods (kube's `updateStatus`), before this round acts. */
const countStatus = (set: StatefulSet, pods: readonly Pod[], revisions: SetRevisions, now: number): StatefulSetStatus => {
  const minReady = set.spec?.minReadySeconds ?? 0;
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let current = 0;
  let updated = 0;
  for (const pod of pods) {
    replicas += 1;
    if (isRunningAndReady(pod)) {
      ready += 1;
      if (isPodAvailable(pod, minReady, now)) available += 1;
    }
    if (isTerminating(pod)) continue;
    const revision = podRevision(pod);
    if (revision === revisions.current.metadata.name) current += 1;
    if (revision === revisions.update.metadata.name) updated += 1;
  }
  return {
    ...(set.metadata.generation !== undefined ? { observedGeneration: set.metadata.generation } : {}),
    replicas,
    ...(ready > 0 ? { readyReplicas: ready } : {}),
    ...(current > 0 ? { currentReplicas: current } : {}),
    ...(updated > 0 ? { updatedReplicas: updated } : {}),
    availableReplicas: available,
    currentRevision: revisions.current.metadata.name,
    updateRevision: revisions.update.metadata.name,
    collisionCount: revisions.collisionCount,
    ...(set.status?.conditions ? { conditions: set.status.conditions } : {}),
  };
};

/** kube's `completeRollingUpdate`: every replica updated and ready makes the update revision current. */
const completeRollingUpdate = (set: StatefulSet, status: StatefulSetStatus): StatefulSetStatus => {
  const type = set.spec?.updateStrategy?.type ?? SET_UPDATE.RollingUpdate;
  if (type !== SET_UPDATE.RollingUpdate || (status.updatedReplicas ?? 0) !== status.replicas || (status.readyReplicas ?? 0) !== status.replicas) return status;
  const { currentReplicas: _current, ...rest } = status;
  return { ...rest, ...(status.updatedReplicas ? { currentReplicas: status.updatedReplicas } : {}), ...(status.updateRevision ? { currentRevision: status.updateRevision } : {}) };
};

/** One sync of kube's loop over a set's pods, collecting commands. */
interface Sync {
  readonly set: StatefulSet;
  readonly view: View;
  readonly now: number;
  readonly revisions: SetRevisions;
  readonly monotonic: boolean;
  readonly minReady: number;
  readonly commands: EventBody[];
  /** Pods deleted this round (by name), so no pod is deleted twice. */
  readonly deleted: Set<string>;
  /** Claims created or updated this round (by name). */
  readonly claimed: Set<string>;
}

const namespaceOf = (set: StatefulSet): string => set.metadata.namespace ?? 'default';

const deletePod = (sync: Sync, pod: Pod): void => {
  if (sync.deleted.has(pod.metadata.name) || isTerminating(pod)) return;
  sync.deleted.add(pod.metadata.name);
  sync.commands.push(deleteCommand(pod));
};

/**
 * Creates the claims of `ordinal` that do not exist (kube's `createPersistentVolumeClaims`);
 * false when one exists but is being deleted (the pod must wait for it to go).
 */
const createMissingClaims = (sync: Sync, ordinal: number): boolean => {
  for (const claim of claimsFor(sync.set, ordinal)) {
    const existing = sync.view.get(`PersistentVolumeClaim/${namespaceOf(sync.set)}/${claim.metadata.name}`) as PersistentVolumeClaim | undefined;
    if (existing) {
      if (isBeingDeleted(existing)) return false;
      continue;
    }
    if (sync.claimed.has(claim.metadata.name)) continue;
    sync.claimed.add(claim.metadata.name);
    // A claim is made for a pod in range: owned by the set when the set's deletion deletes it (the pod's reference comes on scale-down).
    const owners = initialClaimOwners(sync.set);
    sync.commands.push({ type: 'ObjectCreated', object: { ...claim, metadata: { ...claim.metadata, ...(owners.length > 0 ? { ownerReferences: owners } : {}) } } });
  }
  return true;
};

/** kube's `PodClaimIsStale`: a claim of the ordinal still owned by a pod (an earlier incarnation) waits for the garbage collector. */
const claimIsStale = (sync: Sync, ordinal: number): boolean =>
  claimsFor(sync.set, ordinal).some((claim) => {
    const existing = sync.view.get(`PersistentVolumeClaim/${namespaceOf(sync.set)}/${claim.metadata.name}`);
    return existing !== undefined && (existing.metadata.ownerReferences ?? []).some((ref) => ref.kind === 'Pod');
  });

/** Updates the owner references of `pod`'s claims that the retention policy wants otherwise. */
const fixClaimOwners = (sync: Sync, pod: Pod): void => {
  for (const claim of claimsFor(sync.set, ordinalOf(pod))) {
    const existing = sync.view.get(`PersistentVolumeClaim/${namespaceOf(sync.set)}/${claim.metadata.name}`) as PersistentVolumeClaim | undefined;
    if (!existing || sync.claimed.has(existing.metadata.name) || claimOwnerUpToDate(existing, sync.set, pod)) continue;
    const owners = claimOwnerReferences(existing, sync.set, pod) ?? [];
    sync.claimed.add(existing.metadata.name);
    const { ownerReferences: _old, ...metadata } = existing.metadata;
    sync.commands.push(updateCommand(existing, { ...existing, metadata: { ...metadata, ...(owners.length > 0 ? { ownerReferences: owners } : {}) } }));
  }
};

/** Whether a new pod of `ordinal` is made from the current revision (kube's `newVersionedStatefulSetPod`). */
const usesCurrentRevision = (set: StatefulSet, ordinal: number): boolean => {
  const strategy = set.spec?.updateStrategy;
  const rolling = strategy?.rollingUpdate;
  const start = startOrdinal(set);
  return (
    ((strategy?.type ?? SET_UPDATE.RollingUpdate) === SET_UPDATE.RollingUpdate && rolling === undefined && ordinal < start + (set.status?.currentReplicas ?? 0)) ||
    (rolling !== undefined && ordinal < start + (rolling.partition ?? 0))
  );
};

/** kube's `processReplica`; true: stop here (OrderedReady waits). */
const processReplica = (sync: Sync, pod: Pod | undefined, ordinal: number): boolean => {
  const { set, monotonic } = sync;
  if (pod && isPodFinished(pod)) {
    deletePod(sync, pod);
    return true;
  }
  if (!pod) {
    if (claimIsStale(sync, ordinal)) return true;
    const name = `${set.metadata.name}-${ordinal}`;
    // A pod of this name that is not ours (another controller's) blocks the ordinal, as the create would fail.
    if (sync.view.get(`Pod/${namespaceOf(set)}/${name}`) !== undefined) return true;
    if (!createMissingClaims(sync, ordinal)) return true;
    const current = usesCurrentRevision(set, ordinal);
    const { revisions } = sync;
    const template = current ? revisions.currentTemplate : revisions.updateTemplate;
    const revision = current ? revisions.current.metadata.name : revisions.update.metadata.name;
    sync.commands.push({ type: 'ObjectCreated', object: newStatefulSetPod(set, template, ordinal, revision) });
    return monotonic;
  }
  if (pod.status?.phase === 'Pending' && !createMissingClaims(sync, ordinal)) return true;
  if (isTerminating(pod)) return monotonic;
  if (monotonic && !isRunningAndReady(pod)) return true;
  if (monotonic && !isPodAvailable(pod, sync.minReady, sync.now)) return true;
  fixClaimOwners(sync, pod);
  if (!identityMatches(set, pod)) sync.commands.push(updateCommand(pod, withIdentity(pod)));
  return false;
};

/** kube's `processCondemned`; true: stop here. */
const processCondemned = (sync: Sync, pod: Pod, firstUnhealthy: Pod | undefined): boolean => {
  if (isTerminating(pod)) return sync.monotonic;
  if (sync.monotonic && pod !== firstUnhealthy && !isHealthy(pod, sync.minReady, sync.now)) return true;
  deletePod(sync, pod);
  return sync.monotonic;
};

/** The rolling update from the highest ordinal down to the partition; returns how many current pods it deleted. */
const rollingUpdate = (sync: Sync, replicas: readonly (Pod | undefined)[]): number => {
  const rolling = sync.set.spec?.updateStrategy?.rollingUpdate;
  const partition = rolling?.partition ?? 0;
  const update = sync.revisions.update.metadata.name;
  const outdated = (pod: Pod | undefined): pod is Pod => pod !== undefined && podRevision(pod) !== update && !isTerminating(pod);
  if (rolling?.maxUnavailable === undefined) {
    for (let target = replicas.length - 1; target >= partition; target--) {
      const pod = replicas[target];
      if (outdated(pod)) {
        deletePod(sync, pod);
        return 1;
      }
      if (!isHealthy(pod, sync.minReady, sync.now)) return 0;
    }
    return 0;
  }
  // maxUnavailable (kube's MaxUnavailableStatefulSet): replace up to maxUnavailable − unavailable pods at once, highest first.
  const maxUnavailable = Math.max(1, resolveIntOrPercent(rolling.maxUnavailable, replicas.length, false));
  const unavailable = replicas.filter((pod) => !isHealthy(pod, sync.minReady, sync.now)).length;
  let deleted = 0;
  for (let target = replicas.length - 1; target >= partition && deleted < maxUnavailable - unavailable; target--) {
    const pod = replicas[target];
    if (!outdated(pod)) continue;
    deletePod(sync, pod);
    deleted += 1;
  }
  return deleted;
};

/** Pods of the namespace without a controller that `set` adopts: members by name, selected, not terminating. */
const orphanPods = (set: StatefulSet, pods: readonly Pod[], selector: readonly LabelRequirement[]): Pod[] =>
  selector.length === 0
    ? []
    : pods.filter((pod) => controllerRef(pod) === undefined && !isTerminating(pod) && isMemberOf(set, pod) && matchesLabels(selector, pod.metadata.labels));

/** Decides StatefulSet `key` at `now`. */
export const decideStatefulSet = (key: string, view: View, now: number): Decision => {
  const set = view.get(key);
  if (set?.kind !== 'StatefulSet' || !set.spec || set.metadata.uid === undefined) return EMPTY;
  const uid = set.metadata.uid;
  const selector = setSelector(set);
  const inNamespace = view.list('Pod', set.metadata.namespace) as Pod[];
  const orphans = orphanPods(set, inNamespace, selector);
  const revisionOrphans = selector.length === 0 ? [] : orphanRevisions(set, view, (labels) => matchesLabels(selector, labels));
  if (!isBeingDeleted(set) && (orphans.length > 0 || revisionOrphans.length > 0)) {
    const adoptions = orphans.map((pod) =>
      updateCommand(pod, { ...pod, metadata: { ...pod.metadata, ownerReferences: [...(pod.metadata.ownerReferences ?? []), controllerReferenceTo(set)] } }),
    );
    return { commands: [...adoptions, ...adoptRevisions(set, revisionOrphans)] };
  }
  const pods = inNamespace.filter((pod) => controllerRef(pod)?.uid === uid && ordinalOf(pod) >= 0).sort((a, b) => ordinalOf(a) - ordinalOf(b));
  const revisionList = ownedRevisions(set, view);
  const revisions = setRevisions(set, revisionList, view);
  const minReady = set.spec.minReadySeconds ?? 0;
  const sync: Sync = {
    set,
    view,
    now,
    revisions,
    monotonic: set.spec.podManagementPolicy !== POD_MANAGEMENT.Parallel,
    minReady,
    commands: [],
    deleted: new Set(),
    claimed: new Set(),
  };
  let status = countStatus(set, pods, revisions, now);
  const finish = (): Decision => {
    const live = new Set([revisions.current.metadata.name, revisions.update.metadata.name, ...pods.map(podRevision)]);
    const truncations = truncateHistory(revisionList, live, set.spec?.revisionHistoryLimit ?? 10);
    const final = completeRollingUpdate(set, status);
    const statusCommands = canonicalJson(final) === canonicalJson(set.status) ? [] : [statusCommand(set, final)];
    const waitMs = nextAvailabilityInMs(pods, minReady, now);
    return { commands: [...revisions.commands, ...sync.commands, ...truncations, ...statusCommands], ...(waitMs === undefined ? {} : { requeueAfterMs: waitMs }) };
  };
  if (isBeingDeleted(set)) return finish();

  const start = startOrdinal(set);
  const replicas: (Pod | undefined)[] = Array.from({ length: setReplicas(set) }, () => undefined);
  const condemned: Pod[] = [];
  for (const pod of pods) {
    if (inOrdinalRange(set, pod)) replicas[ordinalOf(pod) - start] = pod;
    else condemned.push(pod);
  }
  condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a));
  const firstUnhealthy =
    replicas.find((pod): pod is Pod => pod !== undefined && !isHealthy(pod, minReady, now)) ??
    [...condemned].reverse().find((pod) => !isHealthy(pod, minReady, now));

  for (let i = 0; i < replicas.length; i++) {
    if (processReplica(sync, replicas[i], start + i) && sync.monotonic) return finish();
  }
  for (const pod of condemned) fixClaimOwners(sync, pod);
  for (const pod of condemned) {
    if (processCondemned(sync, pod, firstUnhealthy) && sync.monotonic) return finish();
  }
  if ((set.spec.updateStrategy?.type ?? SET_UPDATE.RollingUpdate) === SET_UPDATE.OnDelete) return finish();
  const replaced = rollingUpdate(sync, replicas);
  if (replaced > 0) {
    const currentReplicas = (status.currentReplicas ?? 0) - replaced;
    const { currentReplicas: _current, ...rest } = status;
    status = { ...rest, ...(currentReplicas > 0 ? { currentReplicas } : {}) };
  }
  return finish();
};
