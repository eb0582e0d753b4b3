/**
 * A component's secure metrics port (kube-controller-manager's `--secure-port`, 10257):
 * HTTPS with the component's serving certificate, `GET /metrics` for a bearer token whose
 * user may `get` the non-resource path `/metrics` (checked with the apiserver by a
 * TokenReview and a SubjectAccessReview, delegated-auth.ts), and `GET /healthz` for anyone
 * (kube's `--authorization-always-allow-paths`). No token or an unknown one: 401; a user
 * not allowed: 403; another path: 404; another method: 405.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { TlsMaterial } from '../apiserver/index.ts';
import type { DelegatedAuth } from './delegated-auth.ts';

export interface MetricsServerOptions {
  readonly registry: Registry;
  readonly auth: DelegatedAuth;
  readonly tls: TlsMaterial;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly logger: Logger;
}

export interface MetricsServer {
  /** `https://host:port`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Parses `host:port` (`[::1]:10257`, `:10257` for every address) as `--metrics-address` takes it. */
export const parseListenAddress = (text: string): { host: string; port: number } => {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || !(port >= 0 && port <= 65_535)) throw new Error(`"${text}" is not host:port (e.g. 127.0.0.1:10257)`);
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
};

const answer = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(`${message}\n`);
};

const bearerToken = (req: IncomingMessage): string | undefined => /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];

/** Starts the metrics port; resolves once it listens. */
export const startMetricsServer = async (options: MetricsServerOptions): Promise<MetricsServer> => {
  const { registry, auth, logger } = options;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' && path !== '/healthz') return answer(res, 404, `no such path: ${path?.slice(0, 200)} (this port serves /metrics and /healthz)`);
    if (req.method !== 'GET') return answer(res, 405, `method ${req.method ?? ''} is not allowed`, { allow: 'GET' });
    if (path === '/healthz') return answer(res, 200, 'ok');
    const token = bearerToken(req);
    if (token === undefined) return answer(res, 401, 'Unauthorized');
    const verdict = await auth.check(token, { verb: 'get', path: '/metrics' });
    if (verdict.type === 'unauthenticated') return answer(res, 401, 'Unauthorized');
    if (verdict.type === 'forbidden') return answer(res, 403, `forbidden: User "${verdict.user}" cannot get path "/metrics"`);
    const text = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType });
    res.end(text);
  };
  const server: Server = createServer({ cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2' }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.warn({ error: String(error), url: req.url?.slice(0, 200) }, 'metrics request failed');
      if (!res.headersSent) answer(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
    });
  });
  // A bounded header wait and request time: a client cannot hold the port open for free.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const reachable = options.host === '0.0.0.0' ? '127.0.0.1' : options.host === '::' ? '::1' : options.host;
  const url = `https://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
  logger.info({ url }, 'metrics port listening (HTTPS; tokens checked with the apiserver)');
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
