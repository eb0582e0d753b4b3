/**
 * The events of custom-object writes: the object's content encoded with the Avro schema of
 * its CRD's storage version (`schemas/custom/`), and that schema registered in the log first
 * (`SchemaRegistered`, keyed by the CRD, so in the partition of the objects) when this
 * apiserver's projection has not folded it yet. Two apiservers racing both register it;
 * the fold keeps one.
 */
import { isSchemaRegistered } from '../../projections/index.ts';
import { createCustomObjectCodec, CustomEncodeError, customContentSchema, type CustomObjectCodec, type StructuralSchema } from '../../schemas/custom/index.ts';
import type { EventBody, KubeObject } from '../../schemas/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { throwIfRejected, type RequestContext, type ServerContext } from '../context.ts';
import { apiErrors, fieldErrors } from '../errors.ts';
import type { ResourceInfo } from '../resources.ts';
import { storageVersionOf, versionSchema } from './conversion.ts';

/** Compiled codecs by CRD uid, resourceVersion and version; dropped whole past this many. */
const CODECS_KEPT = 256;
const codecs = new Map<string, CustomObjectCodec>();

/** The codec of the CRD's storage version, which every write of `resource`'s objects is stored at. */
const storageCodecOf = (resource: ResourceInfo): { codec: CustomObjectCodec; version: string } => {
  const custom = resource.custom;
  if (!custom) throw new Error(`${resource.plural} is not a custom resource`);
  const storage = storageVersionOf(custom.crd) ?? custom.version;
  const cacheKey = `${custom.crd.metadata.uid}/${custom.crd.metadata.resourceVersion}/${storage.name}`;
  let codec = codecs.get(cacheKey);
  if (codec === undefined) {
    const schema = customContentSchema({ group: resource.group, version: storage.name, kind: resource.kind, schema: versionSchema(storage) as StructuralSchema });
    codec = createCustomObjectCodec(schema);
    if (codecs.size >= CODECS_KEPT) codecs.clear();
    codecs.set(cacheKey, codec);
  }
  return { codec, version: storage.name };
};

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
  const { codec, version } = storageCodecOf(resource);
  const { apiVersion: _apiVersion, kind: _kind, metadata, ...content } = object as unknown as Record<string, unknown>;
  let bytes: Buffer;
  try {
    bytes = codec.encode(content);
  } catch (error) {
    if (!(error instanceof CustomEncodeError)) throw error;
    throw apiErrors.invalid(resource, object.metadata.name ?? '', [fieldErrors.invalid(error.path, null, error.detail)]);
  }
  if (!isSchemaRegistered((key) => server.projection.store.allocations.get(key), codec.fingerprint)) {
    const crd = resource.custom!.crd;
    const result = await server.writer.submit({
      topic: 'desired',
      key: `${CUSTOM_RESOURCE_DEFINITION_REF}//${crd.metadata.name}`,
      body: {
        type: 'SchemaRegistered',
        resource: crd.metadata.name ?? '',
        group: resource.group,
        version,
        kind: resource.kind,
        fingerprint: codec.fingerprint,
        schema: JSON.stringify(codec.schema),
      },
      identity: ctx.identity,
    });
    throwIfRejected(result, resource, object.metadata.name ?? '');
  }
  const custom = { apiVersion: `${resource.group}/${version}`, kind: resource.kind, metadata: metadata as KubeObject['metadata'], schema: codec.fingerprint, content: bytes };
  switch (write.type) {
    case 'create':
      return { type: 'CustomObjectCreated', object: custom };
    case 'update':
      return { type: 'CustomObjectUpdated', object: custom, expectedResourceVersion: write.expectedResourceVersion, subresource: write.subresource };
  }
};
