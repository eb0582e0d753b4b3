/**
 * The agent's streaming endpoints (kubelet's `/exec`, `/attach`, `/portForward`), served on
 * upgrades of the agent's HTTPS endpoint (log-server.ts checks the client certificate
 * first) or handed over in-process by an apiserver that runs in the same process.
 *
 * - exec, attach: WebSocket with `v5.channel.k8s.io` or `v4.channel.k8s.io` (channels.ts).
 * - portForward: SPDY/3.1 tunnelled in a WebSocket (`SPDY/3.1+portforward.k8s.io`) or plain
 *   SPDY/3.1 (`Upgrade: SPDY/3.1`, `X-Stream-Protocol-Version: portforward.k8s.io`), see
 *   port-forward.ts.
 *
 * A malformed request, an unknown subprotocol or a pod that is not here gets a 4xx on the
 * raw socket before any upgrade; nothing a client sends throws out of the handler.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { KubeletNotFoundError, type PodRuntime, type StreamTarget } from '../kubelet/index.ts';
import { CHANNEL_PROTOCOLS, MAX_CLIENT_MESSAGE_BYTES, negotiate, PORT_FORWARD_TUNNEL_PROTOCOL } from './channels.ts';
import { runProcessAttach } from './process-attach.ts';
import { runProcessExec } from './process-exec.ts';
import { PORT_FORWARD_PROTOCOL, serveSpdyPortForward, serveTunnelledPortForward } from './port-forward.ts';
import { parseStreamRequest, type StreamRequest } from './request.ts';

export interface StreamingHandlerOptions {
  readonly runtimeOf: (node: string) => PodRuntime | undefined;
  readonly logger: Logger;
}

export interface StreamingHandler {
  /** Serves one upgrade request (its URL is the agent's path, e.g. `/exec/NODE/NS/POD/CONTAINER?…`). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends every open session. */
  close(): void;
}

const REASONS: Readonly<Record<number, string>> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 501: 'Not Implemented' };

/** Answers an upgrade request with a plain-text HTTP error and closes the socket. */
export const refuseUpgrade = (socket: Duplex, status: number, message: string): void => {
  const body = `${message}\n`;
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
};

const headerList = (value: string | string[] | undefined): string[] =>
  (Array.isArray(value) ? value.join(',') : (value ?? '')).split(',').map((p) => p.trim()).filter(Boolean);

/** Creates the streaming handler. */
export const createStreamingHandler = (options: StreamingHandlerOptions): StreamingHandler => {
  const { logger } = options;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES, perMessageDeflate: false, handleProtocols: (offered) => negotiate(offered, [...CHANNEL_PROTOCOLS, PORT_FORWARD_TUNNEL_PROTOCOL]) ?? false });
  const open = new Set<Duplex>();

  const targetOf = (request: Exclude<StreamRequest, { type: 'rejected' }>): StreamTarget | { status: 404 | 501; message: string } => {
    const runtime = options.runtimeOf(request.node);
    if (!runtime) return { status: 404, message: `node ${request.node} is not run by this agent` };
    if (!runtime.streamTarget) return { status: 501, message: `the ${runtime.kind} runtime does not stream to containers (exec, attach and port-forward need the process or cri runtime)` };
    try {
      return runtime.streamTarget(request.namespace, request.pod, request.type === 'portForward' ? undefined : request.container);
    } catch (error) {
      if (error instanceof KubeletNotFoundError) return { status: 404, message: error.message };
      throw error;
    }
  };

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', (error) => logger.debug({ err: error.message }, 'streaming client socket error'));
    const request = parseStreamRequest(req.url);
    if (request.type === 'rejected') return refuseUpgrade(socket, request.status, request.message);
    const target = targetOf(request);
    if ('status' in target) return refuseUpgrade(socket, target.status, target.message);
    const upgrade = (req.headers.upgrade ?? '').toLowerCase();
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    const log = logger.child({ stream: request.type, pod: `${request.namespace}/${request.pod}` });
    if (upgrade === 'websocket') {
      const offered = headerList(req.headers['sec-websocket-protocol']);
      const served = request.type === 'portForward' ? [PORT_FORWARD_TUNNEL_PROTOCOL] : [...CHANNEL_PROTOCOLS];
      const protocol = negotiate(offered, served);
      if (protocol === undefined) {
        return refuseUpgrade(socket, 400, `requested protocol(s) are not supported: [${offered.join(' ').slice(0, 500)}]; supports [${served.join(' ')}]`);
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', (error) => log.debug({ err: error.message }, 'streaming WebSocket error'));
        switch (request.type) {
          case 'exec':
            runProcessExec({ ws, protocol: protocol as (typeof CHANNEL_PROTOCOLS)[number], target, command: request.command, options: request.options, logger: log });
            return;
          case 'attach':
            runProcessAttach({ ws, protocol: protocol as (typeof CHANNEL_PROTOCOLS)[number], runtime: options.runtimeOf(request.node)!, request, logger: log });
            return;
          case 'portForward':
            serveTunnelledPortForward({ ws, target, logger: log });
            return;
          default:
            return request satisfies never;
        }
      });
      return;
    }
    if (upgrade === 'spdy/3.1') {
      if (request.type !== 'portForward') {
        return refuseUpgrade(socket, 400, `${request.type} over SPDY is not served: use WebSocket (${CHANNEL_PROTOCOLS.join(', ')}; kubectl 1.30 and later)`);
      }
      if (!headerList(req.headers['x-stream-protocol-version']).includes(PORT_FORWARD_PROTOCOL)) {
        return refuseUpgrade(socket, 400, `X-Stream-Protocol-Version must offer ${PORT_FORWARD_PROTOCOL}`);
      }
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PORT_FORWARD_PROTOCOL}\r\n\r\n`);
      serveSpdyPortForward({ socket, head, target, logger: log });
      return;
    }
    refuseUpgrade(socket, 400, `unsupported upgrade "${upgrade.slice(0, 64)}": expected websocket or SPDY/3.1`);
  };

  return {
    handleUpgrade: (req, socket, head) => {
      try {
        handleUpgrade(req, socket, head);
      } catch (error) {
        logger.warn({ err: error instanceof Error ? error.message : String(error), url: req.url?.slice(0, 200) }, 'streaming request failed');
        refuseUpgrade(socket, 400, 'the streaming request failed');
      }
    },
    close: () => {
      for (const socket of open) socket.destroy();
      open.clear();
      wss.close();
    },
  };
};
