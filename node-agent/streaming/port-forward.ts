/**
 * `kubectl port-forward` (kubelet's `portforward.k8s.io` v1 protocol over SPDY): for every
 * connection it forwards, kubectl opens two streams carrying the headers `streamType`
 * (`error` or `data`), `port` and `requestID`. Once both streams of a request are there, the
 * agent connects to POD_IP:port; the data stream carries the bytes both ways, the error
 * stream a message if the connection fails. The SPDY connection comes either tunnelled in a
 * WebSocket (`SPDY/3.1+portforward.k8s.io`: SPDY's bytes in binary messages, kubectl ≥ 1.31)
 * or as a plain SPDY/3.1 upgrade (kubectl's fallback).
 */
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { StreamTarget } from '../kubelet/index.ts';
import { createSpdyServerSession, type SpdySession, type SpdyStream, type SpdyTransport } from './spdy/session.ts';

/** The port-forward protocol version kubelet speaks (`X-Stream-Protocol-Version`). */
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';

/** How long the second stream of a request may take to come (kubelet's stream creation timeout is 30 s). */
const PAIR_TIMEOUT_MS = 30_000;

/** Requests whose streams may wait for their pair at once per connection. */
const MAX_PENDING_PAIRS = 256;

interface Pair {
  error?: SpdyStream;
  data?: SpdyStream;
  readonly timer: NodeJS.Timeout;
}

const header = (stream: SpdyStream, name: string): string | undefined => stream.headers.get(name)?.[0];

/** Serves port-forward streams of one SPDY session to `target`'s pod address. */
const portForwardStreams = (target: StreamTarget, logger: Logger): ((stream: SpdyStream) => void) => {
  const pairs = new Map<string, Pair>();
  const forward = (port: number, pair: Required<Omit<Pair, 'timer'>>): void => {
    pair.error.resume();
    pair.error.on('error', () => undefined);
    const socket: Socket = connect({ host: target.podIP, port });
    let connected = false;
    socket.on('connect', () => {
      connected = true;
      pair.data.pipe(socket);
      socket.pipe(pair.data);
    });
    socket.on('error', (error) => {
      if (!connected) {
        pair.error.end(`error forwarding port ${port} to pod ${target.podIP}: ${error.message}`);
        pair.data.destroy();
        return;
      }
      logger.debug({ port, err: error.message }, 'port-forward connection failed');
      pair.data.destroy();
    });
    socket.on('close', () => {
      if (!pair.error.writableEnded) pair.error.end();
    });
    pair.data.on('error', () => socket.destroy());
    pair.data.on('close', () => socket.destroy());
  };
  return (stream) => {
    stream.on('error', () => undefined);
    const type = header(stream, 'streamtype');
    const portText = header(stream, 'port') ?? '';
    const requestId = header(stream, 'requestid') ?? '';
    const port = /^\d{1,5}$/.test(portText) ? Number(portText) : 0;
    if ((type !== 'error' && type !== 'data') || !(port >= 1 && port <= 65_535)) {
      logger.debug({ type, port: portText.slice(0, 16) }, 'port-forward stream with bad headers refused');
      if (type === 'error') stream.end(`invalid port-forward stream: port "${portText.slice(0, 16)}" must be 1 to 65535`);
      else stream.destroy();
      return;
    }
    const key = `${requestId}/${port}`;
    let pair = pairs.get(key);
    if (pair === undefined) {
      if (pairs.size >= MAX_PENDING_PAIRS) {
        stream.destroy();
        return;
      }
      const timer = setTimeout(() => {
        pairs.delete(key);
        pair?.error?.destroy();
        pair?.data?.destroy();
      }, PAIR_TIMEOUT_MS);
      timer.unref();
      pair = { timer };
      pairs.set(key, pair);
    }
    if (pair[type] !== undefined) {
      stream.destroy();
      return;
    }
    pair[type] = stream;
    if (pair.error && pair.data) {
      clearTimeout(pair.timer);
      pairs.delete(key);
      forward(port, { error: pair.error, data: pair.data });
    }
  };
};

/** Port-forward over a plain SPDY/3.1 connection (after the 101 was written on `socket`). */
export const serveSpdyPortForward = ({ socket, head, target, logger }: { socket: Duplex; head: Buffer; target: StreamTarget; logger: Logger }): void => {
  const transport: SpdyTransport = {
    write: (chunk) => socket.write(chunk),
    onDrain: (callback) => socket.once('drain', callback),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    close: () => socket.end(),
  };
  const session: SpdySession = createSpdyServerSession({ transport, onStream: portForwardStreams(target, logger), logger });
  socket.on('data', (chunk: Buffer) => session.receive(chunk));
  socket.on('close', () => session.transportClosed());
  if (head.length > 0) session.receive(head);
};

/** The bytes a tunnel may hold unsent before the session waits (the WebSocket's own buffer). */
const MAX_TUNNEL_UNSENT = 1024 * 1024;

/** Port-forward with SPDY tunnelled in a WebSocket's binary messages. */
export const serveTunnelledPortForward = ({ ws, target, logger }: { ws: WebSocket; target: StreamTarget; logger: Logger }): void => {
  const drains: (() => void)[] = [];
  const transport: SpdyTransport = {
    write: (chunk) => {
      ws.send(chunk, { binary: true }, () => {
        if (ws.bufferedAmount > MAX_TUNNEL_UNSENT / 2) return;
        for (const drain of drains.splice(0)) drain();
      });
      return ws.bufferedAmount <= MAX_TUNNEL_UNSENT;
    },
    onDrain: (callback) => drains.push(callback),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    close: () => ws.close(1000),
  };
  const session = createSpdyServerSession({ transport, onStream: portForwardStreams(target, logger), logger });
  ws.on('message', (data: Buffer, isBinary: boolean) => (isBinary ? session.receive(data) : undefined));
  ws.on('close', () => {
    session.transportClosed();
    for (const drain of drains.splice(0)) drain();
  });
};
