/**
 * Subresources: `status` (writes go to the observed topic), `binding` (appends PodBound),
 * and `log` (served by a pluggable hook, the node agent's); `scale` is in `./scale.ts`.
 */
import type { KubeObject } from '../../schemas/index.ts';
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
import { ApiError, apiErrors, fieldErrors } from '../errors.ts';
import { toServed } from '../conversion/index.ts';
import { mediaTypeOf, parseBody, readBody, readJsonBody } from '../http.ts';
import { applyPatch, subresourcePatchTypeOf } from '../patch/index.ts';
import { queryBool } from '../query.ts';
import { failureStatus, successStatus } from '../status.ts';
import { admitStatus } from '../validation/admit.ts';
import { parseWriteOptions, type WriteOptions } from '../write-options.ts';
import { changesNothing } from './no-op.ts';
import { currentObject, recordManager } from './write.ts';
import { customObjectBody } from '../custom-resources/events.ts';
import { checkCustomPatchType } from '../custom-resources/admit.ts';

// ---------------------------------------------------------------------------------------
// status

/** Appends a status write (observed topic, subresource 'status') and answers with the object; one that changes nothing appends nothing. */
export const submitStatus = async (
  server: ServerContext,
  ctx: RequestContext,
  current: KubeObject,
  body: unknown,
  expectedResourceVersion: string | null,
  options: WriteOptions,
): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const name = nameOf(ctx.target);
  const { fieldValidation } = options;
  const { object, warnings } = admitStatus({ resource, body, fieldValidation, namespace, name, current });
  if (expectedResourceVersion !== null && expectedResourceVersion.split('.')[1] !== (current.metadata.resourceVersion ?? '').split('.')[1]) {
    throw apiErrors.conflict(resource, name, 'the object has been modified; please apply your changes to the latest version and try again');
  }
  if (changesNothing(object, current)) return json(200, current, warnings);
  const time = Date.now();
  // A custom object's managedFields are its own (built-in statuses live apart from their objects):
  // the status writer's entry is computed against `current`, so the write is conditional on it.
  if (resource.custom) recordManager(ctx, options, current, object, current.metadata.managedFields, time, 'status');
  const conditionOn = resource.custom ? (expectedResourceVersion ?? current.metadata.resourceVersion ?? null) : expectedResourceVersion;
  if (options.dryRun) return json(200, object, warnings);
  const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
  // A custom object's status is read with a schema registered on the desired topic: it is written there too.
  const result = await server.writer.submit({
    topic: resource.custom ? 'desired' : 'observed',
    key,
    body: resource.custom
      ? await customObjectBody(server, ctx, object, { type: 'update', expectedResourceVersion: conditionOn, subresource: 'status' })
      : { type: 'ObjectUpdated', object, expectedResourceVersion, subresource: 'status' },
    identity: ctx.identity,
    time,
  });
  throwIfRejected(result, resource, name);
  return json(200, objectAfter(server, result, key) ?? object, warnings);
};

/**
 * Runs a status write on the current object, again on a Conflict the client did not ask for
 * (a custom object's status write is conditional on the object it was computed against).
 */
const retryingStatus = async (server: ServerContext, ctx: RequestContext, write: (current: KubeObject) => { body: unknown; pinned: string | null }, options: WriteOptions): Promise<Reply> => {
  for (let attempt = 1; ; attempt++) {
    const current = await currentObject(server, ctx);
    const { body, pinned } = write(current);
    try {
      return await submitStatus(server, ctx, current, body, pinned, options);
    } catch (error) {
      const retry = error instanceof ApiError && error.status.reason === 'Conflict' && pinned === null && attempt < CONFLICT_RETRIES;
      if (!retry) throw error;
    }
  }
};

/** PUT `.../status`. */
export const updateStatus = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const options = parseWriteOptions('UpdateOptions', ctx.query);
  const body = await readJsonBody(ctx.req);
  const expected = (body as { metadata?: { resourceVersion?: unknown } })?.metadata?.resourceVersion;
  return retryingStatus(server, ctx, () => ({ body, pinned: typeof expected === 'string' && expected !== '' ? expected : null }), options);
};

/** PATCH `.../status`: the patch applies to the whole object; only its status is written. */
export const patchStatus = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource } = ctx.target;
  const options = parseWriteOptions('PatchOptions', ctx.query);
  const patchType = subresourcePatchTypeOf(mediaTypeOf(ctx.req.headers['content-type']), 'status');
  checkCustomPatchType(ctx.target.resource, patchType);
  const patch = parseBody(await readBody(ctx.req), ctx.req.headers['content-type']);
  return retryingStatus(
    server,
    ctx,
    (current) => {
      const patched = applyPatch(patchType, resource.kind, toServed(resource.conversion, current), patch) as { metadata?: { resourceVersion?: unknown } };
      const version = patched?.metadata?.resourceVersion;
      return { body: patched, pinned: typeof version === 'string' && version !== current.metadata.resourceVersion ? version : null };
    },
    options,
  );
};

// ---------------------------------------------------------------------------------------
// binding

const bindingInvalid = (name: string, field: string, detail: string): ApiError =>
  new ApiError(
    failureStatus('Invalid', `Binding "${name}" is invalid: ${field}: ${detail}`, {
      name,
      group: '',
      kind: 'Binding',
      causes: [detail === 'Required value' ? fieldErrors.required(field) : fieldErrors.invalid(field, '', detail)],
    }),
  );

/**
 * Binds a pod to a node: POST `pods/NAME/binding` (or `namespaces/NS/bindings`) with a v1
 * Binding. Appends PodBound; the fold rejects a pod that is already bound (409).
 */
export const bindPod = async (
  server: ServerContext,
  ctx: RequestContext,
  namespace: string,
  nameFromUrl: string | undefined,
): Promise<Reply> => {
  const { resource } = ctx.target;
  const { dryRun } = parseWriteOptions('CreateOptions', ctx.query);
  const body = (await readJsonBody(ctx.req)) as { kind?: unknown; metadata?: { name?: unknown; resourceVersion?: unknown; namespace?: unknown }; target?: { kind?: unknown; name?: unknown } };
  if (typeof body !== 'object' || body === null) throw apiErrors.badRequest('a Binding must be a JSON object');
  if (body.kind !== undefined && body.kind !== 'Binding') throw apiErrors.badRequest(`expected a Binding, got kind ${JSON.stringify(body.kind)}`);
  const bodyName = typeof body.metadata?.name === 'string' ? body.metadata.name : undefined;
  const name = nameFromUrl ?? bodyName;
  if (!name) throw bindingInvalid('', 'metadata.name', 'Required value');
  if (nameFromUrl !== undefined && bodyName !== undefined && bodyName !== nameFromUrl) {
    throw apiErrors.badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${nameFromUrl})`);
  }
  if (body.metadata?.namespace !== undefined && body.metadata.namespace !== namespace) {
    throw apiErrors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const node = body.target?.name;
  if (typeof node !== 'string' || node === '') throw bindingInvalid(name, 'target.name', 'Required value');
  if (body.target?.kind !== undefined && body.target.kind !== '' && body.target.kind !== 'Node') {
    throw bindingInvalid(name, 'target.kind', 'must be empty or "Node"');
  }
  const expected = typeof body.metadata?.resourceVersion === 'string' && body.metadata.resourceVersion !== '' ? body.metadata.resourceVersion : null;
  await catchUp(server);
  const pod = server.projection.view().get(keyOf(resource, namespace, name));
  if (!pod || pod.kind !== 'Pod') throw apiErrors.notFound(resource, name);
  if (pod.spec.nodeName) throw apiErrors.conflict(resource, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
  precheckVersion(resource, pod, expected);
  if (dryRun) return json(201, successStatus(201));
  const result = await server.writer.submit({
    topic: 'desired',
    key: keyOf(resource, namespace, name),
    body: {
      type: 'PodBound',
      namespace,
      name,
      node,
      expectedPodVersion: expected,
      rationale: { filtered: [], scores: [], feasibleNodes: 0, totalNodes: 0 },
    },
    identity: ctx.identity,
  });
  throwIfRejected(result, resource, name);
  return json(201, successStatus(201));
};

// ---------------------------------------------------------------------------------------
// log

const optionalInteger = (query: URLSearchParams, name: string): number | undefined => {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw apiErrors.badRequest(`${name}: Invalid value: "${text}": must be a non-negative integer`);
  return value;
};

/** GET `pods/NAME/log`: streams what the `podLogs` hook returns; 404 when no hook is configured. */
export const podLog = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const pod = await currentObject(server, ctx);
  if (pod.kind !== 'Pod') throw apiErrors.methodNotAllowed();
  const query = ctx.query;
  const container = query.get('container') ?? undefined;
  if (container !== undefined && container !== '' && ![...pod.spec.containers, ...(pod.spec.initContainers ?? [])].some((c) => c.name === container)) {
    throw apiErrors.badRequest(`container ${container} is not valid for pod ${pod.metadata.name}`);
  }
  const containerNames = pod.spec.containers.map((c) => c.name);
  if ((container === undefined || container === '') && containerNames.length > 1) {
    throw apiErrors.badRequest(`a container name must be specified for pod ${pod.metadata.name}, choose one of: [${containerNames.join(' ')}]`);
  }
  if (!server.podLogs) {
    throw new ApiError(failureStatus('NotFound', `logs of pod "${pod.metadata.name}" are not available: no node agent serves logs to this apiserver`, { name: pod.metadata.name, kind: 'pods' }));
  }
  if (!pod.spec.nodeName) {
    throw apiErrors.badRequest(`pod ${pod.metadata.name} is not scheduled yet: no logs`);
  }
  const chosen = container === undefined || container === '' ? containerNames[0] : container;
  const previous = queryBool(query, 'previous');
  if (previous) {
    // As kubelet answers: no earlier instance has ended yet, so there is no previous log.
    const status = (pod.status?.containerStatuses ?? []).find((c) => c.name === chosen);
    if (!status || ((status.restartCount ?? 0) === 0 && !status.lastState?.terminated)) {
      throw apiErrors.badRequest(`previous terminated container "${chosen}" in pod "${pod.metadata.name}" not found`);
    }
  }
  // kube's ValidatePodLogOptions.
  const tailLines = optionalInteger(query, 'tailLines');
  const sinceSeconds = optionalInteger(query, 'sinceSeconds');
  const limitBytes = optionalInteger(query, 'limitBytes');
  if (sinceSeconds !== undefined && sinceSeconds < 1) throw apiErrors.badRequest(`sinceSeconds: Invalid value: ${sinceSeconds}: must be greater than 0`);
  if (limitBytes !== undefined && limitBytes < 1) throw apiErrors.badRequest(`limitBytes: Invalid value: ${limitBytes}: must be greater than 0`);
  if (sinceSeconds !== undefined && (query.get('sinceTime') ?? '') !== '') throw apiErrors.badRequest('at most one of `sinceTime` or `sinceSeconds` may be specified');
  const abort = new AbortController();
  ctx.res.on('close', () => abort.abort());
  const chunks = await server.podLogs({
    pod,
    container: chosen,
    follow: queryBool(query, 'follow'),
    previous,
    timestamps: queryBool(query, 'timestamps'),
    tailLines,
    sinceSeconds,
    limitBytes,
    signal: abort.signal,
  });
  ctx.res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  // `limitBytes` is kept here, whichever hook serves the log (kubelet stops there, a followed log too).
  let left = limitBytes ?? Number.POSITIVE_INFINITY;
  try {
    for await (const chunk of chunks) {
      if (abort.signal.aborted) break;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      ctx.res.write(bytes.length > left ? bytes.subarray(0, left) : bytes);
      left -= bytes.length;
      if (left <= 0) break;
    }
  } finally {
    ctx.res.end();
  }
  return { type: 'streamed' };
};
