/**
 * PodTopologySpread's constraints as kube-scheduler 1.32 reads them
 * (`filterTopologySpreadConstraints`, `buildDefaultConstraints`): defaults applied
 * (minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore), `matchLabelKeys`
 * merged into the selector from the pod's own labels, and, for a pod without constraints
 * of its own, the cluster's system default constraints with a selector built from the
 * Services, ReplicationController, ReplicaSet or StatefulSet that select or own it.
 */
import { labelSelectorToRequirements, type LabelRequirement, matchesLabels } from '../../../../projections/selectors.ts';
import type { LabelSelector, Pod, TopologySpreadConstraint } from '../../../../schemas/index.ts';
import type { ClusterLister, NodeInfo } from '../../framework.ts';
import { namespaceOf } from '../../affinity.ts';
import type { PodTopologySpreadArgs } from '../../config/types.ts';

export const WhenUnsatisfiable = { DoNotSchedule: 'DoNotSchedule', ScheduleAnyway: 'ScheduleAnyway' } as const;
export type WhenUnsatisfiable = (typeof WhenUnsatisfiable)[keyof typeof WhenUnsatisfiable];

export const HOSTNAME_KEY = 'kubernetes.io/hostname';
export const ZONE_KEY = 'topology.kubernetes.io/zone';

/** A constraint ready to evaluate. `selector` undefined selects no pod (a null or malformed labelSelector). */
export interface SpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly selector: readonly LabelRequirement[] | undefined;
  /** A key identifying the selector and namespace, for per-node count caches. */
  readonly selectorKey: string;
  readonly minDomains: number;
  readonly honorNodeAffinity: boolean;
  readonly honorNodeTaints: boolean;
}

/** kube-scheduler's `systemDefaultConstraints` (used while the profile's `defaultingType` is System). */
export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = [
  { topologyKey: HOSTNAME_KEY, whenUnsatisfiable: WhenUnsatisfiable.ScheduleAnyway, maxSkew: 3 },
  { topologyKey: ZONE_KEY, whenUnsatisfiable: WhenUnsatisfiable.ScheduleAnyway, maxSkew: 5 },
];

function requirementsOf(selector: LabelSelector | null | undefined): readonly LabelRequirement[] | undefined {
  if (selector === undefined || selector === null) return undefined;
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? parsed.requirements : undefined;
}

function constraintOf(
  constraint: TopologySpreadConstraint,
  selector: readonly LabelRequirement[] | undefined,
  namespace: string,
): SpreadConstraint {
  return {
    maxSkew: constraint.maxSkew,
    topologyKey: constraint.topologyKey,
    selector,
    selectorKey: `${namespace}\u0000${JSON.stringify(selector ?? null)}`,
    minDomains: constraint.minDomains ?? 1,
    honorNodeAffinity: (constraint.nodeAffinityPolicy ?? 'Honor') === 'Honor',
    honorNodeTaints: (constraint.nodeTaintsPolicy ?? 'Ignore') === 'Honor',
  };
}

/** The pod's own constraints with `action`, selectors merged with `matchLabelKeys`. */
export function ownConstraints(pod: Pod, action: WhenUnsatisfiable): SpreadConstraint[] {
  const labels = pod.metadata.labels ?? {};
  const result: SpreadConstraint[] = [];
  for (const constraint of pod.spec.topologySpreadConstraints ?? []) {
    if (constraint.whenUnsatisfiable !== action) continue;
    let selector = requirementsOf(constraint.labelSelector);
    if (selector !== undefined && (constraint.matchLabelKeys?.length ?? 0) > 0) {
      const extra: LabelRequirement[] = [];
      for (const key of constraint.matchLabelKeys ?? []) {
        const value = Object.hasOwn(labels, key) ? labels[key] : undefined;
        if (value !== undefined) extra.push({ type: 'equals', key, value });
      }
      if (extra.length > 0) selector = [...selector, ...extra];
    }
    result.push(constraintOf(constraint, selector, namespaceOf(pod)));
  }
  return result;
}

interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly controller?: boolean | null;
}

/**
 * kube's `helper.DefaultSelector`: the union of the selectors of the Services in the pod's
 * namespace that select it, plus the selector of the ReplicationController, ReplicaSet or
 * StatefulSet that controls it. Empty when there are none.
 */
export function defaultSelector(pod: Pod, cluster: ClusterLister): LabelRequirement[] {
  const namespace = namespaceOf(pod);
  const labels = pod.metadata.labels ?? {};
  const merged = new Map<string, string>();
  for (const service of cluster.list('Service', namespace) as { spec?: { selector?: Readonly<Record<string, string>> | null } }[]) {
    const selector = service.spec?.selector;
    if (selector === undefined || selector === null) continue;
    const requirements: LabelRequirement[] = Object.entries(selector).map(([key, value]) => ({ type: 'equals', key, value }));
    if (!matchesLabels(requirements, labels)) continue;
    for (const [key, value] of Object.entries(selector)) merged.set(key, value);
  }
  const owners = (pod.metadata.ownerReferences ?? []) as readonly OwnerReference[];
  const owner = owners.find((reference) => reference.controller === true);
  let extra: readonly LabelRequirement[] = [];
  if (owner !== undefined) {
    const key = `${owner.apiVersion}/${owner.kind}`;
    if (key === 'v1/ReplicationController') {
      const rc = cluster.get('ReplicationController', namespace, owner.name) as { spec?: { selector?: Readonly<Record<string, string>> | null } } | undefined;
      for (const [label, value] of Object.entries(rc?.spec?.selector ?? {})) merged.set(label, value);
    } else if (key === 'apps/v1/ReplicaSet' || key === 'apps/v1/StatefulSet') {
      const controller = cluster.get(owner.kind, namespace, owner.name) as { spec?: { selector?: LabelSelector | null } } | undefined;
      extra = requirementsOf(controller?.spec?.selector) ?? [];
    }
  }
  const requirements: LabelRequirement[] = [...merged].map(([key, value]) => ({ type: 'equals', key, value }));
  return [...requirements, ...extra];
}

/**
 * The constraints a profile gives pods that have none of their own (kube's
 * PodTopologySpreadArgs): `System` is kube's {@link SYSTEM_DEFAULT_CONSTRAINTS} (scored
 * without requiring every topology key), `List` the profile's `defaultConstraints`.
 */
export interface SpreadDefaults {
  readonly constraints: readonly TopologySpreadConstraint[];
  readonly systemDefaulted: boolean;
}

export const SYSTEM_DEFAULTS: SpreadDefaults = { constraints: SYSTEM_DEFAULT_CONSTRAINTS, systemDefaulted: true };

/** The defaults of a profile's PodTopologySpreadArgs (kube's when there are none). */
export function spreadDefaultsOf(args: PodTopologySpreadArgs | undefined): SpreadDefaults {
  if (args === undefined || args.defaultingType === 'System') return SYSTEM_DEFAULTS;
  return {
    constraints: args.defaultConstraints.map((c) => ({ maxSkew: c.maxSkew, topologyKey: c.topologyKey, whenUnsatisfiable: c.whenUnsatisfiable })),
    systemDefaulted: false,
  };
}

/**
 * The constraints with `action` that apply to `pod`: its own when it has any constraint at
 * all, else the profile's defaults with the default selector (kube's
 * `buildDefaultConstraints`), none when that selector is empty.
 */
export function constraintsFor(
  pod: Pod,
  action: WhenUnsatisfiable,
  cluster: ClusterLister,
  defaults: SpreadDefaults = SYSTEM_DEFAULTS,
): { constraints: SpreadConstraint[]; systemDefaulted: boolean } {
  if ((pod.spec.topologySpreadConstraints?.length ?? 0) > 0) return { constraints: ownConstraints(pod, action), systemDefaulted: false };
  const { systemDefaulted } = defaults;
  const chosen = defaults.constraints.filter((constraint) => constraint.whenUnsatisfiable === action);
  if (chosen.length === 0) return { constraints: [], systemDefaulted };
  const selector = defaultSelector(pod, cluster);
  if (selector.length === 0) return { constraints: [], systemDefaulted };
  return { constraints: chosen.map((constraint) => constraintOf(constraint, selector, namespaceOf(pod))), systemDefaulted };
}

/** Matching-pod counts per NodeInfo and selector, kept while the NodeInfo object lives (NodeInfos are replaced, never changed). */
const countsByNodeInfo = new WeakMap<NodeInfo, Map<string, number>>();

/**
 * kube's `countPodsMatchSelector`: the pods of the node in the pod's namespace, not being
 * deleted, that the selector matches; 0 for a selector with no requirements (kube's
 * `selector.Empty()`) or none at all.
 */
export function countMatching(nodeInfo: NodeInfo, constraint: SpreadConstraint, namespace: string): number {
  const selector = constraint.selector;
  if (selector === undefined || selector.length === 0 || nodeInfo.pods.length === 0) return 0;
  let cached = countsByNodeInfo.get(nodeInfo);
  if (cached === undefined) {
    cached = new Map();
    countsByNodeInfo.set(nodeInfo, cached);
  }
  const known = cached.get(constraint.selectorKey);
  if (known !== undefined) return known;
  let count = 0;
  for (const pod of nodeInfo.pods) {
    if (pod.metadata.deletionTimestamp || namespaceOf(pod) !== namespace) continue;
    if (matchesLabels(selector, pod.metadata.labels)) count += 1;
  }
  cached.set(constraint.selectorKey, count);
  return count;
}
