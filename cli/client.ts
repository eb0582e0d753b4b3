/**
 * The CLI's HTTP client for the logplane API server (Kubernetes REST and the
 * `/logplane/v1` history API): JSON requests with a bearer token, NDJSON streams for
 * watches and replay, raw byte streams for logs. A non-2xx reply becomes an
 * {@link ApiError} carrying the Kubernetes `Status` (synthesized like client-go when the
 * server sent none); a failed connection becomes a {@link ConnectionError}. https servers
 * with their own CA (a self-signed apiserver) go through {@link tlsFetch}.
 */
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** `meta/v1 Status`, as the API server sends it with every error. */
export interface KubeStatus {
  readonly kind: 'Status';
  readonly apiVersion?: string;
  readonly status?: 'Success' | 'Failure';
  readonly message?: string;
  readonly reason?: string;
  readonly details?: {
    readonly name?: string;
    readonly group?: string;
    readonly kind?: string;
    readonly uid?: string;
    readonly causes?: readonly { readonly reason?: string; readonly message?: string; readonly field?: string }[];
    readonly retryAfterSeconds?: number;
  };
  readonly code?: number;
}

/** The server answered with an error; `message` is the Status message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The HTTP status code. */
  readonly code: number;
  /** The Status reason (`NotFound`, `Conflict`, `Invalid` …), or `''` when it has none. */
  readonly reason: string;
  readonly status: KubeStatus;
  /** Whether the same request may succeed later (conflicts, throttling, server trouble). */
  readonly retriable: boolean;

  constructor(status: KubeStatus, code: number) {
    super(status.message ?? `the server responded with the status code ${code}`);
    this.status = status;
    this.code = status.code ?? code;
    this.reason = status.reason ?? '';
    this.retriable = this.code === 409 || this.code === 429 || this.code >= 500;
  }
}

/** The server could not be reached at all. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  readonly retriable = true;
  /** `host:port` of the server. */
  readonly host: string;
  /** Whether the connection was refused (nothing listening), as opposed to another failure. */
  readonly refused: boolean;

  constructor(host: string, cause: unknown) {
    const detail = describeCause(cause);
    const refused = /ECONNREFUSED|connection refused/i.test(detail);
    super(
      refused
        ? `The connection to the server ${host} was refused - did you specify the right host or port?`
        : `Unable to connect to the server: ${detail}`,
      { cause },
    );
    this.host = host;
    this.refused = refused;
  }
}

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    if (inner instanceof Error) {
      if (inner instanceof AggregateError && inner.errors.length > 0) return inner.errors.map(describeCause).join('; ');
      return `${(inner as Error & { code?: string }).code ?? ''} ${inner.message}`.trim();
    }
    return cause.message;
  }
  return String(cause);
};

/** Query parameters; `undefined` and `false` values are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly query?: Query;
  /** Sent as JSON (objects) or as is (strings). */
  readonly body?: unknown;
  /** Defaults to `application/json` when there is a body. */
  readonly contentType?: string;
  readonly accept?: string;
  readonly signal?: AbortSignal;
}

/** One line of a watch stream. */
export interface WatchEvent<T = unknown> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: T;
}

export interface Client {
  /** The server's base URL, without a trailing slash. */
  readonly server: string;
  /** Sends a request and parses the JSON reply (`undefined` for an empty body). */
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  get<T>(path: string, query?: Query): Promise<T>;
  /**
   * Watches `path` (`watch=true` is added) and yields its events. An `ERROR` event ends
   * the stream by throwing an {@link ApiError} with the Status it carries (e.g. 410 Expired).
   */
  watch<T>(path: string, query?: Query, signal?: AbortSignal, accept?: string): AsyncGenerator<WatchEvent<T>>;
  /** Sends a request and yields every non-empty line of the reply, parsed as JSON. */
  ndjson<T>(method: string, path: string, options?: RequestOptions): AsyncGenerator<T>;
  /** Sends a request and yields the raw bytes of the reply as they arrive (logs). */
  bytes(method: string, path: string, options?: RequestOptions): AsyncGenerator<Uint8Array>;
}

export interface ClientOptions {
  /** Base URL, e.g. `http://127.0.0.1:6443` (`host:port` alone means http). */
  readonly server: string;
  /** Bearer token, sent as `Authorization: Bearer …`. */
  readonly token?: string;
  /** PEM certificate(s) to trust for an https server (e.g. a self-signed apiserver's). */
  readonly certificateAuthority?: string;
  /** Accept any certificate from an https server. */
  readonly insecureSkipTlsVerify?: boolean;
  /** A client certificate and its key (PEM) to present to an https server (a component's identity). */
  readonly clientCertificate?: { readonly cert: string; readonly key: string };
  /** Replaces the global `fetch` (tests). */
  readonly fetch?: typeof fetch;
}

/**
 * A `fetch` over `node:https` that trusts `certificateAuthority` (or, insecurely, any
 * certificate) and presents `clientCertificate`: the global fetch can be given neither.
 * Replies stream like fetch's.
 */
export const tlsFetch = (tls: Pick<ClientOptions, 'certificateAuthority' | 'insecureSkipTlsVerify' | 'clientCertificate'>): typeof fetch =>
  ((input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const request = httpsRequest(
        new URL(String(input)),
        {
          method: init.method ?? 'GET',
          headers,
          ...(tls.certificateAuthority ? { ca: tls.certificateAuthority } : {}),
          ...(tls.clientCertificate ? { cert: tls.clientCertificate.cert, key: tls.clientCertificate.key } : {}),
          rejectUnauthorized: tls.insecureSkipTlsVerify !== true,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (reply) => {
          const replyHeaders = new Headers();
          for (const [name, value] of Object.entries(reply.headers)) {
            if (value !== undefined) replyHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          const status = reply.statusCode ?? 500;
          const body = status === 204 || status === 304 ? null : (Readable.toWeb(reply) as unknown as ReadableStream<Uint8Array>);
          if (!body) reply.resume();
          resolve(new Response(body, { status, statusText: reply.statusMessage ?? '', headers: replyHeaders }));
        },
      );
      request.on('error', reject);
      if (typeof init.body === 'string') request.write(init.body);
      request.end();
    })) as typeof fetch;

const DEFAULT_MESSAGES: Readonly<Record<number, readonly [reason: string, message: string]>> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', 'the server does not allow access to the requested resource'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  406: ['NotAcceptable', 'the server was unable to respond with a content type that the client supports'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Gone', 'the server reported that the requested resource is gone'],
  415: ['UnsupportedMediaType', 'the server was unable to respond with a content type that the client supports'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

/**
 * The Status of an error reply: the body itself when it is one, otherwise one made up
 * from the HTTP code the way client-go does (`the server could not find the requested resource`).
 */
export const statusFromReply = (code: number, body: string): KubeStatus => {
  const text = body.trim();
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as { kind?: unknown; message?: unknown; error?: unknown };
      if (parsed.kind === 'Status') return parsed as KubeStatus;
      const message = typeof parsed.message === 'string' ? parsed.message : typeof parsed.error === 'string' ? parsed.error : undefined;
      if (message) return { kind: 'Status', status: 'Failure', code, reason: DEFAULT_MESSAGES[code]?.[0] ?? '', message };
    } catch {
      // not JSON after all: fall through to the generic message
    }
  }
  const known = DEFAULT_MESSAGES[code];
  if (known) return { kind: 'Status', status: 'Failure', code, reason: known[0], message: known[1] };
  if (code >= 500) {
    return {
      kind: 'Status',
      status: 'Failure',
      code,
      reason: 'InternalError',
      message: `an error on the server (${JSON.stringify(text || 'unknown')}) has prevented the request from succeeding`,
    };
  }
  return {
    kind: 'Status',
    status: 'Failure',
    code,
    reason: '',
    message: `the server responded with the status code ${code} but did not return more information`,
  };
};

/** Splits a byte stream into lines (without the newline), the last one even if unterminated. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  }
  pending += decoder.decode();
  if (pending !== '') yield pending;
}

async function* readBody(response: Response): AsyncGenerator<Uint8Array> {
  if (!response.body) return;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Creates a client for one server. */
export const createClient = (options: ClientOptions): Client => {
  const server = (options.server.includes('://') ? options.server : `http://${options.server}`).replace(/\/+$/, '');
  let host: string;
  try {
    const parsed = new URL(server);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    host = parsed.host;
  } catch {
    throw new Error(`invalid server address ${JSON.stringify(options.server)}: expected a URL such as http://127.0.0.1:6443`);
  }
  const needsTls =
    server.startsWith('https:') && (options.certificateAuthority !== undefined || options.insecureSkipTlsVerify === true || options.clientCertificate !== undefined);
  const doFetch = options.fetch ?? (needsTls ? tlsFetch(options) : fetch);

  const url = (path: string, query: Query = {}): string => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === false) continue;
      params.set(key, String(value));
    }
    const search = params.toString();
    return `${server}${path.startsWith('/') ? path : `/${path}`}${search ? `?${search}` : ''}`;
  };

  const send = async (method: string, path: string, request: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = {
      Accept: request.accept ?? 'application/json',
      'User-Agent': 'logplane-cli',
    };
    if (options.token) headers['Authorization'] = `Bearer ${options.token}`;
    let body: string | undefined;
    if (request.body !== undefined) {
      body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
      headers['Content-Type'] = request.contentType ?? 'application/json';
    }
    let response: Response;
    try {
      response = await doFetch(url(path, request.query), { method, headers, body, signal: request.signal });
    } catch (error) {
      if (request.signal?.aborted) throw error;
      throw new ConnectionError(host, error);
    }
    if (!response.ok) throw new ApiError(statusFromReply(response.status, await response.text()), response.status);
    return response;
  };

  const request = async <T>(method: string, path: string, options?: RequestOptions): Promise<T> => {
    const response = await send(method, path, options);
    const text = await response.text();
    return (text.trim() === '' ? undefined : JSON.parse(text)) as T;
  };

  async function* ndjson<T>(method: string, path: string, options?: RequestOptions): AsyncGenerator<T> {
    const response = await send(method, path, options);
    for await (const line of splitLines(readBody(response))) {
      if (line.trim() === '') continue;
      yield JSON.parse(line) as T;
    }
  }

  async function* watch<T>(path: string, query: Query = {}, signal?: AbortSignal, accept?: string): AsyncGenerator<WatchEvent<T>> {
    for await (const event of ndjson<WatchEvent<T>>('GET', path, { query: { ...query, watch: true }, signal, ...(accept ? { accept } : {}) })) {
      if (event.type === 'ERROR') {
        const status = event.object as unknown as KubeStatus;
        throw new ApiError(status, status.code ?? 500);
      }
      yield event;
    }
  }

  async function* bytes(method: string, path: string, options?: RequestOptions): AsyncGenerator<Uint8Array> {
    yield* readBody(await send(method, path, options));
  }

  return {
    server,
    request,
    get: <T>(path: string, query?: Query) => request<T>('GET', path, { query }),
    watch,
    ndjson,
    bytes,
  };
};

// ---------------------------------------------------------------------------------------
// Discovery: what the server serves, as kubectl's discovery client reads it.

/** One resource the server serves, as discovery lists it (subresources folded into their resource). */
export interface DiscoveredResource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** The plural name used in URLs: `pods`. */
  readonly plural: string;
  /** `pod`; the lowercased kind when the server sends none, as client-go's RESTMapper does. */
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  /** `status`, `scale`, `log` … */
  readonly subresources: readonly string[];
}

/** Fetches discovery once and keeps it: one per command run. */
export interface Discovery {
  /**
   * Every served resource in discovery order: the core group first, then the groups in
   * the order `/apis` lists them, each group's preferred version before its others, and
   * each version's resources in the server's order. kubectl's RESTMapper gives earlier
   * entries priority.
   */
  resources(): Promise<readonly DiscoveredResource[]>;
}

/** What kubectl sends to ask for aggregated discovery (and accept the legacy documents otherwise). */
export const AGGREGATED_DISCOVERY_ACCEPT = [
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
  'application/json',
].join(',');

interface AggregatedResource {
  readonly resource: string;
  readonly responseKind?: { readonly group?: string; readonly version?: string; readonly kind?: string };
  readonly scope?: string;
  readonly singularResource?: string;
  readonly verbs?: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly subresources?: readonly { readonly subresource: string }[];
}

interface AggregatedGroupList {
  readonly kind: 'APIGroupDiscoveryList';
  readonly items?: readonly {
    readonly metadata?: { readonly name?: string };
    readonly versions?: readonly { readonly version: string; readonly resources?: readonly AggregatedResource[] }[];
  }[];
}

interface LegacyApiResource {
  readonly name: string;
  readonly singularName?: string;
  readonly namespaced?: boolean;
  readonly kind: string;
  readonly verbs?: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

interface LegacyGroupList {
  readonly kind: 'APIGroupList';
  readonly groups?: readonly {
    readonly name: string;
    readonly versions?: readonly { readonly groupVersion: string; readonly version: string }[];
    readonly preferredVersion?: { readonly version?: string };
  }[];
}

const fromAggregated = (list: AggregatedGroupList): DiscoveredResource[] => {
  const resources: DiscoveredResource[] = [];
  for (const item of list.items ?? []) {
    const group = item.metadata?.name ?? '';
    // The versions of a group come in preference order.
    for (const { version, resources: entries = [] } of item.versions ?? []) {
      for (const entry of entries) {
        const kind = entry.responseKind?.kind ?? '';
        resources.push({
          group,
          version,
          kind,
          plural: entry.resource,
          singular: entry.singularResource || kind.toLowerCase(),
          namespaced: entry.scope === 'Namespaced',
          shortNames: entry.shortNames ?? [],
          categories: entry.categories ?? [],
          verbs: entry.verbs ?? [],
          subresources: (entry.subresources ?? []).map((s) => s.subresource),
        });
      }
    }
  }
  return resources;
};

const fromLegacyList = (group: string, version: string, list: { readonly resources?: readonly LegacyApiResource[] }): DiscoveredResource[] => {
  const entries = list.resources ?? [];
  const subresources = new Map<string, string[]>();
  for (const entry of entries) {
    const slash = entry.name.indexOf('/');
    if (slash < 0) continue;
    const parent = entry.name.slice(0, slash);
    subresources.set(parent, [...(subresources.get(parent) ?? []), entry.name.slice(slash + 1)]);
  }
  return entries
    .filter((entry) => !entry.name.includes('/'))
    .map((entry) => ({
      group,
      version,
      kind: entry.kind,
      plural: entry.name,
      singular: entry.singularName || entry.kind.toLowerCase(),
      namespaced: entry.namespaced === true,
      shortNames: entry.shortNames ?? [],
      categories: entry.categories ?? [],
      verbs: entry.verbs ?? [],
      subresources: subresources.get(entry.name) ?? [],
    }));
};

const loadDiscovery = async (client: Client): Promise<DiscoveredResource[]> => {
  const accept = AGGREGATED_DISCOVERY_ACCEPT;
  const [core, named] = await Promise.all([
    client.request<AggregatedGroupList | { kind?: string; versions?: readonly string[] }>('GET', '/api', { accept }),
    client.request<AggregatedGroupList | LegacyGroupList>('GET', '/apis', { accept }),
  ]);
  const parts: Promise<DiscoveredResource[]>[] = [];
  if (core?.kind === 'APIGroupDiscoveryList') parts.push(Promise.resolve(fromAggregated(core as AggregatedGroupList)));
  else {
    for (const version of (core as { versions?: readonly string[] } | undefined)?.versions ?? []) {
      parts.push(client.get<{ resources?: LegacyApiResource[] }>(`/api/${version}`).then((list) => fromLegacyList('', version, list)));
    }
  }
  if (named?.kind === 'APIGroupDiscoveryList') parts.push(Promise.resolve(fromAggregated(named)));
  else {
    for (const group of (named as LegacyGroupList | undefined)?.groups ?? []) {
      const preferred = group.preferredVersion?.version;
      const versions = [...(group.versions ?? [])].sort((a, b) => Number(b.version === preferred) - Number(a.version === preferred));
      for (const { version } of versions) {
        parts.push(client.get<{ resources?: LegacyApiResource[] }>(`/apis/${group.name}/${version}`).then((list) => fromLegacyList(group.name, version, list)));
      }
    }
  }
  return (await Promise.all(parts)).flat();
};

/** A discovery client over `client` that asks the server once (aggregated discovery if served, else `/api/v1`, `/apis/<g>/<v>`). */
export const createDiscovery = (client: Client): Discovery => {
  let loaded: Promise<DiscoveredResource[]> | undefined;
  return {
    resources: () => {
      loaded ??= loadDiscovery(client).catch((error: unknown) => {
        loaded = undefined;
        throw error;
      });
      return loaded;
    },
  };
};
