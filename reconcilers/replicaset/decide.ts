/**
 * The ReplicaSet decision, pure: from a ReplicaSet and its pods in a view to the commands
 * that bring the number of active pods to `spec.replicas`, and the status it reports.
 *
 * Pod names are deterministic, `<rs>-<5 chars>` where the suffix hashes (rs uid, slot)
 * and the lowest free slots are taken first, so two instances (or a retried round) that
 * decide on the same view create the same names, and the fold rejects the second create
 * as AlreadyExists instead of making a second Pod.
 */
import { matchesLabels } from '../../projections/selectors.ts';
import type { View } from '../../projections/index.ts';
import type { EventBody, Pod, ReplicaSetStatus } from '../../schemas/index.ts';
import type { Decision } from '../runtime.ts';
import {
  canonicalJson,
  controllerRef,
  controllerReferenceTo,
  deleteCommand,
  isBeingDeleted,
  isControlledBy,
  safeHash,
  statusCommand,
  updateCommand,
} from './objects.ts';
import { EMPTY_COUNTS, type PodCounts } from './pod-counts.ts';
import { countActivePods, isPodActive, isPodFinished, nextAvailabilityInMs, podsToDelete, type ActivePodCounts } from './pods.ts';
import { replicatedSpec, selectorRequirements, type Replicated, type ReplicatedKind } from './replicated.ts';

/** Most pods one round creates for one ReplicaSet (kube's `BurstReplicas`). */
export const DEFAULT_BURST_REPLICAS = 500;

/**
 * Pods the first create round of a ReplicaSet with no active pod makes. A round is one
 * append, so kube's slowStartBatch (batches 1, 2, 4, … within one sync) becomes: a round
 * creates at most as many pods as are already active (at least this many), i.e. the batches
 * double round by round up to the burst. The scheduler gets its first pods after a small
 * round instead of after a round of {@link DEFAULT_BURST_REPLICAS} creates.
 */
export const SLOW_START_INITIAL_BATCH = 100;

/** Pods one round creates when `missing` are missing and `active` are active. */
export const createBatchSize = (missing: number, active: number, burst: number): number =>
  Math.min(missing, burst, Math.max(SLOW_START_INITIAL_BATCH, active));

/** Length of the generated part of a pod name (as kube's generateName suffix). */
export const POD_SUFFIX_LENGTH = 5;

/** Name suffixes by (rs uid, slot): a round re-derives the names of every slot below the free ones (a SHA-256 each). */
const suffixes = new Map<string, string>();
const SUFFIX_CACHE_LIMIT = 100_000;

/** The name of the pod in `slot` of a ReplicaSet: stable for a given (rs uid, slot). */
export const podNameForSlot = (rs: Replicated, slot: number): string => {
  const input = `${rs.metadata.uid ?? rs.metadata.name}/${slot}`;
  let suffix = suffixes.get(input);
  if (suffix === undefined) {
    if (suffixes.size >= SUFFIX_CACHE_LIMIT) suffixes.clear();
    suffix = safeHash(input, POD_SUFFIX_LENGTH);
    suffixes.set(input, suffix);
  }
  return `${rs.metadata.name}-${suffix}`;
};

/** Slots searched for free names before giving up (far beyond any real ReplicaSet). */
const MAX_SLOTS = 1_000_000;

/**
 * The names of the `count` lowest slots whose names are not taken (`isTaken` says whether
 * a pod of that name exists, in any state).
 */
export const freePodNames = (rs: Replicated, count: number, isTaken: (name: string) => boolean): string[] => {
  const names: string[] = [];
  const chosen = new Set<string>();
  for (let slot = 0; names.length < count && slot < MAX_SLOTS; slot++) {
    const name = podNameForSlot(rs, slot);
    if (chosen.has(name) || isTaken(name)) continue;
    chosen.add(name);
    names.push(name);
  }
  return names;
};

/** A new pod of `rs` named `name`: the template's labels, annotations and spec, owned by `rs`. */
export const podFromTemplate = (rs: Replicated, name: string): Pod => {
  const template = replicatedSpec(rs).template;
  if (!template) throw new TypeError(`${rs.kind} ${rs.metadata.name} has no pod template`);
  const labels = template.metadata?.labels;
  const annotations = template.metadata?.annotations;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: rs.metadata.namespace ?? 'default',
      ...(labels ? { labels: { ...labels } } : {}),
      ...(annotations ? { annotations: { ...annotations } } : {}),
      ownerReferences: [controllerReferenceTo(rs)],
    },
    spec: structuredClone(template.spec),
  };
};

/** The desired replica count (`spec.replicas`, default 1). */
export const desiredReplicas = (rs: Replicated): number => replicatedSpec(rs).replicas;

/** The status `rs` should report given the pods it controls, at `now`. */
export const replicaSetStatus = (rs: Replicated, pods: readonly Pod[], now: number): ReplicaSetStatus => {
  const spec = replicatedSpec(rs);
  const templateLabels = Object.entries(spec.template?.metadata?.labels ?? {});
  return statusFromCounts(rs, countActivePods(pods, spec.minReadySeconds, now, templateLabels));
};

/** The status of a ReplicaSet and of a ReplicationController have the same fields. */
const statusFromCounts = (rs: Replicated, counts: ActivePodCounts): ReplicaSetStatus => {
  const status: ReplicaSetStatus = {
    replicas: counts.active.length,
    fullyLabeledReplicas: counts.fullyLabeled,
    readyReplicas: counts.ready,
    availableReplicas: counts.available,
  };
  if (rs.metadata.generation !== undefined) status.observedGeneration = rs.metadata.generation;
  if (rs.status?.conditions) status.conditions = rs.status.conditions;
  return status;
};

/** Pods of the view that `rs` controls (by uid), in any state. */
export const controlledPods = (rs: Replicated, view: View): Pod[] =>
  view.ownedBy(rs.metadata.uid ?? '').filter((o): o is Pod => o.kind === 'Pod' && isControlledBy(o, rs.metadata.uid));

/**
 * Pods without a controller that `rs` should adopt: same namespace, matching its (valid,
 * non-empty) selector, alive and not finished. `inNamespace`: the namespace's pods, when
 * the caller has listed them already.
 */
export const adoptablePods = (rs: Replicated, view: View, inNamespace?: readonly Pod[]): Pod[] => {
  const requirements = selectorRequirements(rs);
  if (requirements.length === 0) return [];
  return (inNamespace ?? (view.list('Pod', rs.metadata.namespace) as Pod[])).filter(
    (pod) => !controllerRef(pod) && isPodActive(pod) && matchesLabels(requirements, pod.metadata.labels),
  );
};

/**
 * {@link decideReplicaSet} on the pod counts kept from the change feed (the same commands
 * in the same order): reads only the pods it acts on instead of every pod of the
 * namespace. Only without minReadySeconds (availability is then readiness).
 */
const decideFromCounts = (
  rs: Replicated,
  namespace: string,
  uid: string,
  view: View,
  podCounts: PodCounts,
  options: ReplicaSetDecideOptions,
): Decision => {
  const counts = podCounts.controlled(namespace, uid) ?? EMPTY_COUNTS;
  const status: ReplicaSetStatus = {
    replicas: counts.active,
    fullyLabeledReplicas: podCounts.fullyLabeled(counts, Object.entries(replicatedSpec(rs).template?.metadata?.labels ?? {})),
    readyReplicas: counts.ready,
    availableReplicas: counts.ready,
  };
  if (rs.metadata.generation !== undefined) status.observedGeneration = rs.metadata.generation;
  if (rs.status?.conditions) status.conditions = rs.status.conditions;
  const statusCommands: EventBody[] = canonicalJson(status) === canonicalJson(rs.status) ? [] : [statusCommand(rs, status)];
  if (isBeingDeleted(rs)) return { commands: statusCommands };

  if (podCounts.uncontrolledActive(namespace) > 0) {
    const orphans = adoptablePods(rs, view);
    if (orphans.length > 0) {
      const adoptions = orphans.map((pod) =>
        updateCommand(pod, {
          ...pod,
          metadata: { ...pod.metadata, ownerReferences: [...(pod.metadata.ownerReferences ?? []), controllerReferenceTo(rs)] },
        }),
      );
      return { commands: [...adoptions, ...statusCommands] };
    }
  }

  const commands: EventBody[] =
    counts.finishedNotDeleting > 0
      ? controlledPods(rs, view)
          .filter((pod) => pod.metadata.namespace === namespace && isPodFinished(pod) && !isBeingDeleted(pod))
          .map((pod) => deleteCommand(pod))
      : [];
  const diff = counts.active - desiredReplicas(rs);
  if (diff < 0 && replicatedSpec(rs).template) {
    const count = createBatchSize(-diff, counts.active, options.burstReplicas ?? DEFAULT_BURST_REPLICAS);
    const prefix = `Pod/${namespace}/`;
    const names = freePodNames(rs, count, (name) => view.get(prefix + name) !== undefined);
    for (const name of names) commands.push({ type: 'ObjectCreated', object: podFromTemplate(rs, name) });
  } else if (diff > 0) {
    const active = controlledPods(rs, view).filter((pod) => pod.metadata.namespace === namespace && isPodActive(pod));
    for (const pod of podsToDelete(active, diff)) commands.push(deleteCommand(pod));
  }
  return { commands: [...commands, ...statusCommands] };
};

export interface ReplicaSetDecideOptions {
  /** Most pods created per round (default {@link DEFAULT_BURST_REPLICAS}). */
  readonly burstReplicas?: number;
}

/**
 * Decides ReplicaSet `key`: adopt orphans first (nothing else that round); otherwise
 * delete finished pods, create the missing pods in the lowest free slots or delete the
 * surplus (unscheduled, then not ready, then newest first), and report status when it
 * changed. A ReplicaSet being deleted only reports status.
 */
export const decideReplicaSet = (
  key: string,
  view: View,
  now: number,
  options: ReplicaSetDecideOptions = {},
  podCounts?: PodCounts,
): Decision => decideReplicated('ReplicaSet', key, view, now, options, podCounts);

/**
 * {@link decideReplicaSet} for an object of `kind` (a ReplicaSet or a ReplicationController):
 * the same guarantees for both.
 */
export const decideReplicated = (
  kind: ReplicatedKind,
  key: string,
  view: View,
  now: number,
  options: ReplicaSetDecideOptions = {},
  podCounts?: PodCounts,
): Decision => {
  const rs = view.get(key);
  if (!rs || rs.kind !== kind) return { commands: [] };
  const spec = replicatedSpec(rs);
  if (podCounts && rs.metadata.namespace !== undefined && rs.metadata.uid !== undefined && spec.minReadySeconds <= 0) {
    return decideFromCounts(rs, rs.metadata.namespace, rs.metadata.uid, view, podCounts, options);
  }
  // One listing of the namespace's pods gives the controlled pods, the orphans and the
  // taken names (owner references never cross namespaces); reading every pod up to three
  // times per decision made each round of a 10,000-pod ReplicaSet several times slower.
  const namespace = rs.metadata.namespace ?? 'default';
  const inNamespace = view.list('Pod', rs.metadata.namespace) as Pod[];
  // One pass sorts them into controlled pods and pods without a controller (orphans to adopt).
  const pods: Pod[] = [];
  const uncontrolled: Pod[] = [];
  const uid = rs.metadata.uid;
  for (const pod of inNamespace) {
    const ref = controllerRef(pod);
    if (ref === undefined) uncontrolled.push(pod);
    else if (uid !== undefined && ref.uid === uid) pods.push(pod);
  }
  const counts = countActivePods(pods, spec.minReadySeconds, now, Object.entries(spec.template?.metadata?.labels ?? {}));
  const status = statusFromCounts(rs, counts);
  const statusCommands: EventBody[] = canonicalJson(status) === canonicalJson(rs.status) ? [] : [statusCommand(rs, status)];
  const active = counts.active;
  const waitMs = nextAvailabilityInMs(active, spec.minReadySeconds, now);
  const requeue = waitMs === undefined ? {} : { requeueAfterMs: waitMs };
  if (isBeingDeleted(rs)) return { commands: statusCommands, ...requeue };

  const orphans = adoptablePods(rs, view, uncontrolled);
  if (orphans.length > 0) {
    const adoptions = orphans.map((pod) =>
      updateCommand(pod, {
        ...pod,
        metadata: { ...pod.metadata, ownerReferences: [...(pod.metadata.ownerReferences ?? []), controllerReferenceTo(rs)] },
      }),
    );
    return { commands: [...adoptions, ...statusCommands], ...requeue };
  }

  const commands: EventBody[] = pods
    .filter((pod) => isPodFinished(pod) && !isBeingDeleted(pod))
    .map((pod) => deleteCommand(pod));
  const diff = active.length - desiredReplicas(rs);
  if (diff < 0 && spec.template) {
    const count = createBatchSize(-diff, active.length, options.burstReplicas ?? DEFAULT_BURST_REPLICAS);
    const taken = new Set(inNamespace.filter((pod) => (pod.metadata.namespace ?? 'default') === namespace).map((pod) => pod.metadata.name));
    const names = freePodNames(rs, count, (name) => taken.has(name));
    for (const name of names) commands.push({ type: 'ObjectCreated', object: podFromTemplate(rs, name) });
  } else if (diff > 0) {
    for (const pod of podsToDelete(active, diff)) commands.push(deleteCommand(pod));
  }
  return { commands: [...commands, ...statusCommands], ...requeue };
};
