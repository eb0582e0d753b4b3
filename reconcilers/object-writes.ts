/**
 * Writes a controller makes to an object it does not know the kind of (the garbage
 * collector's dependents and owners, a namespace's content): a registry kind's object is
 * written with `ObjectUpdated`/`ObjectDeleted`; a custom resource's (a CRD's kind) with
 * `CustomObjectUpdated`/`CustomObjectDeleted`, its content encoded with the Avro schema of
 * its CRD's storage version, registered first (`SchemaRegistered`; the fold takes the same
 * schema twice), as the apiserver writes them.
 */
import { groupOfApiVersion } from '../projections/custom-resources.ts';
import { encodeCustomObject, schemaRegistration, storageCodecOf, type View } from '../projections/index.ts';
import type { CustomResourceDefinition, EventBody, KubeObject, PropagationPolicy } from '../schemas/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../schemas/kinds/domains.ts';
import { kindRefOf } from '../schemas/kinds/refs.ts';
import { kindByGroupKind } from '../schemas/kinds/registry.ts';
import { deleteCommand, keyOf, updateCommand } from './replicaset/objects.ts';

/** Whether `object` is a custom resource's: its group and kind are no registered kind's. */
export const isCustomObject = (object: KubeObject): boolean => kindByGroupKind(groupOfApiVersion(object.apiVersion ?? ''), object.kind) === undefined;

/** The projection key of `object`: `Kind/namespace/name`, or `<Kind>.<group>/namespace/name` for a custom object. */
export const objectKeyOf = (object: KubeObject): string =>
  isCustomObject(object)
    ? `${kindRefOf(groupOfApiVersion(object.apiVersion ?? ''), object.kind)}/${object.metadata.namespace ?? ''}/${object.metadata.name}`
    : keyOf(object);

/** The CustomResourceDefinition in `view` that serves the kind of custom `object`, if any. */
const crdOf = (object: KubeObject, view: View): CustomResourceDefinition | undefined => {
  const group = groupOfApiVersion(object.apiVersion ?? '');
  return (view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[]).find((crd) => crd.spec.group === group && crd.spec.names.kind === object.kind);
};

/** A delete of exactly this incarnation of `object` (uid precondition) with `propagationPolicy` and the default grace period. */
export const deletionOf = (object: KubeObject, propagationPolicy: PropagationPolicy | null): EventBody => {
  const deletion = deleteCommand(object, propagationPolicy);
  return isCustomObject(object) ? { ...deletion, type: 'CustomObjectDeleted', apiVersion: object.apiVersion ?? '' } : deletion;
};

/**
 * The writes that update `current` to `next` (metadata and spec; judged against the
 * resourceVersion `current` was read at). A custom object is written at its CRD's storage
 * version; none when no CRD in `view` serves its kind any more (its objects go with it).
 */
export const updatesOf = (current: KubeObject, next: KubeObject, view: View): EventBody[] => {
  if (!isCustomObject(current)) return [updateCommand(current, next)];
  const crd = crdOf(current, view);
  if (!crd) return [];
  const { codec, version } = storageCodecOf(crd, current.kind);
  const object = encodeCustomObject(next, codec, `${crd.spec.group}/${version}`);
  return [
    schemaRegistration(crd, current.kind, codec, version),
    { type: 'CustomObjectUpdated', object, expectedResourceVersion: current.metadata.resourceVersion ?? null, subresource: null },
  ];
};
