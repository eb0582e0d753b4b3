/**
 * The events of custom-object writes: the object's content encoded with the Avro schema of
 * its CRD's storage version (`schemas/custom/`), and that schema registered in the log first
 * (`SchemaRegistered`, keyed by the CRD, so in the partition of the objects) when this
 * apiserver's projection has not folded it yet. Two apiservers racing both register it;
 * the fold keeps one.
 */
import { encodeCustomObject, isSchemaRegistered, schemaRegistration, storageCodecOf } from '../../projections/index.ts';
import { CustomEncodeError } from '../../schemas/custom/index.ts';
import type { CustomObject, EventBody, KubeObject } from '../../schemas/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { throwIfRejected, type RequestContext, type ServerContext } from '../context.ts';
import { apiErrors, fieldErrors } from '../errors.ts';

/** What a write does to a custom object. */
export type CustomWrite =
  | { readonly type: 'create' }
  | { readonly type: 'update'; readonly expectedResourceVersion: string | null; readonly subresource: 'status' | null };

/**
 * The event body of writing `object` (admitted) of the custom resource the request addresses,
 * after registering its schema when the projection does not hold it. A value the schema
 * cannot hold (an integer beyond 2^53) is a 422 naming the field; nothing is appended then.
 */
export const customObjectBody = async (server: ServerContext, ctx: RequestContext, object: KubeObject, write: CustomWrite): Promise<EventBody> => {
  const { resource } = ctx.target;
  const crd = resource.custom?.crd;
  if (!crd) throw new Error(`${resource.plural} is not a custom resource`);
  const { codec, version } = storageCodecOf(crd, resource.kind);
  let custom: CustomObject;
  try {
    custom = encodeCustomObject(object, codec, `${resource.group}/${version}`);
  } catch (error) {
    if (!(error instanceof CustomEncodeError)) throw error;
    throw apiErrors.invalid(resource, object.metadata.name ?? '', [fieldErrors.invalid(error.path, null, error.detail)]);
  }
  if (!isSchemaRegistered((key) => server.projection.store.allocations.get(key), codec.fingerprint)) {
    const result = await server.writer.submit({
      topic: 'desired',
      key: `${CUSTOM_RESOURCE_DEFINITION_REF}//${crd.metadata.name}`,
      body: schemaRegistration(crd, resource.kind, codec, version),
      identity: ctx.identity,
    });
    throwIfRejected(result, resource, object.metadata.name ?? '');
  }
  switch (write.type) {
    case 'create':
      return { type: 'CustomObjectCreated', object: custom };
    case 'update':
      return { type: 'CustomObjectUpdated', object: custom, expectedResourceVersion: write.expectedResourceVersion, subresource: write.subresource };
  }
};
