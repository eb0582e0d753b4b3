/**
 * The scheduling framework, after kube-scheduler's: Filter plugins say whether a pod may
 * run on a node (a verdict value, never an exception), Score plugins rank the nodes that
 * pass, a profile names which plugins run and with which weights. Everything here is pure:
 * no log, no clock, no randomness, so a decision re-run on the same view is identical.
 */
import type { Node, Pod } from '../../schemas/index.ts';
import { ReconcileError } from '../errors.ts';
import { type AffinityTerm, parseAffinityTerm, requiredAntiAffinityTerms } from './affinity.ts';
import {
  add,
  computePodRequests,
  nodeAllocatable,
  type PodResources,
  type ResourceAmounts,
} from './resources.ts';

// ---------------------------------------------------------------------------------------
// Node state

/** A node with the aggregates the plugins need, precomputed once per node, not per pod. */
export interface NodeInfo {
  readonly node: Node;
  /** The pods bound to the node, until they are deleted. */
  readonly pods: readonly Pod[];
  /** Sum of the pods' requests; `pods` is their count. */
  readonly requested: ResourceAmounts;
  /** Sum of the pods' requests with defaults for unset ones (kube-scheduler's `NonZeroRequested`), for scoring. */
  readonly nonZeroRequested: PodResources;
  /** What the node offers pods (`status.allocatable`, else `status.capacity`). */
  readonly allocatable: ResourceAmounts;
  /** The subset of `pods` with required pod anti-affinity terms, parsed (lets anti-affinity skip the rest). */
  readonly podsWithRequiredAntiAffinity: readonly PodWithAntiAffinity[];
}

/** A placed pod with its required anti-affinity terms parsed. */
export interface PodWithAntiAffinity {
  readonly pod: Pod;
  readonly terms: readonly AffinityTerm[];
}

/** The pod with its parsed anti-affinity terms, or undefined when it has none. */
function withAntiAffinity(pod: Pod): PodWithAntiAffinity | undefined {
  const terms = requiredAntiAffinityTerms(pod);
  return terms.length === 0 ? undefined : { pod, terms: terms.map((term) => parseAffinityTerm(term, pod)) };
}

/**
 * What one pod adds to its node's aggregates. Unlike kube-scheduler, a finished (Succeeded
 * or Failed) pod still counts until it is deleted: the fold admits bindings from the desired
 * topic alone, where a pod's phase is not visible, so it counts every pod bound to the node,
 * and the scheduler must not offer room the fold would refuse. (ReplicaSets delete their
 * finished pods, which frees the room.)
 */
function contributionOf(pod: Pod): { requested: PodResources; nonZeroRequested: PodResources } {
  const requests = computePodRequests(pod);
  return requests.type === 'ok' ? requests.requests : { requested: NOTHING, nonZeroRequested: NOTHING };
}

const NOTHING: PodResources = { cpuMilli: 0, memoryBytes: 0 };

/** What a placed pod adds to its node, derived once per pod version (a NodeInfo cache keeps these across rounds). */
export interface PlacedPod {
  readonly pod: Pod;
  readonly requested: PodResources;
  readonly nonZeroRequested: PodResources;
  /** Its parsed required anti-affinity terms, when it has any. */
  readonly antiAffinity: PodWithAntiAffinity | undefined;
}

/** Derives what `pod` adds to the node it is bound to. */
export function placedPod(pod: Pod): PlacedPod {
  const contribution = contributionOf(pod);
  return { pod, requested: contribution.requested, nonZeroRequested: contribution.nonZeroRequested, antiAffinity: withAntiAffinity(pod) };
}

/**
 * Builds the NodeInfo of `node` from the pods bound to it (finished ones included, see
 * `contributionOf`). A pod whose requests cannot be parsed (the apiserver rejects those)
 * holds none.
 */
export function createNodeInfo(node: Node, pods: readonly Pod[]): NodeInfo {
  return nodeInfoFromPlaced(node, pods.map(placedPod), nodeAllocatable(node));
}

/** `createNodeInfo` from pods whose contributions are already derived (the sums are integers, so any order gives the same totals). */
export function nodeInfoFromPlaced(node: Node, placed: readonly PlacedPod[], allocatable: ResourceAmounts): NodeInfo {
  const counted: Pod[] = [];
  const antiAffinityPods: PodWithAntiAffinity[] = [];
  let cpuMilli = 0;
  let memoryBytes = 0;
  let nonZeroCpuMilli = 0;
  let nonZeroMemoryBytes = 0;
  for (const entry of placed) {
    counted.push(entry.pod);
    if (entry.antiAffinity !== undefined) antiAffinityPods.push(entry.antiAffinity);
    cpuMilli += entry.requested.cpuMilli;
    memoryBytes += entry.requested.memoryBytes;
    nonZeroCpuMilli += entry.nonZeroRequested.cpuMilli;
    nonZeroMemoryBytes += entry.nonZeroRequested.memoryBytes;
  }
  return nodeInfoOf(
    node,
    counted,
    { cpuMilli, memoryBytes },
    { cpuMilli: nonZeroCpuMilli, memoryBytes: nonZeroMemoryBytes },
    allocatable,
    antiAffinityPods,
  );
}

/** Every NodeInfo is built here, so all share one object shape (keeps the per-node hot path monomorphic). */
function nodeInfoOf(
  node: Node,
  pods: readonly Pod[],
  requested: PodResources,
  nonZeroRequested: PodResources,
  allocatable: ResourceAmounts,
  podsWithRequiredAntiAffinity: readonly PodWithAntiAffinity[],
): NodeInfo {
  return {
    node,
    pods,
    requested: { cpuMilli: requested.cpuMilli, memoryBytes: requested.memoryBytes, pods: pods.length },
    nonZeroRequested: { cpuMilli: nonZeroRequested.cpuMilli, memoryBytes: nonZeroRequested.memoryBytes },
    allocatable,
    podsWithRequiredAntiAffinity,
  };
}

/** Groups `pods` by `spec.nodeName` and builds one NodeInfo per node; pods on unknown nodes are ignored. */
export function buildNodeInfos(nodes: readonly Node[], pods: readonly Pod[]): NodeInfo[] {
  const podsByNode = new Map<string, Pod[]>(nodes.map((node) => [node.metadata.name, []]));
  for (const pod of pods) {
    const nodeName = pod.spec.nodeName;
    if (nodeName) podsByNode.get(nodeName)?.push(pod);
  }
  return nodes.map((node) => createNodeInfo(node, podsByNode.get(node.metadata.name) ?? []));
}

/**
 * Returns a new NodeInfo with `pod` counted on the node, as kube-scheduler "assumes" a pod
 * it just bound so the next decision sees the capacity taken before the log says so.
 */
export function assumePod(nodeInfo: NodeInfo, pod: Pod): NodeInfo {
  const contribution = contributionOf(pod);
  const antiAffinityPod = withAntiAffinity(pod);
  return nodeInfoOf(
    nodeInfo.node,
    [...nodeInfo.pods, pod],
    add(nodeInfo.requested, contribution.requested),
    add(nodeInfo.nonZeroRequested, contribution.nonZeroRequested),
    nodeInfo.allocatable,
    antiAffinityPod === undefined
      ? nodeInfo.podsWithRequiredAntiAffinity
      : [...nodeInfo.podsWithRequiredAntiAffinity, antiAffinityPod],
  );
}

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
  readonly compute: (pod: Pod, nodeInfos: readonly NodeInfo[]) => T;
}

let nextSlot = 0;

/** Declares a {@link CycleValue}; declare it once at module level and read it with `ctx.get`. */
export function defineCycleValue<T>(name: string, compute: (pod: Pod, nodeInfos: readonly NodeInfo[]) => T): CycleValue<T> {
  return { name, slot: nextSlot++, compute };
}

/** What a plugin sees besides the pod and the node it judges: the whole cluster, and the cycle's shared values. */
export interface SchedulingContext {
  /** The pod being scheduled (the `pod` every plugin call receives). */
  readonly pod: Pod;
  /** Every node, e.g. for anti-affinity against pods elsewhere in the topology domain. */
  readonly nodeInfos: readonly NodeInfo[];
  /** The value of `cycleValue` for this cycle, computed on first use. */
  get<T>(cycleValue: CycleValue<T>): T;
}

/** Starts a scheduling cycle for `pod` over `nodeInfos`. */
export function createSchedulingContext(pod: Pod, nodeInfos: readonly NodeInfo[]): SchedulingContext {
  const values: unknown[] = [];
  const computed: boolean[] = [];
  return {
    pod,
    nodeInfos,
    get<T>(cycleValue: CycleValue<T>): T {
      const { slot } = cycleValue;
      if (computed[slot] === true) return values[slot] as T;
      const value = cycleValue.compute(pod, nodeInfos);
      values[slot] = value;
      computed[slot] = true;
      return value;
    },
  };
}

// ---------------------------------------------------------------------------------------
// Plugins

/** A filter's verdict on one node. "Does not fit" carries kube-scheduler's reason strings. */
export type FilterResult =
  | { readonly type: 'fit' }
  | { readonly type: 'unfit'; readonly reasons: readonly [string, ...string[]] };

/** The (shared, frozen) verdict "the pod may run on this node". */
export const FIT: FilterResult = Object.freeze({ type: 'fit' });

/** The verdict "the pod may not run on this node", for these reasons (one histogram entry each). */
export function unfit(reason: string, ...moreReasons: string[]): FilterResult {
  return { type: 'unfit', reasons: [reason, ...moreReasons] };
}

/**
 * Whether a plugin's verdict or score on a node depends only on the pod's namespace, labels
 * and spec and on that node's NodeInfo (not on other nodes, nor on the pod's name): `true`
 * always, or a test of the cycle (e.g. "only while no pod has anti-affinity"). Lets a round
 * reuse the outcome for an equal pod on a node whose NodeInfo did not change. Absent means
 * never, which is always correct.
 */
export type NodeLocality = true | ((ctx: SchedulingContext) => boolean);

/** Decides whether a pod may run on a node. */
export interface FilterPlugin {
  readonly name: string;
  filter(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext): FilterResult;
  readonly nodeLocal?: NodeLocality;
}

/** Ranks a node that passed every filter: an integer from 0 (worst) to {@link MAX_NODE_SCORE}. */
export interface ScorePlugin {
  readonly name: string;
  score(pod: Pod, nodeInfo: NodeInfo, ctx: SchedulingContext): number;
  readonly nodeLocal?: NodeLocality;
}

/** The highest score a plugin may give (kube-scheduler's `MaxNodeScore`). */
export const MAX_NODE_SCORE = 100;

/** A plugin implements Filter, Score, or both (like NodeResourcesFit). */
export type Plugin = FilterPlugin | ScorePlugin | (FilterPlugin & ScorePlugin);

/** Creates a fresh plugin instance. */
export type PluginFactory = () => Plugin;

/** Plugin names → factories. */
export type PluginRegistry = Readonly<Record<string, PluginFactory>>;

/** Which plugins a profile runs: filters in order (the first "unfit" decides a node), scores with weights. */
export interface ProfileConfig {
  readonly filters: readonly string[];
  readonly scores: readonly { readonly name: string; readonly weight: number }[];
}

/** A ready-to-run profile: plugin instances resolved from a registry. */
export interface Profile {
  readonly filters: readonly FilterPlugin[];
  readonly scores: readonly { readonly plugin: ScorePlugin; readonly weight: number }[];
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
 * a plugin both filters and scores). Validates eagerly: throws {@link ProfileConfigError}
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
    const plugin = factory();
    instances.set(name, plugin);
    return plugin;
  };
  rejectDuplicates(config.filters, 'filters');
  rejectDuplicates(
    config.scores.map((entry) => entry.name),
    'scores',
  );
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
  return { filters, scores };
}

function rejectDuplicates(names: readonly string[], role: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new ProfileConfigError(`scheduler plugin "${name}" is listed twice in ${role}`, name);
    seen.add(name);
  }
}
