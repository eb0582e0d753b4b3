/**
 * create, update (PUT), patch and delete of the main resource. Each validates first (a
 * rejected request appends nothing), appends one event, waits for this apiserver's
 * projection to apply it, and answers from the fold's verdict with the object as that
 * event left it.
 */
import { NAMESPACE_FINALIZER } from '../../projections/fold.ts';
import { objectCreated, podAdmissionOf, type View } from '../../projections/index.ts';
import type { EventBody, KubeObject, PropagationPolicy } from '../../schemas/index.ts';
import { customObjectBody } from '../custom-resources/events.ts';
import { fieldManagerTargetOf } from './field-manager-target.ts';
import { checkCustomPatchType } from '../custom-resources/admit.ts';
import {
  CONFLICT_RETRIES,
  catchUp,
  json,
  keyOf,
  nameOf,
  objectAfter,
  precheckVersion,
  throwIfRejected,
  type Reply,
  type RequestContext,
  type ServerContext,
} from '../context.ts';
import { ApiError, apiErrors, fieldErrors, verdictError } from '../errors.ts';
import {
  parseObjectBody,
  scanJsonBody,
  throwIfStrictDuplicates,
  throwIfStrictPatchDuplicates,
  withDuplicateWarnings,
  withPatchDuplicateWarnings,
  type BodyScan,
} from '../duplicate-fields.ts';
import { toServed } from '../conversion/index.ts';
import { checkNamespaceDeletion } from '../namespaces.ts';
import { mediaTypeOf, parseBody, readBody } from '../http.ts';
import { applyPatch, patchTypeOf, recordUpdate } from '../patch/index.ts';
import { apiVersionOf, type ResourceInfo } from '../resources.ts';
import { storedKind } from '../../schemas/kinds/registry.ts';
import { queryBool } from '../query.ts';
import { parseSelection } from '../selection.ts';
import { CAUSE_TYPES, successStatus, type StatusCause } from '../status.ts';
import { admitCreate, admitUpdate, type Admitted } from '../validation/admit.ts';
import { dryRunCause, dryRunCreated, managerOf, parseWriteOptions, type WriteOptions } from '../write-options.ts';
import { applyObject } from './apply.ts';
import { changesNothing } from './no-op.ts';
import { submitUpdate } from './submit-update.ts';
import { admitAfterDefaultServiceAccount, admitFromView, requestAdmission, waitForDefaultServiceAccount } from '../admission/index.ts';
import { admitNodeCreate } from '../authorization/node-restriction.ts';

/**
 * How many names a create with generateName tries before giving up (kube's
 * `maxNameGenerationCreateAttempts`: a 0.1 % chance of any conflict at a million names).
 */
const GENERATE_NAME_ATTEMPTS = 8;

/** POST to a collection. */
export const createObject = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  if (resource.namespaced && namespace === undefined) throw apiErrors.methodNotAllowed();
  const { body, scan } = await readObjectBody(ctx);
  return createFrom(server, ctx, body, scan, parseWriteOptions('CreateOptions', ctx.query));
};

/** The managedFields of a body, before admission. */
const requestedManagedFields = (body: unknown): unknown =>
  (body as { metadata?: { managedFields?: unknown } } | null)?.metadata?.managedFields;

/**
 * Records the writer of `object` (written over `live`, undefined for a create) in its
 * managedFields, operation Update, at the request's `time` (kube's field manager on
 * create, update and non-apply patches).
 */
export const recordManager = (
  ctx: RequestContext,
  options: WriteOptions,
  live: KubeObject | undefined,
  object: KubeObject,
  requested: unknown,
  time: number,
  subresource?: 'scale' | 'status',
): void => {
  const target = fieldManagerTargetOf(ctx.target.resource, 'stored');
  if (target === undefined) return;
  const managedFields = recordUpdate({
    target,
    live,
    next: object,
    requested,
    manager: managerOf(options, ctx.req.headers['user-agent']),
    time,
    ...(subresource ? { subresource } : {}),
  });
  if (managedFields.length > 0) object.metadata.managedFields = managedFields as typeof object.metadata.managedFields;
  else delete object.metadata.managedFields;
};

/** The body of a create or update, and its duplicate fields. */
const readObjectBody = async (ctx: RequestContext): Promise<{ body: unknown; scan: BodyScan }> =>
  parseObjectBody(await readBody(ctx.req), ctx.req.headers['content-type']);

/**
 * Why a create would be refused by the fold, judged on `view` (undefined: it would not):
 * the name is taken, or the namespace is missing or terminating.
 */
const createRefusal = (
  view: View,
  resource: ResourceInfo,
  object: KubeObject,
  key: string,
): { type: 'exists' } | { type: 'refused'; error: ApiError } | undefined => {
  if (view.get(key)) return { type: 'exists' };
  if (!resource.namespaced) return undefined;
  const owningNamespace = view.get(`Namespace//${object.metadata.namespace}`);
  if (!owningNamespace) {
    return { type: 'refused', error: verdictError('NotFound', `namespace "${object.metadata.namespace}" not found`, resource, object.metadata.name) };
  }
  if (owningNamespace.metadata.deletionTimestamp) {
    return {
      type: 'refused',
      error: verdictError(
        'Forbidden',
        `unable to create new content in namespace ${object.metadata.namespace} because it is being terminated`,
        resource,
        object.metadata.name,
      ),
    };
  }
  return undefined;
};

const createFrom = async (server: ServerContext, ctx: RequestContext, body: unknown, scan: BodyScan, options: WriteOptions): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const { dryRun, fieldValidation } = options;
  throwIfStrictDuplicates(resource, scan, body, fieldValidation);
  const generated = !(body as { metadata?: { name?: string } })?.metadata?.name;
  // The fold judges every create (name taken, namespace missing or terminating), so a create
  // the current view finds acceptable is appended without first catching up with the log:
  // no end-offsets round trip on the way of every create. A refusal, though, is answered
  // without appending only from a view that has caught up (the view may simply be behind,
  // e.g. the namespace was just created through another apiserver), and so is a dry run.
  let caughtUp = false;
  if (dryRun) {
    await catchUp(server);
    caughtUp = true;
  }
  for (let attempt = 1; ; attempt++) {
    const admit = (): Admitted => {
      const admitted = admitCreate({ resource, body, fieldValidation, namespace, requester: ctx.user, nameSuffix: server.nameSuffix });
      // The admission plugins are the built-in kinds' (a custom kind may share one's name).
      if (!resource.custom) {
        admitNodeCreate(ctx.user, admitted.object);
        admitFromView(admitted.object, server.projection.view(), requestAdmission(server));
      }
      return admitted;
    };
    let admitted: Admitted;
    try {
      admitted = admit();
    } catch (error) {
      // Admission reads the view (a PriorityClass, a RuntimeClass): refuse only on one that has caught up.
      if (!(error instanceof ApiError)) throw error;
      if (!caughtUp) {
        await catchUp(server);
        caughtUp = true;
        admitted = await admitAfterDefaultServiceAccount(admit, server);
      } else if (await waitForDefaultServiceAccount(error, server.projection)) {
        admitted = admit();
      } else {
        throw error;
      }
    }
    const { object } = admitted;
    const time = Date.now();
    recordManager(ctx, options, undefined, object, requestedManagedFields(body), time);
    const warnings = withDuplicateWarnings(scan, admitted.warnings, fieldValidation);
    const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
    let refusal = createRefusal(server.projection.view(), resource, object, key);
    if (refusal && !caughtUp) {
      await catchUp(server);
      caughtUp = true;
      refusal = createRefusal(server.projection.view(), resource, object, key);
    }
    if (refusal?.type === 'exists') {
      if (generated && attempt < GENERATE_NAME_ATTEMPTS) continue;
      throw generated ? apiErrors.generateNameConflict(resource, object.metadata.name) : apiErrors.alreadyExists(resource, object.metadata.name);
    }
    if (refusal) throw refusal.error;
    if (dryRun) return json(201, dryRunCreated(object), warnings);
    const result = await server.writer.submit({
      topic: 'desired',
      key,
      body: resource.custom ? await customObjectBody(server, ctx, object, { type: 'create' }) : objectCreated(object),
      identity: ctx.identity,
      time,
    });
    const verdict = result.record.verdict;
    if (verdict.type === 'rejected' && verdict.reason === 'AlreadyExists' && generated) {
      if (attempt < GENERATE_NAME_ATTEMPTS) continue;
      throw apiErrors.generateNameConflict(resource, object.metadata.name);
    }
    throwIfRejected(result, resource, object.metadata.name);
    const created = objectAfter(server, result, key);
    if (!created) throw apiErrors.internal(`${key} was created but is already gone`);
    return json(201, created, warnings);
  }
};

/** The object of a request, after catching up with the log; 404 when absent. */
export const currentObject = async (server: ServerContext, ctx: RequestContext): Promise<KubeObject> => {
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  await catchUp(server);
  const current = server.projection.view().get(keyOf(resource, namespace, name));
  if (!current) throw apiErrors.notFound(resource, name);
  return current;
};

/**
 * PUT of the main resource. A stale `metadata.resourceVersion` gets 409 Conflict without
 * appending (the fold would reject it too); a PUT that changes nothing appends nothing.
 */
export const updateObject = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  const options = parseWriteOptions('UpdateOptions', ctx.query);
  const { dryRun, fieldValidation } = options;
  const { body, scan } = await readObjectBody(ctx);
  throwIfStrictDuplicates(resource, scan, body, fieldValidation);
  await catchUp(server);
  const current = server.projection.view().get(keyOf(resource, namespace, name));
  if (!current) {
    // Endpoints may be created by PUT (kube's AllowCreateOnUpdate), which the endpoints controller uses.
    if (!resource.custom && resource.kind === 'Endpoints') {
      const bodyName = (body as { metadata?: { name?: unknown } } | null)?.metadata?.name;
      if (bodyName !== undefined && bodyName !== name) {
        throw apiErrors.badRequest(`the name of the object (${String(bodyName)}) does not match the name on the URL (${name})`);
      }
      return createFrom(server, ctx, body, scan, options);
    }
    throw apiErrors.notFound(resource, name);
  }
  const expected = (body as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  const admitted = admitUpdate({ resource, body, fieldValidation, namespace, name, current });
  const { object } = admitted;
  const time = Date.now();
  recordManager(ctx, options, current, object, requestedManagedFields(body), time);
  const warnings = withDuplicateWarnings(scan, admitted.warnings, fieldValidation);
  const expectedVersion = typeof expected === 'string' && expected !== '' ? expected : null;
  precheckVersion(resource, current, expectedVersion);
  if (changesNothing(object, current)) return json(200, current, warnings);
  if (dryRun) return json(200, object, warnings);
  const updated = await submitUpdate(server, ctx, object, expectedVersion, time);
  return json(200, updated, warnings);
};

/**
 * PATCH of the main resource: applied to the current object, retried on Conflict unless
 * the patch pins a resourceVersion; a patch that changes nothing appends nothing.
 */
export const patchObject = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  const patchType = patchTypeOf(mediaTypeOf(ctx.req.headers['content-type']));
  checkCustomPatchType(resource, patchType);
  const options = parseWriteOptions('PatchOptions', ctx.query, { apply: patchType === 'apply' });
  const { dryRun, fieldValidation } = options;
  const raw = await readBody(ctx.req);
  const patch = parseBody(raw, ctx.req.headers['content-type']);
  if (patchType === 'apply') return applyObject(server, ctx, options, patch);
  // Duplicate fields of merge patches (JSON text) are reported as kube reports them.
  const scan = patchType === 'merge' || patchType === 'strategic' ? scanJsonBody(raw, 'application/json') : undefined;
  for (let attempt = 1; ; attempt++) {
    const current = await currentObject(server, ctx);
    const patched = applyPatch(patchType, resource.kind, toServed(resource.conversion, current), patch) as { metadata?: { resourceVersion?: unknown; uid?: unknown } } | null;
    // metadata.uid is immutable (kube's ValidateObjectMetaUpdate): a patch that changes or
    // removes it is invalid, not a Conflict to retry.
    const patchedUid = patched?.metadata?.uid;
    if (patchedUid !== current.metadata.uid) {
      throw apiErrors.invalid(resource, name, [fieldErrors.invalid('metadata.uid', patchedUid ?? '', 'field is immutable')]);
    }
    const patchedVersion = patched?.metadata?.resourceVersion;
    const pinned = typeof patchedVersion === 'string' && patchedVersion !== current.metadata.resourceVersion ? patchedVersion : undefined;
    throwIfStrictPatchDuplicates(resource, scan, patched, fieldValidation);
    const admitted = admitUpdate({ resource, body: patched, fieldValidation, namespace, name, current });
    const { object } = admitted;
    const time = Date.now();
    recordManager(ctx, options, current, object, requestedManagedFields(patched), time);
    const warnings = withPatchDuplicateWarnings(scan, admitted.warnings, fieldValidation);
    precheckVersion(resource, current, pinned ?? null);
    if (changesNothing(object, current)) return json(200, current, warnings);
    if (dryRun) return json(200, object, warnings);
    try {
      const updated = await submitUpdate(server, ctx, object, pinned ?? current.metadata.resourceVersion ?? null, time);
      return json(200, updated, warnings);
    } catch (error) {
      const retry = error instanceof ApiError && error.status.reason === 'Conflict' && pinned === undefined && attempt < CONFLICT_RETRIES;
      if (!retry) throw error;
      ctx.logger.debug({ attempt, name }, 'patch conflicted; retrying on the current object');
    }
  }
};

/** DeleteOptions from the body (kubectl) or the query string. */
export interface DeleteOptions {
  readonly propagationPolicy: PropagationPolicy | null;
  readonly gracePeriodSeconds: number | null;
  readonly uid: string | null;
  readonly resourceVersion: string | null;
  readonly dryRun: boolean;
}

const PROPAGATION_POLICIES: readonly PropagationPolicy[] = ['Background', 'Foreground', 'Orphan'];

/**
 * DeleteOptions from the query, overridden field by field by a DeleteOptions body, and
 * validated as kube's `ValidateDeleteOptions` (422 `DeleteOptions.meta.k8s.io`).
 */
const parseDeleteOptions = async (ctx: RequestContext): Promise<DeleteOptions> => {
  const raw = await readBody(ctx.req);
  const body = (raw.toString('utf8').trim() === '' ? {} : parseBody(raw, ctx.req.headers['content-type'])) as Record<string, unknown>;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw apiErrors.badRequest('DeleteOptions must be a JSON object');
  return deleteOptionsFrom(body, ctx.query);
};

/** DeleteOptions from a parsed DeleteOptions `body` over `query`, validated as kube's `ValidateDeleteOptions`. */
export const deleteOptionsFrom = (body: Record<string, unknown>, query: URLSearchParams): DeleteOptions => {
  const policy = (body['propagationPolicy'] as string | undefined) ?? query.get('propagationPolicy') ?? undefined;
  const orphan = (body['orphanDependents'] as boolean | undefined) ?? (query.has('orphanDependents') ? queryBool(query, 'orphanDependents') : undefined);
  const dryRun = Array.isArray(body['dryRun']) ? body['dryRun'].map(String) : query.getAll('dryRun');
  const causes: StatusCause[] = [];
  if (policy !== undefined && orphan !== undefined) {
    causes.push({ reason: CAUSE_TYPES.FieldValueInvalid, message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set`, field: 'propagationPolicy' });
  }
  if (policy !== undefined && !PROPAGATION_POLICIES.includes(policy as PropagationPolicy)) {
    causes.push({
      reason: CAUSE_TYPES.FieldValueNotSupported,
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"`,
      field: 'propagationPolicy',
    });
  }
  const dryRunProblem = dryRunCause(dryRun);
  if (dryRunProblem) causes.push(dryRunProblem);
  if (causes.length > 0) throw apiErrors.invalidOptions('DeleteOptions', causes);
  const graceRaw = body['gracePeriodSeconds'] ?? query.get('gracePeriodSeconds') ?? undefined;
  const grace = graceRaw === undefined ? null : Number(graceRaw);
  if (grace !== null && !Number.isInteger(grace)) throw apiErrors.badRequest(`gracePeriodSeconds: Invalid value: ${JSON.stringify(graceRaw)}: must be an integer`);
  const preconditions = (body['preconditions'] ?? {}) as { uid?: unknown; resourceVersion?: unknown };
  return {
    propagationPolicy: (policy as PropagationPolicy | undefined) ?? (orphan === true ? 'Orphan' : orphan === false ? 'Background' : null),
    gracePeriodSeconds: grace === null ? null : Math.max(0, grace),
    uid: typeof preconditions.uid === 'string' && preconditions.uid !== '' ? preconditions.uid : null,
    resourceVersion: typeof preconditions.resourceVersion === 'string' && preconditions.resourceVersion !== '' ? preconditions.resourceVersion : null,
    dryRun: dryRun.length > 0,
  };
};

/**
 * What a delete of `current` would answer, without appending (dryRun=All): the object
 * with its deletionTimestamp when it would stay (finalizers, including those Foreground
 * and Orphan add; a namespace, which terminates; a pod bound to a node, which stops
 * gracefully), else the Success Status of an immediate deletion. The same rules as the
 * fold's delete; the fold stays the judge of every delete that is appended.
 */
const dryRunDeletion = (server: ServerContext, resource: ResourceInfo, current: KubeObject, options: DeleteOptions): { code: number; body: unknown } => {
  const finalizers = [...(current.metadata.finalizers ?? [])];
  const policy = options.propagationPolicy;
  if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
  if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
  const object = structuredClone(current);
  // A custom kind may share a built-in kind's name: only the built-in kinds' deletions are special.
  const builtIn = resource.custom === undefined;
  if (builtIn && object.kind === 'Namespace' && !object.metadata.deletionTimestamp) {
    if (!finalizers.includes(NAMESPACE_FINALIZER)) finalizers.push(NAMESPACE_FINALIZER);
    object.status = { ...object.status, phase: 'Terminating' };
  }
  // A pod no node admitted (waiting for its node, or rejected by it) goes at once, as the fold deletes it.
  const uncharged =
    builtIn && object.kind === 'Pod' && podAdmissionOf((r) => server.projection.store.allocations.get(r), `Pod/${object.metadata.namespace ?? ''}/${object.metadata.name}`) !== undefined;
  const grace = builtIn && object.kind === 'Pod' && object.spec.nodeName && !uncharged ? (options.gracePeriodSeconds ?? object.spec.terminationGracePeriodSeconds ?? 30) : 0;
  if (finalizers.length === 0 && grace === 0) {
    const uid = current.metadata.uid;
    return { code: 200, body: successStatus(200, { name: current.metadata.name, group: resource.group, kind: resource.plural, ...(uid ? { uid } : {}) }) };
  }
  if (!object.metadata.deletionTimestamp) {
    object.metadata.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    object.metadata.deletionGracePeriodSeconds = grace;
  }
  if (finalizers.length > 0) object.metadata.finalizers = finalizers;
  return { code: policy === 'Foreground' || policy === 'Orphan' ? 202 : 200, body: object };
};

/**
 * Deletes one object. Answers with the object when it stays (graceful pod deletion,
 * finalizers), else with a Success Status naming it, as kube-apiserver does.
 */
const deleteOne = async (
  server: ServerContext,
  ctx: RequestContext,
  namespace: string | undefined,
  name: string,
  options: DeleteOptions,
): Promise<{ code: number; body: unknown; deleted?: KubeObject }> => {
  const { resource } = ctx.target;
  const key = keyOf(resource, namespace, name);
  const before = server.projection.view().get(key);
  const result = await server.writer.submit({
    topic: 'desired',
    key,
    body: {
      ...(resource.custom ? { type: 'CustomObjectDeleted', apiVersion: apiVersionOf(resource), kind: resource.kind } : { type: 'ObjectDeleted', kind: resource.kind }),
      namespace: resource.namespaced ? (namespace ?? null) : null,
      name,
      expectedResourceVersion: options.resourceVersion,
      uid: options.uid,
      propagationPolicy: options.propagationPolicy,
      gracePeriodSeconds: options.gracePeriodSeconds,
    } as EventBody,
    identity: ctx.identity,
  });
  throwIfRejected(result, resource, name);
  const remaining = objectAfter(server, result, key);
  if (remaining) return { code: options.propagationPolicy === 'Foreground' || options.propagationPolicy === 'Orphan' ? 202 : 200, body: remaining, deleted: remaining };
  const uid = before?.metadata.uid;
  return {
    code: 200,
    body: successStatus(200, { name, group: resource.group, kind: resource.plural, ...(uid ? { uid } : {}) }),
    ...(before ? { deleted: before } : {}),
  };
};

/** DELETE of one object. */
export const deleteObject = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const options = await parseDeleteOptions(ctx);
  return deleteCurrent(server, ctx, await currentObject(server, ctx), options);
};

/** Deletes `current`, the object the request addresses, with `options` (preconditions, grace period, dryRun). */
export const deleteCurrent = async (server: ServerContext, ctx: RequestContext, current: KubeObject, options: DeleteOptions): Promise<Reply> => {
  const name = nameOf(ctx.target);
  checkNamespaceDeletion(ctx.target.resource, name);
  precheckVersion(ctx.target.resource, current, options.resourceVersion);
  if (options.uid !== null && options.uid !== current.metadata.uid) {
    throw apiErrors.conflict(ctx.target.resource, name, `Precondition failed: UID in precondition: ${options.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
  }
  if (options.dryRun) {
    const { code, body } = dryRunDeletion(server, ctx.target.resource, current, options);
    return json(code, body);
  }
  const { code, body } = await deleteOne(server, ctx, ctx.target.namespace, name, options);
  return json(code, body);
};

/** DELETE of a collection (with selectors): deletes each matching object; answers the list of them. */
export const deleteCollection = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const selection = parseSelection(resource, ctx.query);
  const options = await parseDeleteOptions(ctx);
  await catchUp(server);
  const targets = server.projection
    .view()
    .list(resource.ref, resource.namespaced ? namespace : undefined)
    .filter((o) => selection.matches(o));
  if (options.dryRun) {
    const items = targets.flatMap((o) => {
      const { body } = dryRunDeletion(server, resource, o, options);
      return (body as { kind?: string }).kind === 'Status' ? [o] : [body];
    });
    return json(200, { kind: `${resource.kind}List`, apiVersion: apiVersionOf(resource), metadata: {}, items });
  }
  const results = await Promise.allSettled(
    targets.map((o) => deleteOne(server, ctx, o.metadata.namespace, o.metadata.name, options)),
  );
  const failure = results.find(
    (r): r is PromiseRejectedResult => r.status === 'rejected' && !(r.reason instanceof ApiError && r.reason.status.reason === 'NotFound'),
  );
  if (failure) throw failure.reason;
  const items = results.flatMap((r) => (r.status === 'fulfilled' && r.value.deleted ? [r.value.deleted] : []));
  return json(200, { kind: `${resource.kind}List`, apiVersion: apiVersionOf(resource), metadata: {}, items });
};
