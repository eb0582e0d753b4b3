/**
 * The agent's log endpoint (the kubelet's `/containerLogs`): in distributed mode the
 * apiserver serves `pods/NAME/log` by streaming from the agent that runs the pod. The port
 * is published in the Node's `status.daemonEndpoints.kubeletEndpoint.Port`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { PodRuntime } from './kubelet/index.ts';

export interface LogServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `GET /containerLogs/{node}/{namespace}/{pod}/{container}?follow&previous&tailLines` on `host`. */
export const startLogServer = async (options: {
  runtimeOf: (node: string) => PodRuntime | undefined;
  host?: string;
  port?: number;
  logger: Logger;
}): Promise<LogServer> => {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://agent.invalid');
    const [route, node, namespace, pod, container] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const runtime = node ? options.runtimeOf(node) : undefined;
    if (req.method !== 'GET' || route !== 'containerLogs' || !runtime || !namespace || !pod || !container) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end(`no such log: ${url.pathname} (expected /containerLogs/NODE/NAMESPACE/POD/CONTAINER on a node of this agent)\n`);
      return;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const tail = url.searchParams.get('tailLines');
    void (async () => {
      try {
        const lines = runtime.logs(namespace, pod, container, {
          follow: url.searchParams.get('follow') === 'true',
          previous: url.searchParams.get('previous') === 'true',
          ...(tail !== null ? { tailLines: Number(tail) } : {}),
          signal: abort.signal,
        })[Symbol.asyncIterator]();
        // The first chunk decides the status: a missing pod or container fails before any output.
        let next = await lines.next();
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        for (; !next.done; next = await lines.next()) res.write(next.value);
        res.end();
      } catch (error) {
        if (!res.headersSent) res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`${error instanceof Error ? error.message : String(error)}\n`);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'agent log endpoint listening');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};
