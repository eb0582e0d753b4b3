/**
 * The statefulset controller: kube-controller-manager's StatefulSetController. Pods with
 * stable names `<set>-<ordinal>` (from `spec.ordinals.start`), created in order and each
 * Running and Ready before the next (OrderedReady) or all at once (Parallel), removed from
 * the highest ordinal; claims `<template>-<set>-<ordinal>` made before their pod and owned
 * as `persistentVolumeClaimRetentionPolicy` says; `hostname`/`subdomain` from
 * `serviceName`; ControllerRevisions of the template, RollingUpdate (reverse ordinal order,
 * `partition`, `maxUnavailable`) and OnDelete; status.
 *
 * Keys are StatefulSets. A StatefulSet change (its status writes included: the current
 * revision and collision count are read back from it) maps to itself; a Pod, claim or
 * ControllerRevision change to its controlling StatefulSet (a claim owned by a pod to that
 * pod's set), and an orphan pod to the sets it could belong to (adoption).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { matchesLabels } from '../../projections/selectors.ts';
import type { Pod, StatefulSet } from '../../schemas/index.ts';
import { controllerRef, keyOf, ownerKey } from '../replicaset/objects.ts';
import type { Controller } from '../runtime.ts';
import { decideStatefulSet, setSelector } from './decide.ts';
import { isMemberOf } from './pods.ts';
import { narrateStatefulSet } from './events.ts';
import { withEvents } from '../events/index.ts';

export * from './decide.ts';
export * from './pods.ts';
export * from './revisions.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:statefulset`). */
export const STATEFULSET_CONTROLLER = 'statefulset';

const setKeyOfOwner = (object: { readonly metadata: Pod['metadata'] }, view: View): string | undefined => {
  const owner = controllerRef(object as Pod) ?? (object.metadata.ownerReferences ?? []).find((ref) => ref.kind === 'StatefulSet' || ref.kind === 'Pod');
  if (!owner) return undefined;
  if (owner.kind === 'StatefulSet') return ownerKey(owner, object.metadata.namespace);
  if (owner.kind !== 'Pod') return undefined;
  const pod = view.get(ownerKey(owner, object.metadata.namespace));
  const podOwner = pod ? controllerRef(pod) : undefined;
  return podOwner?.kind === 'StatefulSet' ? ownerKey(podOwner, object.metadata.namespace) : undefined;
};

/** The StatefulSets a change concerns. */
export const statefulSetKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  switch (object.kind) {
    case 'StatefulSet':
      return change.type === 'DELETED' ? [] : [change.key];
    case 'ControllerRevision':
    case 'PersistentVolumeClaim': {
      const key = setKeyOfOwner(object, view);
      return key ? [key] : [];
    }
    case 'Pod': {
      const owner = controllerRef(object);
      if (owner) return owner.kind === 'StatefulSet' ? [ownerKey(owner, object.metadata.namespace)] : [];
      if (change.type === 'DELETED' || object.metadata.deletionTimestamp) return [];
      return (view.list('StatefulSet', object.metadata.namespace) as StatefulSet[])
        .filter((set) => isMemberOf(set, object) && setSelector(set).length > 0 && matchesLabels(setSelector(set), object.metadata.labels))
        .map(keyOf);
    }
    default:
      return [];
  }
};

/** Creates the statefulset controller. */
export const createStatefulSetController = (): Controller =>
  withEvents(
    {
      name: STATEFULSET_CONTROLLER,
      keysFor: statefulSetKeysFor,
      initialKeys: (view) => view.list('StatefulSet').map(keyOf),
      decide: (key, view, { now }) => decideStatefulSet(key, view, now),
    },
    { component: 'statefulset-controller' },
    narrateStatefulSet,
  );
