/**
 * The `local-path` dynamic provisioner: rancher's local-path-provisioner in the shape of
 * kube's external-provisioner (sig-storage-lib-external-provisioner), as a controller.
 *
 * - Provision: a claim the PersistentVolume controller handed to `rancher.io/local-path`
 *   (its `volume.kubernetes.io/storage-provisioner` annotation), of a class with that
 *   provisioner, not bound, gets the PersistentVolume `pvc-<claim uid>`: a `hostPath`
 *   (type DirectoryOrCreate; a `local` volume with the class parameter `volumeType: local`)
 *   at `<base>/<pv>_<namespace>_<claim>` on one node, pinned there by a required
 *   `kubernetes.io/hostname` node affinity, pre-bound to the claim (`claimRef`), with the
 *   claim's request as capacity, its access and volume modes, the class's reclaim policy and
 *   mount options, and `pv.kubernetes.io/provisioned-by`. The node is the claim's
 *   `volume.kubernetes.io/selected-node` (WaitForFirstConsumer, set by the scheduler); with
 *   Immediate binding, which rancher's provisioner refuses for node-local paths, this picks
 *   the Ready, schedulable node holding the fewest local-path volumes (then by name).
 *   `<base>` is the node's `logplane.io/local-path-dir` annotation (the node agent puts its
 *   `<data>/<node>/local-path` there), else rancher's default `/opt/local-path-provisioner`.
 * - Delete: a volume it provisioned that is Released with reclaim policy Delete is deleted.
 *   Each provisioned volume carries the finalizer `logplane.io/local-path-cleanup`: the node
 *   agent of the volume's node removes the directory, then the finalizer (the part rancher's
 *   helper pods play on the node, for creating and for removing the directory), so the
 *   volume object goes only after its data. A Retain volume stays Released, data kept.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { LOCAL_PATH_CLEANUP_FINALIZER, LOCAL_PATH_DIR_ANNOTATION, LOCAL_PATH_PROVISIONER } from '../../projections/local-path.ts';
import type { Node, PersistentVolume, PersistentVolumeClaim, StorageClass } from '../../schemas/index.ts';
import { withEvents, type Narrator } from '../events/index.ts';
import { deleteCommand, keyOf } from '../replicaset/objects.ts';
import type { Controller, Decision } from '../runtime.ts';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimClass,
  HOSTNAME_LABEL,
  isDelayBinding,
  pinnedNode,
  requestedStorage,
  storageClassKey,
} from '../persistentvolume/volumes.ts';

export { LOCAL_PATH_CLEANUP_FINALIZER, LOCAL_PATH_DIR_ANNOTATION, LOCAL_PATH_PROVISIONER };
/** The controller's name: its consumer group and the actor of its events. */
export const LOCAL_PATH_CONTROLLER = 'local-path-provisioner';
/** rancher's `DEFAULT_PATH_FOR_NON_LISTED_NODES`. */
export const DEFAULT_LOCAL_PATH_DIR = '/opt/local-path-provisioner';

const NONE: Decision = { commands: [] };

/** The name of the volume provisioned for `claim` (external-provisioner's `pvc-<uid>`). */
export const volumeNameFor = (claim: PersistentVolumeClaim): string => `pvc-${claim.metadata.uid ?? ''}`;

/** Whether `claim` is this provisioner's to provision (external-provisioner's shouldProvision, less the node). */
const handedToUs = (claim: PersistentVolumeClaim, storageClass: StorageClass | undefined): storageClass is StorageClass => {
  const annotations = claim.metadata.annotations ?? {};
  const named = annotations[ANN_STORAGE_PROVISIONER] ?? annotations[ANN_BETA_STORAGE_PROVISIONER];
  return named === LOCAL_PATH_PROVISIONER && storageClass?.provisioner === LOCAL_PATH_PROVISIONER && !claim.spec?.volumeName && !claim.metadata.deletionTimestamp;
};

const isReady = (node: Node): boolean => (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** For Immediate binding: the Ready, schedulable node with the fewest local-path volumes, then the first by name. */
export const leastUsedNode = (view: View): Node | undefined => {
  const held = new Map<string, number>();
  for (const volume of view.list('PersistentVolume') as PersistentVolume[]) {
    if (volume.metadata.annotations?.[ANN_PROVISIONED_BY] !== LOCAL_PATH_PROVISIONER) continue;
    const node = pinnedNode(volume);
    if (node !== undefined) held.set(node, (held.get(node) ?? 0) + 1);
  }
  const candidates = (view.list('Node') as Node[]).filter((node) => isReady(node) && !node.spec?.unschedulable);
  candidates.sort((a, b) => (held.get(a.metadata.name) ?? 0) - (held.get(b.metadata.name) ?? 0) || (a.metadata.name < b.metadata.name ? -1 : 1));
  return candidates[0];
};

/** The volume rancher's provisioner makes for `claim` on `node`. */
export const provisionedVolume = (claim: PersistentVolumeClaim, storageClass: StorageClass, node: Node): PersistentVolume => {
  const name = volumeNameFor(claim);
  const namespace = claim.metadata.namespace ?? 'default';
  const base = (node.metadata.annotations?.[LOCAL_PATH_DIR_ANNOTATION] ?? DEFAULT_LOCAL_PATH_DIR).replace(/\/+$/, '');
  const path = `${base}/${name}_${namespace}_${claim.metadata.name}`;
  const hostname = node.metadata.labels?.[HOSTNAME_LABEL] ?? node.metadata.name;
  const local = storageClass.parameters?.volumeType === 'local';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [ANN_PROVISIONED_BY]: LOCAL_PATH_PROVISIONER }, finalizers: [LOCAL_PATH_CLEANUP_FINALIZER] },
    spec: {
      storageClassName: storageClass.metadata.name,
      accessModes: [...(claim.spec?.accessModes ?? [])],
      capacity: { storage: requestedStorage(claim) },
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      ...(storageClass.mountOptions?.length ? { mountOptions: [...storageClass.mountOptions] } : {}),
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace,
        name: claim.metadata.name,
        uid: claim.metadata.uid ?? '',
        ...(claim.metadata.resourceVersion ? { resourceVersion: claim.metadata.resourceVersion } : {}),
      },
      ...(local ? { local: { path } } : { hostPath: { path, type: 'DirectoryOrCreate' } }),
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [hostname] }] }] } },
    },
  };
};

/** Provisions claim `claim` when it is ours and its node is known. */
const provision = (claim: PersistentVolumeClaim, view: View): Decision => {
  const storageClass = view.get(storageClassKey(claimClass(claim))) as StorageClass | undefined;
  if (!handedToUs(claim, storageClass)) return NONE;
  if (view.get(`PersistentVolume//${volumeNameFor(claim)}`)) return NONE;
  const delayBinding = isDelayBinding(claim, () => storageClass);
  const selected = claim.metadata.annotations?.[ANN_SELECTED_NODE];
  if (delayBinding && !selected) return NONE;
  const node = selected ? (view.get(`Node//${selected}`) as Node | undefined) : leastUsedNode(view);
  if (node === undefined) return NONE;
  return { commands: [{ type: 'ObjectCreated', object: provisionedVolume(claim, storageClass, node) }] };
};

/** Deletes volume `volume` when it is ours, Released and to be deleted (the node agent then cleans up). */
const reclaim = (volume: PersistentVolume): Decision => {
  if (volume.metadata.annotations?.[ANN_PROVISIONED_BY] !== LOCAL_PATH_PROVISIONER || volume.metadata.deletionTimestamp) return NONE;
  if (volume.status?.phase !== 'Released' || volume.spec?.persistentVolumeReclaimPolicy !== 'Delete') return NONE;
  return { commands: [deleteCommand(volume)] };
};

/** Decides claim or volume `key`. */
export const decideLocalPath = (key: string, view: View): Decision => {
  const object = view.get(key);
  if (object?.kind === 'PersistentVolumeClaim') return provision(object, view);
  if (object?.kind === 'PersistentVolume') return reclaim(object);
  return NONE;
};

/** external-provisioner's Events on the claim: ProvisioningSucceeded once its volume is created. */
const narrate: Narrator = (key, view, decision, recorder) => {
  const claim = view.get(key);
  if (claim?.kind !== 'PersistentVolumeClaim') return;
  for (const command of decision.commands) {
    if (command.type === 'ObjectCreated' && command.object.kind === 'PersistentVolume') {
      recorder.event(claim, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${command.object.metadata.name}`);
    }
  }
};

const keysFor = (change: AppliedChange): string[] =>
  change.object.kind === 'PersistentVolumeClaim' || change.object.kind === 'PersistentVolume' ? [change.key] : [];

/** Creates the local-path provisioner. */
export const createLocalPathProvisioner = (): Controller =>
  withEvents(
    {
      name: LOCAL_PATH_CONTROLLER,
      keysFor,
      initialKeys: (view) => [...(view.list('PersistentVolumeClaim') as PersistentVolumeClaim[]).map(keyOf), ...(view.list('PersistentVolume') as PersistentVolume[]).map(keyOf)],
      decide: decideLocalPath,
    },
    { component: LOCAL_PATH_PROVISIONER },
    narrate,
  );
