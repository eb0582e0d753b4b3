/**
 * The `scale` subresource: an autoscaling/v1 Scale over `spec.replicas` of the registry's
 * scalable kinds (Deployment, ReplicaSet, StatefulSet, ReplicationController), and over the
 * CRD's replica paths of a custom resource whose version declares `subresources.scale`
 * (`../custom-resources/scale.ts`). A write changes the replica count only; the same count
 * appends nothing.
 */
import { labelSelectorToRequirements, selectorToString } from '../../projections/selectors.ts';
import { objectKey, type KubeObject } from '../../schemas/index.ts';
import { storedKind } from '../../schemas/kinds/registry.ts';
import { CONFLICT_RETRIES, json, nameOf, objectAfter, precheckVersion, throwIfRejected, type Reply, type RequestContext, type ServerContext } from '../context.ts';
import { toServed } from '../conversion/index.ts';
import { autoscalingScale, customScale, withCustomReplicas } from '../custom-resources/scale.ts';
import { ApiError, apiErrors, fieldErrors } from '../errors.ts';
import { mediaTypeOf, parseBody, readBody, readJsonBody } from '../http.ts';
import { applyPatch, mergePatch, subresourcePatchTypeOf } from '../patch/index.ts';
import { failureStatus } from '../status.ts';
import { admitUpdate } from '../validation/admit.ts';
import { parseWriteOptions, type WriteOptions } from '../write-options.ts';
import { changesNothing } from './no-op.ts';
import { submitUpdate } from './submit-update.ts';
import { currentObject, recordManager } from './write.ts';

const MAX_INT32 = 2_147_483_647;

/** An object of a kind with a scale subresource: `spec.replicas` and a selector (a LabelSelector, or a label map for ReplicationController). */
type Scalable = Extract<KubeObject, { kind: 'Deployment' | 'ReplicaSet' | 'StatefulSet' | 'ReplicationController' }>;

/** The selector of a Scale as text (kube: `LabelSelectorAsSelector(...).String()`, `SelectorFromSet(...)` for a map). */
const scaleSelector = (object: Scalable): string => {
  if (object.kind === 'ReplicationController') {
    return Object.entries(object.spec?.selector ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, value]) => `${key}=${value}`)
      .join(',');
  }
  if (!object.spec?.selector) return '';
  const parsed = labelSelectorToRequirements(object.spec.selector);
  return parsed.type === 'ok' ? selectorToString(parsed.requirements) : '';
};

/** The autoscaling/v1 Scale of a scalable object. */
export const scaleOf = (object: Scalable) => autoscalingScale(object, object.spec?.replicas ?? 1, object.status?.replicas ?? 0, scaleSelector(object));

/** The object, if its kind has a scale subresource in the kind registry (the fold scales any kind's `spec.replicas`). */
const scalable = (object: KubeObject): Scalable => {
  if (!storedKind(object.kind)?.subresources.some((sub) => sub.name === 'scale')) throw apiErrors.methodNotAllowed();
  return object as Scalable;
};

/** The Scale of a custom object as the request's version shows it; 500 without replicas at specReplicasPath, as kube. */
const customScaleReply = (ctx: RequestContext, object: KubeObject) => {
  const { resource } = ctx.target;
  const { scale, found, specReplicasPath } = customScale(resource, toServed(resource.conversion, object) as KubeObject);
  if (!found) throw apiErrors.internal(`the spec replicas field "${specReplicasPath}" does not exist`);
  return scale;
};

/** The Scale of an object of the request's resource. */
const scaleReply = (ctx: RequestContext, object: KubeObject) => (ctx.target.resource.custom ? customScaleReply(ctx, object) : scaleOf(scalable(object)));

/** GET `.../scale`. */
export const getScale = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => json(200, scaleReply(ctx, await currentObject(server, ctx)));

const scaleInvalid = (name: string, field: string, value: unknown, detail: string): ApiError =>
  new ApiError(
    failureStatus('Invalid', `Scale.autoscaling "${name}" is invalid: ${field}: Invalid value: ${JSON.stringify(value)}: ${detail}`, {
      name,
      group: 'autoscaling',
      kind: 'Scale',
      causes: [fieldErrors.invalid(field, value, detail)],
    }),
  );

/** The replica count of a Scale body, validated as kube's `ValidateScale` (an int32 ≥ 0). */
const replicasOf = (name: string, scale: unknown): number => {
  const replicas = (scale as { spec?: { replicas?: unknown } })?.spec?.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) throw scaleInvalid(name, 'spec.replicas', replicas, 'must be an integer');
  if (replicas < 0) throw scaleInvalid(name, 'spec.replicas', replicas, 'must be greater than or equal to 0');
  if (replicas > MAX_INT32) throw scaleInvalid(name, 'spec.replicas', replicas, `must be less than or equal to ${MAX_INT32}`);
  return replicas;
};

/** Appends the new replica count of a registry kind (ObjectUpdated, subresource 'scale') and answers with the Scale. */
const submitBuiltInScale = async (ctx: RequestContext, server: ServerContext, current: Scalable, replicas: number, expectedResourceVersion: string | null, options: WriteOptions): Promise<Reply> => {
  const { resource } = ctx.target;
  const object = structuredClone(current);
  if (object.spec) object.spec.replicas = replicas;
  const time = Date.now();
  recordManager(ctx, options, current, object, current.metadata.managedFields, time, 'scale');
  precheckVersion(resource, current, expectedResourceVersion);
  if (changesNothing(object, current)) return json(200, scaleOf(current));
  if (options.dryRun) return json(200, scaleOf(object));
  const key = objectKey(object);
  const result = await server.writer.submit({
    topic: 'desired',
    key,
    body: { type: 'ObjectUpdated', object, expectedResourceVersion, subresource: 'scale' },
    identity: ctx.identity,
    time,
  });
  throwIfRejected(result, resource, nameOf(ctx.target));
  const updated = objectAfter(server, result, key);
  return json(200, scaleOf(updated ? scalable(updated) : object));
};

/**
 * Writes the new replica count of a custom object at its specReplicasPath: the object is
 * admitted as any update (its schema may bound the count) and appended as one.
 */
const submitCustomScale = async (ctx: RequestContext, server: ServerContext, current: KubeObject, replicas: number, expectedResourceVersion: string | null, options: WriteOptions): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  const next = withCustomReplicas(resource, toServed(resource.conversion, current) as KubeObject, replicas);
  const { object } = admitUpdate({ resource, body: next, fieldValidation: options.fieldValidation, namespace, name, current });
  const time = Date.now();
  recordManager(ctx, options, current, object, current.metadata.managedFields, time, 'scale');
  precheckVersion(resource, current, expectedResourceVersion);
  if (changesNothing(object, current)) return json(200, customScaleReply(ctx, current));
  if (options.dryRun) return json(200, customScaleReply(ctx, object));
  return json(200, customScaleReply(ctx, await submitUpdate(server, ctx, object, expectedResourceVersion, time)));
};

const submitScale = (ctx: RequestContext, server: ServerContext, current: KubeObject, scale: unknown, expectedResourceVersion: string | null, options: WriteOptions): Promise<Reply> => {
  const replicas = replicasOf(nameOf(ctx.target), scale);
  return ctx.target.resource.custom
    ? submitCustomScale(ctx, server, current, replicas, expectedResourceVersion, options)
    : submitBuiltInScale(ctx, server, scalable(current), replicas, expectedResourceVersion, options);
};

/** PUT `.../scale`; a stale `metadata.resourceVersion` gets 409. */
export const updateScale = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const options = parseWriteOptions('UpdateOptions', ctx.query);
  const body = await readJsonBody(ctx.req);
  const current = await currentObject(server, ctx);
  if (!ctx.target.resource.custom) scalable(current);
  const expected = (body as { metadata?: { resourceVersion?: unknown } })?.metadata?.resourceVersion;
  return submitScale(ctx, server, current, body, typeof expected === 'string' && expected !== '' ? expected : null, options);
};

/** PATCH `.../scale` (kubectl scale sends a merge patch); retried on Conflict unless pinned. */
export const patchScale = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const options = parseWriteOptions('PatchOptions', ctx.query);
  const patchType = subresourcePatchTypeOf(mediaTypeOf(ctx.req.headers['content-type']), 'scale');
  const patch = parseBody(await readBody(ctx.req), ctx.req.headers['content-type']);
  for (let attempt = 1; ; attempt++) {
    const current = await currentObject(server, ctx);
    const scale = ctx.target.resource.custom ? customScale(ctx.target.resource, toServed(ctx.target.resource.conversion, current) as KubeObject).scale : scaleOf(scalable(current));
    const patched = patchType === 'json' ? applyPatch('json', current.kind, scale, patch) : mergePatch(scale, patch);
    const version = (patched as { metadata?: { resourceVersion?: unknown } })?.metadata?.resourceVersion;
    const pinned = typeof version === 'string' && version !== current.metadata.resourceVersion ? version : undefined;
    try {
      return await submitScale(ctx, server, current, patched, pinned ?? current.metadata.resourceVersion ?? null, options);
    } catch (error) {
      const retry = error instanceof ApiError && error.status.reason === 'Conflict' && pinned === undefined && attempt < CONFLICT_RETRIES;
      if (!retry) throw error;
    }
  }
};
