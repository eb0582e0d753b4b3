/**
 * userspace mode (the default, needs no root): a TCP listener per ClusterIP:port and per
 * NodePort, each connection forwarded round-robin to a ready endpoint of its service port.
 *
 * `apply` is level-based and live: it diffs the wanted listeners against the open ones
 * (a pure plan, then I/O), keeps unchanged listeners open, retargets them to the new
 * endpoints, and never touches established connections, which stay with the endpoint they
 * were forwarded to.
 */
import net from 'node:net';
import { type Logger, pino } from 'pino';
import { ProxyApplyError, ProxyClosedError, ProxyConfigError, assertNever } from './errors.ts';
import { type EndpointTarget, type ForwardingTable, canonicalTable, validateForwardingTable } from './table.ts';

/** Options of {@link createUserspaceProxy}. */
export interface UserspaceProxyOptions {
  /** The address NodePorts listen on; default `127.0.0.1`. */
  readonly nodePortAddress?: string;
  /** Structured log of applies and connection failures; default silent. */
  readonly logger?: Logger;
}

/** Counters and the open listeners of a userspace proxy. */
export interface UserspaceProxyStats {
  /** Open listeners as `address:port`, sorted. */
  readonly listening: readonly string[];
  /** Client connections currently open. */
  readonly activeConnections: number;
  /** Client connections accepted since creation. */
  readonly acceptedConnections: number;
  /** Connections closed at once because the service port had no ready endpoints. */
  readonly rejectedConnections: number;
  /** Connections closed because every endpoint tried (at most two) failed to connect. */
  readonly failedConnections: number;
}

/** The userspace forwarder of one node agent. `apply` calls are serialized. */
export interface UserspaceProxy {
  /**
   * Makes the listeners match `table`. Listeners that cannot bind are reported together in
   * one {@link ProxyApplyError} after everything else was applied; a later `apply` retries them.
   */
  apply(table: ForwardingTable): Promise<void>;
  /** Closes every listener and drops every forwarded connection. Idempotent. */
  close(): Promise<void>;
  /** A snapshot of the counters and listeners. */
  stats(): UserspaceProxyStats;
}

/** A listener the table wants: where it listens and which service port it forwards to. */
export interface WantedListener {
  readonly address: string;
  readonly port: number;
  /** `serviceKey:portName` of the rule it forwards to. */
  readonly servicePort: string;
}

/** One step that turns the open listeners into the wanted ones. */
export type ListenerChange =
  | { readonly type: 'open'; readonly frontend: string; readonly wanted: WantedListener }
  | { readonly type: 'retarget'; readonly frontend: string; readonly servicePort: string }
  | { readonly type: 'close'; readonly frontend: string };

/**
 * The changes from the open listeners (frontend → service port) to the wanted ones:
 * open what is new, retarget what stays (even if its service port is unchanged: the
 * endpoints may have changed), close what is gone. Sorted by frontend.
 */
export function planListenerChanges(
  open: ReadonlyMap<string, string>,
  wanted: ReadonlyMap<string, WantedListener>,
): ListenerChange[] {
  const changes: ListenerChange[] = [];
  for (const [frontend, listener] of wanted) {
    changes.push(
      open.has(frontend)
        ? { type: 'retarget', frontend, servicePort: listener.servicePort }
        : { type: 'open', frontend, wanted: listener },
    );
  }
  for (const frontend of open.keys()) {
    if (!wanted.has(frontend)) changes.push({ type: 'close', frontend });
  }
  return changes.sort((a, b) => (a.frontend < b.frontend ? -1 : a.frontend > b.frontend ? 1 : 0));
}

/** The endpoints of one service port and its round-robin position, shared by its ClusterIP and NodePort listeners. */
interface Backend {
  readonly servicePort: string;
  endpoints: readonly EndpointTarget[];
  next: number;
}

interface Listener {
  readonly frontend: string;
  readonly server: net.Server;
  backend: Backend;
}

interface Connection {
  readonly client: net.Socket;
  upstream: net.Socket | null;
}

function frontendOf(address: string, port: number): string {
  return `${address}:${port}`;
}

function sameEndpoints(a: readonly EndpointTarget[], b: readonly EndpointTarget[]): boolean {
  return a.length === b.length && a.every((endpoint, i) => endpoint.ip === b[i]?.ip && endpoint.port === b[i]?.port);
}

/**
 * Creates a userspace proxy with no listeners; `apply` opens them. Options are checked
 * here: `nodePortAddress` must be an IPv4 address.
 */
export function createUserspaceProxy(options: UserspaceProxyOptions = {}): UserspaceProxy {
  const nodePortAddress = options.nodePortAddress ?? '127.0.0.1';
  if (!net.isIPv4(nodePortAddress)) {
    throw new ProxyConfigError(`nodePortAddress ${nodePortAddress} is not an IPv4 address`, { nodePortAddress });
  }
  const logger = (options.logger ?? pino({ level: 'silent' })).child({ component: 'proxy', mode: 'userspace' });

  const listeners = new Map<string, Listener>();
  const backends = new Map<string, Backend>();
  const connections = new Set<Connection>();
  const counters = { accepted: 0, rejected: 0, failed: 0 };
  let closed = false;
  let queue: Promise<unknown> = Promise.resolve();

  const forward = (listener: Listener, client: net.Socket): void => {
    counters.accepted += 1;
    const { backend } = listener;
    const endpoints = backend.endpoints;
    if (endpoints.length === 0) {
      counters.rejected += 1;
      logger.debug({ frontend: listener.frontend, servicePort: backend.servicePort }, 'no ready endpoints; connection rejected');
      client.destroy();
      return;
    }
    const first = backend.next % endpoints.length;
    backend.next = (first + 1) % endpoints.length;
    const candidates = endpoints.length > 1 ? [first, (first + 1) % endpoints.length] : [first];
    const attempts = candidates.map((i) => endpoints[i]).filter((e): e is EndpointTarget => e !== undefined);

    const connection: Connection = { client, upstream: null };
    connections.add(connection);
    client.on('error', (error) => {
      logger.debug({ frontend: listener.frontend, err: error }, 'client connection error');
      connection.upstream?.destroy();
    });
    client.on('close', (hadError) => {
      connections.delete(connection);
      if (hadError || connection.upstream?.connecting) connection.upstream?.destroy();
    });

    const dial = (attempt: number): void => {
      const endpoint = attempts[attempt];
      if (endpoint === undefined || client.destroyed) return;
      const upstream = net.connect({ host: endpoint.ip, port: endpoint.port, allowHalfOpen: true });
      connection.upstream = upstream;
      const onDialError = (error: Error): void => {
        const context = { frontend: listener.frontend, servicePort: backend.servicePort, endpoint: frontendOf(endpoint.ip, endpoint.port) };
        if (attempt + 1 < attempts.length && !client.destroyed) {
          logger.warn({ ...context, err: error }, 'endpoint refused; trying the next one');
          dial(attempt + 1);
          return;
        }
        counters.failed += 1;
        logger.warn({ ...context, err: error }, 'endpoint refused; connection closed');
        client.destroy();
      };
      upstream.once('error', onDialError);
      upstream.once('connect', () => {
        upstream.off('error', onDialError);
        upstream.on('error', (error) => {
          logger.debug({ frontend: listener.frontend, err: error }, 'upstream connection error');
          client.destroy();
        });
        client.pipe(upstream);
        upstream.pipe(client);
      });
    };
    dial(0);
  };

  const open = (frontend: string, wanted: WantedListener, backend: Backend): Promise<void> =>
    new Promise((resolve, reject) => {
      const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true });
      const listener: Listener = { frontend, server, backend };
      server.on('connection', (client) => forward(listener, client));
      server.once('error', reject);
      server.listen({ host: wanted.address, port: wanted.port, exclusive: true }, () => {
        server.off('error', reject);
        server.on('error', (error) => logger.error({ frontend, err: error }, 'listener error'));
        listeners.set(frontend, listener);
        resolve();
      });
    });

  const closeListener = (frontend: string): void => {
    const listener = listeners.get(frontend);
    if (listener === undefined) return;
    listeners.delete(frontend);
    listener.server.close();
  };

  const applyTable = async (table: ForwardingTable): Promise<void> => {
    if (closed) throw new ProxyClosedError('userspace proxy is closed');
    validateForwardingTable(table);
    const { rules } = canonicalTable(table);

    const wanted = new Map<string, WantedListener>();
    const want = (address: string, port: number, servicePort: string): void => {
      const frontend = frontendOf(address, port);
      const owner = wanted.get(frontend);
      if (owner !== undefined) {
        throw new ProxyConfigError(`${frontend} is claimed by both ${owner.servicePort} and ${servicePort}`, { frontend });
      }
      wanted.set(frontend, { address, port, servicePort });
    };
    for (const rule of rules) {
      const servicePort = `${rule.serviceKey}:${rule.portName}`;
      want(rule.clusterIP, rule.port, servicePort);
      if (rule.nodePort !== null) want(nodePortAddress, rule.nodePort, servicePort);
    }
    const nextBackends = new Map<string, Backend>();
    for (const rule of rules) {
      const servicePort = `${rule.serviceKey}:${rule.portName}`;
      const backend = backends.get(servicePort) ?? { servicePort, endpoints: [], next: 0 };
      if (!sameEndpoints(backend.endpoints, rule.endpoints)) {
        backend.endpoints = rule.endpoints;
        backend.next = rule.endpoints.length === 0 ? 0 : backend.next % rule.endpoints.length;
      }
      nextBackends.set(servicePort, backend);
    }
    backends.clear();
    for (const [servicePort, backend] of nextBackends) backends.set(servicePort, backend);

    const current = new Map([...listeners].map(([frontend, listener]) => [frontend, listener.backend.servicePort]));
    const failures: { frontend: string; code: string; message: string }[] = [];
    const opens: Promise<void>[] = [];
    for (const change of planListenerChanges(current, wanted)) {
      switch (change.type) {
        case 'open': {
          const backend = nextBackends.get(change.wanted.servicePort);
          if (backend === undefined) break;
          opens.push(
            open(change.frontend, change.wanted, backend).catch((error: NodeJS.ErrnoException) => {
              failures.push({ frontend: change.frontend, code: error.code ?? 'UNKNOWN', message: error.message });
            }),
          );
          break;
        }
        case 'retarget': {
          const listener = listeners.get(change.frontend);
          const backend = nextBackends.get(change.servicePort);
          if (listener !== undefined && backend !== undefined) listener.backend = backend;
          break;
        }
        case 'close':
          closeListener(change.frontend);
          break;
        default:
          assertNever(change);
      }
    }
    await Promise.all(opens);
    logger.info({ rules: rules.length, listeners: listeners.size, failed: failures.length }, 'userspace forwarding applied');
    if (failures.length > 0) {
      failures.sort((a, b) => (a.frontend < b.frontend ? -1 : 1));
      throw new ProxyApplyError(
        `cannot listen on ${failures.map((f) => `${f.frontend} (${f.code})`).join(', ')}`,
        failures.every((f) => f.code === 'EADDRINUSE'),
        { failed: failures.map((f) => `${f.frontend} ${f.code}`).join(', '), firstError: failures[0]?.message },
      );
    }
  };

  const closeAll = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    const servers = [...listeners.values()].map((listener) => listener.server);
    listeners.clear();
    backends.clear();
    for (const connection of connections) {
      connection.client.destroy();
      connection.upstream?.destroy();
    }
    connections.clear();
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    logger.info('userspace proxy closed');
  };

  const serialized = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };

  return {
    apply: (table) => serialized(() => applyTable(table)),
    close: () => serialized(closeAll),
    stats: () => ({
      listening: [...listeners.keys()].sort(),
      activeConnections: connections.size,
      acceptedConnections: counters.accepted,
      rejectedConnections: counters.rejected,
      failedConnections: counters.failed,
    }),
  };
}
