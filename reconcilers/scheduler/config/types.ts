/**
 * The scheduler's configuration, shaped like kube-scheduler 1.32's
 * `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration after defaulting (kube's
 * internal config): profiles selected by `spec.schedulerName`, each with its plugin sets
 * per extension point and its plugins' args.
 */
import type { NodeAffinity } from '../../../schemas/index.ts';

/** kube's extension points, in the order of its `Plugins` struct (`multiPoint` last). */
export const EXTENSION_POINTS = [
  'preEnqueue',
  'queueSort',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
  'multiPoint',
] as const;

export type ExtensionPoint = (typeof EXTENSION_POINTS)[number];

/** One plugin of a plugin set; `weight` only means something at `score` and `multiPoint` (unset or 0: 1). */
export interface PluginRef {
  readonly name: string;
  readonly weight?: number | undefined;
}

/** kube's PluginSet: plugins enabled (in order) and disabled (`*` disables every default one). */
export interface PluginSet {
  readonly enabled: readonly PluginRef[];
  readonly disabled: readonly { readonly name: string }[];
}

/** A plugin set per extension point. */
export type Plugins = { readonly [P in ExtensionPoint]: PluginSet };

/** kube's ResourceSpec: a resource a score considers, and its weight. */
export interface ResourceSpec {
  readonly name: string;
  readonly weight: number;
}

/** kube's UtilizationShapePoint: at `utilization` % (0..100), the score `score` (0..10). */
export interface UtilizationShapePoint {
  readonly utilization: number;
  readonly score: number;
}

/** NodeResourcesFit's scoring strategies, as kube names them. */
export const ScoringStrategyType = {
  LeastAllocated: 'LeastAllocated',
  MostAllocated: 'MostAllocated',
  RequestedToCapacityRatio: 'RequestedToCapacityRatio',
} as const;

/** How NodeResourcesFit scores a node (kube's ScoringStrategy). */
export type ScoringStrategy =
  | { readonly type: typeof ScoringStrategyType.LeastAllocated; readonly resources: readonly ResourceSpec[] }
  | { readonly type: typeof ScoringStrategyType.MostAllocated; readonly resources: readonly ResourceSpec[] }
  | {
      readonly type: typeof ScoringStrategyType.RequestedToCapacityRatio;
      readonly resources: readonly ResourceSpec[];
      readonly shape: readonly UtilizationShapePoint[];
    };

/** kube's NodeResourcesFitArgs (ignoredResources and ignoredResourceGroups: resources the filter does not check). */
export interface NodeResourcesFitArgs {
  readonly ignoredResources: readonly string[];
  readonly ignoredResourceGroups: readonly string[];
  readonly scoringStrategy: ScoringStrategy;
}

/** kube's NodeResourcesBalancedAllocationArgs. */
export interface NodeResourcesBalancedAllocationArgs {
  readonly resources: readonly ResourceSpec[];
}

/** One of PodTopologySpread's default constraints (kube's TopologySpreadConstraint without a selector). */
export interface DefaultSpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
}

/** kube's PodTopologySpreadArgs. */
export interface PodTopologySpreadArgs {
  readonly defaultConstraints: readonly DefaultSpreadConstraint[];
  readonly defaultingType: 'System' | 'List';
}

/** kube's InterPodAffinityArgs. */
export interface InterPodAffinityArgs {
  readonly hardPodAffinityWeight: number;
  readonly ignorePreferredTermsOfExistingPods: boolean;
}

/** kube's NodeAffinityArgs: node affinity every pod of the profile gets on top of its own. */
export interface NodeAffinityArgs {
  readonly addedAffinity?: NodeAffinity | undefined;
}

/** kube's DefaultPreemptionArgs: how many candidate nodes the dry run looks for. */
export interface DefaultPreemptionArgs {
  readonly minCandidateNodesPercentage: number;
  readonly minCandidateNodesAbsolute: number;
}

/** The args of each plugin that takes any, by plugin name (kube's `<Name>Args` kinds). */
export interface PluginArgsByName {
  readonly NodeResourcesFit: NodeResourcesFitArgs;
  readonly NodeResourcesBalancedAllocation: NodeResourcesBalancedAllocationArgs;
  readonly PodTopologySpread: PodTopologySpreadArgs;
  readonly InterPodAffinity: InterPodAffinityArgs;
  readonly NodeAffinity: NodeAffinityArgs;
  readonly DefaultPreemption: DefaultPreemptionArgs;
}

export type ArgsPluginName = keyof PluginArgsByName;

/** A profile's plugin args: the defaults of each enabled plugin that takes args, replaced by its pluginConfig entry. */
export type PluginArgs = { readonly [P in ArgsPluginName]?: PluginArgsByName[P] };

/** One profile (kube's KubeSchedulerProfile), defaulted. */
export interface SchedulerProfileConfig {
  readonly schedulerName: string;
  /** Overrides the configuration's `percentageOfNodesToScore` when set. */
  readonly percentageOfNodesToScore?: number | undefined;
  readonly plugins: Plugins;
  readonly pluginArgs: PluginArgs;
}

/** A KubeSchedulerConfiguration, defaulted and validated. */
export interface SchedulerConfiguration {
  /** Accepted and validated as kube does; logplane decides a round's pods in order, so it has no effect. */
  readonly parallelism: number;
  /** 0: kube's adaptive default (see `nodes-to-score.ts`). */
  readonly percentageOfNodesToScore: number;
  /** Accepted and validated as kube does; logplane retries on cluster changes, not on a backoff. */
  readonly podInitialBackoffSeconds: number;
  readonly podMaxBackoffSeconds: number;
  readonly profiles: readonly SchedulerProfileConfig[];
}
