/**
 * The built-in scheduler plugins by name, and the default profile: kube-scheduler 1.32's
 * default plugins as far as they are built here, in its filter order and with its score
 * weights (TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
 * NodeResourcesBalancedAllocation 1, ImageLocality 1), and DefaultPreemption as its PostFilter.
 */
import { createProfile, type Profile, type ProfileConfig, type PluginRegistry } from '../framework.ts';
import { BALANCED_ALLOCATION, createBalancedAllocation } from './balanced-allocation/index.ts';
import { createDefaultPreemption, DEFAULT_PREEMPTION } from './default-preemption/index.ts';
import { createImageLocality, IMAGE_LOCALITY } from './image-locality/index.ts';
import { createInterPodAffinity, INTER_POD_AFFINITY } from './inter-pod-affinity/index.ts';
import { createNodeAffinity, NODE_AFFINITY } from './node-affinity/index.ts';
import { createNodeName, NODE_NAME } from './node-name/index.ts';
import { createNodePorts, NODE_PORTS } from './node-ports/index.ts';
import { createNodeResourcesFit, NODE_RESOURCES_FIT } from './node-resources-fit/index.ts';
import { createNodeUnschedulable, NODE_UNSCHEDULABLE } from './node-unschedulable/index.ts';
import { createPodTopologySpread, POD_TOPOLOGY_SPREAD } from './pod-topology-spread/index.ts';
import { createPrioritySort, PRIORITY_SORT } from './priority-sort/index.ts';
import { createSchedulingGates, SCHEDULING_GATES } from './scheduling-gates/index.ts';
import { createTaintToleration, TAINT_TOLERATION } from './taint-toleration/index.ts';
import { createVolumeBinding, VOLUME_BINDING } from './volume-binding/index.ts';

/** Every built-in plugin, by registry name. */
export const defaultRegistry: PluginRegistry = {
  [PRIORITY_SORT]: createPrioritySort,
  [SCHEDULING_GATES]: createSchedulingGates,
  [NODE_UNSCHEDULABLE]: createNodeUnschedulable,
  [NODE_NAME]: createNodeName,
  [TAINT_TOLERATION]: createTaintToleration,
  [NODE_AFFINITY]: createNodeAffinity,
  [NODE_PORTS]: createNodePorts,
  [NODE_RESOURCES_FIT]: createNodeResourcesFit,
  [POD_TOPOLOGY_SPREAD]: createPodTopologySpread,
  [INTER_POD_AFFINITY]: createInterPodAffinity,
  [BALANCED_ALLOCATION]: createBalancedAllocation,
  [IMAGE_LOCALITY]: createImageLocality,
  [DEFAULT_PREEMPTION]: createDefaultPreemption,
  [VOLUME_BINDING]: createVolumeBinding,
};

/** The default profile's plugins. Filters run in this order; a node's first "unfit" is its reason. */
export const defaultProfileConfig: ProfileConfig = {
  queueSort: PRIORITY_SORT,
  preEnqueue: [SCHEDULING_GATES],
  filters: [NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, NODE_PORTS, NODE_RESOURCES_FIT, VOLUME_BINDING, POD_TOPOLOGY_SPREAD, INTER_POD_AFFINITY],
  scores: [
    { name: TAINT_TOLERATION, weight: 3 },
    { name: NODE_AFFINITY, weight: 2 },
    { name: NODE_RESOURCES_FIT, weight: 1 },
    { name: POD_TOPOLOGY_SPREAD, weight: 2 },
    { name: INTER_POD_AFFINITY, weight: 2 },
    { name: BALANCED_ALLOCATION, weight: 1 },
    { name: IMAGE_LOCALITY, weight: 1 },
  ],
  postFilters: [DEFAULT_PREEMPTION],
};

/** Creates the default profile from the built-in plugins. */
export function createDefaultProfile(): Profile {
  return createProfile(defaultProfileConfig, defaultRegistry);
}
