/**
 * The agent's log endpoint (the kubelet's `/containerLogs`): in distributed mode the
 * apiserver serves `pods/NAME/log` by streaming from the agent that runs the pod. The port
 * is published in the Node's `status.daemonEndpoints.kubeletEndpoint.Port`. It also answers
 * `GET /resourceUsage/{node}` with the node's and its pods' latest resource usage as JSON
 * (resource-usage.ts), which the apiserver serves as `metrics.k8s.io` (kubelet's
 * `/metrics/resource` scraped by metrics-server, in one hop).
 *
 * With a metrics registry it also serves `GET /metrics` (kubelet's metrics, metrics.ts).
 *
 * It serves HTTPS only and, like kubelet with `--client-ca-file`, asks every client for a
 * certificate: the TLS handshake fails without one signed by the cluster CA, and a request
 * whose certificate names another identity than the apiserver's (`kubelet-client`) gets 403.
 * With a token authorizer (kubelet's `--authentication-token-webhook` and
 * `--authorization-mode=Webhook`), a client without a certificate may present a bearer
 * token instead, for `/metrics` only: the token must be authorized to `get nodes/metrics`
 * for every node this agent runs; the handshake then lets certificate-less clients through,
 * and every request without a verified certificate or an accepted token gets 401.
 * Every malformed request gets a 4xx with a plain-text reason; nothing a client sends can
 * throw out of the handler.
 */
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { LogServerConfigError } from './errors.ts';
import { KubeletNotFoundError, type PodRuntime } from './kubelet/index.ts';
import type { NodeResourceUsage } from './resource-usage.ts';
import { refuseUpgrade, type StreamingHandler } from './streaming/server.ts';

/** The common name of the client certificate the apiserver presents to agents (kube's kubelet client identity). */
export const KUBELET_CLIENT_NAME = 'kubelet-client';

/**
 * The largest `tailLines` accepted. The tail is found by scanning the file backwards, so a
 * larger count only means "the whole file"; a count past this is a client's mistake.
 */
export const MAX_TAIL_LINES = 10_000_000;

/** The largest `limitBytes` accepted (1 GiB; a log file is never near that). */
export const MAX_LIMIT_BYTES = 1024 ** 3;

/** PEM material of the endpoint: its serving certificate and key, and the CA its clients' certificates must chain to. */
export interface LogServerTls {
  readonly cert: string;
  readonly key: string;
  readonly clientCA: string;
}

/** What a token must be allowed to do to read an agent's `/metrics` (kubelet's check for its metrics endpoints). */
export interface NodeMetricsAttributes {
  readonly verb: 'get';
  readonly resource: 'nodes';
  readonly subresource: 'metrics';
  readonly name: string;
}

/** The verdict on one bearer token for one request. */
export type TokenVerdict =
  | { readonly type: 'allowed'; readonly user: string }
  | { readonly type: 'unauthenticated' }
  | { readonly type: 'forbidden'; readonly user: string };

/** Authenticates a bearer token and authorizes its user for `attributes` (kube: a TokenReview, then a SubjectAccessReview). */
export type TokenAuthorizer = (token: string, attributes: NodeMetricsAttributes) => Promise<TokenVerdict>;

export interface LogServerOptions {
  runtimeOf: (node: string) => PodRuntime | undefined;
  /** The resource usage of a node this agent runs (undefined: not run here, 404). */
  resourceUsageOf?: (node: string) => NodeResourceUsage | undefined;
  tls: LogServerTls;
  /** Serves exec, attach and port-forward upgrades (kubelet's `/exec`, `/attach`, `/portForward`); without it they get 404. */
  streaming?: StreamingHandler;
  /** Common names of the client certificates that may read logs and metrics (default: {@link KUBELET_CLIENT_NAME}). */
  allowedClients?: readonly string[];
  /** The registry `GET /metrics` serves; without it `/metrics` is 404. */
  metrics?: Registry;
  /** Bearer tokens accepted for `/metrics` (see the module comment); without it only client certificates are. */
  authorizeToken?: TokenAuthorizer;
  /** The nodes this agent runs (a token must be allowed `get nodes/metrics` on each); required with `authorizeToken`. */
  nodes?: readonly string[];
  host?: string;
  port?: number;
  logger: Logger;
}

export interface LogServer {
  readonly port: number;
  close(): Promise<void>;
}

/** One request to the endpoint as parsed: what to stream, or the 4xx that answers it. */
export type LogRequest =
  | {
      readonly type: 'logs';
      readonly node: string;
      readonly namespace: string;
      readonly pod: string;
      readonly container: string;
      readonly follow: boolean;
      readonly previous: boolean;
      readonly tailLines?: number;
      readonly limitBytes?: number;
    }
  | { readonly type: 'resourceUsage'; readonly node: string }
  | { readonly type: 'metrics' }
  | { readonly type: 'rejected'; readonly status: 400 | 404 | 405; readonly message: string };

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const isLabel = (value: string) => value.length <= 63 && DNS1123_LABEL.test(value);
const isSubdomain = (value: string) => value.length <= 253 && DNS1123_SUBDOMAIN.test(value);

/** strconv.ParseBool's spellings, as kubelet reads `follow` and `previous`. */
const BOOLEANS: Readonly<Record<string, boolean>> = {
  '1': true, t: true, T: true, true: true, TRUE: true, True: true,
  '0': false, f: false, F: false, false: false, FALSE: false, False: false,
};

const reject = (status: 400 | 404 | 405, message: string): LogRequest => ({ type: 'rejected', status, message });

const decodeSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const booleanParam = (query: URLSearchParams, name: string): Parsed<boolean> => {
  const text = query.get(name);
  if (text === null || text === '') return { ok: true, value: false };
  const value = BOOLEANS[text];
  return value === undefined ? { ok: false, message: `${name}: invalid value "${text}": must be true or false` } : { ok: true, value };
};

const countParam = (query: URLSearchParams, name: string, min: number, max: number): Parsed<number | undefined> => {
  const text = query.get(name);
  if (text === null || text === '') return { ok: true, value: undefined };
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    return { ok: false, message: `${name}: invalid value "${text.slice(0, 64)}": must be an integer from ${min} to ${max}` };
  }
  return { ok: true, value };
};

/**
 * Parses `GET /containerLogs/{node}/{namespace}/{pod}/{container}?follow&previous&tailLines&limitBytes`.
 * Pure; never throws: a bad %-escape or query value is 400, another method 405, another path 404.
 */
export const parseLogRequest = (method: string | undefined, rawUrl: string | undefined): LogRequest => {
  const url = rawUrl ?? '/';
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const segments = path.split('/').map(decodeSegment);
  if (segments.some((segment) => segment === undefined)) return reject(400, `malformed %-escape in the path ${path.slice(0, 200)}`);
  const [root, route, node, namespace, pod, container, ...rest] = segments as string[];
  if (root === '' && route === 'metrics' && node === undefined) {
    return method === 'GET' ? { type: 'metrics' } : reject(405, `method ${method ?? ''} is not allowed: the metrics endpoint answers GET only`);
  }
  if (root === '' && route === 'resourceUsage' && node !== undefined && namespace === undefined) {
    if (method !== 'GET') return reject(405, `method ${method ?? ''} is not allowed: the resource usage endpoint answers GET only`);
    return isSubdomain(node) ? { type: 'resourceUsage', node } : reject(400, `invalid node name "${node.slice(0, 253)}"`);
  }
  if (root !== '' || route !== 'containerLogs' || rest.length > 0 || container === undefined) {
    return reject(404, `no such path: ${path.slice(0, 200)} (expected /containerLogs/NODE/NAMESPACE/POD/CONTAINER, /resourceUsage/NODE or /metrics)`);
  }
  if (method !== 'GET') return reject(405, `method ${method ?? ''} is not allowed: the log endpoint answers GET only`);
  if (!isSubdomain(node!)) return reject(400, `invalid node name "${node!.slice(0, 253)}"`);
  if (!isLabel(namespace!)) return reject(400, `invalid namespace "${namespace!.slice(0, 253)}"`);
  if (!isSubdomain(pod!)) return reject(400, `invalid pod name "${pod!.slice(0, 253)}"`);
  if (!isLabel(container)) return reject(400, `invalid container name "${container.slice(0, 253)}"`);
  const query = new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1));
  const follow = booleanParam(query, 'follow');
  const previous = booleanParam(query, 'previous');
  const tailLines = countParam(query, 'tailLines', 0, MAX_TAIL_LINES);
  const limitBytes = countParam(query, 'limitBytes', 1, MAX_LIMIT_BYTES);
  if (!follow.ok) return reject(400, follow.message);
  if (!previous.ok) return reject(400, previous.message);
  if (!tailLines.ok) return reject(400, tailLines.message);
  if (!limitBytes.ok) return reject(400, limitBytes.message);
  return {
    type: 'logs',
    node: node!,
    namespace: namespace!,
    pod: pod!,
    container,
    follow: follow.value,
    previous: previous.value,
    ...(tailLines.value !== undefined ? { tailLines: tailLines.value } : {}),
    ...(limitBytes.value !== undefined ? { limitBytes: limitBytes.value } : {}),
  };
};

const answer = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${message}\n`);
};

/** The common name of the verified client certificate of `req`, if the handshake verified one. */
const clientName = (req: IncomingMessage): string | undefined => {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const name = socket.getPeerCertificate().subject?.CN;
  return typeof name === 'string' ? name : undefined;
};

/** The bearer token of `req`'s Authorization header, if it has one. */
const bearerToken = (req: IncomingMessage): string | undefined => {
  const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
};

/** Writes `text` (cut at `budget.left` bytes when a limit is set) and waits while the client is slow to read. */
const writeBounded = async (res: ServerResponse, text: string, budget: { left: number }, signal: AbortSignal): Promise<boolean> => {
  let chunk = Buffer.from(text, 'utf8');
  if (chunk.length >= budget.left) chunk = chunk.subarray(0, budget.left);
  budget.left -= chunk.length;
  if (!res.write(chunk)) await once(res, 'drain', { signal });
  return budget.left > 0;
};

/** The client went away mid-stream (the write's wait for `drain` was aborted): nothing to answer. */
const abortedByClient = (error: unknown): boolean => error instanceof Error && error.name === 'AbortError';

/** Starts the HTTPS log endpoint on `host` (default 127.0.0.1). Options are checked before anything listens. */
export const startLogServer = async (options: LogServerOptions): Promise<LogServer> => {
  const allowedClients = new Set(options.allowedClients ?? [KUBELET_CLIENT_NAME]);
  if (allowedClients.size === 0) throw new LogServerConfigError('the log endpoint needs at least one allowed client identity');
  for (const field of ['cert', 'key', 'clientCA'] as const) {
    if (!options.tls[field]?.includes('-----BEGIN')) throw new LogServerConfigError(`the log endpoint's tls.${field} is not PEM`, { field });
  }
  const { logger, authorizeToken } = options;
  const nodes = options.nodes ?? [];
  if (authorizeToken && nodes.length === 0) throw new LogServerConfigError('a log endpoint that accepts tokens needs the names of its nodes');

  const serveMetrics = async (res: ServerResponse): Promise<void> => {
    if (!options.metrics) return answer(res, 404, 'this agent serves no metrics');
    const text = await options.metrics.metrics();
    res.writeHead(200, { 'content-type': options.metrics.contentType });
    res.end(text);
  };

  /** A request without a verified certificate: `/metrics` with an accepted token is served, anything else is 401 or 403. */
  const handleTokenRequest = async (request: LogRequest, req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const token = bearerToken(req);
    if (request.type !== 'metrics' || !authorizeToken || token === undefined) return answer(res, 401, 'Unauthorized');
    let user = '';
    for (const name of nodes) {
      const verdict = await authorizeToken(token, { verb: 'get', resource: 'nodes', subresource: 'metrics', name });
      if (verdict.type === 'unauthenticated') return answer(res, 401, 'Unauthorized');
      if (verdict.type === 'forbidden') return answer(res, 403, `Forbidden (user=${verdict.user}, verb=get, resource=nodes, subresource(s)=[metrics])`);
      user = verdict.user;
    }
    logger.debug({ user }, 'metrics read with a bearer token');
    return serveMetrics(res);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const client = clientName(req);
    const request = parseLogRequest(req.method, req.url);
    if (client === undefined) return handleTokenRequest(request, req, res);
    if (!allowedClients.has(client)) {
      answer(res, 403, `forbidden: client ${client} may not read logs on this node`);
      return;
    }
    switch (request.type) {
      case 'rejected':
        answer(res, request.status, request.message, request.status === 405 ? { allow: 'GET' } : {});
        return;
      case 'resourceUsage': {
        const usage = options.resourceUsageOf?.(request.node);
        if (usage === undefined) answer(res, 404, `node ${request.node} is not run by this agent`);
        else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(usage));
        }
        return;
      }
      case 'metrics':
        return serveMetrics(res);
      case 'logs':
        break;
      default:
        return request satisfies never;
    }
    const runtime = options.runtimeOf(request.node);
    if (!runtime) {
      answer(res, 404, `node ${request.node} is not run by this agent`);
      return;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let lines: AsyncIterator<string>;
    let next: IteratorResult<string>;
    try {
      lines = runtime
        .logs(request.namespace, request.pod, request.container, {
          follow: request.follow,
          previous: request.previous,
          ...(request.tailLines !== undefined ? { tailLines: request.tailLines } : {}),
          signal: abort.signal,
        })
        [Symbol.asyncIterator]();
      // The first chunk decides the status: a missing pod or container fails before any output.
      next = await lines.next();
    } catch (error) {
      if (error instanceof KubeletNotFoundError) answer(res, 404, error.message);
      else throw error;
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    const budget = { left: request.limitBytes ?? Number.POSITIVE_INFINITY };
    try {
      for (; !next.done && !abort.signal.aborted; next = await lines.next()) {
        if (!(await writeBounded(res, next.value, budget, abort.signal))) break;
      }
    } finally {
      await lines.return?.();
      res.end();
    }
  };

  const server: Server = createServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      ca: options.tls.clientCA,
      requestCert: true,
      // Certificate-less clients reach the handler only when tokens are accepted (for /metrics); it answers them 401 otherwise.
      rejectUnauthorized: authorizeToken === undefined,
      minVersion: 'TLSv1.2',
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (abortedByClient(error)) return;
        logger.warn({ error: String(error), url: req.url?.slice(0, 200) }, 'log request failed');
        if (!res.headersSent) answer(res, 500, `reading the log failed: ${error instanceof Error ? error.message : String(error)}`);
        else res.destroy();
      });
    },
  );
  // Upgrades (exec, attach, port-forward) pass the same client check before the streaming handler sees them.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const client = clientName(req);
    if (client === undefined) refuseUpgrade(socket, 401, 'Unauthorized');
    else if (!allowedClients.has(client)) refuseUpgrade(socket, 403, `forbidden: client ${client} may not stream to pods on this node`);
    else if (!options.streaming) refuseUpgrade(socket, 404, 'this agent serves no streaming endpoints');
    else options.streaming.handleUpgrade(req, socket, head);
  });
  server.on('tlsClientError', (error) => logger.debug({ error: error.message }, 'log endpoint refused a TLS client'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port, tokens: authorizeToken !== undefined }, 'agent log endpoint listening (HTTPS, client certificates of the cluster CA, bearer tokens for /metrics when configured)');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
