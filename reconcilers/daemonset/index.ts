/**
 * The daemonset controller: kube-controller-manager's DaemonSetsController. One pod per
 * eligible node (node name, node selector, required node affinity, and the taints its pods
 * do not tolerate with kube's default DaemonSet tolerations), each created with the
 * node-name affinity so the scheduler binds it; RollingUpdate (maxUnavailable, maxSurge)
 * and OnDelete over ControllerRevisions; status.
 *
 * Keys are DaemonSets. A DaemonSet change (its status writes included: the collision count
 * is read back from it) maps to itself; a Pod or ControllerRevision change to its
 * controlling DaemonSet, an orphan pod to the DaemonSets selecting it (adoption); a Node
 * change to every DaemonSet (a node added, relabelled, tainted or gone changes where they run).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { matchesLabels } from '../../projections/selectors.ts';
import type { DaemonSet } from '../../schemas/index.ts';
import { controllerRef, keyOf, ownerKey } from '../replicaset/objects.ts';
import type { Controller } from '../runtime.ts';
import { decideDaemonSet, dsSelector } from './decide.ts';
import { narrateDaemonSet } from './events.ts';
import { withEvents } from '../events/index.ts';

export * from './decide.ts';
export * from './nodes.ts';
export * from './revisions.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:daemonset`). */
export const DAEMONSET_CONTROLLER = 'daemonset';

/** The DaemonSets a change concerns. */
export const daemonSetKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  switch (object.kind) {
    case 'DaemonSet':
      return change.type === 'DELETED' ? [] : [change.key];
    case 'Node':
      return view.list('DaemonSet').map(keyOf);
    case 'ControllerRevision': {
      const owner = controllerRef(object);
      return owner?.kind === 'DaemonSet' ? [ownerKey(owner, object.metadata.namespace)] : [];
    }
    case 'Pod': {
      const owner = controllerRef(object);
      if (owner) return owner.kind === 'DaemonSet' ? [ownerKey(owner, object.metadata.namespace)] : [];
      if (change.type === 'DELETED' || object.metadata.deletionTimestamp) return [];
      return (view.list('DaemonSet', object.metadata.namespace) as DaemonSet[])
        .filter((ds) => dsSelector(ds).length > 0 && matchesLabels(dsSelector(ds), object.metadata.labels))
        .map(keyOf);
    }
    default:
      return [];
  }
};

/** Creates the daemonset controller. */
export const createDaemonSetController = (): Controller =>
  withEvents(
    {
      name: DAEMONSET_CONTROLLER,
      keysFor: daemonSetKeysFor,
      initialKeys: (view) => view.list('DaemonSet').map(keyOf),
      decide: (key, view, { now }) => decideDaemonSet(key, view, now),
    },
    { component: 'daemonset-controller' },
    narrateDaemonSet,
  );
