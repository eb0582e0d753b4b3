/**
 * The connect subresources `pods/NAME/exec`, `pods/NAME/attach` and `pods/NAME/portforward`
 * (kube-apiserver's `ExecREST`/`AttachREST`/`PortForwardREST` with the upgrade-aware proxy):
 * an upgrade request (WebSocket, or SPDY/3.1) is authenticated and authorized — GET and POST
 * both need the `create` verb on the subresource, as kube 1.32 checks WebSocket upgrades —
 * its pod and options are checked, and the connection is handed to the pod's node agent at
 * kubelet's path (`/exec/NODE/NS/POD/CONTAINER?…`, `/attach/…`, `/portForward/NODE/NS/POD`)
 * by the `podStreams` hook: in-process to an agent of the same process, or proxied over the
 * agent's authenticated HTTPS endpoint. The apiserver does not read the streams: subprotocol
 * negotiation and the protocols are the agent's, as kubelet's.
 *
 * Every refusal is a Status on the raw socket with its HTTP code; nothing a client sends
 * throws out of the handler.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pod } from '../../schemas/index.ts';
import { catchUp, keyOf, type ServerContext } from '../context.ts';
import { ApiError, apiErrors } from '../errors.ts';
import { failureStatus } from '../status.ts';
import type { UserInfo } from '../auth.ts';
import type { Route } from '../router.ts';

/** The subresources served by upgrading the connection. */
export const CONNECT_SUBRESOURCES = ['exec', 'attach', 'portforward'] as const;
export type ConnectSubresource = (typeof CONNECT_SUBRESOURCES)[number];

/** One connection to hand to the node agent of `pod`. */
export interface PodStreamRequest {
  readonly pod: Pod;
  readonly node: string;
  /** The agent's path and query (kubelet's layout with the node first). */
  readonly path: string;
  readonly req: IncomingMessage;
  readonly socket: Duplex;
  readonly head: Buffer;
}

/** Hands a connection to the pod's agent; it owns the socket from then on (and answers errors on it). */
export type PodStreamsHook = (request: PodStreamRequest) => void;

export interface ConnectDependencies {
  readonly server: ServerContext;
  readonly podStreams: PodStreamsHook | undefined;
  /** Resolves the request's user; throws an ApiError (401) when it has none. */
  authenticate(req: IncomingMessage): Promise<UserInfo>;
  /** Throws an ApiError (403) unless `user` may `method` the path (the method decides the verb, POST is `create`). */
  authorize(user: UserInfo, method: string, pathname: string, query: URLSearchParams): void;
}

const STATUS_TEXT: Readonly<Record<number, string>> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Writes a Status as a complete HTTP reply on the raw socket and closes it. */
export const refuseWithStatus = (socket: Duplex, error: ApiError): void => {
  const body = JSON.stringify(error.status);
  const code = error.status.code;
  if (socket.writable) {
    socket.end(`HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  } else socket.destroy();
};

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

/** The agent path of a checked request (container checks as kube's `streamLocation`). */
export const agentPath = (pod: Pod, subresource: ConnectSubresource, query: URLSearchParams): string => {
  const name = pod.metadata.name;
  const namespace = pod.metadata.namespace ?? 'default';
  const node = pod.spec.nodeName;
  if (!node) throw apiErrors.badRequest(`pod ${name} does not have a host assigned`);
  const base = [node, namespace, name].map(encodeURIComponent).join('/');
  if (subresource === 'portforward') {
    const ports = query.getAll('ports');
    for (const port of ports.flatMap((p) => p.split(','))) {
      if (!/^\d{1,5}$/.test(port.trim()) || Number(port) < 1 || Number(port) > 65535) throw apiErrors.badRequest(`ports: Invalid value: "${port.slice(0, 16)}": must be a port from 1 to 65535`);
    }
    return `/portForward/${base}`;
  }
  const containers = pod.spec.containers.map((c) => c.name);
  let container = query.get('container') ?? '';
  if (container === '') {
    if (containers.length !== 1) throw apiErrors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
    container = containers[0]!;
  } else if (!containers.includes(container)) {
    const init = (pod.spec.initContainers ?? []).some((c) => c.name === container);
    throw apiErrors.badRequest(init ? `container ${container} is an init container of pod ${name}, which is not running` : `container ${container} is not valid for pod ${name}`);
  }
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw apiErrors.badRequest(`cannot ${subresource} into a container in a completed pod; current phase is ${phase}`);
  if (phase !== 'Running') throw apiErrors.badRequest(`pod ${name} is not running (phase ${phase ?? 'Pending'}): cannot ${subresource} into container ${container}`);
  const state = pod.status?.containerStatuses?.find((c) => c.name === container)?.state;
  if (state !== undefined && state.running === undefined) throw apiErrors.badRequest(`container ${container} in pod ${name} is not running`);
  const forwarded = new URLSearchParams();
  if (subresource === 'exec') {
    const command = query.getAll('command');
    if (command.length === 0) throw apiErrors.badRequest('command: Required value: you must specify at least one command for the container');
    for (const word of command) forwarded.append('command', word);
  }
  const flags = Object.fromEntries(['stdin', 'stdout', 'stderr', 'tty'].map((f) => [f, TRUE.has(query.get(f) ?? '')]));
  if (!flags.stdin && !flags.stdout && !flags.stderr) throw apiErrors.badRequest('you must specify at least 1 of stdin, stdout, stderr');
  for (const [flag, on] of Object.entries(flags)) forwarded.set(flag, String(on));
  return `/${subresource}/${base}/${encodeURIComponent(container)}?${forwarded}`;
};

/** Whether `routed` addresses a connect subresource of a pod (the upgrade handler serves those only). */
export const connectTarget = (routed: Route): { namespace: string; name: string; subresource: ConnectSubresource } | undefined => {
  if (routed.type !== 'resource' || routed.watchPrefix) return undefined;
  const { resource, namespace, name, subresource } = routed.target;
  if (resource.kind !== 'Pod' || namespace === undefined || name === undefined) return undefined;
  return (CONNECT_SUBRESOURCES as readonly string[]).includes(subresource ?? '') ? { namespace, name, subresource: subresource as ConnectSubresource } : undefined;
};

/** Serves one upgrade request to a connect subresource (see the module comment). */
export const serveConnect = async (deps: ConnectDependencies, req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, routed: Route): Promise<void> => {
  const method = req.method ?? 'GET';
  const user = await deps.authenticate(req);
  const target = connectTarget(routed);
  if (!target) throw apiErrors.badRequest(`${url.pathname.slice(0, 200)} is not upgradeable: only pods/exec, pods/attach and pods/portforward are`);
  if (method !== 'GET' && method !== 'POST') throw apiErrors.methodNotAllowed();
  deps.authorize(user, method, url.pathname, url.searchParams);
  // kube 1.32 (AuthorizePodWebsocketUpgradeCreatePermission): a WebSocket GET needs `create` too.
  if (method === 'GET') deps.authorize(user, 'POST', url.pathname, url.searchParams);
  if (routed.type !== 'resource') throw apiErrors.pathNotFound();
  await catchUp(deps.server);
  const pod = deps.server.projection.view().get(keyOf(routed.target.resource, target.namespace, target.name)) as Pod | undefined;
  if (!pod) throw apiErrors.notFound(routed.target.resource, target.name);
  const path = agentPath(pod, target.subresource, url.searchParams);
  if (!deps.podStreams) {
    throw new ApiError(failureStatus('ServiceUnavailable', `pod ${target.name}: no node agent serves ${target.subresource} to this apiserver`));
  }
  deps.podStreams({ pod, node: pod.spec.nodeName!, path, req, socket, head });
};
