/**
 * The replicaset controller: keeps `spec.replicas` active pods for every ReplicaSet,
 * created from its template with deterministic names, and reports its status.
 *
 * Keys are ReplicaSets. A ReplicaSet change maps to itself (its own status writes
 * excepted); a Pod change maps to its controlling ReplicaSet, and an orphan pod to the
 * ReplicaSets whose selector matches it (adoption). The replicationcontroller controller
 * is the same controller over ReplicationControllers ({@link createReplicatedController}).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { matchesLabels } from '../../projections/selectors.ts';
import type { Pod } from '../../schemas/index.ts';
import { withEvents } from '../events/index.ts';
import type { Controller } from '../runtime.ts';
import { decideReplicated, type ReplicaSetDecideOptions } from './decide.ts';
import { narrateReplicated } from './events.ts';
import { controllerRef, keyOf, ownerKey } from './objects.ts';
import { createPodCountsAttachment } from './pod-counts.ts';
import { isPodActive } from './pods.ts';
import { selectorRequirements, type Replicated, type ReplicatedKind } from './replicated.ts';

export * from './decide.ts';
export * from './objects.ts';
export * from './pod-counts.ts';
export * from './pods.ts';
export * from './replicated.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:replicaset`). */
export const REPLICASET_CONTROLLER = 'replicaset';

export interface ReplicaSetControllerOptions extends ReplicaSetDecideOptions {
  /** Periodic resync of every ReplicaSet (ms); off by default (minReadySeconds uses requeues). */
  readonly resyncMs?: number;
}

/** The objects of `kind` (ReplicaSets or ReplicationControllers) a change concerns. */
export const replicatedKeysFor = (kind: ReplicatedKind, change: AppliedChange, view: View): string[] => {
  const object = change.object;
  if (object.kind === kind) return change.topic === 'observed' ? [] : [change.key];
  if (object.kind !== 'Pod') return [];
  const owner = controllerRef(object);
  if (owner) return owner.kind === kind ? [ownerKey(owner, object.metadata.namespace)] : [];
  return change.type === 'DELETED' || !isPodActive(object) ? [] : selectingControllers(kind, object, view);
};

/** The ReplicaSets a change concerns. */
export const replicaSetKeysFor = (change: AppliedChange, view: View): string[] => replicatedKeysFor('ReplicaSet', change, view);

/** Objects of `kind` in the pod's namespace whose (non-empty) selector matches the pod's labels. */
const selectingControllers = (kind: ReplicatedKind, pod: Pod, view: View): string[] =>
  (view.list(kind, pod.metadata.namespace) as Replicated[])
    .filter((rs) => {
      const requirements = selectorRequirements(rs);
      return requirements.length > 0 && matchesLabels(requirements, pod.metadata.labels);
    })
    .map(keyOf);

/**
 * Creates the controller of `kind` named `name` (its consumer group and actor): the same
 * decision and keys for ReplicaSets and ReplicationControllers.
 */
export const createReplicatedController = (
  kind: ReplicatedKind,
  name: string,
  options: ReplicaSetControllerOptions = {},
  /** kube's component of its Events (`replicaset-controller`, `replication-controller`). */
  eventSource = `${name}-controller`,
): Controller => {
  // Pod counts per controller uid from the change feed, for views at the projection's cursor.
  const counts = createPodCountsAttachment();
  return withEvents(
    {
      name,
      keysFor: (change, view) => replicatedKeysFor(kind, change, view),
      initialKeys: (view) => view.list(kind).map(keyOf),
      decide: (key, view, { now }) => decideReplicated(kind, key, view, now, options, counts.countsFor(view)),
      attach: counts.attach,
      ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
    },
    { component: eventSource },
    narrateReplicated,
  );
};

/** Creates the replicaset controller. */
export const createReplicaSetController = (options: ReplicaSetControllerOptions = {}): Controller =>
  createReplicatedController('ReplicaSet', REPLICASET_CONTROLLER, options);
