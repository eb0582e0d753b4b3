/**
 * The namespace controller: a deleted namespace is Terminating (the fold adds the
 * `kubernetes` finalizer); this controller deletes everything in it, keeps kube's deletion
 * conditions on it (`./conditions.ts`: what content and which finalizers remain) and, once
 * it is empty and its conditions say so, removes the finalizer so the fold completes the
 * deletion, as kube's does.
 */
import { NAMESPACE_FINALIZER, type AppliedChange, type View } from '../../projections/index.ts';
import { CLUSTER_SCOPED, KINDS, sameJson, type CustomResourceDefinition, type Namespace } from '../../schemas/index.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { storedKind } from '../../schemas/kinds/registry.ts';
import { deletionOf } from '../object-writes.ts';
import { isoTime, statusCommand } from '../replicaset/objects.ts';
import { namespaceConditions, type RemainingContent } from './conditions.ts';
import type { Controller, Decision } from '../runtime.ts';

/** A kind whose objects a namespace holds: its ref, and its resource as kube's conditions name it (`plural.group`). */
interface ContentKind {
  readonly ref: string;
  readonly resource: string;
}

/**
 * Every namespaced kind the log stores (from the kind registry). As kube's namespace
 * controller, content is deleted without an order between kinds: the fold refuses creates
 * in a terminating namespace, so no controller can bring a deleted object back.
 */
const NAMESPACED_KINDS: readonly ContentKind[] = KINDS.filter((kind) => !CLUSTER_SCOPED.has(kind)).map((kind) => {
  const registered = storedKind(kind);
  return { ref: kind, resource: `${registered?.plural ?? kind.toLowerCase()}.${registered?.group ?? ''}` };
});

/** The namespaced custom resources the CRDs in `view` serve. */
const namespacedCustomKinds = (view: View): ContentKind[] =>
  (view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[])
    .filter((crd) => crd.spec.scope === 'Namespaced')
    .map((crd) => ({ ref: kindRefOf(crd.spec.group, crd.spec.names.kind), resource: `${crd.spec.names.plural}.${crd.spec.group}` }));

/**
 * Commands for namespace `key` at `now`: delete its content; once all of it is being
 * deleted, report what remains in its conditions (kube reports what is left after its
 * deletes); once it is empty and its conditions say so, release it.
 */
export const decideNamespace = (key: string, view: View, now: number): Decision => {
  const namespace = view.get(key) as Namespace | undefined;
  if (!namespace?.metadata.deletionTimestamp || !(namespace.metadata.finalizers ?? []).includes(NAMESPACE_FINALIZER)) {
    return { commands: [] };
  }
  const content: RemainingContent[] = [...NAMESPACED_KINDS, ...namespacedCustomKinds(view)].flatMap(({ ref, resource }) =>
    view.list(ref, namespace.metadata.name).map((object) => ({ resource, object })),
  );
  const undeleted = content.filter(({ object }) => !object.metadata.deletionTimestamp);
  if (undeleted.length > 0) return { commands: undeleted.map(({ object }) => deletionOf(object, 'Background')) };
  const conditions = namespaceConditions(namespace.status?.conditions ?? [], content, isoTime(now));
  if (!sameJson(conditions, namespace.status?.conditions ?? [])) return { commands: [statusCommand(namespace, { ...namespace.status, conditions })] };
  if (content.length > 0) return { commands: [] };
  return {
    commands: [
      {
        type: 'ObjectUpdated',
        object: {
          ...namespace,
          metadata: { ...namespace.metadata, finalizers: (namespace.metadata.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER) },
        },
        expectedResourceVersion: namespace.metadata.resourceVersion ?? null,
        subresource: null,
      },
    ],
  };
};

/** A namespace's changes map to it; a change of its content (gone, or its finalizers changed) to it while it terminates. */
const keysFor = (change: AppliedChange, view: View): readonly string[] => {
  if (change.key.startsWith('Namespace/')) return [change.key];
  const namespace = change.object.metadata.namespace;
  if (!namespace) return [];
  return view.get(`Namespace//${namespace}`)?.metadata.deletionTimestamp ? [`Namespace//${namespace}`] : [];
};

/** Creates the namespace controller. */
export const createNamespaceController = (): Controller => ({
  name: 'namespace',
  keysFor,
  initialKeys: (view) =>
    view
      .list('Namespace')
      .filter((n) => n.metadata.deletionTimestamp)
      .map((n) => `Namespace//${n.metadata.name}`),
  decide: (key, view, { now }) => decideNamespace(key, view, now),
});
