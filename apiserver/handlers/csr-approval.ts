/**
 * `certificatesigningrequests/NAME/approval` (PUT and PATCH), what `kubectl certificate
 * approve|deny` calls. As kube's CSR approval strategy: only `status.conditions` change
 * (the certificate and everything else stay as they are); a condition gets its
 * `lastUpdateTime` (and `lastTransitionTime`) when it has none; and the rules of kube's
 * validation hold — Approved, Denied and Failed conditions have status True, appear once
 * each, Approved and Denied exclude each other, and an Approved or Denied condition is
 * never removed. The new status is written to the observed topic like any status.
 */
import type { KubeObject } from '../../schemas/index.ts';
import type { Reply, RequestContext, ServerContext } from '../context.ts';
import { toServed } from '../conversion/index.ts';
import { apiErrors, fieldErrors } from '../errors.ts';
import { mediaTypeOf, parseBody, readBody, readJsonBody } from '../http.ts';
import { applyPatch, subresourcePatchTypeOf } from '../patch/index.ts';
import type { StatusCause } from '../status.ts';
import { parseWriteOptions, type WriteOptions } from '../write-options.ts';
import { submitStatus } from './subresources.ts';
import { currentObject } from './write.ts';

interface Condition {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly [field: string]: unknown;
}

const DECISIONS = ['Approved', 'Denied', 'Failed'] as const;

const conditionsOf = (object: unknown): Condition[] => {
  const conditions = (object as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
  return Array.isArray(conditions) ? (conditions.filter((c) => typeof c === 'object' && c !== null) as Condition[]) : [];
};

const isoNow = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** kube's validateConditions and the approval update's "may not remove" rule. */
const problems = (next: readonly Condition[], previous: readonly Condition[]): StatusCause[] => {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  next.forEach((condition, index) => {
    const field = `status.conditions[${index}]`;
    if (typeof condition.type !== 'string' || condition.type === '') {
      causes.push(fieldErrors.required(`${field}.type`));
      return;
    }
    if ((DECISIONS as readonly string[]).includes(condition.type)) {
      if (seen.has(condition.type)) causes.push(fieldErrors.duplicate(`${field}.type`, condition.type));
      if (condition.status !== 'True') causes.push(fieldErrors.notSupported(`${field}.status`, condition.status, ['True']));
    } else if (!['True', 'False', 'Unknown'].includes(String(condition.status))) {
      causes.push(fieldErrors.notSupported(`${field}.status`, condition.status, ['False', 'True', 'Unknown']));
    }
    seen.add(condition.type);
  });
  if (seen.has('Approved') && seen.has('Denied')) {
    causes.push(fieldErrors.invalid('status.conditions', next.map((c) => c.type), 'Approved and Denied conditions are mutually exclusive'));
  }
  for (const type of ['Approved', 'Denied']) {
    if (previous.some((c) => c.type === type) && !seen.has(type)) causes.push(fieldErrors.forbidden('status.conditions', `updates may not remove a condition of type "${type}"`));
  }
  return causes;
};

const submitApproval = async (server: ServerContext, ctx: RequestContext, current: KubeObject, requested: unknown, options: WriteOptions): Promise<Reply> => {
  const { resource } = ctx.target;
  const name = current.metadata.name;
  const previous = conditionsOf(current);
  const now = isoNow();
  const next = conditionsOf(requested).map((condition) => ({
    ...condition,
    lastUpdateTime: condition.lastUpdateTime ?? now,
    lastTransitionTime: condition.lastTransitionTime ?? now,
  }));
  const causes = problems(next, previous);
  if (causes.length > 0) throw apiErrors.invalid(resource, name, causes);
  const served = toServed(resource.conversion, current) as KubeObject & { status?: Record<string, unknown> };
  const body = { ...served, status: { ...served.status, conditions: next } };
  const version = (requested as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata?.resourceVersion;
  const expected = typeof version === 'string' && version !== '' ? version : null;
  return submitStatus(server, ctx, current, body, expected, options);
};

/** PUT `.../approval`: the body's conditions become the request's. */
export const updateApproval = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const options = parseWriteOptions('UpdateOptions', ctx.query);
  const body = await readJsonBody(ctx.req);
  return submitApproval(server, ctx, await currentObject(server, ctx), body, options);
};

/** PATCH `.../approval`: the patch applies to the whole object; only its conditions are taken. */
export const patchApproval = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource } = ctx.target;
  const options = parseWriteOptions('PatchOptions', ctx.query);
  const patchType = subresourcePatchTypeOf(mediaTypeOf(ctx.req.headers['content-type']), 'approval');
  const patch = parseBody(await readBody(ctx.req), ctx.req.headers['content-type']);
  const current = await currentObject(server, ctx);
  const patched = applyPatch(patchType, resource.kind, toServed(resource.conversion, current), patch) as { metadata?: { resourceVersion?: unknown } };
  const version = patched?.metadata?.resourceVersion;
  const requested = typeof version === 'string' && version === current.metadata.resourceVersion ? { ...patched, metadata: { ...patched.metadata, resourceVersion: undefined } } : patched;
  return submitApproval(server, ctx, current, requested, options);
};

