/**
 * `POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token` (TokenRequest,
 * authentication.k8s.io/v1): what `kubectl create token` calls. As kube's token REST
 * storage: the service account must exist; `spec.expirationSeconds` defaults to 3600 and
 * must be at least 600 and at most 2^32; `spec.audiences` defaults to the apiserver's
 * audiences; `spec.boundObjectRef` binds the token to a Pod, Secret or Node that exists
 * (and has the uid given), so deleting it revokes the token; a node's must be bound to a pod
 * bound to it (NodeRestriction). Nothing is appended: tokens are not stored. `dryRun=All` answers without a token.
 */
import { failureStatus, type StatusCause } from '../status.ts';
import { ApiError, apiErrors, fieldErrors } from '../errors.ts';
import { json, type Reply, type RequestContext, type ServerContext } from '../context.ts';
import { readJsonBody } from '../http.ts';
import { isObject, type Json } from '../patch/json.ts';
import { parseWriteOptions } from '../write-options.ts';
import { admitNodeTokenRequest } from '../authorization/node-restriction.ts';
import type { BoundObject, TokenIssuer } from './issuer.ts';

const API_VERSION = 'authentication.k8s.io/v1';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const BOUND_KINDS: readonly BoundObject['kind'][] = ['Pod', 'Secret', 'Node'];

const invalid = (name: string, causes: readonly StatusCause[]): ApiError =>
  new ApiError(
    failureStatus('Invalid', `TokenRequest.authentication.k8s.io "${name}" is invalid: ${causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`).join(', ')}`, {
      name,
      group: 'authentication.k8s.io',
      kind: 'TokenRequest',
      causes,
    }),
  );

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Answers a TokenRequest for the service account of the URL. */
export const createServiceAccountToken = async (server: ServerContext, ctx: RequestContext, issuer: TokenIssuer): Promise<Reply> => {
  const namespace = ctx.target.namespace ?? '';
  const name = ctx.target.name ?? '';
  const { dryRun } = parseWriteOptions('CreateOptions', ctx.query);
  const body = (await readJsonBody(ctx.req)) as Json;
  if (!isObject(body)) throw apiErrors.badRequest('the request body must be a TokenRequest object');
  if ((body['kind'] !== undefined && body['kind'] !== 'TokenRequest') || (body['apiVersion'] !== undefined && body['apiVersion'] !== API_VERSION)) {
    throw apiErrors.badRequest(`the body is ${String(body['apiVersion'])}, Kind=${String(body['kind'])}; this endpoint takes ${API_VERSION}, Kind=TokenRequest`);
  }
  const spec = body['spec'] === undefined || body['spec'] === null ? {} : body['spec'];
  if (!isObject(spec)) throw invalid(name, [fieldErrors.invalid('spec', spec, 'must be an object')]);
  const causes: StatusCause[] = [];

  const audiencesValue = spec['audiences'];
  let audiences = [...issuer.audiences];
  if (audiencesValue !== undefined && audiencesValue !== null) {
    if (!Array.isArray(audiencesValue) || audiencesValue.some((a) => typeof a !== 'string' || a === '')) {
      causes.push(fieldErrors.invalid('spec.audiences', audiencesValue, 'must be a list of non-empty strings'));
    } else if (audiencesValue.length > 0) {
      audiences = audiencesValue as string[];
    }
  }
  const expirationValue = spec['expirationSeconds'];
  let expirationSeconds = DEFAULT_EXPIRATION_SECONDS;
  if (expirationValue !== undefined && expirationValue !== null) {
    if (typeof expirationValue !== 'number' || !Number.isInteger(expirationValue)) {
      causes.push(fieldErrors.invalid('spec.expirationSeconds', expirationValue, 'must be an integer'));
    } else if (expirationValue < MIN_EXPIRATION_SECONDS) {
      causes.push(fieldErrors.invalid('spec.expirationSeconds', expirationValue, 'may not specify a duration less than 10 minutes'));
    } else if (expirationValue > MAX_EXPIRATION_SECONDS) {
      causes.push(fieldErrors.invalid('spec.expirationSeconds', expirationValue, 'may not specify a duration larger than 2^32 seconds'));
    } else {
      expirationSeconds = expirationValue;
    }
  }
  const view = server.projection.view();
  const ref = spec['boundObjectRef'];
  // NodeRestriction: a node's token must be bound to a pod of its own.
  admitNodeTokenRequest(ctx.user, { namespace, serviceAccount: name, boundObjectRef: ref }, view);
  let bound: BoundObject | undefined;
  if (ref !== undefined && ref !== null) {
    if (!isObject(ref)) {
      causes.push(fieldErrors.invalid('spec.boundObjectRef', ref, 'must be an object'));
    } else {
      const kind = ref['kind'];
      const refName = typeof ref['name'] === 'string' ? ref['name'] : '';
      if (!BOUND_KINDS.includes(kind as BoundObject['kind'])) causes.push(fieldErrors.notSupported('spec.boundObjectRef.kind', kind, BOUND_KINDS));
      else if (ref['apiVersion'] !== undefined && ref['apiVersion'] !== 'v1') causes.push(fieldErrors.notSupported('spec.boundObjectRef.apiVersion', ref['apiVersion'], ['v1']));
      else if (refName === '') causes.push(fieldErrors.required('spec.boundObjectRef.name'));
      else {
        const boundKind = kind as BoundObject['kind'];
        const object = view.get(boundKind === 'Node' ? `Node//${refName}` : `${boundKind}/${namespace}/${refName}`);
        const uid = typeof ref['uid'] === 'string' ? ref['uid'] : '';
        if (!object) throw apiErrors.badRequest(`cannot bind token for serviceaccount "${name}" to ${boundKind.toLowerCase()} "${refName}": not found`);
        if (uid !== '' && uid !== object.metadata.uid) {
          throw new ApiError(failureStatus('Conflict', `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`));
        }
        bound = { kind: boundKind, name: refName, uid: object.metadata.uid ?? '' };
      }
    }
  }
  if (causes.length > 0) throw invalid(name, causes);

  const account = view.get(`ServiceAccount/${namespace}/${name}`);
  if (!account) throw apiErrors.notFound(ctx.target.resource, name);
  const now = Date.now();
  const token = dryRun
    ? ''
    : await issuer.sign({ namespace, serviceAccount: { name, uid: account.metadata.uid ?? '' }, ...(bound ? { bound } : {}) }, { audiences, expirationSeconds, now });
  ctx.logger.info({ serviceAccount: `${namespace}/${name}`, user: ctx.user.name, expirationSeconds, bound: bound?.kind, dryRun }, 'service-account token issued');
  return json(201, {
    kind: 'TokenRequest',
    apiVersion: API_VERSION,
    metadata: { name, namespace, creationTimestamp: isoTime(now) },
    spec: { audiences, expirationSeconds, boundObjectRef: bound ? { kind: bound.kind, apiVersion: 'v1', name: bound.name, uid: bound.uid } : null },
    status: { token, expirationTimestamp: isoTime(now + expirationSeconds * 1000) },
  });
};
