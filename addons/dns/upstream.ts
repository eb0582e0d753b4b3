/**
 * Forwarding of names that are not the cluster's to upstream servers (CoreDNS's `forward`
 * plugin, reduced): the query's bytes go unchanged to the first upstream, then the next
 * when one fails or stays silent, over the transport the client used. At
 * most `maxInflight` forwards at once; beyond that, and when every upstream fails, the
 * caller answers SERVFAIL.
 */
import { createSocket } from 'node:dgram';
import { isIP, connect } from 'node:net';
import { parseHostPort, type HostPort } from './address.ts';
import { DnsConfigError } from './errors.ts';

/** An upstream server. */
export type Upstream = HostPort;

export interface ForwarderOptions {
  readonly upstreams: readonly Upstream[];
  /** Per upstream and attempt (default 2000 ms, CoreDNS's forward read timeout). */
  readonly timeoutMs?: number;
  /** Forwards in flight at once (default 256). */
  readonly maxInflight?: number;
}

export interface Forwarder {
  /** The upstream's reply to `query`, or undefined when no upstream answered (or too many forwards are in flight). */
  forward(query: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined>;
}

const MAX_MESSAGE = 65_535;

/** Parses an upstream: `address[:port]` (port 53 when left out). */
export const parseUpstream = (text: string): Upstream => parseHostPort(text, 'upstream', { defaultPort: 53, allowAnyPort: false });

/** Whether `reply` is a response (QR set) with the query's id. */
const sameId = (query: Buffer, reply: Buffer): boolean => reply.length >= 12 && reply.readUInt16BE(0) === query.readUInt16BE(0) && ((reply[2] ?? 0) & 0x80) !== 0;

const overUdp = (upstream: Upstream, query: Buffer, timeoutMs: number): Promise<Buffer | undefined> =>
  new Promise((resolve) => {
    const socket = createSocket(isIP(upstream.host) === 6 ? 'udp6' : 'udp4');
    const finish = (reply: Buffer | undefined): void => {
      clearTimeout(timer);
      socket.close();
      resolve(reply);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.on('error', () => finish(undefined));
    socket.on('message', (message, from) => {
      // Only the upstream's reply to this query counts; anything else is ignored.
      if (from.port === upstream.port && sameId(query, message)) finish(message);
    });
    socket.send(query, upstream.port, upstream.host);
  });

const overTcp = (upstream: Upstream, query: Buffer, timeoutMs: number): Promise<Buffer | undefined> =>
  new Promise((resolve) => {
    const socket = connect({ host: upstream.host, port: upstream.port });
    let received: Buffer = Buffer.alloc(0);
    const finish = (reply: Buffer | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.on('error', () => finish(undefined));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.write(Buffer.concat([length, query]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > 2 + MAX_MESSAGE) return finish(undefined);
      if (received.length < 2) return;
      const size = received.readUInt16BE(0);
      if (received.length >= 2 + size) {
        const reply = received.subarray(2, 2 + size);
        finish(sameId(query, reply) ? reply : undefined);
      }
    });
    socket.on('end', () => finish(undefined));
  });

/** Creates a forwarder to `upstreams` (at least one; checked here). */
export const createForwarder = (options: ForwarderOptions): Forwarder => {
  if (options.upstreams.length === 0) throw new DnsConfigError('forwarding needs at least one upstream');
  const timeoutMs = options.timeoutMs ?? 2000;
  const maxInflight = options.maxInflight ?? 256;
  let inflight = 0;
  return {
    forward: async (query, transport) => {
      if (inflight >= maxInflight) return undefined;
      inflight++;
      try {
        for (const upstream of options.upstreams) {
          // A truncated UDP reply goes back as it is: the client asks again over TCP, and so do we.
          const reply = transport === 'udp' ? await overUdp(upstream, query, timeoutMs) : await overTcp(upstream, query, timeoutMs);
          if (reply) return reply;
        }
        return undefined;
      } finally {
        inflight--;
      }
    },
  };
};
