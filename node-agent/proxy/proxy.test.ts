import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProxyConfigError, ProxyMode, createProxy, renderNftables, renderNftablesDelete, type ForwardingTable } from './index.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP server on `ip` (kernel-chosen port) that answers every connection with `name`. */
async function startNamedServer(name: string, ip: string): Promise<{ ip: string; port: number }> {
  const server = net.createServer((socket) => socket.end(`${name}\n`));
  await new Promise<void>((resolve) => server.listen(0, ip, resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { ip, port: (server.address() as net.AddressInfo).port };
}

/** A port on `ip` nobody listens on right now. */
async function freePort(ip: string): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, ip, resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** What one connection to `ip:port` receives, or 'refused'. */
function receive(ip: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: ip, port });
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve('refused') : reject(error)));
    socket.on('close', (hadError) => {
      if (!hadError) resolve(received);
    });
  });
}

const randomServiceIP = (): string => `127.96.${128 + Math.floor(Math.random() * 126)}.${1 + Math.floor(Math.random() * 254)}`;

async function webTable(endpoint: { ip: string; port: number }): Promise<ForwardingTable> {
  const clusterIP = randomServiceIP();
  return {
    rules: [{ serviceKey: 'default/web', portName: 'http', protocol: 'TCP', clusterIP, port: await freePort(clusterIP), nodePort: null, endpoints: [endpoint] }],
  };
}

describe('createProxy', () => {
  it.each([
    { options: { mode: ProxyMode.Userspace, nodePortAddress: 'not-an-ip' }, message: 'nodePortAddress not-an-ip is not an IPv4 address' },
    { options: { mode: ProxyMode.Nftables, tableName: 'not a name' }, message: 'nftables table name "not a name" must be' },
  ] as const)('hands $options.mode its own options, validated eagerly', ({ options, message }) => {
    expect(() => createProxy(options)).toThrow(ProxyConfigError);
    expect(() => createProxy(options)).toThrow(message);
  });

  it('creates a userspace proxy that forwards its table, and closes its listeners', async () => {
    const pod = await startNamedServer('pod-a', '127.100.0.21');
    const table = await webTable(pod);
    const rule = table.rules[0]!;
    const proxy = createProxy({ mode: ProxyMode.Userspace });
    cleanups.push(() => proxy.close());
    expect(await receive(rule.clusterIP, rule.port)).toBe('refused');
    await proxy.apply(table);
    expect(await receive(rule.clusterIP, rule.port)).toBe('pod-a\n');
    await proxy.close();
    expect(await receive(rule.clusterIP, rule.port)).toBe('refused');
  });

  it('creates an nftables proxy that loads its ruleset with the configured nft, and deletes its table on close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-proxy-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // A stand-in for nft: appends the arguments and the ruleset file it was given to a transcript.
    const transcript = join(dir, 'transcript');
    const fakeNft = join(dir, 'nft');
    writeFileSync(fakeNft, `#!/bin/sh\necho "nft $1" >>'${transcript}'\ncat "$2" >>'${transcript}'\n`);
    chmodSync(fakeNft, 0o755);
    const table = await webTable({ ip: '127.100.0.22', port: 8080 });
    const proxy = createProxy({ mode: ProxyMode.Nftables, nft: fakeNft, tableName: 'lp_proxy_test' });
    await proxy.apply(table);
    expect(readFileSync(transcript, 'utf8')).toBe(`nft -f\n${renderNftables(table, { tableName: 'lp_proxy_test' })}`);
    await proxy.close();
    expect(readFileSync(transcript, 'utf8')).toBe(
      `nft -f\n${renderNftables(table, { tableName: 'lp_proxy_test' })}nft -f\n${renderNftablesDelete({ tableName: 'lp_proxy_test' })}`,
    );
  });
});
