/**
 * What kube's field manager needs to know of a resource: the merge type of its objects
 * (the vendored API document's definition of a built-in kind; a custom resource's CRD
 * version schema) and whether its status is a subresource.
 */
import type { OpenApiSchema } from '../../schemas/avro-gen/openapi.ts';
import { storedKind } from '../../schemas/kinds/registry.ts';
import { schemaOf } from '../custom-resources/admit.ts';
import { customMergeType, mergeTypeOf, type FieldManagerTarget } from '../patch/index.ts';
import { apiVersionOf, type ResourceInfo } from '../resources.ts';

/**
 * The field manager's target for writes to `resource`, with objects in the shape the
 * request's version shows them (`served`: an apply merges there) or as stored (`stored`:
 * an update records its manager on the admitted object). Undefined for a resource
 * logplane keeps no managedFields for (a kind without a definition).
 */
export const fieldManagerTargetOf = (resource: ResourceInfo, shape: 'served' | 'stored'): FieldManagerTarget | undefined => {
  const apiVersion = apiVersionOf(resource);
  if (resource.custom) {
    return {
      type: customMergeType(schemaOf(resource) as OpenApiSchema),
      apiVersion,
      statusIsSubresource: resource.custom.version.subresources?.status !== undefined,
    };
  }
  const definition = shape === 'served' ? resource.definition : storedKind(resource.kind)?.definition;
  if (definition === undefined || definition === '' || storedKind(resource.kind) === undefined) return undefined;
  return { type: mergeTypeOf(definition), apiVersion, statusIsSubresource: true };
};
