/**
 * The reverse proxy of the Ingress controller: an HTTP and an HTTPS (SNI) server built on
 * Node's http/https and `http-proxy-3`, forwarding each request to a ready endpoint the
 * router picks, with WebSocket upgrades, keep-alive connections to the backends (one shared
 * agent), and a retry on the next ready endpoint when one refuses the connection.
 *
 * Answers of its own, as ingress-nginx gives them: 404 when no rule matches, 503 when the
 * backend has no ready endpoint, 502 when every endpoint tried failed, 400/431 for a
 * request Node's parser rejects. Headers are bounded (`maxHeaderSize`, header count),
 * bodies are streamed, never buffered; slow clients are cut off by the request and header
 * timeouts. A malformed request or a failing backend only ends that request.
 */
import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { SecureContext } from 'node:tls';
import { createProxyServer } from 'http-proxy-3';
import type { Logger } from 'pino';
import type { EndpointTarget } from './backends.ts';
import { assertNever, IngressListenError } from './errors.ts';
import { requestPath } from './rules.ts';

/** What the router decided for one request. */
export type RouteDecision =
  | { readonly type: 'forward'; readonly endpoints: readonly EndpointTarget[]; readonly backend: string }
  | { readonly type: 'not-found' }
  | { readonly type: 'unavailable'; readonly reason: string };

/** What the proxy asks of the routing side: a decision per request, a certificate per SNI name. */
export interface IngressRouter {
  route(host: string | undefined, path: string): RouteDecision;
  secureContext(servername: string): SecureContext | undefined;
}

export interface ProxyLimits {
  /** Largest request head (request line and headers) in bytes (default 16 KiB; Node's own default, nginx's is 8–32 KiB). */
  readonly maxHeaderSize: number;
  readonly maxHeadersCount: number;
  /** Time a client has to send the whole request head (default 20 s). */
  readonly headersTimeoutMs: number;
  /** Time a client has to send the whole request (default 5 min). */
  readonly requestTimeoutMs: number;
  /** Time a backend has to start answering (default 60 s, nginx's proxy_read_timeout). */
  readonly backendTimeoutMs: number;
  readonly maxConnections: number;
}

export const DEFAULT_PROXY_LIMITS: ProxyLimits = {
  maxHeaderSize: 16 * 1024,
  maxHeadersCount: 100,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 300_000,
  backendTimeoutMs: 60_000,
  maxConnections: 4096,
};

export interface IngressProxyOptions {
  readonly host: string;
  readonly httpPort: number;
  /** Absent: no HTTPS listener. */
  readonly httpsPort?: number;
  readonly router: IngressRouter;
  readonly logger: Logger;
  readonly limits?: Partial<ProxyLimits>;
}

export interface IngressProxy {
  readonly host: string;
  readonly httpPort: number;
  readonly httpsPort: number | undefined;
  close(): Promise<void>;
}

/** Methods a retry may send again (nginx's `proxy_next_upstream` skips POST, LOCK and PATCH). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
/** At most this many endpoints are tried for one request (nginx's `proxy_next_upstream_tries`). */
const MAX_ATTEMPTS = 5;
/** Connection failures after which nothing reached the backend's application, or a reused keep-alive socket was already closed. */
const RETRIABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

const plainAnswer = (res: ServerResponse, status: number, text: string): void => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

/** The 503 body; why (which Service, which port) is logged, not told to clients, as ingress-nginx keeps it. */
const UNAVAILABLE = '503 Service Temporarily Unavailable\n';

const STATUS_TEXT: Readonly<Record<number, string>> = { 400: 'Bad Request', 404: 'Not Found', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway', 503: 'Service Unavailable' };

const rawAnswer = (socket: Socket, status: number, text: string): void => {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? ''}\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
};

const listen = (server: Server | HttpsServer, host: string, port: number, what: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void =>
      reject(
        new IngressListenError(
          `the Ingress ${what} listener cannot listen on ${host}:${port}: ${error.message}${error.code === 'EACCES' ? ' (ports below 1024 need root)' : ''}; pick another address with --ingress`,
          error.code === 'EADDRINUSE',
          { host, port },
          { cause: error },
        ),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });

/** Starts the HTTP (and, with `httpsPort`, HTTPS) listeners. */
export const startIngressProxy = async (options: IngressProxyOptions): Promise<IngressProxy> => {
  const limits = { ...DEFAULT_PROXY_LIMITS, ...options.limits };
  const logger = options.logger;
  const agent = new Agent({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: 256, maxFreeSockets: 64, timeout: limits.backendTimeoutMs });
  const proxy = createProxyServer({ agent, xfwd: true, proxyTimeout: limits.backendTimeoutMs, ws: true });
  // Every call passes a callback; this only keeps a stray emitted error from being unhandled.
  proxy.on('error', (error) => logger.debug({ err: error.message }, 'Ingress proxy error'));
  const cursors = new Map<string, number>();

  /** Round robin over the ready endpoints of `backend`: the order to try them in. */
  const rotation = (backend: string, endpoints: readonly EndpointTarget[]): EndpointTarget[] => {
    const start = (cursors.get(backend) ?? 0) % endpoints.length;
    cursors.set(backend, start + 1);
    return [...endpoints.slice(start), ...endpoints.slice(0, start)];
  };

  const handleRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const decision = options.router.route(req.headers.host, requestPath(req.url));
    switch (decision.type) {
      case 'not-found':
        plainAnswer(res, 404, 'default backend - 404\n');
        return;
      case 'unavailable':
        logger.debug({ host: req.headers.host, url: req.url, reason: decision.reason }, 'Ingress backend unavailable');
        plainAnswer(res, 503, UNAVAILABLE);
        return;
      case 'forward': {
        const order = rotation(decision.backend, decision.endpoints).slice(0, MAX_ATTEMPTS);
        const retriable = IDEMPOTENT.has(req.method ?? '') && !hasBody(req);
        const attempt = (index: number): void => {
          const target = order[index]!;
          proxy.web(
            req,
            res,
            // A bodiless request is replayable: each attempt sends an empty body of its own.
            { target: { host: target.ip, port: target.port }, ...(retriable ? { buffer: Readable.from([]) } : {}) },
            (error) => {
              const code = (error as NodeJS.ErrnoException).code ?? '';
              if (retriable && RETRIABLE_CODES.has(code) && !res.headersSent && index + 1 < order.length && !req.socket.destroyed) {
                logger.debug({ backend: decision.backend, endpoint: `${target.ip}:${target.port}`, code }, 'Ingress backend failed; trying the next ready endpoint');
                attempt(index + 1);
                return;
              }
              logger.warn({ backend: decision.backend, endpoint: `${target.ip}:${target.port}`, err: error.message }, 'Ingress backend request failed');
              plainAnswer(res, 502, '502 Bad Gateway\n');
            },
          );
        };
        attempt(0);
        return;
      }
      default:
        assertNever(decision, 'route decision');
    }
  };

  const handleUpgrade = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    const decision = options.router.route(req.headers.host, requestPath(req.url));
    switch (decision.type) {
      case 'not-found':
        rawAnswer(socket, 404, 'default backend - 404\n');
        return;
      case 'unavailable':
        logger.debug({ host: req.headers.host, url: req.url, reason: decision.reason }, 'Ingress backend unavailable');
        rawAnswer(socket, 503, UNAVAILABLE);
        return;
      case 'forward': {
        const target = rotation(decision.backend, decision.endpoints)[0]!;
        proxy.ws(req, socket, head, { target: { host: target.ip, port: target.port } }, (error) => {
          logger.debug({ backend: decision.backend, err: error.message }, 'Ingress WebSocket backend failed');
          socket.destroy();
        });
        return;
      }
      default:
        assertNever(decision, 'route decision');
    }
  };

  const onClientError = (error: NodeJS.ErrnoException, socket: Socket): void => {
    logger.debug({ code: error.code, err: error.message }, 'malformed request to the Ingress proxy');
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    rawAnswer(socket, status, `${status} ${STATUS_TEXT[status]}\n`);
  };

  const serverOptions = { maxHeaderSize: limits.maxHeaderSize, requestTimeout: limits.requestTimeoutMs, headersTimeout: limits.headersTimeoutMs };
  // Every client connection, upgraded ones too (the servers stop tracking those), so close ends them all.
  const sockets = new Set<Socket>();
  const configure = <S extends Server | HttpsServer>(server: S): S => {
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    server.maxHeadersCount = limits.maxHeadersCount;
    server.maxConnections = limits.maxConnections;
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      try {
        handleRequest(req, res);
      } catch (error) {
        logger.error({ err: (error as Error).message }, 'Ingress request handling failed');
        plainAnswer(res, 502, '502 Bad Gateway\n');
      }
    });
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      try {
        handleUpgrade(req, socket, head);
      } catch (error) {
        logger.error({ err: (error as Error).message }, 'Ingress upgrade handling failed');
        socket.destroy();
      }
    });
    server.on('clientError', onClientError);
    return server;
  };

  const http = configure(createServer(serverOptions));
  const servers: (Server | HttpsServer)[] = [http];
  const httpPort = await listen(http, options.host, options.httpPort, 'HTTP');
  let httpsPort: number | undefined;
  if (options.httpsPort !== undefined) {
    const https = configure(
      createHttpsServer({
        ...serverOptions,
        SNICallback: (servername, callback) => {
          const context = options.router.secureContext(servername);
          if (context) callback(null, context);
          else callback(new Error(`no Ingress TLS certificate for "${servername}"`));
        },
      }),
    );
    // A failed handshake (no certificate for the name, not TLS at all) ends only that connection.
    https.on('tlsClientError', (error: Error, socket: Socket) => {
      logger.debug({ err: error.message }, 'Ingress TLS handshake failed');
      socket.destroy();
    });
    servers.push(https);
    try {
      httpsPort = await listen(https, options.host, options.httpsPort, 'HTTPS');
    } catch (error) {
      http.close();
      throw error;
    }
  }
  return {
    host: options.host,
    httpPort,
    httpsPort,
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              for (const socket of sockets) socket.destroy();
            }),
        ),
      );
      proxy.close();
      agent.destroy();
    },
  };
};
