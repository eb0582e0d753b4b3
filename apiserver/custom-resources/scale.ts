/**
 * The scale subresource of a custom resource, as apiextensions-apiserver serves it
 * (`scaleFromCustomResource`, `scaleUpdater`): an autoscaling/v1 Scale whose `spec.replicas`
 * is the object's value at the version's `specReplicasPath` (0 when absent), its
 * `status.replicas` the value at `statusReplicasPath` (0 when absent), and its
 * `status.selector` the string at `labelSelectorPath`. A write sets `specReplicasPath`; the
 * object is then admitted as any update of it (its schema may bound the count).
 */
import type { CustomResourceDefinitionVersion, KubeObject } from '../../schemas/index.ts';
import type { ResourceInfo } from '../resources.ts';

type Json = Record<string, unknown>;

/** The autoscaling/v1 Scale of `object` (any scalable kind): its identity, and the counts and selector given. */
export const autoscalingScale = (object: KubeObject, specReplicas: number, statusReplicas: number, selector: string) => ({
  kind: 'Scale',
  apiVersion: 'autoscaling/v1',
  metadata: {
    name: object.metadata.name,
    namespace: object.metadata.namespace,
    uid: object.metadata.uid,
    resourceVersion: object.metadata.resourceVersion,
    creationTimestamp: object.metadata.creationTimestamp,
  },
  spec: { replicas: specReplicas },
  status: { replicas: statusReplicas, selector },
});

/** The scale paths of the version a request addresses, when it serves /scale. */
export const customScaleOf = (resource: ResourceInfo): NonNullable<NonNullable<CustomResourceDefinitionVersion['subresources']>['scale']> | undefined =>
  resource.custom?.version.subresources?.scale ?? undefined;

/** `.spec.replicas` → `['spec', 'replicas']` (CRD validation admits only such field paths). */
const fieldsOf = (path: string): string[] => path.split('.').filter((field) => field !== '');

const own = (value: unknown, field: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, field) ? (value as Json)[field] : undefined;

const valueAt = (object: unknown, path: string | null | undefined): unknown => (path ? fieldsOf(path).reduce(own, object) : undefined);

const replicasAt = (object: unknown, path: string | null | undefined): number | undefined => {
  const value = valueAt(object, path);
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
};

/**
 * The Scale of a custom object (as its served version shows it), and whether the object has
 * an integer at `specReplicasPath` (kube answers a GET of /scale without one with a 500).
 */
export const customScale = (resource: ResourceInfo, object: KubeObject) => {
  const paths = customScaleOf(resource);
  const selector = valueAt(object, paths?.labelSelectorPath);
  const specReplicas = replicasAt(object, paths?.specReplicasPath);
  const scale = autoscalingScale(object, specReplicas ?? 0, replicasAt(object, paths?.statusReplicasPath) ?? 0, typeof selector === 'string' ? selector : '');
  return { scale, found: specReplicas !== undefined, specReplicasPath: paths?.specReplicasPath ?? '' };
};

/** A copy of `object` with `replicas` at the version's `specReplicasPath` (objects on the way created). */
export const withCustomReplicas = (resource: ResourceInfo, object: KubeObject, replicas: number): KubeObject => {
  const copy = structuredClone(object) as unknown as Json;
  const fields = fieldsOf(customScaleOf(resource)?.specReplicasPath ?? '.spec.replicas');
  let node = copy;
  for (const field of fields.slice(0, -1)) {
    const next = own(node, field);
    if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      Object.defineProperty(node, field, { value: {}, enumerable: true, writable: true, configurable: true });
    }
    node = node[field] as Json;
  }
  Object.defineProperty(node, fields.at(-1)!, { value: replicas, enumerable: true, writable: true, configurable: true });
  return copy as unknown as KubeObject;
};
