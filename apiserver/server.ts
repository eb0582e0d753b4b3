/**
 * `createApiServer`: a Kubernetes-shaped HTTP API over the log, on Node's `http` module.
 * Authenticates every request (bearer tokens; `/healthz`, `/readyz`, `/livez` are open),
 * routes it, runs the verb's handler, answers errors as Kubernetes Status objects, logs it
 * and records its metrics.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import pino, { type Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { LogError } from '../log/errors.ts';
import type { EventLog } from '../log/port.ts';
import type { FoldSettings, Projection } from '../projections/index.ts';
import { assertNever } from '../schemas/index.ts';
import { requestAttributes, type Attributes } from './authorization/attributes.ts';
import { ensureBootstrapPolicy } from './authorization/bootstrap.ts';
import { forbidden } from './authorization/errors.ts';
import { createAuthorization, type AuthorizationMode } from './authorization/modes.ts';
import { answerReview } from './authorization/reviews.ts';
import { impersonate } from './impersonation.ts';
import type { AuditLog } from './audit/log.ts';
import type { Status } from './status.ts';
import { authenticateClientCertificate } from './client-certificates.ts';
import { admitNodeRequest } from './authorization/node-restriction.ts';
import { actorOf, ANONYMOUS_PATHS, authenticateToken, bearerToken, CONTROLLERS_GROUP, isControllerIdentity, SCHEDULER_USER, type TokenFile, type UserInfo } from './auth.ts';
import type { PodLogsHook, Reply, RequestContext, ServerContext } from './context.ts';
import { type ResourceUsageHook, serveMetrics } from './metrics-api.ts';
import { aggregatedContentType, aggregatedCore, aggregatedGroups, aggregatedVersionOf } from './aggregated-discovery.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.ts';
import { ApiError, apiErrors } from './errors.ts';
import { getObject, listObjects } from './handlers/read.ts';
import { getScale, patchScale, updateScale } from './handlers/scale.ts';
import { bindPod, patchStatus, podLog, updateStatus } from './handlers/subresources.ts';
import { createObject, deleteCollection, deleteObject, patchObject, updateObject } from './handlers/write.ts';
import { prepareMergeSchema } from './patch/apply/schema.ts';
import { readJsonBody, sendJson, warningHeader } from './http.ts';
import { createLogBarrier } from './log-barrier.ts';
import { createApiMetrics, type ApiMetrics } from './metrics.ts';
import { ensureClusterConfiguration, type RequestedConfiguration } from './cluster-configuration.ts';
import type { Subscription } from 'rxjs';
import { ensureDefaultNamespaces, keepDefaultNamespaces } from './namespaces.ts';
import { startSystemObjects, type SystemObjects, type SystemObjectsOptions } from './system-objects/index.ts';
import { cachedOpenapiDocument, openapiIndex } from './openapi.ts';
import { BUILT_IN_RESOURCES, createServedResources, type ServedResources } from './custom-resources/served.ts';
import { openapiV2Reply } from './openapi-v2.ts';
import { authenticateServiceAccountToken } from './serviceaccount-tokens/authenticate.ts';
import type { TokenIssuer } from './serviceaccount-tokens/issuer.ts';
import { createServiceAccountToken } from './serviceaccount-tokens/token-request.ts';
import { patchApproval, updateApproval } from './handlers/csr-approval.ts';
import { evictPod } from './handlers/eviction.ts';
import { servedBody } from './conversion/index.ts';
import { findResource, type ResourceInfo } from './resources.ts';
import { route, type ResourceTarget, type Route } from './router.ts';
import { isWatchRequest, watchObjects } from './watch.ts';
import { createHealth } from './health.ts';
import { createInflightLimiter, PRIVILEGED_GROUP, requestKind, servingLimits, tooManyRequests, type ServingLimits } from './limits.ts';
import type { TlsMaterial } from './tls.ts';
import { serveDashboard } from './ui.ts';
import { type ConnectDependencies, type PodStreamsHook, refuseWithStatus, serveConnect } from './streaming/connect.ts';
import { createWriter } from './writer.ts';
import type { NodeLeaseRenewals } from './node-leases.ts';
import { randomNameSuffix } from './validation/admit.ts';

export interface ApiServerOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly tokens: TokenFile;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  readonly host?: string;
  readonly logger?: Logger;
  /**
   * The registry `/metrics` serves (default a new one): the composition root hands in the
   * process's registry so that the controllers, agents, log and projection of `logplane up`
   * show there too.
   */
  readonly registry?: Registry;
  /** How many changes back, per topic partition, a watch may resume before it gets 410 Expired (default 100,000). */
  readonly watchWindow?: number;
  /** Interval of BOOKMARK events for watches that allow them (default 60 s). */
  readonly bookmarkIntervalMs?: number;
  /** Upper bound (and default) of a watch's duration (default 30 min). */
  readonly maxWatchSeconds?: number;
  /** Bytes a watch may hold unsent before it is ended as too slow (default 1 MiB). */
  readonly watchBufferBytes?: number;
  /** How long an ended watch may take to hand its last bytes to the client before the connection is destroyed (default 5 s). */
  readonly watchDrainGraceMs?: number;
  /** How long reads wait for the projection to catch up with the log (default 10 s). */
  readonly readTimeoutMs?: number;
  /** How long writes wait for the projection to apply their event (default 30 s). */
  readonly applyTimeoutMs?: number;
  /** Serves `pods/NAME/log`; without it those requests get 404. */
  readonly podLogs?: PodLogsHook;
  /** The nodes' latest Lease renewals (their heartbeats), served as `renewTime` of their Leases in kube-node-lease; without it the stored one. */
  readonly nodeLeaseRenewals?: NodeLeaseRenewals;
  /** Hands `pods/NAME/exec|attach|portforward` upgrades to the pod's node agent (streaming/connect.ts); without it they get 503. */
  readonly podStreams?: PodStreamsHook;
  /** The node agents' resource usage, served as `metrics.k8s.io`; without it those requests get 503. */
  readonly resourceUsage?: ResourceUsageHook;
  /** Serve HTTPS with this certificate (kubectl sends tokens only over HTTPS); plain HTTP without. */
  readonly tls?: TlsMaterial;
  /**
   * `--client-ca-file`: with `tls`, client certificates this CA (PEM) signed authenticate
   * their subject's CommonName, in the groups of its Organizations.
   */
  readonly clientCA?: string;
  /** `--audit-log-path`: every request its policy records, as kube's audit Events (closed with the server). */
  readonly audit?: AuditLog;
  /**
   * Service-account tokens (`--service-account-signing-key-file`, `--service-account-issuer`,
   * `--api-audiences`): the TokenRequest API, OIDC discovery, and JWT authentication.
   * Without it only the token file authenticates.
   */
  readonly serviceAccountTokens?: TokenIssuer;
  /** Extra authenticated APIs (the logplane history API), tried in order before the Kubernetes routes. */
  readonly extensions?: readonly ApiExtension[];
  /** How long `/readyz` lets the log take to answer and the projection to catch up with it (default 5 s). */
  readonly healthTimeoutMs?: number;
  /** Request timeouts, the connection cap and the in-flight limits (kube's defaults for what is left out). */
  readonly limits?: Partial<ServingLimits>;
  /**
   * `--authorization-mode`: the authorizers asked in order, after `system:masters` (always
   * allowed). Default `AlwaysAllow`, kube-apiserver's default; `logplane up` and
   * `logplane apiserver` pass `RBAC`.
   */
  readonly authorizationModes?: readonly AuthorizationMode[];
  /**
   * The random part of a generateName (kube's `names.SimpleNameGenerator`: 5 characters of a
   * consonant-and-digit alphabet); replaceable so a test can make every generated name collide.
   */
  readonly nameSuffix?: () => string;
}

/**
 * An extra API mounted on the apiserver. It sees requests after authentication (with the
 * user, undefined only on the anonymous health paths) and resolves true when it answered
 * the request, false to let the next handler try.
 */
export type ApiExtension = (req: IncomingMessage, res: ServerResponse, url: URL, user: UserInfo | undefined) => Promise<boolean>;

export interface ApiServer {
  /** `http://host:port`, or `https://` with `tls`. */
  readonly url: string;
  readonly port: number;
  /** This server's Prometheus registry (also served at `/metrics`). */
  readonly metrics: Registry;
  /** Creates default, kube-system, kube-public and kube-node-lease if missing, and from then on recreates one that is deleted. */
  ensureDefaultNamespaces(): Promise<void>;
  /**
   * Appends the cluster configuration to a log that holds none (`requested`, else the
   * defaults); throws ConfigurationMismatchError when `requested` contradicts the log's.
   */
  ensureClusterConfiguration(requested?: RequestedConfiguration): Promise<FoldSettings>;
  /** Starts keeping the `kubernetes` Service, its endpoints and this apiserver's Lease (after the configuration and namespaces); stopped by `close`. */
  startSystemObjects(options?: Partial<Pick<SystemObjectsOptions, 'intervalMs' | 'leaseDurationSeconds'>>): SystemObjects;
  /**
   * With RBAC among the modes: creates the bootstrap ClusterRoles and ClusterRoleBindings that
   * are missing and adds to the autoupdate ones what they lack (see `authorization/bootstrap.ts`).
   */
  ensureBootstrapPolicy(): Promise<void>;
  /** Ends open watches and closes the listener and every connection. */
  close(): Promise<void>;
}

/** The kube verb of a resource request, for dispatch, metrics and logs. */
type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

const verbOf = (method: string, target: ResourceTarget, query: URLSearchParams, watchPrefix: boolean): Verb => {
  const collection = target.name === undefined;
  switch (method) {
    case 'GET':
    case 'HEAD':
      // As kube's request info: `watch` on a collection only (a named GET stays a get).
      if (watchPrefix || (collection && isWatchRequest(query))) return 'watch';
      return collection ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return collection ? 'deletecollection' : 'delete';
    default:
      throw apiErrors.methodNotAllowed();
  }
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The causation headers only controllers may send, with their bounds. */
const CAUSATION_HEADERS = ['x-logplane-causation-id', 'x-logplane-correlation-id', 'x-logplane-decided-at'] as const;
/** A correlation id: printable ASCII, at most 253 bytes (a DNS name's length). */
const CORRELATION_ID = /^[\x21-\x7e]{1,253}$/;
/** A list resourceVersion: dot-separated offsets, at most 4096 bytes (hundreds of partitions). */
const MAX_DECIDED_AT_BYTES = 4096;

const headerValue = (req: IncomingMessage, name: string): string | null => {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? null : text;
};

/**
 * The causation of a request's events, from `X-Logplane-Causation-Id`, `-Correlation-Id`
 * and `-Decided-At`: accepted only from controller identities (400 from anyone else, so a
 * user cannot forge what `audit` and `why` show) and only in their bounded forms.
 */
const causationHeaders = (req: IncomingMessage, user: UserInfo) => {
  if (!isControllerIdentity(user)) {
    const sent = CAUSATION_HEADERS.find((name) => req.headers[name] !== undefined);
    if (sent !== undefined) {
      throw apiErrors.badRequest(`${sent}: only controller identities (group ${CONTROLLERS_GROUP}, or ${SCHEDULER_USER}) may send this header; user "${user.name}" may not`);
    }
    return { causationId: null, correlationId: null, decidedAt: null };
  }
  const causationId = headerValue(req, 'x-logplane-causation-id');
  if (causationId !== null && !UUID.test(causationId)) {
    throw apiErrors.badRequest(`X-Logplane-Causation-Id must be the UUID of the causing event, got ${JSON.stringify(causationId.slice(0, 64))}`);
  }
  const correlationId = headerValue(req, 'x-logplane-correlation-id');
  if (correlationId !== null && !CORRELATION_ID.test(correlationId)) {
    throw apiErrors.badRequest('X-Logplane-Correlation-Id must be 1 to 253 printable ASCII characters');
  }
  const decidedAt = headerValue(req, 'x-logplane-decided-at');
  if (decidedAt !== null && (decidedAt.length > MAX_DECIDED_AT_BYTES || !/^\d+(\.\d+)*$/.test(decidedAt))) {
    throw apiErrors.badRequest(`X-Logplane-Decided-At must be a list resourceVersion (dot-separated offsets, at most ${MAX_DECIDED_AT_BYTES} bytes)`);
  }
  return { causationId, correlationId, decidedAt };
};

/** Runs the handler of a verb on a resource target. */
const dispatch = (server: ServerContext, ctx: RequestContext, verb: Verb): Promise<Reply> => {
  const { subresource, name } = ctx.target;
  // As kube's connect handlers: exec, attach and port-forward are served on upgraded connections only.
  if (subresource === 'exec' || subresource === 'attach' || subresource === 'portforward') throw apiErrors.badRequest('Upgrade request required');
  // The main resource serves the verbs its kind has (namespaces have no deletecollection).
  if (subresource === undefined && !ctx.target.resource.verbs.includes(verb)) throw apiErrors.methodNotAllowed();
  switch (verb) {
    case 'get':
      if (subresource === undefined || subresource === 'status' || subresource === 'approval') return getObject(server, ctx);
      if (subresource === 'scale') return getScale(server, ctx);
      if (subresource === 'log') return podLog(server, ctx);
      throw apiErrors.methodNotAllowed();
    case 'list':
      return listObjects(server, ctx);
    case 'watch':
      if (subresource !== undefined) throw apiErrors.methodNotAllowed();
      return watchObjects(server, ctx);
    case 'create':
      if (subresource === 'eviction' && name !== undefined) return evictPod(server, ctx);
      if (subresource === 'binding' && name !== undefined && ctx.target.namespace !== undefined) {
        return bindPod(server, ctx, ctx.target.namespace, name);
      }
      if (subresource === 'token' && name !== undefined && ctx.target.resource.kind === 'ServiceAccount') {
        if (!server.serviceAccountTokens) throw apiErrors.pathNotFound();
        return createServiceAccountToken(server, ctx, server.serviceAccountTokens);
      }
      if (name !== undefined) throw apiErrors.methodNotAllowed();
      return createObject(server, ctx);
    case 'update':
      if (subresource === undefined) return updateObject(server, ctx);
      if (subresource === 'status') return updateStatus(server, ctx);
      if (subresource === 'scale') return updateScale(server, ctx);
      if (subresource === 'approval') return updateApproval(server, ctx);
      throw apiErrors.methodNotAllowed();
    case 'patch':
      if (subresource === undefined) return patchObject(server, ctx);
      if (subresource === 'status') return patchStatus(server, ctx);
      if (subresource === 'scale') return patchScale(server, ctx);
      if (subresource === 'approval') return patchApproval(server, ctx);
      throw apiErrors.methodNotAllowed();
    case 'delete':
      if (subresource !== undefined) throw apiErrors.methodNotAllowed();
      return deleteObject(server, ctx);
    case 'deletecollection':
      return deleteCollection(server, ctx);
    default:
      return assertNever(verb, 'verb');
  }
};

/** Any failure as a Status: a log that is unreachable is 503 (retry later), the rest 500. */
const toApiError = (error: unknown): ApiError => {
  if (error instanceof ApiError) return error;
  if (error instanceof LogError && error.retriable) return apiErrors.serviceUnavailable(`the log is unavailable: ${error.message}`);
  return apiErrors.internal(error instanceof Error ? error.message : String(error), error);
};

/** Whether a request streams for as long as it lasts (a watch, a pod log), as kube's long-running check says. */
const isLongRunning = (method: string, routed: Route, query: URLSearchParams): boolean =>
  (method === 'GET' || method === 'HEAD') &&
  routed.type === 'resource' &&
  (routed.watchPrefix || (routed.target.name === undefined && isWatchRequest(query)) || routed.target.subresource === 'log');

/** A reply as the requested version shows its objects (the stored version's replies as they are). */
const servedReply = (resource: ResourceInfo, reply: Reply): Reply =>
  reply.type === 'json' && resource.conversion ? { ...reply, body: servedBody(resource.conversion, reply.body) } : reply;

const sendReply = (res: ServerResponse, reply: Reply): void => {
  if (reply.type === 'streamed') return;
  const headers: Record<string, string[]> = reply.warnings ? { Warning: reply.warnings.map(warningHeader) } : {};
  sendJson(res, reply.code, reply.body, headers);
};

/** Creates and starts an apiserver; resolves once it listens. */
export const createApiServer = async (options: ApiServerOptions): Promise<ApiServer> => {
  const { log, projection, tokens } = options;
  const authorization = createAuthorization(options.authorizationModes ?? ['AlwaysAllow'], projection);
  const limits = servingLimits(options.limits);
  const inflight = createInflightLimiter(limits);
  const logger = options.logger ?? pino({ level: 'info' }).child({ component: 'apiserver' });
  const metrics: ApiMetrics = createApiMetrics(log, projection, options.registry);
  const closing = new AbortController();
  const terminatedWatchers = new Counter({
    name: 'apiserver_terminated_watchers_total',
    help: 'Counter of watchers closed due to unresponsiveness, by resource.',
    labelNames: ['resource'] as const,
    registers: [metrics.registry],
  });
  const watchBufferPeak = new Gauge({
    name: 'logplane_watch_buffer_peak_bytes',
    help: 'The most bytes any one watch has held unsent since the apiserver started (bounded by the watch buffer).',
    registers: [metrics.registry],
  });
  new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: 'Requests in flight now, by kind (readOnly, mutating), as limited by --max-requests-inflight and --max-mutating-requests-inflight.',
    labelNames: ['request_kind'] as const,
    registers: [metrics.registry],
    collect() {
      this.set({ request_kind: 'readOnly' }, inflight.inflight.readOnly);
      this.set({ request_kind: 'mutating' }, inflight.inflight.mutating);
    },
  });
  let bufferPeak = 0;
  const maxBufferedBytes = options.watchBufferBytes ?? 1024 * 1024;
  const drainGraceMs = options.watchDrainGraceMs ?? 5000;
  for (const [name, value] of [['watchBufferBytes', maxBufferedBytes], ['watchDrainGraceMs', drainGraceMs]] as const) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${value}`);
  }
  const server: ServerContext = {
    log,
    projection,
    logEnd: createLogBarrier(log),
    writer: createWriter({ log, projection, logger, ...(options.applyTimeoutMs !== undefined ? { applyTimeoutMs: options.applyTimeoutMs } : {}) }),
    logger,
    metrics,
    watchWindow: options.watchWindow ?? 100_000,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    maxWatchSeconds: options.maxWatchSeconds ?? 1800,
    readTimeoutMs: options.readTimeoutMs ?? 10_000,
    podLogs: options.podLogs,
    nodeLeaseRenewals: options.nodeLeaseRenewals,
    serviceAccountTokens: options.serviceAccountTokens,
    nameSuffix: options.nameSuffix ?? randomNameSuffix,
    closing: closing.signal,
    slowWatches: {
      maxBufferedBytes,
      drainGraceMs,
      terminated: (resource) => terminatedWatchers.inc({ resource }),
      buffered: (bytes) => {
        if (bytes <= bufferPeak) return;
        bufferPeak = bytes;
        watchBufferPeak.set(bytes);
      },
    },
  };
  let serverAddress = '';
  /** The URL clients reach this apiserver at (the OIDC document's `jwks_uri`, as kube's external address). */
  let publicUrl = '';
  const issuer = options.serviceAccountTokens;
  /** The user of a bearer token: the token file's, else a service account's (a JWT this apiserver's issuer signed). */
  const authenticateBearer = async (token: string): Promise<UserInfo | undefined> =>
    authenticateToken(tokens, token) ?? (issuer ? await authenticateServiceAccountToken(issuer, () => projection.view(), token, logger) : undefined);
  const authenticateRequest = async (req: IncomingMessage): Promise<UserInfo> => {
    // As kube's authenticator union: a verified client certificate first, then the bearer token.
    const fromCertificate = options.clientCA !== undefined ? authenticateClientCertificate(req) : undefined;
    if (fromCertificate) return fromCertificate;
    const token = bearerToken(req);
    const user = token === undefined ? undefined : await authenticateBearer(token);
    if (!user) throw apiErrors.unauthorized();
    return user;
  };
  /** The built-in kinds and the custom resources of the Established CRDs the projection holds. */
  const servedResources = createServedResources();
  const health = createHealth({ log, projection, closing: closing.signal, timeoutMs: options.healthTimeoutMs ?? 5000, logger });

  /** Non-resource routes: discovery, OpenAPI, version, metrics. */
  const serveNonResource = async (
    route: Exclude<Route, { type: 'resource' | 'bindings' | 'health' | 'review' | 'resourceMetrics' }>,
    served: ServedResources,
    res: ServerResponse,
    accept: string | undefined,
    ifNoneMatch?: string,
  ): Promise<void> => {
    switch (route.type) {
      case 'metrics': {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
        res.end(text);
        return;
      }
      case 'version':
        return sendJson(res, 200, versionInfo());
      case 'apiVersions': {
        const aggregated = aggregatedVersionOf(accept);
        if (aggregated) return sendJson(res, 200, aggregatedCore(aggregated), { 'Content-Type': aggregatedContentType(aggregated), Vary: 'Accept' });
        return sendJson(res, 200, apiVersions(serverAddress), { Vary: 'Accept' });
      }
      case 'apiGroupList': {
        const aggregated = aggregatedVersionOf(accept);
        if (aggregated) return sendJson(res, 200, aggregatedGroups(aggregated, served), { 'Content-Type': aggregatedContentType(aggregated), Vary: 'Accept' });
        return sendJson(res, 200, apiGroupList(served), { Vary: 'Accept' });
      }
      case 'apiGroup':
        return sendJson(res, 200, apiGroup(route.group, served));
      case 'resourceList':
        return sendJson(res, 200, apiResourceList(route.groupVersion, served));
      case 'openapiV3Index':
        return sendJson(res, 200, openapiIndex(served));
      case 'openapiV3Document':
        return sendJson(res, 200, cachedOpenapiDocument(route.groupVersion, served).document);
      case 'openapiV2': {
        const reply = openapiV2Reply(accept, ifNoneMatch);
        res.writeHead(reply.code, { 'Content-Type': reply.contentType, 'Content-Length': reply.body.length, ETag: reply.etag, Vary: 'Accept', 'Cache-Control': 'no-cache, private' });
        res.end(reply.body);
        return;
      }
      case 'oidc': {
        // As kube-apiserver: served only with a service-account issuer, in OIDC's media types.
        if (!issuer) throw apiErrors.pathNotFound();
        if (route.document === 'keys') return sendJson(res, 200, await issuer.jwks(), { 'Content-Type': 'application/jwk-set+json' });
        return sendJson(res, 200, {
          issuer: issuer.issuer,
          jwks_uri: `${publicUrl}/openid/v1/jwks`,
          response_types_supported: ['id_token'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        });
      }
      case 'notFound':
        throw apiErrors.pathNotFound();
      default:
        return assertNever(route, 'route');
    }
  };

  /**
   * What a path may address: custom resources live under `/apis` only, so nothing else reads
   * the projection here (health must answer without it). A projection that cannot be read
   * serves the built-in kinds; the handler then meets its failure and answers it.
   */
  const servedFor = (pathname: string): ServedResources => {
    if (pathname !== '/apis' && !pathname.startsWith('/apis/') && !pathname.startsWith('/openapi/v3')) return BUILT_IN_RESOURCES;
    try {
      return servedResources(projection.view());
    } catch (error) {
      logger.warn({ error: String(error) }, 'custom resources not served: the projection cannot be read');
      return BUILT_IN_RESOURCES;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://logplane.invalid');
    const served = servedFor(url.pathname);
    const routed = route(url.pathname, served);
    const labels = { verb: method.toLowerCase(), resource: '', subresource: '', code: '' };
    let user: UserInfo | undefined;
    let release: (() => void) | undefined;
    const received = new Date();
    const auditID = options.audit?.newId();
    if (auditID !== undefined) res.setHeader('Audit-Id', auditID);
    let attributes: Attributes | undefined;
    let denial: { reason: string } | undefined;
    let failure: Status | undefined;
    try {
      if (routed.type === 'health') {
        if (method !== 'GET' && method !== 'HEAD') throw apiErrors.methodNotAllowed();
        await health(routed.check, url.pathname, url.searchParams, res);
        return;
      }
      if (await serveDashboard(req, res, url)) return;
      if (!ANONYMOUS_PATHS.has(url.pathname)) {
        // As kube's filters: authentication, then impersonation (judged for the authenticated user).
        user = impersonate(req, await authenticateRequest(req), authorization.authorizer);
        if (user.impersonatedBy) logger.info({ user: user.impersonatedBy.name, as: user.name, groups: user.groups, method, path: url.pathname }, 'impersonating');
      }
      // As kube's max-in-flight filter: after authentication, system:masters exempt.
      if (!user?.groups.includes(PRIVILEGED_GROUP)) {
        release = inflight.acquire(requestKind(method, isLongRunning(method, routed, url.searchParams)));
        if (!release) throw tooManyRequests();
      }
      // As kube's authorization filter: after the in-flight limit, before any handler.
      if (user) {
        attributes = requestAttributes(user, method, url.pathname, url.searchParams);
        const decision = authorization.authorizer.authorize(attributes);
        if (decision.type !== 'allow') {
          logger.debug({ user: user.name, attributes, reason: decision.reason }, 'forbidden');
          denial = { reason: decision.reason };
          throw forbidden(attributes, decision.reason);
        }
      }
      for (const extension of options.extensions ?? []) {
        if (await extension(req, res, url, user)) return;
      }
      if (routed.type === 'review') {
        if (!user) throw apiErrors.unauthorized();
        if (method !== 'POST') throw apiErrors.methodNotAllowed();
        labels.verb = 'create';
        labels.resource = routed.review.plural;
        const body = await readJsonBody(req);
        sendReply(
          res,
          await answerReview(routed.review, body, {
            user,
            namespace: routed.namespace,
            authorizer: authorization.authorizer,
            authenticateToken: authenticateBearer,
          }),
        );
        return;
      }
      if (routed.type === 'resourceMetrics') {
        if (method !== 'GET' && method !== 'HEAD') throw apiErrors.methodNotAllowed();
        if (isWatchRequest(url.searchParams)) throw apiErrors.methodNotAllowed();
        labels.verb = routed.target.name === undefined ? 'list' : 'get';
        labels.resource = routed.target.resource;
        sendJson(res, 200, await serveMetrics({ projection, resourceUsage: options.resourceUsage, logger }, routed.target, url.searchParams));
        return;
      }
      if (routed.type !== 'resource' && routed.type !== 'bindings') {
        // A path that names nothing served is 404 whatever the verb, as kube's NotFound handler.
        if (routed.type !== 'notFound' && method !== 'GET' && method !== 'HEAD') throw apiErrors.methodNotAllowed();
        await serveNonResource(routed, served, res, req.headers.accept, req.headers['if-none-match']);
        return;
      }
      if (!user) throw apiErrors.unauthorized();
      const identity = { actor: actorOf(user), ...causationHeaders(req, user) };
      const target: ResourceTarget =
        routed.type === 'bindings'
          ? { resource: findResource('', 'v1', 'pods')!, namespace: routed.namespace, name: undefined, subresource: 'binding' }
          : routed.target;
      labels.resource = target.resource.plural;
      labels.subresource = target.subresource ?? '';
      const ctx: RequestContext = {
        req,
        res,
        query: url.searchParams,
        user,
        identity,
        target,
        logger: logger.child({ user: user.name, method, path: url.pathname }),
      };
      if (routed.type === 'bindings') {
        if (method !== 'POST') throw apiErrors.methodNotAllowed();
        labels.verb = 'create';
        sendReply(res, await bindPod(server, ctx, routed.namespace, undefined));
        return;
      }
      const verb = verbOf(method, target, url.searchParams, routed.watchPrefix);
      labels.verb = verb;
      admitNodeRequest(user, { resource: target.resource.plural, apiGroup: target.resource.group, subresource: target.subresource, verb, namespace: target.namespace, name: target.name }, projection.view());
      sendReply(res, servedReply(target.resource, await dispatch(server, ctx, verb)));
    } catch (error) {
      const apiError = toApiError(error);
      failure = apiError.status;
      if (!(error instanceof ApiError)) logger.error({ err: error, method, path: url.pathname }, 'request failed');
      const retryAfter = apiError.status.details?.retryAfterSeconds;
      if (res.headersSent) res.end();
      else sendJson(res, apiError.status.code, apiError.status, retryAfter !== undefined ? { 'Retry-After': String(retryAfter) } : {});
    } finally {
      release?.();
      labels.code = String(res.statusCode);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc(labels);
      metrics.requestDuration.observe(labels, seconds);
      const level = labels.verb === 'get' || labels.verb === 'list' || labels.verb === 'watch' || routed.type !== 'resource' ? 'debug' : 'info';
      logger[res.statusCode >= 500 ? 'warn' : level](
        { method, path: url.pathname, query: url.search, user: user?.name, verb: labels.verb, code: res.statusCode, ms: Math.round(seconds * 1000) },
        'request',
      );
      if (auditID !== undefined && routed.type !== 'health') {
        options.audit?.record({
          auditID,
          received,
          requestURI: req.url ?? '/',
          sourceIP: req.socket.remoteAddress,
          userAgent: req.headers['user-agent'],
          user,
          attributes,
          code: res.statusCode,
          ...(failure ? { status: { status: 'Failure', ...(failure.reason ? { reason: failure.reason } : {}), ...(failure.message ? { message: failure.message } : {}) } } : {}),
          ...(denial ? { denial } : {}),
        });
      }
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    void handle(req, res);
  };
  const connectDependencies: ConnectDependencies = {
    server,
    podStreams: options.podStreams,
    authenticate: authenticateRequest,
    authorize: (user, method, pathname, query) => {
      const attributes = requestAttributes(user, method, pathname, query);
      const decision = authorization.authorizer.authorize(attributes);
      if (decision.type !== 'allow') throw forbidden(attributes, decision.reason);
    },
  };
  /** Upgrades (exec, attach, port-forward): answered on the raw socket. */
  const upgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://logplane.invalid');
    serveConnect(connectDependencies, req, socket, head, url, route(url.pathname)).then(
      () => logger.info({ method: req.method, path: url.pathname, query: url.search.slice(0, 500) }, 'connect'),
      (error: unknown) => {
        const apiError = toApiError(error);
        if (!(error instanceof ApiError)) logger.error({ err: error, path: url.pathname }, 'connect request failed');
        logger.info({ method: req.method, path: url.pathname, code: apiError.status.code }, 'connect refused');
        refuseWithStatus(socket, apiError);
      },
    );
  };
  // Node's request timeout covers receiving the request only (the parser stops the clock once
  // the body has ended), so watches and followed logs stream on; checked every second.
  const httpOptions = {
    keepAliveTimeout: 65_000,
    headersTimeout: limits.requestHeaderTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(1, Math.min(1000, limits.requestHeaderTimeoutMs || 1000, limits.requestTimeoutMs || 1000)),
  };
  const http = options.tls
    ? createHttpsServer(
        {
          ...httpOptions,
          cert: options.tls.cert,
          key: options.tls.key,
          // Ask for a client certificate, and judge it per request (a request without one may carry a token).
          ...(options.clientCA !== undefined ? { requestCert: true, rejectUnauthorized: false, ca: [options.clientCA] } : {}),
        },
        listener,
      )
    : createServer(httpOptions, listener);
  http.on('upgrade', upgradeListener);
  if (limits.maxConnections > 0) http.maxConnections = limits.maxConnections;
  let dropped = 0;
  let dropLogged = 0;
  http.on('drop', (peer?: { remoteAddress?: string; remotePort?: number }) => {
    dropped++;
    const now = Date.now();
    if (now - dropLogged < 1000) return;
    dropLogged = now;
    logger.warn(
      { maxConnections: limits.maxConnections, dropped, remoteAddress: peer?.remoteAddress, remotePort: peer?.remotePort },
      `connection refused: ${limits.maxConnections} connections are open (--max-connections); ${dropped} refused so far`,
    );
  });
  // Every write records its field manager, which needs the API document's merge types.
  prepareMergeSchema();
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  serverAddress = `${host}:${port}`;
  // A wildcard address says where it listens, not where to connect: clients of this machine use loopback.
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const url = `${options.tls ? 'https' : 'http'}://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
  publicUrl = url;
  logger.info({ url }, 'apiserver listening');
  let systemObjects: SystemObjects | undefined;

  let keeping: Subscription | undefined;
  return {
    url,
    port,
    metrics: metrics.registry,
    ensureDefaultNamespaces: async () => {
      await ensureDefaultNamespaces(server, logger);
      keeping ??= keepDefaultNamespaces(server, logger);
    },
    ensureClusterConfiguration: (requested = {}) => ensureClusterConfiguration(server, requested, logger),
    startSystemObjects: (started = {}) => (systemObjects ??= startSystemObjects(server, { ...started, address: reachable, port, logger })),
    ensureBootstrapPolicy: () => (authorization.rbac ? ensureBootstrapPolicy(server, logger) : Promise.resolve()),
    close: async () => {
      await systemObjects?.stop();
      closing.abort();
      keeping?.unsubscribe();
      authorization.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await options.audit?.close();
    },
  };
};
