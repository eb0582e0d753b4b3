/**
 * What handlers work with: the server-wide dependencies (`ServerContext`) and one
 * request's parsed state (`RequestContext`), plus the helpers every verb shares (object
 * keys, consistent reads, reading an object exactly as a write left it).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { EventLog } from '../log/port.ts';
import type { EventRecord, PositionVector, Projection } from '../projections/index.ts';
import type { KubeObject } from '../schemas/index.ts';
import type { UserInfo } from './auth.ts';
import { apiErrors, verdictError } from './errors.ts';
import type { LogBarrier } from './log-barrier.ts';
import type { ApiMetrics } from './metrics.ts';
import type { ResourceInfo } from './resources.ts';
import type { ResourceTarget } from './router.ts';
import type { WriteIdentity, Writer, WriteResult } from './writer.ts';
import type { TokenIssuer } from './serviceaccount-tokens/issuer.ts';
import type { NodeLeaseRenewals } from './node-leases.ts';

/** How many times a write without a pinned resourceVersion (a patch) is retried on Conflict, as kube does. */
export const CONFLICT_RETRIES = 5;

/** What a pod log request asks for (`GET .../pods/NAME/log`). */
export interface PodLogRequest {
  readonly pod: KubeObject & { kind: 'Pod' };
  readonly container: string | undefined;
  readonly follow: boolean;
  readonly previous: boolean;
  readonly timestamps: boolean;
  readonly tailLines: number | undefined;
  readonly sinceSeconds: number | undefined;
  readonly limitBytes: number | undefined;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/**
 * Serves pod logs (the node agent plugs this in). Returns the log as chunks; throw an
 * `ApiError` (e.g. 404, 400 for a missing container) to answer with a Status.
 */
export type PodLogsHook = (request: PodLogRequest) => Promise<AsyncIterable<string | Uint8Array>>;

/** Dependencies shared by every request of one apiserver. */
export interface ServerContext {
  readonly log: EventLog;
  readonly projection: Projection;
  /** The log's end offsets as of a moment after the call (shared by concurrent reads). */
  readonly logEnd: LogBarrier;
  readonly writer: Writer;
  readonly logger: Logger;
  readonly metrics: ApiMetrics;
  /** A watch may resume at most this many changes back per topic partition; older positions get 410 Expired. */
  readonly watchWindow: number;
  readonly bookmarkIntervalMs: number;
  /** Watches without timeoutSeconds end after this long (clients re-watch). */
  readonly maxWatchSeconds: number;
  /** How long a read waits for the projection to catch up with the log. */
  readonly readTimeoutMs: number;
  readonly podLogs: PodLogsHook | undefined;
  /** The nodes' latest Lease renewals, served as their Leases' renewTime (node-leases.ts); none: the stored renewTime. */
  readonly nodeLeaseRenewals: NodeLeaseRenewals | undefined;
  /** Signs and checks service-account tokens; without it `serviceaccounts/token` is 404 and JWTs are not accepted. */
  readonly serviceAccountTokens: TokenIssuer | undefined;
  /** The random part of a generated name (`metadata.generateName`). */
  readonly nameSuffix: () => string;
  /** Ends every open watch (server shutdown). */
  readonly closing: AbortSignal;
  readonly slowWatches: SlowWatchPolicy;
}

/** How a watch whose client does not read is bounded, and where that is counted. */
export interface SlowWatchPolicy {
  /** Bytes a watch may hold unsent; an event that would exceed it ends the watch with an ERROR event. */
  readonly maxBufferedBytes: number;
  /** How long an ended watch may take to hand its last bytes to the client before its connection is destroyed. */
  readonly drainGraceMs: number;
  /** Called when a watch is ended for its slow client (kube's `apiserver_terminated_watchers_total`). */
  terminated(resource: string): void;
  /** Called with a watch's unsent bytes after each write (the high-water mark metric). */
  buffered(bytes: number): void;
}

/** One authenticated request addressed to a resource. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: URLSearchParams;
  readonly user: UserInfo;
  readonly identity: WriteIdentity;
  readonly target: ResourceTarget;
  readonly logger: Logger;
}

/** What a handler answers; `streamed` means it wrote the response itself (watch, logs). */
export type Reply =
  | { readonly type: 'json'; readonly code: number; readonly body: unknown; readonly warnings?: readonly string[] }
  | { readonly type: 'streamed' };

export const json = (code: number, body: unknown, warnings?: readonly string[]): Reply => ({
  type: 'json',
  code,
  body,
  ...(warnings && warnings.length > 0 ? { warnings } : {}),
});

/** The projection key of an object of `resource`: `Kind/ns/name` or `Kind//name`. */
export const keyOf = (resource: ResourceInfo, namespace: string | undefined, name: string): string =>
  `${resource.ref}/${resource.namespaced ? (namespace ?? '') : ''}/${name}`;

/** The name of a request that addresses one object (404 for collections is the router's job). */
export const nameOf = (target: ResourceTarget): string => {
  if (target.name === undefined) throw apiErrors.methodNotAllowed();
  return target.name;
};

/**
 * Waits until the projection has applied everything the log held when the read began
 * (kube's consistent reads), so a read after another apiserver's write sees it.
 */
export const catchUp = async (server: ServerContext): Promise<void> => {
  const end = await server.logEnd();
  try {
    await server.projection.waitFor(end, server.readTimeoutMs);
  } catch {
    throw apiErrors.timeout(`Too large resource version: this apiserver's projection did not catch up with the log within ${server.readTimeoutMs} ms`);
  }
};

/** The projection position right after an applied event (the cursor, with that partition set to it). */
export const positionAfter = (server: ServerContext, record: EventRecord): PositionVector => {
  const cursor = server.projection.cursor();
  const topicCursor = [...cursor[record.topic]];
  topicCursor[record.partition] = record.offset + 1;
  return { ...cursor, [record.topic]: topicCursor };
};

/** The object `key` exactly as the write `result` left it (undefined if the write removed it). */
export const objectAfter = (server: ServerContext, result: WriteResult, key: string): KubeObject | undefined =>
  server.projection.viewAt(positionAfter(server, result.record)).get(key);

/** The desired part of a resourceVersion ("D" of "D.O"): what the fold compares for desired writes. */
const desiredPart = (resourceVersion: string): string => resourceVersion.split('.')[0] ?? '';

/**
 * Rejects early, without appending, a write whose stale resourceVersion the fold would
 * reject anyway (the view has just caught up with the log). The fold stays the judge of
 * everything that is appended: this only keeps certain failures out of the log.
 */
export const precheckVersion = (resource: ResourceInfo, current: KubeObject, expected: string | null): void => {
  if (expected !== null && desiredPart(expected) !== desiredPart(current.metadata.resourceVersion ?? '')) {
    throw apiErrors.conflict(resource, current.metadata.name, 'the object has been modified; please apply your changes to the latest version and try again');
  }
};

/** Throws the Status for a rejected verdict. */
export const throwIfRejected = (result: WriteResult, resource: ResourceInfo, name: string): void => {
  const verdict = result.record.verdict;
  if (verdict.type === 'rejected') throw verdictError(verdict.reason, verdict.message, resource, name);
};
