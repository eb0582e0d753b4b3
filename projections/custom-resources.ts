/**
 * What the fold knows about custom resources (issue 16), kept in its own state so that it is
 * a function of the log alone (DESIGN invariant 7):
 *
 * - `schema/<fingerprint>` → an Avro schema a `SchemaRegistered` event appended (never
 *   removed: every custom object ever written is read with the schema it names);
 * - `customkind/<Kind>.<group>` → the key of the CustomResourceDefinition that serves that
 *   kind, set when the CRD is created or updated and removed when its deletion completes.
 *
 * A CRD, the schemas it registers and the objects of its kinds share one partition (the
 * `customResourceGroup` domain, `schemas/kinds/domains.ts`), so every custom object is judged
 * against its CRD and read with its schema in log order, on every replica and in every replay.
 */
import type { CustomObject, CustomResourceDefinition, KubeObject, SchemaRegistered } from '../schemas/index.ts';
import { kindRefOf } from '../schemas/kinds/refs.ts';
import { fingerprintOfSchema, decodeCustomContent } from './custom-content.ts';
import type { FoldState } from './fold.ts';

const SCHEMA_PREFIX = 'schema/';
const KIND_PREFIX = 'customkind/';

/** Whether the schema with `fingerprint` is registered in a fold state read through `getAllocation` (a projection's `store.allocations.get`). */
export const isSchemaRegistered = (getAllocation: (resource: string) => string | undefined, fingerprint: string): boolean =>
  getAllocation(SCHEMA_PREFIX + fingerprint) !== undefined;

/** A rejection the fold records, or the object a custom-object event carries, decoded. */
export type CustomDecoding =
  | { readonly type: 'decoded'; readonly object: KubeObject; readonly crd: CustomResourceDefinition }
  | { readonly type: 'rejected'; readonly reason: 'NotFound' | 'Invalid' | 'Forbidden'; readonly message: string };

/** The kind ref of a custom kind: `<Kind>.<group>`. */

/** The group of an apiVersion (`stable.example.com/v1` → `stable.example.com`). */
export const groupOfApiVersion = (apiVersion: string): string => apiVersion.slice(0, Math.max(0, apiVersion.lastIndexOf('/')));

/** The version of an apiVersion (`stable.example.com/v1` → `v1`). */
export const versionOfApiVersion = (apiVersion: string): string => apiVersion.slice(apiVersion.lastIndexOf('/') + 1);

/**
 * `SchemaRegistered`: keeps the schema under its fingerprint. The fingerprint must be the
 * schema's own (so that no event can make objects read with another schema than the one they
 * name); registering a schema again changes nothing.
 */
export const registerSchema = (state: FoldState, body: SchemaRegistered): { accepted: true } | { accepted: false; message: string } => {
  let fingerprint: string;
  try {
    fingerprint = fingerprintOfSchema(body.schema);
  } catch (err) {
    return { accepted: false, message: `schema: Invalid value: the schema of ${body.kind}.${body.group}/${body.version} is not an Avro schema: ${(err as Error).message}` };
  }
  if (fingerprint !== body.fingerprint) {
    return { accepted: false, message: `fingerprint: Invalid value: "${body.fingerprint}": the schema's CRC-64-AVRO fingerprint is ${fingerprint}` };
  }
  if (state.getAllocation(SCHEMA_PREFIX + fingerprint) === undefined) state.putAllocation(SCHEMA_PREFIX + fingerprint, body.schema);
  return { accepted: true };
};

/** Records which CRD serves its kind, once the CRD is stored (created or updated). */
export const rememberServedKind = (state: FoldState, key: string, previous: KubeObject | undefined, next: KubeObject): void => {
  if (next.kind !== 'CustomResourceDefinition') return;
  if (previous?.kind === 'CustomResourceDefinition') forgetServedKind(state, key, previous);
  state.putAllocation(KIND_PREFIX + kindRefOf(next.spec.group, next.spec.names.kind), key);
};

/** Forgets the kind a CRD served, when its deletion completes. */
export const forgetServedKind = (state: FoldState, key: string, crd: KubeObject): void => {
  if (crd.kind !== 'CustomResourceDefinition') return;
  const ref = KIND_PREFIX + kindRefOf(crd.spec.group, crd.spec.names.kind);
  if (state.getAllocation(ref) === key) state.putAllocation(ref, undefined);
};

const notFound = (object: CustomObject): CustomDecoding => ({
  type: 'rejected',
  reason: 'NotFound',
  message: `the server could not find the requested resource: no CustomResourceDefinition serves ${object.kind} in ${object.apiVersion}`,
});

/**
 * The object a custom-object event carries, as clients see it: its content read with the
 * registered schema it names, under its apiVersion, kind and metadata. Rejected when no CRD
 * serves or stores the kind at that version, when the CRD is being deleted and the event creates an
 * object (kube refuses creates then), or when the schema is not registered or the content
 * does not read with it.
 */
export const decodeCustomObject = (state: FoldState, object: CustomObject, creating: boolean): CustomDecoding => {
  const group = groupOfApiVersion(object.apiVersion);
  const crdKey = state.getAllocation(KIND_PREFIX + kindRefOf(group, object.kind));
  const crd = crdKey === undefined ? undefined : state.getDesired(crdKey)?.object;
  if (crd?.kind !== 'CustomResourceDefinition') return notFound(object);
  const version = versionOfApiVersion(object.apiVersion);
  // Objects are written at the storage version (None conversion), which a CRD need not serve.
  if (!crd.spec.versions.some((known) => known.name === version && (known.served || known.storage))) return notFound(object);
  if (creating && crd.metadata.deletionTimestamp) {
    return { type: 'rejected', reason: 'Forbidden', message: `create not allowed while custom resource definition is terminating` };
  }
  const schema = state.getAllocation(SCHEMA_PREFIX + object.schema);
  if (schema === undefined) {
    return { type: 'rejected', reason: 'Invalid', message: `schema: Invalid value: "${object.schema}": no schema with this fingerprint is registered for ${object.kind}.${group}` };
  }
  let content: Record<string, unknown>;
  try {
    content = decodeCustomContent(object.schema, schema, object.content);
  } catch (err) {
    return { type: 'rejected', reason: 'Invalid', message: `content: Invalid value: the content does not read with schema ${object.schema}: ${(err as Error).message}` };
  }
  const decoded = { apiVersion: object.apiVersion, kind: object.kind, metadata: object.metadata, ...content };
  return { type: 'decoded', object: decoded as unknown as KubeObject, crd };
};

/** Whether the CRD serves a status subresource at the version of `apiVersion` (then the main resource does not write status). */
export const hasStatusSubresource = (crd: CustomResourceDefinition, apiVersion: string): boolean => {
  const version = versionOfApiVersion(apiVersion);
  return crd.spec.versions.some((served) => served.name === version && served.subresources?.status !== undefined);
};
