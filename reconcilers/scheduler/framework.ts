/**
 * The scheduling framework, after kube-scheduler's: Filter plugins say whether a pod may
 * run on a node (a verdict value, never an exception), Score plugins rank the nodes that
 * pass, a profile names which plugins run and with which weights. Everything here is pure:
 * no log, no clock, no randomness, so a decision re-run on the same view is identical.
 */
import type { FilteredNode, Pod } from '../../schemas/index.ts';
import { ReconcileError } from '../errors.ts';
import { type Labels, NAMESPACE_NAME_LABEL } from './affinity.ts';
import type { PluginArgs } from './config/types.ts';
import type { NodeInfo } from './node-info.ts';

export * from './node-info.ts';

// ---------------------------------------------------------------------------------------
// The rest of the cluster

/**
 * What plugins may read of the cluster besides nodes and pods (kube-scheduler's listers):
 * namespace labels for namespaceSelectors, and the objects that own or select a pod for
 * PodTopologySpread's default constraints. A decision is a pure function of it, so it
 * must come from the same view as the NodeInfos.
 */
export interface ClusterLister {
  /** The labels of the namespace `name` (`kubernetes.io/metadata.name` alone when it is not known). */
  namespaceLabels(name: string): Labels;
  /** Objects of `kind` in `namespace` (Service, ReplicationController, ReplicaSet, StatefulSet). */
  list(kind: string, namespace: string): readonly unknown[];
  /** One object, or undefined. */
  get(kind: string, namespace: string, name: string): unknown;
}

/** A cluster with no objects besides nodes and pods (every namespace labelled with its name only). */
export const EMPTY_CLUSTER: ClusterLister = {
  namespaceLabels: (name) => ({ [NAMESPACE_NAME_LABEL]: name }),
  list: () => [],
  get: () => undefined,
};

// ---------------------------------------------------------------------------------------
// Scheduling cycle

/**
 * A value derived from the pod and the cluster once per scheduling cycle and shared by
 * every node's check (kube-scheduler's PreFilter/CycleState), e.g. the pod's parsed
 * requests or the topology domains its anti-affinity excludes.
 */
export interface CycleValue<T> {
  /** For debugging only. */
  readonly name: string;
  /** Where a cycle keeps this value (assigned by {@link defineCycleValue}, unique per value). */
  readonly slot: number;
  readonly compute: (pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext) => T;
}

let nextSlot = 0;

/** Declares a {@link CycleValue}; declare it once at module level and read it with `ctx.get`. */
export function defineCycleValue<T>(
  name: string,
  compute: (pod: Pod, nodeInfos: readonly NodeInfo[], ctx: SchedulingContext) => T,
): CycleValue<T> {
  return { name, slot: nextSlot++, compute };
}

/** What a plugin sees besides the pod and the node it judges: the whole cluster, and the cycle's shared values. */
export interface SchedulingContext {
  /** The pod being scheduled (the `pod` every plugin call receives). */
  readonly pod: Pod;
  /** Every node, e.g. for anti-affinity against pods elsewhere in the topology domain. */
  readonly nodeInfos: readonly NodeInfo[];
  /** The rest of the cluster (namespaces, controllers), from the same view. */
  readonly cluster: ClusterLister;
  /**
   * The caller's log of replaced `nodeInfos` entries (indices, in order, append-only for this
   * array), when it keeps one: lets a plugin that keeps per-node data for the array across
   * cycles visit only the entries replaced since it last looked. Absent: compare every entry.
   */
  readonly changes?: readonly number[] | undefined;
  /** The value of `cycleValue` for this cycle, computed on first use. */
  get<T>(cycleValue: CycleValue<T>): T;
  /**
   * The nodes that passed every filter (kube's PreScore input), for score plugins that
   * are not node-local; throws before filtering is over.
   */
  feasibleNodes(): readonly NodeInfo[];
}

/** A {@link SchedulingContext} the scheduler tells when filtering is over. */
export interface SchedulingCycle extends SchedulingContext {
  setFeasibleNodes(nodes: readonly NodeInfo[]): void;
}

/** Starts a scheduling cycle for `pod` over `nodeInfos`. */
export function createSchedulingContext(
  pod: Pod,
  nodeInfos: readonly NodeInfo[],
  cluster: ClusterLister = EMPTY_CLUSTER,
  changes?: readonly number[],
): SchedulingCycle {
  const values: unknown[] = [];
  const computed: boolean[] = [];
  let feasible: readonly NodeInfo[] | undefined;
  const ctx: SchedulingCycle = {
    pod,
    nodeInfos,
    cluster,
    changes,
    get<T>(cycleValue: CycleValue<T>): T {
      const { slot } = cycleValue;
      if (computed[slot] === true) return values[slot] as T;
      const value = cycleValue.compute(pod, nodeInfos, ctx);
      values[slot] = value;
      computed[slot] = true;
      return value;
    },
    feasibleNodes() {
      if (feasible === undefined) throw new Error('feasibleNodes() read before filtering finished (a score plugin must declare itself not node-local to use it)');
      return feasible;
    },
    setFeasibleNodes(nodes) {
      feasible = nodes;
    },
  };
  return ctx;
}

// ---------------------------------------------------------------------------------------
// Plugins

/**
 * A filter's verdict on one node. "Does not fit" carries kube-scheduler's reason strings,
 * and `unresolvable` when removing pods from the node cannot make it fit (kube's
 * UnschedulableAndUnresolvable: node affinity, taints, a cordon), so preemption skips it.
 */
export type FilterResult =
  | { readonly type: 'fit' }
  | { readonly type: 'unfit'; readonly reasons: readonly [string, ...string[]]; readonly unresolvable?: true };

/** The (shared, frozen) verdict "the pod may run on this node". */
export const FIT: FilterResult = Object.freeze({ type: 'fit' });

/** The verdict "the pod may not run on this node", for these reasons (one histogram entry each). */
export function unfit(reason: string, ...moreReasons: string[]): FilterResult {
  return { type: 'unfit', reasons: [reason, ...moreReasons] };
}

/** The verdict "the pod may not run on this node, whatever pods are removed from it" (kube's UnschedulableAndUnresolvable). */
export function unresolvable(reason: string, ...moreReasons: string[]): FilterResult {
  return { type: 'unfit', reasons: [reason, ...moreReasons], unresolvable: true };
}

/**
 * Whether a plugin's verdict or score on a node depends only on the pod's namespace, labels
 * and spec and on that node's NodeInfo (not on other nodes, nor on the pod's name): `true`
 * always, or a test of the cycle (e.g. "only while no pod has anti-affinity"). Lets a round
 * reuse the outcome for an equal pod on a node whose NodeInfo did not change. Absent means
 * never, which is always correct. A score plugin with `normalize` may be node-local only in
 * cycles where its normalization leaves the scores as they are (e.g. every score is 0).
 */
export type NodeLocality = true | ((ctx: SchedulingContext) => boolean);

/** Decides whether a pod may run on a node. */
export interface FilterPlugin {
  readonly name: string;
  filter(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext): FilterResult;
  readonly nodeLocal?: NodeLocality;
  /** For a plugin that also scores: the filter's locality when it differs from `nodeLocal` (which then covers the score). */
  readonly filterNodeLocal?: NodeLocality;
}

/**
 * Ranks a node that passed every filter: an integer from 0 (worst) to {@link MAX_NODE_SCORE},
 * after `normalize` when the plugin has one (kube's NormalizeScore: the raw scores of every
 * feasible node, in the order of `nodes`, rewritten in place).
 */
export interface ScorePlugin {
  readonly name: string;
  score(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext): number;
  /**
   * `score` of many feasible nodes at once (same results, one per index of `ctx.nodeInfos`,
   * in order), for plugins that score faster in bulk; used where scores are not node-local.
   */
  scoreAll?(pod: Pod, indices: readonly number[], ctx: SchedulingContext): number[];
  normalize?(scores: number[], nodes: readonly NodeInfo[], ctx: SchedulingContext): void;
  readonly nodeLocal?: NodeLocality;
  /** kube's PreScore "Skip": true when the plugin scores 0 on every node this cycle (it is then not called per node). */
  preScoreSkip?(ctx: SchedulingContext): boolean;
}

/** The highest score a plugin may give (kube-scheduler's `MaxNodeScore`). */
export const MAX_NODE_SCORE = 100;

/** kube-scheduler's `DefaultNormalizeScore`: scales scores so the highest is {@link MAX_NODE_SCORE} (all stay 0 when all are 0); `reverse` flips them. */
export function defaultNormalizeScore(scores: number[], reverse: boolean): void {
  let max = 0;
  for (const score of scores) if (score > max) max = score;
  if (max === 0) {
    if (reverse) scores.fill(MAX_NODE_SCORE);
    return;
  }
  for (let index = 0; index < scores.length; index += 1) {
    const scaled = Math.trunc((MAX_NODE_SCORE * (scores[index] as number)) / max);
    scores[index] = reverse ? MAX_NODE_SCORE - scaled : scaled;
  }
}

/**
 * Holds a pod back from scheduling (kube-scheduler's PreEnqueue, e.g. SchedulingGates): a
 * gated pod is not tried at all, and not retried until the pod itself changes.
 */
export interface PreEnqueuePlugin {
  readonly name: string;
  preEnqueue(pod: Pod): PreEnqueueResult;
}

/** Whether a pod may enter the scheduling queue; `reason`/`message` go into its PodScheduled condition. */
export type PreEnqueueResult =
  | { readonly type: 'ready' }
  | { readonly type: 'gated'; readonly reason: string; readonly message: string };

/** Orders the pods waiting to be scheduled (kube-scheduler's QueueSort, e.g. PrioritySort). */
export interface QueueSortPlugin {
  readonly name: string;
  /** Negative when `left` is tried first; a total order (ties broken by name), so rounds are deterministic. */
  compare(left: Pod, right: Pod): number;
}

/** The verdicts of a cycle in which no node fit (kube's NodeToStatusMap), for PostFilter plugins. */
export interface UnschedulableVerdicts {
  /** Every rejected node with the reasons of the first filter that rejected it. */
  readonly filtered: readonly FilteredNode[];
  /** The rejected nodes that removing pods cannot make fit (kube's UnschedulableAndUnresolvable). */
  readonly unresolvable: ReadonlySet<string>;
}

/** What a PostFilter plugin may use besides the pod and the verdicts (kube's framework Handle), all from one view. */
export interface PostFilterHandle {
  /** Every node, as the cycle saw them. */
  readonly nodeInfos: readonly NodeInfo[];
  readonly cluster: ClusterLister;
  /** Pending pods nominated to a node (kube's PodNominator), by node name. */
  readonly nominatedPods: ReadonlyMap<string, readonly Pod[]>;
  /** The decision's time (epoch ms), standing in for the start time of pods that have none. */
  readonly now: number;
  /** The profile's filters for the cycle's pod on `nodeInfo`, which stands in for `nodeInfos[index]` (other pods on the node). */
  filter(index: number, nodeInfo: NodeInfo): FilterResult;
}

/**
 * What a PostFilter plugin decided for a pod no node fits (kube's PostFilterResult and
 * Status): still unschedulable, with the message that follows the filters' summary (and
 * whether to clear the pod's nomination), or nominated to `node` once `victims` are gone.
 */
export type PostFilterResult =
  | { readonly type: 'unschedulable'; readonly message: string; readonly clearNomination: boolean }
  | { readonly type: 'nominated'; readonly node: string; readonly victims: readonly Pod[]; readonly pdbViolations: number };

/** Tries to make a pod that fits nowhere schedulable in a later cycle (kube-scheduler's PostFilter, e.g. DefaultPreemption). */
export interface PostFilterPlugin {
  readonly name: string;
  postFilter(pod: Pod, verdicts: UnschedulableVerdicts, handle: PostFilterHandle): PostFilterResult;
}

/** A plugin implements Filter, Score, or both (like NodeResourcesFit), PreEnqueue, QueueSort, or PostFilter. */
export type Plugin = FilterPlugin | ScorePlugin | (FilterPlugin & ScorePlugin) | PreEnqueuePlugin | QueueSortPlugin | PostFilterPlugin;

/**
 * Creates a fresh plugin instance; a plugin that takes args (kube's `<Plugin>Args`, see
 * `config/types.ts`) gets its profile's, and kube's defaults without them.
 */
export type PluginFactory = (args?: never) => Plugin;

/** Plugin names → factories. */
export type PluginRegistry = Readonly<Record<string, PluginFactory>>;

/** Which plugins a profile runs: filters in order (the first "unfit" decides a node), scores with weights. */
export interface ProfileConfig {
  /** The QueueSort plugin (one, as in kube); without one pods are tried in key order. */
  readonly queueSort?: string;
  /** PreEnqueue plugins, in order (the first that gates a pod decides). */
  readonly preEnqueue?: readonly string[];
  readonly filters: readonly string[];
  readonly scores: readonly { readonly name: string; readonly weight: number }[];
  /** PostFilter plugins, in order, run when no node fits (the first that nominates a node decides). */
  readonly postFilters?: readonly string[];
  /**
   * kube's `percentageOfNodesToScore` (0..100): how many feasible nodes a cycle scores, as a
   * percentage of all nodes; unset or 0 is kube's adaptive default (see `nodes-to-score.ts`).
   */
  readonly percentageOfNodesToScore?: number;
  /** The args of the plugins that take any (absent: kube's defaults). */
  readonly args?: PluginArgs;
}

/** A ready-to-run profile: plugin instances resolved from a registry. */
export interface Profile {
  readonly queueSort?: QueueSortPlugin | undefined;
  readonly preEnqueue: readonly PreEnqueuePlugin[];
  readonly postFilters: readonly PostFilterPlugin[];
  readonly filters: readonly FilterPlugin[];
  readonly scores: readonly { readonly plugin: ScorePlugin; readonly weight: number }[];
  /** kube's `percentageOfNodesToScore`; undefined: the adaptive default. */
  readonly percentageOfNodesToScore?: number | undefined;
}

/** A profile configuration that names an unknown plugin, a plugin in the wrong role, or a bad weight (terminal). */
export class ProfileConfigError extends ReconcileError {
  override readonly name = 'ProfileConfigError';
  constructor(
    message: string,
    /** The plugin name the problem is about. */
    readonly plugin: string,
  ) {
    super(message, false, { plugin });
  }
}

/**
 * Resolves `config` against `registry`, creating one instance per plugin name (shared when
 * a plugin both filters and scores) with its args from `config.args`. Validates eagerly: throws {@link ProfileConfigError}
 * for an unknown or duplicated name, a plugin lacking the role it is listed for, or a
 * weight that is not a positive integer.
 */
export function createProfile(config: ProfileConfig, registry: PluginRegistry): Profile {
  const instances = new Map<string, Plugin>();
  const instance = (name: string): Plugin => {
    const existing = instances.get(name);
    if (existing !== undefined) return existing;
    const factory = Object.hasOwn(registry, name) ? registry[name] : undefined;
    if (factory === undefined) {
      throw new ProfileConfigError(
        `unknown scheduler plugin "${name}" (known: ${Object.keys(registry).sort().join(', ')})`,
        name,
      );
    }
    const args = config.args !== undefined && Object.hasOwn(config.args, name) ? (config.args as Readonly<Record<string, unknown>>)[name] : undefined;
    const plugin = (factory as (args?: unknown) => Plugin)(args);
    instances.set(name, plugin);
    return plugin;
  };
  rejectDuplicates(config.filters, 'filters');
  rejectDuplicates(
    config.scores.map((entry) => entry.name),
    'scores',
  );
  let queueSort: QueueSortPlugin | undefined;
  if (config.queueSort !== undefined) {
    const plugin = instance(config.queueSort);
    if (!('compare' in plugin)) throw new ProfileConfigError(`scheduler plugin "${config.queueSort}" is not a queueSort plugin`, config.queueSort);
    queueSort = plugin;
  }
  rejectDuplicates(config.preEnqueue ?? [], 'preEnqueue');
  const preEnqueue = (config.preEnqueue ?? []).map((name) => {
    const plugin = instance(name);
    if (!('preEnqueue' in plugin)) throw new ProfileConfigError(`scheduler plugin "${name}" is not a preEnqueue plugin`, name);
    return plugin;
  });
  const filters = config.filters.map((name) => {
    const plugin = instance(name);
    if (!('filter' in plugin)) throw new ProfileConfigError(`scheduler plugin "${name}" is not a filter plugin`, name);
    return plugin;
  });
  const scores = config.scores.map(({ name, weight }) => {
    const plugin = instance(name);
    if (!('score' in plugin)) throw new ProfileConfigError(`scheduler plugin "${name}" is not a score plugin`, name);
    if (!Number.isSafeInteger(weight) || weight < 1) {
      throw new ProfileConfigError(`weight of score plugin "${name}" must be a positive integer, got ${weight}`, name);
    }
    return { plugin, weight };
  });
  rejectDuplicates(config.postFilters ?? [], 'postFilters');
  const postFilters = (config.postFilters ?? []).map((name) => {
    const plugin = instance(name);
    if (!('postFilter' in plugin)) throw new ProfileConfigError(`scheduler plugin "${name}" is not a postFilter plugin`, name);
    return plugin;
  });
  const percentage = config.percentageOfNodesToScore;
  if (percentage !== undefined && (!Number.isSafeInteger(percentage) || percentage < 0 || percentage > 100)) {
    throw new ProfileConfigError(`percentageOfNodesToScore must be an integer 0..100, got ${percentage}`, 'percentageOfNodesToScore');
  }
  return { queueSort, preEnqueue, postFilters, filters, scores, percentageOfNodesToScore: percentage };
}

function rejectDuplicates(names: readonly string[], role: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new ProfileConfigError(`scheduler plugin "${name}" is listed twice in ${role}`, name);
    seen.add(name);
  }
}
