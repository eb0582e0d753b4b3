/**
 * The replicaset controller: keeps `spec.replicas` active pods for every ReplicaSet,
 * created from its template with deterministic names, and reports its status.
 *
 * Keys are ReplicaSets. A ReplicaSet change maps to itself (its own status writes
 * excepted); a Pod change maps to its controlling ReplicaSet, and an orphan pod to the
 * ReplicaSets whose selector matches it (adoption).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { Pod, ReplicaSet } from '../../schemas/index.ts';
import type { Controller } from '../runtime.ts';
import { decideReplicaSet, type ReplicaSetDecideOptions } from './decide.ts';
import { controllerRef, keyOf } from './objects.ts';
import { createPodCountsAttachment } from './pod-counts.ts';
import { isPodActive } from './pods.ts';

export * from './decide.ts';
export * from './objects.ts';
export * from './pod-counts.ts';
export * from './pods.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:replicaset`). */
export const REPLICASET_CONTROLLER = 'replicaset';

export interface ReplicaSetControllerOptions extends ReplicaSetDecideOptions {
  /** Periodic resync of every ReplicaSet (ms); off by default (minReadySeconds uses requeues). */
  readonly resyncMs?: number;
}

/** The ReplicaSets a change concerns. */
export const replicaSetKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  switch (object.kind) {
    case 'ReplicaSet':
      return change.topic === 'observed' ? [] : [change.key];
    case 'Pod': {
      const owner = controllerRef(object);
      if (owner) return owner.kind === 'ReplicaSet' ? [`ReplicaSet/${object.metadata.namespace ?? ''}/${owner.name}`] : [];
      return change.type === 'DELETED' || !isPodActive(object) ? [] : selectingReplicaSets(object, view);
    }
    default:
      return [];
  }
};

/** ReplicaSets in the pod's namespace whose (non-empty) selector matches the pod's labels. */
const selectingReplicaSets = (pod: Pod, view: View): string[] =>
  (view.list('ReplicaSet', pod.metadata.namespace) as ReplicaSet[])
    .filter((rs) => {
      const selector = labelSelectorToRequirements(rs.spec.selector);
      return selector.type === 'ok' && selector.requirements.length > 0 && matchesLabels(selector.requirements, pod.metadata.labels);
    })
    .map(keyOf);

/** Creates the replicaset controller. */
export const createReplicaSetController = (options: ReplicaSetControllerOptions = {}): Controller => {
  // Pod counts per ReplicaSet from the change feed, for views at the projection's cursor.
  const counts = createPodCountsAttachment();
  return {
    name: REPLICASET_CONTROLLER,
    keysFor: replicaSetKeysFor,
    initialKeys: (view) => view.list('ReplicaSet').map(keyOf),
    decide: (key, view, { now }) => decideReplicaSet(key, view, now, options, counts.countsFor(view)),
    attach: counts.attach,
    ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
  };
};
