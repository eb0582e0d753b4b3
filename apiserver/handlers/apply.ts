/**
 * Server-side apply (PATCH with `application/apply-patch+yaml`): the configuration is
 * merged into the live object by field ownership (`../patch/apply/`), in the request
 * path at the request's time; the object is created when absent (kube's create on
 * apply). An apply that changes nothing (neither the object nor its managedFields but
 * their timestamps) appends nothing and answers the live object, resourceVersion
 * unchanged (`./no-op.ts`, shared with every other write).
 */
import { toServed } from '../conversion/index.ts';
import { objectCreated } from '../../projections/index.ts';
import type { KubeObject } from '../../schemas/index.ts';
import { customObjectBody } from '../custom-resources/events.ts';
import { fieldManagerTargetOf } from './field-manager-target.ts';
import { CONFLICT_RETRIES, catchUp, json, keyOf, nameOf, objectAfter, precheckVersion, throwIfRejected, type Reply, type RequestContext, type ServerContext } from '../context.ts';
import { ApiError, apiErrors } from '../errors.ts';
import { isObject, type Json } from '../patch/json.ts';
import { serverSideApply } from '../patch/index.ts';
import { admitCreate, admitUpdate } from '../validation/admit.ts';
import { dryRunCreated, type WriteOptions } from '../write-options.ts';
import { changesNothing } from './no-op.ts';
import { submitUpdate } from './submit-update.ts';
import { admitAfterDefaultServiceAccount, admitFromView, requestAdmission } from '../admission/index.ts';
import { admitNodeCreate } from '../authorization/node-restriction.ts';

const nameOfConfig = (config: Json): unknown => (isObject(config) && isObject(config['metadata']) ? config['metadata']['name'] : undefined);

/** PATCH with an apply configuration. `options.fieldManager` is set (checked with the options). */
export const applyObject = async (server: ServerContext, ctx: RequestContext, options: WriteOptions, config: Json): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  // The merge is in the request's version (a served conversion's definition and shape); admission converts the result.
  const target = fieldManagerTargetOf(resource, 'served');
  if (target === undefined) throw apiErrors.unsupportedMediaType(`server-side apply is not available for ${resource.kind}`);
  const configName = nameOfConfig(config);
  if (configName !== name) {
    throw apiErrors.badRequest(`the name of the object (${String(configName ?? '')}) does not match the name on the URL (${name})`);
  }
  const key = keyOf(resource, namespace, name);
  const { dryRun, fieldValidation, force, fieldManager } = options;
  for (let attempt = 1; ; attempt++) {
    await catchUp(server);
    const current = server.projection.view().get(key);
    const time = Date.now();
    const live = current ? (toServed(resource.conversion, current) as typeof current) : undefined;
    const applied = serverSideApply({ target, live, config, manager: fieldManager, force, time });
    if (!current) {
      const admitted = admitCreate({ resource, body: applied.object, fieldValidation, namespace, requester: ctx.user });
      const { object } = admitted;
      // The admission plugins are the built-in kinds' (a custom kind may share one's name).
      if (!resource.custom) {
        admitNodeCreate(ctx.user, object);
        await admitAfterDefaultServiceAccount(() => admitFromView(object, server.projection.view(), requestAdmission(server)), server);
      }
      if (dryRun) return json(201, dryRunCreated(object), admitted.warnings);
      const body = resource.custom ? await customObjectBody(server, ctx, object, { type: 'create' }) : objectCreated(object);
      const result = await server.writer.submit({ topic: 'desired', key, body, identity: ctx.identity, time });
      const verdict = result.record.verdict;
      if (verdict.type === 'rejected' && verdict.reason === 'AlreadyExists' && attempt < CONFLICT_RETRIES) continue;
      throwIfRejected(result, resource, name);
      const created = objectAfter(server, result, key);
      if (!created) throw apiErrors.internal(`${key} was created but is already gone`);
      return json(201, created, admitted.warnings);
    }
    const admitted = admitUpdate({ resource, body: applied.object, fieldValidation, namespace, name, current });
    const { object } = admitted;
    const appliedVersion = (applied.object as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
    const pinned = typeof appliedVersion === 'string' && appliedVersion !== current.metadata.resourceVersion ? appliedVersion : undefined;
    precheckVersion(resource, current, pinned ?? null);
    if (changesNothing(object, current)) return json(200, current, admitted.warnings);
    if (dryRun) return json(200, object, admitted.warnings);
    try {
      const updated = await submitUpdate(server, ctx, object, pinned ?? current.metadata.resourceVersion ?? null, time);
      return json(200, updated, admitted.warnings);
    } catch (error) {
      const retry = error instanceof ApiError && error.status.reason === 'Conflict' && pinned === undefined && attempt < CONFLICT_RETRIES;
      if (!retry) throw error;
      ctx.logger.debug({ attempt, name }, 'apply conflicted with a concurrent write; retrying on the current object');
    }
  }
};
