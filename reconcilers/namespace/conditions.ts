/**
 * The status conditions kube's namespace controller keeps on a terminating namespace
 * (`pkg/controller/namespace/deletion/status_condition_utils.go`): five types, in kube's
 * order, each False with kube's "ok" reason and message while all is well, and
 * `NamespaceContentRemaining` / `NamespaceFinalizersRemaining` True, counting per resource
 * and per finalizer, while content waits to go. logplane discovers kinds from its registry
 * and the CRDs in the log and deletes content by commands the fold judges, so discovery,
 * group-version parsing and content deletion never fail here: those stay False.
 */
import type { KubeObject, NamespaceCondition } from '../../schemas/index.ts';

/** The condition types the namespace controller maintains, in kube's order. */
export const NAMESPACE_CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;

type NamespaceConditionType = (typeof NAMESPACE_CONDITION_TYPES)[number];

/** kube's `okReasons` and `okMessages`: each type's False condition. */
const OK: Readonly<Record<NamespaceConditionType, { readonly reason: string; readonly message: string }>> = {
  NamespaceDeletionDiscoveryFailure: { reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
  NamespaceDeletionGroupVersionParsingFailure: { reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
  NamespaceDeletionContentFailure: { reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
  NamespaceContentRemaining: { reason: 'ContentRemoved', message: 'All content successfully removed' },
  NamespaceFinalizersRemaining: { reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
};

/** Content of a terminating namespace that is still there, under its resource name (`pods.`, `deployments.apps`, `crontabs.stable.example.com`). */
export interface RemainingContent {
  readonly resource: string;
  readonly object: KubeObject;
}

/** kube's `ProcessContentTotals`: the True conditions for what remains (none when nothing does). */
const remainingConditions = (remaining: readonly RemainingContent[]): Map<NamespaceConditionType, { reason: string; message: string }> => {
  const byResource = new Map<string, number>();
  const byFinalizer = new Map<string, number>();
  for (const { resource, object } of remaining) {
    byResource.set(resource, (byResource.get(resource) ?? 0) + 1);
    for (const finalizer of object.metadata.finalizers ?? []) byFinalizer.set(finalizer, (byFinalizer.get(finalizer) ?? 0) + 1);
  }
  const failing = new Map<NamespaceConditionType, { reason: string; message: string }>();
  if (byResource.size > 0) {
    const counts = [...byResource].map(([resource, count]) => `${resource} has ${count} resource instances`).sort();
    failing.set('NamespaceContentRemaining', { reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${counts.join(', ')}` });
  }
  if (byFinalizer.size > 0) {
    const counts = [...byFinalizer].map(([finalizer, count]) => `${finalizer} in ${count} resource instances`).sort();
    failing.set('NamespaceFinalizersRemaining', { reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${counts.join(', ')}` });
  }
  return failing;
};

/**
 * kube's `updateConditions`: `current` with each maintained type set from what remains
 * (added when missing; replaced in place when its status, reason or message changed, the
 * transition time moving to `now` only when its status did). Other conditions are kept.
 */
export const namespaceConditions = (current: readonly NamespaceCondition[], remaining: readonly RemainingContent[], now: string): NamespaceCondition[] => {
  const failing = remainingConditions(remaining);
  const conditions = [...current];
  for (const type of NAMESPACE_CONDITION_TYPES) {
    const problem = failing.get(type);
    const next = { type, status: problem ? 'True' : 'False', ...(problem ?? OK[type]) };
    const index = conditions.findIndex((condition) => condition.type === type);
    const old = conditions[index];
    if (old === undefined) {
      conditions.push({ ...next, lastTransitionTime: now });
    } else if (old.status !== next.status || old.reason !== next.reason || old.message !== next.message) {
      conditions[index] = { ...next, ...(old.status === next.status && old.lastTransitionTime !== undefined ? { lastTransitionTime: old.lastTransitionTime } : { lastTransitionTime: now }) };
    }
  }
  return conditions;
};
