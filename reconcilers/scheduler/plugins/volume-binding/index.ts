/**
 * VolumeBinding (kube-scheduler 1.32's, pkg/scheduler/framework/plugins/volumebinding):
 *
 * - PreFilter (a cycle value here, refusing every node alike): a claim the pod names that
 *   does not exist (`persistentvolumeclaim "data" not found`), is being deleted, or is
 *   unbound in a class that binds immediately ("pod has unbound immediate
 *   PersistentVolumeClaims") makes the pod unschedulable and unresolvable.
 * - Filter: a claim bound to a volume with node affinity fits only nodes that affinity
 *   matches ("node(s) had volume node affinity conflict"); a volume that is gone refuses
 *   every node; an unbound WaitForFirstConsumer claim fits a node where an Available volume
 *   suits it, or where its class can provision (a provisioner other than
 *   `kubernetes.io/no-provisioner`, and the class's `allowedTopologies` match the node),
 *   and only the node already in its `volume.kubernetes.io/selected-node` annotation once
 *   it has one ("node(s) didn't find available persistent volumes to bind").
 * - PreBind ({@link preBindVolumes}): once the pod is placed, each of its unbound claims
 *   without a selected node gets the annotation naming the chosen node, and the pod is not
 *   bound until its claims are (kube's PreBind waits for the PV controller and the
 *   provisioner; here the pod stays unscheduled and is tried again when a claim changes:
 *   its now-bound volumes' node affinity then keeps it on that node).
 *
 * A pod without claims costs one scan of its volumes per cycle and a cycle-slot read per node.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../../../schemas/index.ts';
import {
  ANN_SELECTED_NODE,
  claimClass,
  claimNamesOf,
  findMatchingVolume,
  hasClaims,
  isDelayBinding,
  NOT_SUPPORTED_PROVISIONER,
  volumeFitsNode,
} from '../../../persistentvolume/volumes.ts';
import { updateCommand } from '../../../replicaset/objects.ts';
import type { EventBody } from '../../../../schemas/index.ts';
import { type ClusterLister, defineCycleValue, FIT, type FilterPlugin, type FilterResult, unresolvable } from '../../framework.ts';

/** This plugin's registry name. */
export const VOLUME_BINDING = 'VolumeBinding';

/** kube's reasons. */
export const UNBOUND_IMMEDIATE_REASON = 'pod has unbound immediate PersistentVolumeClaims';
export const NODE_CONFLICT_REASON = 'node(s) had volume node affinity conflict';
export const BIND_CONFLICT_REASON = "node(s) didn't find available persistent volumes to bind";
export const PV_NOT_EXIST_REASON = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';

/** What the pod's claims ask of a node, worked out once per cycle (kube's PreFilter state). */
type PodVolumes =
  | { readonly type: 'none' }
  | { readonly type: 'refused'; readonly reason: string }
  | {
      readonly type: 'check';
      /** Volumes the pod's bound claims are bound to. */
      readonly bound: readonly PersistentVolume[];
      /** A bound claim's volume is gone. */
      readonly missingVolume: boolean;
      /** Unbound claims of WaitForFirstConsumer classes. */
      readonly delayed: readonly DelayedClaim[];
    };

interface DelayedClaim {
  readonly claim: PersistentVolumeClaim;
  readonly storageClass: StorageClass | undefined;
  readonly selectedNode: string | undefined;
}

const NO_VOLUMES: PodVolumes = { type: 'none' };

/** The StorageClasses by name (listed: the lister's `get` keys by kind name, and a class's key names its group). */
const storageClassOf = (cluster: ClusterLister) => (name: string): StorageClass | undefined =>
  (cluster.list('StorageClass', '') as StorageClass[]).find((storageClass) => storageClass.metadata.name === name);

/** Works out what `pod`'s claims ask (kube's PreFilter with `GetPodVolumeClaims`). */
export const podVolumesOf = (pod: Pod, cluster: ClusterLister): PodVolumes => {
  if (!hasClaims(pod)) return NO_VOLUMES;
  const namespace = pod.metadata.namespace ?? 'default';
  const bound: PersistentVolume[] = [];
  const delayed: DelayedClaim[] = [];
  let missingVolume = false;
  const classOf = storageClassOf(cluster);
  for (const name of claimNamesOf(pod)) {
    const claim = cluster.get('PersistentVolumeClaim', namespace, name) as PersistentVolumeClaim | undefined;
    if (claim === undefined) return { type: 'refused', reason: `persistentvolumeclaim "${name}" not found` };
    if (claim.metadata.deletionTimestamp) return { type: 'refused', reason: `persistentvolumeclaim "${name}" is being deleted` };
    const volumeName = claim.spec?.volumeName;
    if (volumeName) {
      const volume = cluster.get('PersistentVolume', '', volumeName) as PersistentVolume | undefined;
      if (volume === undefined) missingVolume = true;
      else bound.push(volume);
      continue;
    }
    if (!isDelayBinding(claim, classOf)) return { type: 'refused', reason: UNBOUND_IMMEDIATE_REASON };
    delayed.push({ claim, storageClass: classOf(claimClass(claim)), selectedNode: claim.metadata.annotations?.[ANN_SELECTED_NODE] });
  }
  return { type: 'check', bound, missingVolume, delayed };
};

const podVolumes = defineCycleValue('VolumeBinding.podVolumes', (pod, _nodes, ctx) => podVolumesOf(pod, ctx.cluster));

/** Whether `storageClass` may provision a volume on `node` (kube's `checkVolumeProvisions`, without capacity tracking). */
const canProvisionOn = (storageClass: StorageClass | undefined, node: Node): boolean => {
  if (storageClass === undefined || !storageClass.provisioner || storageClass.provisioner === NOT_SUPPORTED_PROVISIONER) return false;
  const terms = storageClass.allowedTopologies ?? [];
  if (terms.length === 0) return true;
  const labels = node.metadata.labels ?? {};
  return terms.some((term) =>
    (term.matchLabelExpressions ?? []).every((requirement) => {
      const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
      return value !== undefined && requirement.values.includes(value);
    }),
  );
};

/** kube's Filter verdict of `volumes` on `node`. */
export const volumesFit = (volumes: PodVolumes, node: Node, cluster: ClusterLister): FilterResult => {
  switch (volumes.type) {
    case 'none':
      return FIT;
    case 'refused':
      return unresolvable(volumes.reason);
    case 'check': {
      if (volumes.missingVolume) return unresolvable(PV_NOT_EXIST_REASON);
      if (volumes.bound.some((volume) => !volumeFitsNode(volume, node))) return unresolvable(NODE_CONFLICT_REASON);
      for (const { claim, storageClass, selectedNode } of volumes.delayed) {
        if (selectedNode !== undefined && selectedNode !== node.metadata.name) return unresolvable(BIND_CONFLICT_REASON);
        const staticVolume = findMatchingVolume(claim, cluster.list('PersistentVolume', '') as PersistentVolume[], node, true);
        if (staticVolume === undefined && !canProvisionOn(storageClass, node)) return unresolvable(BIND_CONFLICT_REASON);
      }
      return FIT;
    }
    default: {
      const unreachable: never = volumes;
      throw new Error(`unexpected pod volumes ${JSON.stringify(unreachable)}`);
    }
  }
};

/** Creates the VolumeBinding filter. */
export function createVolumeBinding(): FilterPlugin {
  return {
    name: VOLUME_BINDING,
    // The claims, volumes and classes are the same for every node of a round (one view).
    nodeLocal: true,
    filter(_pod, nodeInfo, ctx) {
      // The pod's volumes are looked at once per cycle; without claims each node costs a slot read.
      const volumes = ctx.get(podVolumes);
      return volumes === NO_VOLUMES ? FIT : volumesFit(volumes, nodeInfo.node, ctx.cluster);
    },
  };
}

/** What PreBind does for a pod placed on a node: bind it now, or annotate its claims and wait. */
export type PreBindResult =
  | { readonly type: 'bind' }
  | { readonly type: 'wait'; readonly commands: readonly EventBody[] };

const BIND: PreBindResult = { type: 'bind' };

/**
 * kube's PreBind of VolumeBinding for `pod` placed on `node`: with every claim bound, bind;
 * else the selected-node annotation on each unbound claim that lacks it (judged against the
 * claim's version), and wait for the claims to bind.
 */
export const preBindVolumes = (pod: Pod, node: string, cluster: ClusterLister): PreBindResult => {
  if (!hasClaims(pod)) return BIND;
  const namespace = pod.metadata.namespace ?? 'default';
  const commands: EventBody[] = [];
  let unbound = false;
  for (const name of claimNamesOf(pod)) {
    const claim = cluster.get('PersistentVolumeClaim', namespace, name) as PersistentVolumeClaim | undefined;
    // Bound means bound on both sides: the claim names its volume and its status says Bound.
    if (claim === undefined || (claim.spec?.volumeName && claim.status?.phase === 'Bound')) continue;
    unbound = true;
    if (claim.spec?.volumeName) continue;
    if (claim.metadata.annotations?.[ANN_SELECTED_NODE] !== undefined) continue;
    commands.push(updateCommand(claim, { ...claim, metadata: { ...claim.metadata, annotations: { ...claim.metadata.annotations, [ANN_SELECTED_NODE]: node } } }));
  }
  return unbound ? { type: 'wait', commands } : BIND;
};
