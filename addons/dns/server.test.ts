/**
 * The DNS server end to end: started on a loopback port over a real projection, queried
 * with real `dig` (Debian's bind9-dnsutils) and Node's `dns.Resolver` (c-ares), and fed
 * malformed messages over UDP and TCP.
 */
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import dnsPacket from 'dns-packet';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEnvelopes, envelope } from '../../projections/index.ts';
import { admin } from '../../projections/testing.ts';
import { DnsListenError, startClusterDns, type ClusterDns } from './index.ts';
import { startDnsServer } from './server.ts';
import { ECHO_IP, MANY_ENDPOINTS, openDnsTestCluster, WEB_ENDPOINTS, type DnsTestCluster } from './testing.ts';

const run = promisify(execFile);
const logger = pino({ level: 'silent' });

/** What dig printed, read back: status, header flags and the sections' records. */
interface DigResult {
  readonly status: string;
  readonly flags: readonly string[];
  readonly answer: readonly string[];
  readonly authority: readonly string[];
  readonly additional: readonly string[];
}

const dig = async (port: number, args: readonly string[]): Promise<DigResult> => {
  const { stdout } = await run('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=5', ...args]);
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? '';
  const flags = (/;; flags: ([a-z ]+);/.exec(stdout)?.[1] ?? '').split(' ').filter(Boolean);
  const section = (title: string): string[] => {
    const match = new RegExp(`;; ${title} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(stdout);
    return (match?.[1] ?? '').split('\n').filter((line) => line && !line.startsWith(';')).map((line) => line.split(/\s+/).join(' '));
  };
  return { status, flags, answer: section('ANSWER'), authority: section('AUTHORITY'), additional: section('ADDITIONAL') };
};

/** Sends `messages` from one UDP socket, in order, and resolves with the first reply that comes back. */
const udpFirstReply = (port: number, messages: readonly Buffer[]): Promise<Buffer> =>
  new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.on('message', (reply) => {
      socket.close();
      resolve(reply);
    });
    for (const message of messages) socket.send(message, port, '127.0.0.1');
  });

/** Sends `messages` from one UDP socket and resolves with the reply whose id is `id` (other replies are skipped). */
const udpReplyWithId = (port: number, messages: readonly Buffer[], id: number): Promise<Buffer> =>
  new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.on('message', (reply) => {
      if (reply.length < 2 || reply.readUInt16BE(0) !== id) return;
      socket.close();
      resolve(reply);
    });
    for (const message of messages) socket.send(message, port, '127.0.0.1');
  });

/** Sends `frames` on one TCP connection and collects length-prefixed replies until `done` says so (or the server closes). */
const tcpExchange = (port: number, frames: readonly Buffer[], done: number | ((replies: readonly Buffer[]) => boolean)): Promise<Buffer[]> =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = Buffer.alloc(0);
    const replies: Buffer[] = [];
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(Buffer.concat(frames.map((frame) => Buffer.concat([Buffer.from([frame.length >> 8, frame.length & 0xff]), frame]))));
    });
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        replies.push(received.subarray(2, 2 + received.readUInt16BE(0)));
        received = received.subarray(2 + received.readUInt16BE(0));
      }
      if (typeof done === 'number' ? replies.length >= done : done(replies)) {
        socket.destroy();
        resolve(replies);
      }
    });
    socket.on('close', () => resolve(replies));
  });

const query = (id: number, name: string, type: 'A' | 'SRV' = 'A'): Buffer =>
  dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type, name, class: 'IN' }] });

describe('the cluster DNS server on a loopback port', () => {
  let cluster: DnsTestCluster;
  let dns: ClusterDns;
  let port: number;
  beforeAll(async () => {
    cluster = await openDnsTestCluster('embedded');
    dns = await startClusterDns({ projection: cluster.projection, host: '127.0.0.1', port: 0, logger });
    port = dns.address.port;
  }, 120_000);
  afterAll(async () => {
    await dns?.close();
    await cluster?.close();
  });

  it('dig: a Service name answers its ClusterIP, authoritatively, TTL 5, over UDP and TCP', async () => {
    for (const transport of ['+notcp', '+tcp']) {
      const result = await dig(port, [transport, 'echo.default.svc.cluster.local', 'A']);
      expect(result.status).toBe('NOERROR');
      expect(result.flags).toContain('aa');
      expect(result.answer).toEqual([`echo.default.svc.cluster.local. 5 IN A ${ECHO_IP}`]);
    }
  });

  it('dig: a headless Service answers every ready endpoint', async () => {
    const result = await dig(port, ['web.default.svc.cluster.local', 'A']);
    expect([...result.answer].sort()).toEqual(WEB_ENDPOINTS.map((ip) => `web.default.svc.cluster.local. 5 IN A ${ip}`).sort());
  });

  it('dig: SRV of a named port, with the target address in the additional section', async () => {
    const result = await dig(port, ['_http._tcp.echo.default.svc.cluster.local', 'SRV']);
    expect(result.answer).toEqual(['_http._tcp.echo.default.svc.cluster.local. 5 IN SRV 0 100 80 echo.default.svc.cluster.local.']);
    expect(result.additional).toEqual([`echo.default.svc.cluster.local. 5 IN A ${ECHO_IP}`]);
  });

  it('dig: ExternalName is a CNAME; PTR of a ClusterIP names the Service', async () => {
    expect((await dig(port, ['external.default.svc.cluster.local', 'CNAME'])).answer).toEqual(['external.default.svc.cluster.local. 5 IN CNAME example.com.']);
    expect((await dig(port, ['-x', ECHO_IP])).answer).toEqual([`50.0.96.127.in-addr.arpa. 5 IN PTR echo.default.svc.cluster.local.`]);
  });

  it('dig: NXDOMAIN and NODATA both carry the SOA; names outside the zone are REFUSED', async () => {
    const soa = /^cluster\.local\. 5 IN SOA ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 5$/;
    const missing = await dig(port, ['nothing.default.svc.cluster.local', 'A']);
    expect(missing.status).toBe('NXDOMAIN');
    expect(missing.authority).toHaveLength(1);
    expect(missing.authority[0]).toMatch(soa);
    const noData = await dig(port, ['echo.default.svc.cluster.local', 'AAAA']);
    expect(noData.status).toBe('NOERROR');
    expect(noData.answer).toEqual([]);
    expect(noData.authority[0]).toMatch(soa);
    expect((await dig(port, ['example.com', 'A'])).status).toBe('REFUSED');
  });

  it('dig: a reply too big for 512 bytes of UDP has the TC bit; dig then asks over TCP and gets it all', async () => {
    const truncated = await dig(port, ['+noedns', '+ignore', 'many.default.svc.cluster.local', 'A']);
    expect(truncated.flags).toContain('tc');
    expect(truncated.answer).toEqual([]);
    const retried = await dig(port, ['+noedns', 'many.default.svc.cluster.local', 'A']);
    expect(retried.flags).not.toContain('tc');
    expect(retried.answer).toHaveLength(MANY_ENDPOINTS.length);
  });

  it("Node's dns.Resolver (setServers) resolves A, SRV, CNAME and PTR, and tells NXDOMAIN from NODATA", async () => {
    const resolver = new Resolver({ timeout: 5000, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    expect(await resolver.resolve4('echo.default.svc.cluster.local')).toEqual([ECHO_IP]);
    expect((await resolver.resolve4('web.default.svc.cluster.local')).sort()).toEqual([...WEB_ENDPOINTS].sort());
    expect(await resolver.resolveSrv('_http._tcp.web.default.svc.cluster.local')).toHaveLength(3);
    expect(await resolver.resolveCname('external.default.svc.cluster.local')).toEqual(['example.com']);
    expect(await resolver.reverse(ECHO_IP)).toEqual(['echo.default.svc.cluster.local']);
    await expect(resolver.resolve4('nothing.default.svc.cluster.local')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.resolve6('echo.default.svc.cluster.local')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('malformed messages: too short or a response is dropped, undecodable gets FORMERR with its id, and the server keeps answering', async () => {
    // Dropped: the first reply on the socket is the one to the good query sent after them.
    const response = Buffer.from(query(7, 'echo.default.svc.cluster.local'));
    response[2] = (response[2] ?? 0) | 0x80;
    const first = dnsPacket.decode(await udpFirstReply(port, [Buffer.from([1, 2, 3, 4, 5]), response, query(8, 'echo.default.svc.cluster.local')]));
    expect(first.id).toBe(8);
    expect(first.answers).toMatchObject([{ type: 'A', data: ECHO_IP }]);
    // A header that promises a question the message does not hold.
    const cut = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x07, 0x65, 0x63]);
    const formerr = dnsPacket.decode(await udpFirstReply(port, [cut]));
    expect(formerr.id).toBe(0x1234);
    expect((formerr.flags ?? 0) & 0xf).toBe(1);
    // Two questions in one query: FORMERR too.
    const two = dnsPacket.encode({ type: 'query', id: 9, questions: [{ type: 'A', name: 'a.cluster.local' }, { type: 'A', name: 'b.cluster.local' }] });
    expect((dnsPacket.decode(await udpFirstReply(port, [two])).flags ?? 0) & 0xf).toBe(1);
    // Over TCP: garbage in one frame, then a good query on the same connection.
    const [bad, good] = await tcpExchange(port, [cut, query(11, 'echo.default.svc.cluster.local')], 2);
    expect(((dnsPacket.decode(bad as Buffer).flags ?? 0) & 0xf)).toBe(1);
    expect(dnsPacket.decode(good as Buffer).answers).toMatchObject([{ type: 'A', data: ECHO_IP }]);
    expect((await dig(port, ['echo.default.svc.cluster.local', 'A'])).answer).toHaveLength(1);
  });

  it('random bytes and mutated queries over UDP and TCP never stop the server answering', async () => {
    const good = query(0x4242, 'echo.default.svc.cluster.local');
    const mutated = fc.tuple(fc.nat({ max: good.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, value]) => {
      const copy = Buffer.from(good);
      copy[at] = value;
      // Another id, so the reply to the intact query below is told apart.
      copy.writeUInt16BE(at === 0 || at === 1 ? copy.readUInt16BE(0) ^ 0x0101 : 0x0101, 0);
      return copy;
    });
    const garbage = fc.sample(fc.oneof(fc.uint8Array({ minLength: 0, maxLength: 600 }).map((bytes) => Buffer.from(bytes)), mutated), { numRuns: 300, seed: 20 });
    const probe = query(0x4243, 'echo.default.svc.cluster.local');
    const notProbe = garbage.filter((m) => m.length < 2 || m.readUInt16BE(0) !== 0x4243);
    // In batches of 20 (a burst of hundreds of datagrams would overflow the socket's receive buffer), each followed by the probe.
    for (let at = 0; at < notProbe.length; at += 20) {
      const reply = dnsPacket.decode(await udpReplyWithId(port, [...notProbe.slice(at, at + 20), probe], 0x4243));
      expect(reply.answers).toMatchObject([{ type: 'A', data: ECHO_IP }]);
    }
    // Over TCP the same messages, one frame each, then the probe on the same connection.
    const frames = notProbe;
    const isProbe = (r: Buffer): boolean => r.length >= 2 && r.readUInt16BE(0) === 0x4243;
    const replies = await tcpExchange(port, [...frames, probe], (all) => all.some(isProbe));
    expect(dnsPacket.decode(replies.find(isProbe) as Buffer).answers).toMatchObject([{ type: 'A', data: ECHO_IP }]);
  });

  it('dig: an EDNS version other than 0 gets BADVERS; plain queries get no OPT back, EDNS ones get ours', async () => {
    expect((await dig(port, ['+edns=1', '+noednsnegotiation', 'echo.default.svc.cluster.local', 'A'])).status).toBe('BADVERS');
    const plain = dnsPacket.decode(await udpFirstReply(port, [query(31, 'echo.default.svc.cluster.local')]));
    expect(plain.additionals).toEqual([]);
    const withEdns = dnsPacket.encode({
      type: 'query',
      id: 32,
      questions: [{ type: 'A', name: 'echo.default.svc.cluster.local' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
    });
    expect(dnsPacket.decode(await udpFirstReply(port, [withEdns])).additionals).toMatchObject([{ type: 'OPT', udpPayloadSize: 1232 }]);
  });

  it('TCP: pipelined queries on one connection are answered in order', async () => {
    const replies = await tcpExchange(port, [query(21, 'echo.default.svc.cluster.local'), query(22, '_http._tcp.echo.default.svc.cluster.local', 'SRV'), query(23, 'nothing.default.svc.cluster.local')], 3);
    expect(replies.map((r) => dnsPacket.decode(r).id)).toEqual([21, 22, 23]);
  });

  it('forwards names outside the zone to a configured upstream over UDP and TCP, and answers SERVFAIL when none answers', async () => {
    // The upstream: another server of ours, for the zone example.test.
    const upstream = await startClusterDns({ projection: cluster.projection, host: '127.0.0.1', port: 0, zone: 'example.test', logger });
    const forwarding = await startClusterDns({
      projection: cluster.projection,
      host: '127.0.0.1',
      port: 0,
      upstreams: [`127.0.0.1:${upstream.address.port}`],
      logger,
    });
    try {
      for (const transport of ['+notcp', '+tcp']) {
        const result = await dig(forwarding.address.port, [transport, 'echo.default.svc.example.test', 'A']);
        expect(result.status).toBe('NOERROR');
        // The upstream's reply, relayed as it came (the upstream is authoritative for example.test).
        expect(result.flags).toContain('aa');
        expect(result.answer).toEqual([`echo.default.svc.example.test. 5 IN A ${ECHO_IP}`]);
      }
      // The cluster's own names are still answered by the forwarding server itself.
      expect((await dig(forwarding.address.port, ['echo.default.svc.cluster.local', 'A'])).answer).toHaveLength(1);
      await upstream.close();
      expect((await dig(forwarding.address.port, ['echo.default.svc.example.test', 'A'])).status).toBe('SERVFAIL');
    } finally {
      await forwarding.close();
      await upstream.close();
    }
  });

  it('sees a new Service at the next query', async () => {
    const before = await dig(port, ['late.default.svc.cluster.local', 'A']);
    expect(before.status).toBe('NXDOMAIN');
    await appendEnvelopes(cluster.log, [
      envelope(
        { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'late', namespace: 'default' }, spec: { clusterIP: '127.96.0.77', ports: [{ port: 80 }] } } },
        { actor: admin },
      ),
    ]);
    await cluster.projection.waitFor({ desired: await cluster.log.endOffsets('desired'), observed: await cluster.log.endOffsets('observed') });
    expect((await dig(port, ['late.default.svc.cluster.local', 'A'])).answer).toEqual(['late.default.svc.cluster.local. 5 IN A 127.96.0.77']);
  });
});

describe('the DNS listeners', () => {
  it('answer SERVFAIL when the handler throws, and keep serving', async () => {
    let calls = 0;
    const server = await startDnsServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      handle: async () => {
        calls++;
        throw new Error('a bug in an answer');
      },
    });
    try {
      for (const id of [41, 42]) {
        const reply = dnsPacket.decode(await udpFirstReply(server.address.port, [query(id, 'echo.default.svc.cluster.local')]));
        expect(reply.id).toBe(id);
        expect((reply.flags ?? 0) & 0xf).toBe(2);
      }
      const [overTcp] = await tcpExchange(server.address.port, [query(43, 'echo.default.svc.cluster.local')], 1);
      expect((dnsPacket.decode(overTcp as Buffer).flags ?? 0) & 0xf).toBe(2);
      expect(calls).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('refuse to start on a port in use, saying so', async () => {
    const first = await startDnsServer({ host: '127.0.0.1', port: 0, logger, handle: async () => undefined });
    try {
      const second = startDnsServer({ host: '127.0.0.1', port: first.address.port, logger, handle: async () => undefined });
      await expect(second).rejects.toBeInstanceOf(DnsListenError);
      await expect(second).rejects.toThrow(/address is in use/);
    } finally {
      await first.close();
    }
  });
});
