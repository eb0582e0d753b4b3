import net from 'node:net';
import { afterEach, beforeAll, afterAll, describe, expect, it, vi } from 'vitest';
import { ProxyApplyError, ProxyClosedError, ProxyConfigError } from './errors.ts';
import type { EndpointTarget, ForwardingTable, ServicePortRule } from './table.ts';
import { type UserspaceProxy, createUserspaceProxy, planListenerChanges } from './userspace.ts';

/** A TCP server that answers every line with its name, and says goodbye after the client half-closes. */
interface EchoServer {
  readonly name: string;
  readonly endpoint: EndpointTarget;
  close(): Promise<void>;
}

async function startEchoServer(name: string, ip: string): Promise<EchoServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        buffered = buffered.slice(newline + 1);
        socket.write(`${name}\n`);
        newline = buffered.indexOf('\n');
      }
    });
    socket.on('end', () => socket.end(`${name} bye\n`));
  });
  await new Promise<void>((resolve) => server.listen(0, ip, resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    name,
    endpoint: { ip, port },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on `ip` nobody listens on right now (bound by the kernel, then released). */
async function freePort(ip: string): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, ip, resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A random address in the service range, so parallel test files do not collide. */
function randomAddress(prefix: '127.96' | '127.97'): string {
  return `${prefix}.${128 + Math.floor(Math.random() * 126)}.${1 + Math.floor(Math.random() * 254)}`;
}

/** A client connection that sends lines and reads the answers one by one. */
interface LineClient {
  ask(line: string): Promise<string>;
  /** Half-closes, then resolves with everything received until the proxy closes its side. */
  finish(): Promise<string>;
  readonly socket: net.Socket;
}

async function connectLines(ip: string, port: number): Promise<LineClient> {
  const socket = net.connect({ host: ip, port, allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let buffered = '';
  let ended = false;
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  socket.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    wake();
  });
  socket.on('end', () => {
    ended = true;
    wake();
  });
  socket.on('close', () => {
    ended = true;
    wake();
  });
  const until = async (ready: () => boolean): Promise<void> => {
    while (!ready()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return {
    socket,
    ask: async (line) => {
      socket.write(`${line}\n`);
      await until(() => buffered.includes('\n') || ended);
      const newline = buffered.indexOf('\n');
      if (newline < 0) throw new Error('connection closed before an answer');
      const answer = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      return answer;
    },
    finish: async () => {
      socket.end();
      await until(() => ended);
      return buffered;
    },
  };
}

/** One request on a fresh connection: the answering server's name. */
async function askOnce(ip: string, port: number): Promise<string> {
  const client = await connectLines(ip, port);
  try {
    return await client.ask('hello');
  } finally {
    client.socket.destroy();
  }
}

/** Connects and reports how the connection ends when no answer is expected: closed without data, or refused. */
function connectOutcome(ip: string, port: number): Promise<'closed' | 'refused' | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port });
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') resolve('refused');
    });
    socket.on('close', () => resolve(received === '' ? 'closed' : received));
    socket.on('connect', () => socket.write('hello\n'));
  });
}

function tableOf(...rules: ServicePortRule[]): ForwardingTable {
  return { rules };
}

describe('createUserspaceProxy', () => {
  let servers: EchoServer[] = [];
  let proxy: UserspaceProxy | null = null;
  let nodePortAddress = '';
  const newProxy = (): UserspaceProxy => {
    proxy = createUserspaceProxy({ nodePortAddress });
    return proxy;
  };

  beforeAll(async () => {
    servers = await Promise.all([
      startEchoServer('pod-a', '127.100.0.11'),
      startEchoServer('pod-b', '127.100.0.12'),
      startEchoServer('pod-c', '127.100.0.13'),
    ]);
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = null;
  });

  const server = (i: number): EchoServer => {
    const found = servers[i];
    if (found === undefined) throw new Error(`no echo server ${i}`);
    return found;
  };

  async function webRule(endpoints: EndpointTarget[], nodePort: number | null = null): Promise<ServicePortRule> {
    const clusterIP = randomAddress('127.96');
    return {
      serviceKey: 'default/web',
      portName: 'http',
      protocol: 'TCP',
      clusterIP,
      port: await freePort(clusterIP),
      nodePort,
      endpoints,
    };
  }

  it('forwards round-robin over all ready endpoints', async () => {
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([server(2).endpoint, server(0).endpoint, server(1).endpoint]);
    const userspace = newProxy();
    await userspace.apply(tableOf(rule));

    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(await askOnce(rule.clusterIP, rule.port));
    expect(answers).toEqual(['pod-a', 'pod-b', 'pod-c', 'pod-a', 'pod-b', 'pod-c']);
    expect(userspace.stats()).toMatchObject({ listening: [`${rule.clusterIP}:${rule.port}`], acceptedConnections: 6 });
  });

  it('forwards a NodePort on nodePortAddress, sharing the round-robin with the ClusterIP', async () => {
    nodePortAddress = randomAddress('127.97');
    const nodePort = await freePort(nodePortAddress);
    const rule = await webRule([server(0).endpoint, server(1).endpoint], nodePort);
    const userspace = newProxy();
    await userspace.apply(tableOf(rule));

    expect(await askOnce(nodePortAddress, nodePort)).toBe('pod-a');
    expect(await askOnce(rule.clusterIP, rule.port)).toBe('pod-b');
    expect(await askOnce(nodePortAddress, nodePort)).toBe('pod-a');
    expect(userspace.stats().listening).toEqual(
      [`${rule.clusterIP}:${rule.port}`, `${nodePortAddress}:${nodePort}`].sort(),
    );
  });

  it('follows endpoint changes live without dropping an open connection', async () => {
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([server(0).endpoint]);
    const userspace = newProxy();
    await userspace.apply(tableOf(rule));

    const open = await connectLines(rule.clusterIP, rule.port);
    expect(await open.ask('first')).toBe('pod-a');

    await userspace.apply(tableOf({ ...rule, endpoints: [server(1).endpoint, server(2).endpoint] }));
    expect(await open.ask('second')).toBe('pod-a');
    const fresh = [await askOnce(rule.clusterIP, rule.port), await askOnce(rule.clusterIP, rule.port)];
    expect(fresh.sort()).toEqual(['pod-b', 'pod-c']);
    expect(await open.ask('third')).toBe('pod-a');
    expect(await open.finish()).toBe('pod-a bye\n');
  });

  it('propagates a client half-close to the endpoint and relays its last words', async () => {
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([server(1).endpoint]);
    await newProxy().apply(tableOf(rule));

    const client = await connectLines(rule.clusterIP, rule.port);
    client.socket.write('one\ntwo\n');
    expect(await client.finish()).toBe('pod-b\npod-b\npod-b bye\n');
  });

  it('closes the listener of a removed service, keeping its open connections', async () => {
    nodePortAddress = randomAddress('127.97');
    const nodePort = await freePort(nodePortAddress);
    const rule = await webRule([server(2).endpoint], nodePort);
    const other = { ...(await webRule([server(0).endpoint])), serviceKey: 'default/other' };
    const userspace = newProxy();
    await userspace.apply(tableOf(rule, other));
    const open = await connectLines(rule.clusterIP, rule.port);
    expect(await open.ask('before')).toBe('pod-c');

    await userspace.apply(tableOf(other));
    expect(await connectOutcome(rule.clusterIP, rule.port)).toBe('refused');
    expect(await connectOutcome(nodePortAddress, nodePort)).toBe('refused');
    expect(userspace.stats().listening).toEqual([`${other.clusterIP}:${other.port}`]);
    expect(await askOnce(other.clusterIP, other.port)).toBe('pod-a');
    expect(await open.ask('after')).toBe('pod-c');
    expect(await open.finish()).toBe('pod-c bye\n');
  });

  it('closes connections at once when the service has no ready endpoints', async () => {
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([]);
    const userspace = newProxy();
    await userspace.apply(tableOf(rule));

    expect(await connectOutcome(rule.clusterIP, rule.port)).toBe('closed');
    expect(userspace.stats()).toMatchObject({ rejectedConnections: 1, activeConnections: 0 });
  });

  it('tries the next endpoint once when one refuses, and closes the client when both do', async () => {
    nodePortAddress = randomAddress('127.97');
    const dead = { ip: '127.100.0.14', port: await freePort('127.100.0.14') };
    const alsoDead = { ip: '127.100.0.15', port: await freePort('127.100.0.15') };
    const rule = await webRule([dead, server(0).endpoint]);
    const userspace = newProxy();
    await userspace.apply(tableOf(rule));

    for (let i = 0; i < 4; i++) expect(await askOnce(rule.clusterIP, rule.port)).toBe('pod-a');
    expect(userspace.stats().failedConnections).toBe(0);

    await userspace.apply(tableOf({ ...rule, endpoints: [dead, alsoDead] }));
    expect(await connectOutcome(rule.clusterIP, rule.port)).toBe('closed');
    expect(userspace.stats().failedConnections).toBe(1);
  });

  it('applies what it can and reports listeners that cannot bind', async () => {
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([server(0).endpoint]);
    const unbindable = { ...rule, serviceKey: 'default/remote', clusterIP: '192.0.2.10', port: 8080 };
    const userspace = newProxy();

    const failure = await userspace.apply(tableOf(rule, unbindable)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProxyApplyError);
    expect(failure).toMatchObject({ retriable: false, message: expect.stringContaining('192.0.2.10:8080 (EADDRNOTAVAIL)') });
    expect(await askOnce(rule.clusterIP, rule.port)).toBe('pod-a');
  });

  it('drops connections and listeners on close, and refuses to apply afterwards', async () => {
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([server(0).endpoint]);
    const userspace = newProxy();
    await userspace.apply(tableOf(rule));
    const open = await connectLines(rule.clusterIP, rule.port);
    expect(await open.ask('hi')).toBe('pod-a');
    await vi.waitFor(() => expect(userspace.stats().activeConnections).toBe(1));

    await userspace.close();
    await vi.waitFor(() => expect(open.socket.closed || open.socket.readableEnded).toBe(true));
    expect(await connectOutcome(rule.clusterIP, rule.port)).toBe('refused');
    expect(userspace.stats()).toMatchObject({ listening: [], activeConnections: 0 });
    await expect(userspace.apply(tableOf(rule))).rejects.toBeInstanceOf(ProxyClosedError);
  });

  it('rejects an invalid nodePortAddress and a table with clashing frontends', async () => {
    expect(() => createUserspaceProxy({ nodePortAddress: 'localhost' })).toThrow(ProxyConfigError);
    nodePortAddress = randomAddress('127.97');
    const rule = await webRule([], 30080);
    const clash = { ...rule, serviceKey: 'default/clash', clusterIP: nodePortAddress, port: 30080, nodePort: null };
    await expect(newProxy().apply(tableOf(rule, clash))).rejects.toBeInstanceOf(ProxyConfigError);
  });
});

describe('planListenerChanges', () => {
  const wanted = (address: string, port: number, servicePort: string) => ({ address, port, servicePort });

  it.each([
    { case: 'nothing open, nothing wanted', open: [], want: [], changes: [] },
    {
      case: 'opens new, retargets kept, closes gone',
      open: [
        ['127.96.0.10:80', 'default/web:'],
        ['127.96.0.11:80', 'default/old:'],
      ],
      want: [wanted('127.96.0.10', 80, 'default/web:'), wanted('127.96.0.12', 80, 'default/new:')],
      changes: [
        { type: 'retarget', frontend: '127.96.0.10:80', servicePort: 'default/web:' },
        { type: 'close', frontend: '127.96.0.11:80' },
        { type: 'open', frontend: '127.96.0.12:80', wanted: wanted('127.96.0.12', 80, 'default/new:') },
      ],
    },
    {
      case: 'a frontend moving to another service is retargeted, not reopened',
      open: [['127.96.0.10:80', 'default/web:']],
      want: [wanted('127.96.0.10', 80, 'default/api:')],
      changes: [{ type: 'retarget', frontend: '127.96.0.10:80', servicePort: 'default/api:' }],
    },
  ] as const)('$case', ({ open, want, changes }) => {
    const openMap = new Map<string, string>(open.map(([frontend, servicePort]) => [frontend, servicePort]));
    const wantMap = new Map(want.map((w) => [`${w.address}:${w.port}`, w]));
    expect(planListenerChanges(openMap, wantMap)).toEqual(changes);
  });
});
