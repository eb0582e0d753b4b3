/**
 * The storage-object-in-use protection controllers (kube's pvc-protection and pv-protection,
 * pkg/controller/volume/{pvc,pv}protection). The StorageObjectInUseProtection admission puts
 * `kubernetes.io/pvc-protection` on every new PersistentVolumeClaim and
 * `kubernetes.io/pv-protection` on every new PersistentVolume; a deleted one stays
 * (Terminating) until its controller removes the finalizer:
 *
 * - pvc-protection: once no pod uses the claim. A pod uses it when it is bound to a node,
 *   names the claim in a `persistentVolumeClaim` volume, or has an ephemeral volume whose
 *   claim it is (`<pod>-<volume>`, controlled by the pod), and is not shut down (Succeeded,
 *   Failed, or deleted with grace 0), as kube's podUsesPVC and podIsShutDown judge it.
 * - pv-protection: once the volume is not Bound (`status.phase`).
 *
 * Level-based: a change of a claim, of a volume, or of a pod (to the claims it names) says
 * which keys to look at; `decide` reads the view.
 */
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER, type AppliedChange, type View } from '../../projections/index.ts';
import type { KubeObject, PersistentVolume, PersistentVolumeClaim, Pod } from '../../schemas/index.ts';
import { keyOf, updateCommand } from '../replicaset/objects.ts';
import type { Controller, Decision } from '../runtime.ts';

/** The controllers' names: their consumer groups and the actors of their events. */
export const PVC_PROTECTION_CONTROLLER = 'pvc-protection';
export const PV_PROTECTION_CONTROLLER = 'pv-protection';

const NONE: Decision = { commands: [] };

const awaitsRelease = (object: KubeObject, finalizer: string): boolean =>
  Boolean(object.metadata.deletionTimestamp) && (object.metadata.finalizers ?? []).includes(finalizer);

/** `object` without `finalizer`, as an update judged against the version it was read at. */
const releasing = (object: KubeObject, finalizer: string): Decision => {
  const kept = (object.metadata.finalizers ?? []).filter((name) => name !== finalizer);
  const { finalizers: _dropped, ...metadata } = object.metadata;
  const next = { ...object, metadata: kept.length === 0 ? metadata : { ...metadata, finalizers: kept } } as KubeObject;
  return { commands: [updateCommand(object, next)] };
};

/** kube's podIsShutDown: terminated, or deleted with grace 0 (only waiting to be removed). */
const isShutDown = (pod: Pod): boolean =>
  (Boolean(pod.metadata.deletionTimestamp) && pod.metadata.deletionGracePeriodSeconds === 0) ||
  pod.status?.phase === 'Succeeded' ||
  pod.status?.phase === 'Failed';

/** The names of the claims `pod` references: its `persistentVolumeClaim` volumes' and its ephemeral volumes' (`<pod>-<volume>`). */
export const claimsOf = (pod: Pod): { readonly name: string; readonly ephemeral: boolean }[] =>
  (pod.spec?.volumes ?? []).flatMap((volume) => [
    ...(volume.persistentVolumeClaim ? [{ name: volume.persistentVolumeClaim.claimName, ephemeral: false }] : []),
    ...(volume.ephemeral ? [{ name: `${pod.metadata.name}-${volume.name}`, ephemeral: true }] : []),
  ]);

/** kube's podUsesPVC (with podIsShutDown): whether `pod` keeps `claim` in use. */
export const podUsesClaim = (pod: Pod, claim: PersistentVolumeClaim): boolean => {
  if (!pod.spec?.nodeName || isShutDown(pod)) return false;
  return claimsOf(pod).some(
    ({ name, ephemeral }) =>
      name === claim.metadata.name &&
      (!ephemeral || (claim.metadata.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === pod.metadata.uid)),
  );
};

/** Releases claim `key` when it is being deleted and no pod of its namespace uses it. */
export const decidePvcProtection = (key: string, view: View): Decision => {
  const claim = view.get(key);
  if (claim?.kind !== 'PersistentVolumeClaim' || !awaitsRelease(claim, PVC_PROTECTION_FINALIZER)) return NONE;
  const pods = view.list('Pod', claim.metadata.namespace) as Pod[];
  if (pods.some((pod) => podUsesClaim(pod, claim))) return NONE;
  return releasing(claim, PVC_PROTECTION_FINALIZER);
};

/** A claim's change maps to itself; a pod's to the claims it references. */
export const pvcProtectionKeysFor = (change: AppliedChange): string[] => {
  const object = change.object;
  if (object.kind === 'PersistentVolumeClaim') return [change.key];
  if (object.kind !== 'Pod') return [];
  return claimsOf(object).map(({ name }) => keyOf({ ...object, kind: 'PersistentVolumeClaim', metadata: { name, namespace: object.metadata.namespace } } as KubeObject));
};

/** Creates the pvc-protection controller. */
export const createPvcProtectionController = (): Controller => ({
  name: PVC_PROTECTION_CONTROLLER,
  keysFor: pvcProtectionKeysFor,
  initialKeys: (view) => (view.list('PersistentVolumeClaim') as PersistentVolumeClaim[]).filter((claim) => awaitsRelease(claim, PVC_PROTECTION_FINALIZER)).map(keyOf),
  decide: (key, view) => decidePvcProtection(key, view),
});

/** Releases volume `key` when it is being deleted and not Bound. */
export const decidePvProtection = (key: string, view: View): Decision => {
  const volume = view.get(key);
  if (volume?.kind !== 'PersistentVolume' || !awaitsRelease(volume, PV_PROTECTION_FINALIZER)) return NONE;
  if (volume.status?.phase === 'Bound') return NONE;
  return releasing(volume, PV_PROTECTION_FINALIZER);
};

/** Creates the pv-protection controller. */
export const createPvProtectionController = (): Controller => ({
  name: PV_PROTECTION_CONTROLLER,
  keysFor: (change) => (change.object.kind === 'PersistentVolume' ? [change.key] : []),
  initialKeys: (view) => (view.list('PersistentVolume') as PersistentVolume[]).filter((volume) => awaitsRelease(volume, PV_PROTECTION_FINALIZER)).map(keyOf),
  decide: (key, view) => decidePvProtection(key, view),
});
