/**
 * The decisions of kube's PersistentVolume controller (`persistentvolume-binder`,
 * pkg/controller/volume/persistentvolume/pv_controller.go), one object at a time and one
 * step per decision, so each write is judged against the version it was read at and the
 * next step is decided on the state the fold accepted:
 *
 * - an unbound claim gets the volume `findMatchingVolume` picks (smallest fit): first the
 *   volume's `claimRef` (annotated `bound-by-controller`), then the claim's `volumeName`
 *   with `bind-completed` (and `bound-by-controller` when the controller chose the volume),
 *   then the claim's status Bound with the volume's capacity and access modes. A claim
 *   pre-bound by `spec.volumeName` gets that volume if it is free or already points back;
 * - a WaitForFirstConsumer claim is left alone until the scheduler put the selected-node
 *   annotation on it; then a class with a provisioner gets it provisioned: the claim is
 *   annotated with the provisioner's name (kube's `provisionClaim` for external ones);
 * - a volume is Available without a claim, Bound while its claim points back, Released
 *   once its claim is gone (or, provisioned with policy Delete, once its claim bound to
 *   another volume), then per reclaim policy: Retain stays Released, Delete of a
 *   provisioned volume is its provisioner's to carry out, Delete of a hand-made volume and
 *   Recycle fail (no in-tree deleter or recycler here), as kube without the plugin.
 */
import type { View } from '../../projections/index.ts';
import type { EventBody, Node, PersistentVolume, PersistentVolumeClaim, PersistentVolumeStatus, PersistentVolumeClaimStatus, StorageClass } from '../../schemas/index.ts';
import { isoTime, statusCommand, updateCommand } from '../replicaset/objects.ts';
import type { Decision, DecideContext } from '../runtime.ts';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimClass,
  findMatchingVolume,
  isDelayBinding,
  isVolumeBoundToClaim,
  NOT_SUPPORTED_PROVISIONER,
  storageClassKey,
} from './volumes.ts';

const NONE: Decision = { commands: [] };

const one = (command: EventBody): Decision => ({ commands: [command] });

const classOf = (view: View) => (name: string): StorageClass | undefined => view.get(storageClassKey(name)) as StorageClass | undefined;

const withAnnotations = <T extends PersistentVolume | PersistentVolumeClaim>(object: T, annotations: Readonly<Record<string, string>>): T => ({
  ...object,
  metadata: { ...object.metadata, annotations: { ...object.metadata.annotations, ...annotations } },
});

/** A status write of `volume` with `phase` (and kube's `lastPhaseTransitionTime`), or nothing when it has that phase. */
const volumePhase = (volume: PersistentVolume, phase: string, now: number, message?: string): Decision => {
  if (volume.status?.phase === phase && (message === undefined || volume.status.message === message)) return NONE;
  const status: PersistentVolumeStatus = { phase, lastPhaseTransitionTime: isoTime(now), ...(message === undefined ? {} : { message }) };
  return one(statusCommand(volume, status));
};

/** The claim's status as bound to `volume` (kube's `updateClaimStatus` with Bound), or nothing when it already says so. */
const claimBoundStatus = (claim: PersistentVolumeClaim, volume: PersistentVolume): Decision => {
  const status: PersistentVolumeClaimStatus = {
    ...claim.status,
    phase: 'Bound',
    accessModes: [...(volume.spec?.accessModes ?? [])],
    capacity: { ...volume.spec?.capacity },
  };
  const current = claim.status;
  if (
    current?.phase === 'Bound' &&
    JSON.stringify(current.accessModes ?? []) === JSON.stringify(status.accessModes) &&
    JSON.stringify(current.capacity ?? {}) === JSON.stringify(status.capacity)
  ) {
    return NONE;
  }
  return one(statusCommand(claim, status));
};

/** kube's `bindVolumeToClaim`: the volume's claimRef names the claim (with its uid), marked as the controller's doing. */
const volumeClaimedBy = (volume: PersistentVolume, claim: PersistentVolumeClaim): Decision => {
  const claimRef = {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    namespace: claim.metadata.namespace ?? 'default',
    name: claim.metadata.name,
    uid: claim.metadata.uid ?? '',
    ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}),
  };
  const annotated = volume.spec?.claimRef ? volume : withAnnotations(volume, { [ANN_BOUND_BY_CONTROLLER]: 'yes' });
  return one(updateCommand(volume, { ...annotated, spec: { ...volume.spec, claimRef } }));
};

/** kube's `bindClaimToVolume`: the claim names the volume and is marked bound (by the controller when it chose the volume). */
const claimNamesVolume = (claim: PersistentVolumeClaim, volume: PersistentVolume): Decision => {
  const chosen = !claim.spec?.volumeName;
  const annotated = withAnnotations(claim, { [ANN_BIND_COMPLETED]: 'yes', ...(chosen ? { [ANN_BOUND_BY_CONTROLLER]: 'yes' } : {}) });
  return one(updateCommand(claim, { ...annotated, spec: { ...claim.spec, volumeName: volume.metadata.name } }));
};

/** The next step of binding `claim` to `volume` (kube's `bind`), one write per decision. */
const bindStep = (claim: PersistentVolumeClaim, volume: PersistentVolume): Decision => {
  if (!isVolumeBoundToClaim(volume, claim) || !volume.spec?.claimRef?.uid) return volumeClaimedBy(volume, claim);
  if (claim.spec?.volumeName !== volume.metadata.name || claim.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined) return claimNamesVolume(claim, volume);
  return claimBoundStatus(claim, volume);
};

/** kube's `syncUnboundClaim`. */
const syncUnboundClaim = (claim: PersistentVolumeClaim, view: View): Decision => {
  const volumeName = claim.spec?.volumeName;
  if (volumeName) {
    // Pre-bound by the user: that volume or none.
    const volume = view.get(`PersistentVolume//${volumeName}`) as PersistentVolume | undefined;
    if (volume === undefined) return NONE;
    if (volume.spec?.claimRef && !isVolumeBoundToClaim(volume, claim)) return NONE;
    return bindStep(claim, volume);
  }
  const delayBinding = isDelayBinding(claim, classOf(view));
  const selectedNode = claim.metadata.annotations?.[ANN_SELECTED_NODE];
  const node = selectedNode ? (view.get(`Node//${selectedNode}`) as Node | undefined) : undefined;
  const volumes = view.list('PersistentVolume') as PersistentVolume[];
  const volume = findMatchingVolume(claim, volumes, node, delayBinding);
  if (volume !== undefined) return bindStep(claim, volume);
  // kube's WaitForFirstConsumer: nothing until the scheduler picked a node.
  if (delayBinding && !selectedNode) return NONE;
  const storageClass = classOf(view)(claimClass(claim));
  if (storageClass === undefined || storageClass.provisioner === NOT_SUPPORTED_PROVISIONER || claim.metadata.deletionTimestamp) return NONE;
  const annotations = claim.metadata.annotations ?? {};
  if (annotations[ANN_STORAGE_PROVISIONER] === storageClass.provisioner && annotations[ANN_BETA_STORAGE_PROVISIONER] === storageClass.provisioner) return NONE;
  // kube's provisionClaim for an external provisioner: name it on the claim; it does the rest.
  return one(updateCommand(claim, withAnnotations(claim, { [ANN_STORAGE_PROVISIONER]: storageClass.provisioner, [ANN_BETA_STORAGE_PROVISIONER]: storageClass.provisioner })));
};

/** kube's `syncBoundClaim`: keep the volume pointing back and the status Bound; Lost when the volume is gone or taken. */
const syncBoundClaim = (claim: PersistentVolumeClaim, view: View): Decision => {
  const volumeName = claim.spec?.volumeName;
  const volume = volumeName ? (view.get(`PersistentVolume//${volumeName}`) as PersistentVolume | undefined) : undefined;
  if (volume === undefined) return claim.status?.phase === 'Lost' ? NONE : one(statusCommand(claim, { ...claim.status, phase: 'Lost' }));
  if (!volume.spec?.claimRef) return volumeClaimedBy(volume, claim);
  if (!isVolumeBoundToClaim(volume, claim)) return claim.status?.phase === 'Lost' ? NONE : one(statusCommand(claim, { ...claim.status, phase: 'Lost' }));
  return claimBoundStatus(claim, volume);
};

/** Decides the claim `claim` (kube's `syncClaim`). */
export const syncClaim = (claim: PersistentVolumeClaim, view: View): Decision =>
  claim.metadata.annotations?.[ANN_BIND_COMPLETED] === undefined ? syncUnboundClaim(claim, view) : syncBoundClaim(claim, view);

/** kube's `reclaimVolume` for a Released volume, as far as this controller carries it out. */
const reclaim = (volume: PersistentVolume, now: number): Decision => {
  const policy = volume.spec?.persistentVolumeReclaimPolicy ?? 'Retain';
  switch (policy) {
    case 'Retain':
      return NONE;
    case 'Delete':
      // A provisioned volume is deleted by its provisioner; kube's in-tree deleters are not built here.
      if (volume.metadata.annotations?.[ANN_PROVISIONED_BY] !== undefined) return NONE;
      return volumePhase(volume, 'Failed', now, 'error getting deleter volume plugin for volume "' + volume.metadata.name + '": no deletable volume plugin matched');
    case 'Recycle':
      return volumePhase(volume, 'Failed', now, 'No recycler plugin found for the volume!');
    default:
      return volumePhase(volume, 'Failed', now, `unknown reclaim policy ${policy}`);
  }
};

/** Decides the volume `volume` (kube's `syncVolume`). */
export const syncVolume = (volume: PersistentVolume, view: View, context: DecideContext): Decision => {
  const ref = volume.spec?.claimRef;
  // No claim, or pre-bound by the user to a claim that has not bound yet: Available.
  if (!ref || !ref.uid) return volume.status?.phase === 'Available' ? NONE : volumePhase(volume, 'Available', context.now);
  const found = view.get(`PersistentVolumeClaim/${ref.namespace ?? ''}/${ref.name ?? ''}`) as PersistentVolumeClaim | undefined;
  const claim = found?.metadata.uid === ref.uid ? found : undefined;
  if (claim === undefined) {
    if (volume.status?.phase === 'Released' || volume.status?.phase === 'Failed') return volume.status.phase === 'Released' ? reclaim(volume, context.now) : NONE;
    return volumePhase(volume, 'Released', context.now);
  }
  const claimVolume = claim.spec?.volumeName;
  // The claim's side is the claim sync's to finish; the volume is Bound as soon as it is claimed (kube's `bind`).
  if (!claimVolume || claimVolume === volume.metadata.name) return volumePhase(volume, 'Bound', context.now);
  // The claim is bound to another volume. Provisioned for it with policy Delete: not needed, so
  // Released (a Failed one stays Failed) and reclaimed, as kube does.
  if (volume.metadata.annotations?.[ANN_PROVISIONED_BY] !== undefined && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
    const phase = volume.status?.phase;
    return phase === 'Released' || phase === 'Failed' ? reclaim(volume, context.now) : volumePhase(volume, 'Released', context.now);
  }
  // Otherwise kube's `unbindVolume`: a binding the controller made is undone; a user's
  // pre-binding loses only the claim's uid (it stays pre-bound, and Available).
  if (volume.metadata.annotations?.[ANN_BOUND_BY_CONTROLLER] === undefined) {
    const { uid: _uid, ...preBinding } = ref;
    return one(updateCommand(volume, { ...volume, spec: { ...volume.spec, claimRef: preBinding } }));
  }
  const { [ANN_BOUND_BY_CONTROLLER]: _dropped, ...annotations } = volume.metadata.annotations;
  const { claimRef: _ref, ...spec } = volume.spec ?? {};
  return one(updateCommand(volume, { ...volume, metadata: { ...volume.metadata, annotations }, spec }));
};
