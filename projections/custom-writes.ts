/**
 * The events that write a custom object, for every writer (the apiserver, a controller
 * scaling one): its content encoded with the Avro schema of its CRD's storage version
 * (`schemas/custom/`), and that schema's `SchemaRegistered` event, keyed by the CRD, which
 * must be in the log before the first object written with it (the fold accepts the same
 * schema registered twice).
 */
import { createCustomObjectCodec, customContentSchema, type CustomObjectCodec, type StructuralSchema } from '../schemas/custom/index.ts';
import type { CustomObject, CustomResourceDefinition, CustomResourceDefinitionVersion, KubeObject, SchemaRegistered } from '../schemas/index.ts';

/** A version's schema; a version without one keeps every field (kube's v1beta1 CRDs). */
export const versionSchema = (version: CustomResourceDefinitionVersion | undefined): unknown =>
  version?.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** The CRD's storage version (exactly one, by validation). */
export const storageVersionOf = (crd: CustomResourceDefinition): CustomResourceDefinitionVersion | undefined =>
  crd.spec.versions.find((version) => version.storage);

/** Compiled codecs by CRD uid, resourceVersion and version; dropped whole past this many. */
const CODECS_KEPT = 256;
const codecs = new Map<string, CustomObjectCodec>();

/** The codec of `crd`'s storage version for its kind `kind` (its accepted name), and that version's name. */
export const storageCodecOf = (crd: CustomResourceDefinition, kind: string): { readonly codec: CustomObjectCodec; readonly version: string } => {
  const storage = storageVersionOf(crd) ?? crd.spec.versions[0];
  if (storage === undefined) throw new Error(`${crd.metadata.name ?? ''} has no versions`);
  const cacheKey = `${crd.metadata.uid ?? ''}/${crd.metadata.resourceVersion ?? ''}/${storage.name}/${kind}`;
  let codec = codecs.get(cacheKey);
  if (codec === undefined) {
    codec = createCustomObjectCodec(customContentSchema({ group: crd.spec.group, version: storage.name, kind, schema: versionSchema(storage) as StructuralSchema }));
    if (codecs.size >= CODECS_KEPT) codecs.clear();
    codecs.set(cacheKey, codec);
  }
  return { codec, version: storage.name };
};

/** The `SchemaRegistered` body of a storage codec's schema. */
export const schemaRegistration = (crd: CustomResourceDefinition, kind: string, codec: CustomObjectCodec, version: string): SchemaRegistered => ({
  type: 'SchemaRegistered',
  resource: crd.metadata.name ?? '',
  group: crd.spec.group,
  version,
  kind,
  fingerprint: codec.fingerprint,
  schema: JSON.stringify(codec.schema),
});

/**
 * `object` (type meta, metadata and content, at the storage version) as the log holds it: its
 * content encoded with `codec`. Throws `CustomEncodeError` naming the field a value does not fit.
 */
export const encodeCustomObject = (object: KubeObject, codec: CustomObjectCodec, apiVersion: string): CustomObject => {
  const { apiVersion: _apiVersion, kind, metadata, ...content } = object as unknown as Record<string, unknown>;
  return { apiVersion, kind: kind as string, metadata: metadata as KubeObject['metadata'], schema: codec.fingerprint, content: codec.encode(content) };
};
