/**
 * The built-in scheduler plugins by name, and the default profile (kube-scheduler's
 * default filter order; LeastAllocated and BalancedAllocation scores, weight 1 each).
 */
import { createProfile, type Profile, type ProfileConfig, type PluginRegistry } from '../framework.ts';
import { BALANCED_ALLOCATION, createBalancedAllocation } from './balanced-allocation/index.ts';
import { createNodeAffinity, NODE_AFFINITY } from './node-affinity/index.ts';
import { createNodeName, NODE_NAME } from './node-name/index.ts';
import { createNodeResourcesFit, NODE_RESOURCES_FIT } from './node-resources-fit/index.ts';
import { createNodeUnschedulable, NODE_UNSCHEDULABLE } from './node-unschedulable/index.ts';
import { createPodAntiAffinity, POD_ANTI_AFFINITY } from './pod-anti-affinity/index.ts';
import { createTaintToleration, TAINT_TOLERATION } from './taint-toleration/index.ts';

/** Every built-in plugin, by registry name. */
export const defaultRegistry: PluginRegistry = {
  [NODE_UNSCHEDULABLE]: createNodeUnschedulable,
  [NODE_NAME]: createNodeName,
  [TAINT_TOLERATION]: createTaintToleration,
  [NODE_AFFINITY]: createNodeAffinity,
  [NODE_RESOURCES_FIT]: createNodeResourcesFit,
  [POD_ANTI_AFFINITY]: createPodAntiAffinity,
  [BALANCED_ALLOCATION]: createBalancedAllocation,
};

/** The default profile's plugins. Filters run in this order; a node's first "unfit" is its reason. */
export const defaultProfileConfig: ProfileConfig = {
  filters: [NODE_UNSCHEDULABLE, NODE_NAME, TAINT_TOLERATION, NODE_AFFINITY, NODE_RESOURCES_FIT, POD_ANTI_AFFINITY],
  scores: [
    { name: NODE_RESOURCES_FIT, weight: 1 },
    { name: BALANCED_ALLOCATION, weight: 1 },
  ],
};

/** Creates the default profile from the built-in plugins. */
export function createDefaultProfile(): Profile {
  return createProfile(defaultProfileConfig, defaultRegistry);
}
