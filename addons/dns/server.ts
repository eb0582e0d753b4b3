/**
 * The DNS listeners: one UDP socket and one TCP server on the same address and port, as
 * every DNS server serves both. UDP replies that do not fit the client's size carry the TC
 * bit; TCP carries length-prefixed messages (RFC 1035 4.2.2, several per connection, answered
 * in order). Everything a client can fill is bounded: connections, bytes buffered per
 * connection, queries in flight per connection, idle time. A handler that throws costs the
 * client a SERVFAIL, never the process (CoreDNS recovers from a plugin's panic the same way).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIP, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { DnsListenError } from './errors.ts';
import { emptyReply, readInbound } from './wire.ts';

/** Answers one received message: the reply's bytes, or undefined to send nothing. */
export type MessageHandler = (message: Buffer, transport: 'udp' | 'tcp') => Promise<Buffer | undefined>;

export interface DnsServerOptions {
  readonly host: string;
  /** 0: any free port (both transports get the same one). */
  readonly port: number;
  readonly handle: MessageHandler;
  readonly logger: Logger;
  /** Open TCP connections at most (default 256). */
  readonly maxConnections?: number;
  /** A TCP connection idle this long is closed (default 10,000 ms, CoreDNS's read timeout). */
  readonly idleTimeoutMs?: number;
  /** Queries of one TCP connection being answered at once; reading pauses beyond it (default 16). */
  readonly maxPipelined?: number;
}

export interface DnsServer {
  /** The address and port both transports listen on. */
  readonly address: { readonly host: string; readonly port: number };
  /** Stops both listeners and drops open connections; idempotent. */
  close(): Promise<void>;
}

const FRAME_HEADER = 2;

/** Runs `handle`, turning a throw into a SERVFAIL for that message (when it has a header to answer); never rejects. */
const safely = async (handle: MessageHandler, message: Buffer, transport: 'udp' | 'tcp', logger: Logger): Promise<Buffer | undefined> => {
  try {
    return await handle(message, transport);
  } catch (error) {
    logger.error({ error: String(error), transport }, 'answering a DNS message failed; replying SERVFAIL');
    try {
      const inbound = readInbound(message);
      return inbound.type === 'query' ? emptyReply(inbound, 'SERVFAIL', false) : undefined;
    } catch {
      return undefined;
    }
  }
};

const serveConnection = (socket: Socket, options: DnsServerOptions, maxPipelined: number): void => {
  let buffered: Buffer = Buffer.alloc(0);
  let inflight = 0;
  let chain: Promise<void> = Promise.resolve();
  socket.setTimeout(options.idleTimeoutMs ?? 10_000, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  const drain = (): void => {
    while (buffered.length >= FRAME_HEADER && inflight < maxPipelined) {
      const size = buffered.readUInt16BE(0);
      if (buffered.length < FRAME_HEADER + size) break;
      const message = Buffer.from(buffered.subarray(FRAME_HEADER, FRAME_HEADER + size));
      buffered = buffered.subarray(FRAME_HEADER + size);
      inflight++;
      const answered = safely(options.handle, message, 'tcp', options.logger);
      // Replies go out in the order the queries came.
      chain = chain.then(async () => {
        const reply = await answered;
        inflight--;
        if (reply && !socket.destroyed) {
          const frame = Buffer.alloc(FRAME_HEADER);
          frame.writeUInt16BE(reply.length);
          socket.write(Buffer.concat([frame, reply]));
        }
        if (inflight < maxPipelined && socket.isPaused()) socket.resume();
        drain();
      }).catch((error: unknown) => {
        options.logger.debug({ error: String(error) }, 'DNS TCP connection failed; closed');
        socket.destroy();
      });
    }
    if (inflight >= maxPipelined) socket.pause();
  };
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    // At most two frames (2 + 65,535 bytes each) wait unparsed; more is not a DNS client.
    if (buffered.length > (FRAME_HEADER + 65_535) * 2) {
      socket.destroy();
      return;
    }
    drain();
  });
};

const listenError = (error: NodeJS.ErrnoException, host: string, port: number, transport: string): DnsListenError =>
  new DnsListenError(
    error.code === 'EACCES'
      ? `DNS cannot listen on ${host}:${port}/${transport}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE; pick a port ≥ 1024)`
      : error.code === 'EADDRINUSE'
        ? `DNS cannot listen on ${host}:${port}/${transport}: the address is in use (another DNS server, e.g. systemd-resolved on 127.0.0.53:53?); pick another address or port`
        : `DNS cannot listen on ${host}:${port}/${transport}: ${error.message}`,
    error.code === 'EADDRINUSE',
    { host, port, transport, code: error.code },
    { cause: error },
  );

const bindUdp = (host: string, port: number, onMessage: (message: Buffer, from: { address: string; port: number }) => void): Promise<UdpSocket> =>
  new Promise((resolve, reject) => {
    const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
    socket.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port, 'udp')));
    socket.on('message', onMessage);
    socket.bind(port, host, () => resolve(socket));
  });

const listenTcp = (server: Server, host: string, port: number): Promise<void> =>
  new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port, 'tcp')));
    server.listen(port, host, () => resolve());
  });

/** Starts listening on `host:port` over UDP and TCP. */
export const startDnsServer = async (options: DnsServerOptions): Promise<DnsServer> => {
  const { logger } = options;
  const maxPipelined = options.maxPipelined ?? 16;
  const tcp = createServer({ pauseOnConnect: false }, (socket) => serveConnection(socket, options, maxPipelined));
  tcp.maxConnections = options.maxConnections ?? 256;
  // TCP first: with port 0 it picks the port, and UDP takes the same one.
  await listenTcp(tcp, options.host, options.port);
  const port = (tcp.address() as AddressInfo).port;
  let udp: UdpSocket;
  try {
    udp = await bindUdp(options.host, port, (message, from) => {
      void safely(options.handle, message, 'udp', logger).then((reply) => {
        if (!reply) return;
        try {
          udp.send(reply, from.port, from.address, (error) => error && logger.debug({ error: String(error) }, 'sending a DNS reply failed'));
        } catch (error) {
          // The socket closed while the answer was being made.
          logger.debug({ error: String(error) }, 'DNS reply not sent');
        }
      });
    });
  } catch (error) {
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    throw error;
  }
  udp.on('error', (error) => logger.warn({ error: String(error) }, 'DNS UDP socket error'));
  tcp.on('error', (error) => logger.warn({ error: String(error) }, 'DNS TCP server error'));
  const sockets = new Set<Socket>();
  tcp.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let closing: Promise<void> | undefined;
  return {
    address: { host: options.host, port },
    close: () =>
      (closing ??= (async () => {
        for (const socket of sockets) socket.destroy();
        await Promise.all([
          new Promise<void>((resolve) => tcp.close(() => resolve())),
          new Promise<void>((resolve) => udp.close(() => resolve())),
        ]);
      })()),
  };
};
