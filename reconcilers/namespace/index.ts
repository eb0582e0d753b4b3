/**
 * The namespace controller: a deleted namespace is Terminating (the fold adds the
 * `kubernetes` finalizer); this controller deletes everything in it and, once it is
 * empty, removes the finalizer so the fold completes the deletion, as kube's does.
 */
import { NAMESPACE_FINALIZER, type AppliedChange, type View } from '../../projections/index.ts';
import { CLUSTER_SCOPED, KINDS, type CustomResourceDefinition, type Kind, type Namespace } from '../../schemas/index.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { deletionOf } from '../object-writes.ts';
import type { Controller, Decision } from '../runtime.ts';

/**
 * Every namespaced kind the log stores (from the kind registry). As kube's namespace
 * controller, content is deleted without an order between kinds: the fold refuses creates
 * in a terminating namespace, so no controller can bring a deleted object back.
 */
const NAMESPACED_KINDS: readonly Kind[] = KINDS.filter((kind) => !CLUSTER_SCOPED.has(kind));

/** The kind refs of the namespaced custom resources the CRDs in `view` serve. */
const namespacedCustomRefs = (view: View): string[] =>
  (view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[])
    .filter((crd) => crd.spec.scope === 'Namespaced')
    .map((crd) => kindRefOf(crd.spec.group, crd.spec.names.kind));

/** Commands for namespace `key`: delete its content, or release it when empty. */
export const decideNamespace = (key: string, view: View): Decision => {
  const namespace = view.get(key) as Namespace | undefined;
  if (!namespace?.metadata.deletionTimestamp || !(namespace.metadata.finalizers ?? []).includes(NAMESPACE_FINALIZER)) {
    return { commands: [] };
  }
  const content = [...NAMESPACED_KINDS, ...namespacedCustomRefs(view)].flatMap((kind) => view.list(kind, namespace.metadata.name));
  if (content.length > 0) {
    return { commands: content.filter((o) => !o.metadata.deletionTimestamp).map((object) => deletionOf(object, 'Background')) };
  }
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

const keysFor = (change: AppliedChange, view: View): readonly string[] => {
  if (change.key.startsWith('Namespace/')) return [change.key];
  const namespace = change.object.metadata.namespace;
  if (change.type !== 'DELETED' || !namespace) return [];
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
  decide: (key, view) => decideNamespace(key, view),
});
