/**
 * The PersistentVolume controller (kube-controller-manager's `persistentvolume-binder`):
 * binds claims to volumes and keeps both phases (see binder.ts). Level-based: a claim's
 * change wakes the claim and the volume it names; a volume's change wakes the volume and
 * the claim its claimRef names, and, when the volume is free, every unbound claim (a new
 * Available volume may suit one, which kube finds on its periodic resync).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { PersistentVolume, PersistentVolumeClaim } from '../../schemas/index.ts';
import { withEvents } from '../events/index.ts';
import { keyOf } from '../replicaset/objects.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import { syncClaim, syncVolume } from './binder.ts';
import { narrateBinding } from './events.ts';
import { ANN_BIND_COMPLETED } from './volumes.ts';

/** The controller's name: its consumer group and the actor of its events. */
export const PV_BINDER_CONTROLLER = 'persistentvolume-binder';

const volumeKey = (name: string): string => `PersistentVolume//${name}`;

const unboundClaimKeys = (view: View): string[] =>
  (view.list('PersistentVolumeClaim') as PersistentVolumeClaim[]).filter((claim) => claim.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined).map(keyOf);

/** The keys a change wakes. */
export const binderKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  if (object.kind === 'PersistentVolumeClaim') {
    const volumeName = object.spec?.volumeName;
    return volumeName ? [change.key, volumeKey(volumeName)] : [change.key];
  }
  if (object.kind !== 'PersistentVolume') return [];
  const ref = object.spec?.claimRef;
  if (ref?.name) return [change.key, `PersistentVolumeClaim/${ref.namespace ?? ''}/${ref.name}`];
  return change.type === 'DELETED' ? [] : [change.key, ...unboundClaimKeys(view)];
};

/** Decides claim or volume `key`. */
export const decideBinding = (key: string, view: View, context: DecideContext): Decision => {
  const object = view.get(key);
  if (object?.kind === 'PersistentVolumeClaim') return syncClaim(object, view);
  if (object?.kind === 'PersistentVolume') return syncVolume(object, view, context);
  return { commands: [] };
};

/** Creates the persistentvolume-binder controller. */
export const createPersistentVolumeBinder = (): Controller =>
  withEvents(
    {
      name: PV_BINDER_CONTROLLER,
      keysFor: binderKeysFor,
      initialKeys: (view) => [...(view.list('PersistentVolume') as PersistentVolume[]).map(keyOf), ...(view.list('PersistentVolumeClaim') as PersistentVolumeClaim[]).map(keyOf)],
      decide: decideBinding,
    },
    { component: 'persistentvolume-controller' },
    narrateBinding,
  );
