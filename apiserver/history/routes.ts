/**
 * The logplane history API (`/logplane/v1/...`): object history with diffs, the cluster at
 * a past moment, diffs between moments, causation chains, the audit trail, replay, and
 * re-running a reconciler decision. The CLI's history verbs are clients of this API.
 */
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { UserInfo } from '../auth.ts';
import type { EventLog } from '../../log/port.ts';
import { audit, diffPositions, formatVector, MOMENT_FORMS, objectHistory, createReplayer, why, type AuditQuery, type PositionVector, type Projection } from '../../projections/index.ts';
import { KINDS, type EventBody } from '../../schemas/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { bulkHistory } from './bulk.ts';
import { customKindRef, historyKindRef } from './kind-refs.ts';
import { bulkTimeline } from './timeline.ts';
import { DEFAULT_WAIT_MS, HistoryRequestError, resolveBound, resolveMoment, type MomentContext } from './moments.ts';

/** Re-runs a controller's decision on the view at a position (wired by the CLI, which knows the controllers). */
export type DebugReconcile = (
  controller: string,
  key: string,
  at: PositionVector,
) => Promise<{ commands: readonly EventBody[]; recorded: readonly EventBody[]; identical: boolean }>;

export interface HistoryApiOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly debugReconcile?: DebugReconcile;
  /** The controllers `debugReconcile` knows; any other `controller=` is 400. */
  readonly debugControllers?: readonly string[];
  /** How long a position the log has but the projection has not folded yet is waited for (default 10 s). */
  readonly waitMs?: number;
  /**
   * The server's data directory: `replay?into=DIR` writes only below it (a relative DIR is
   * taken from it). Without it, `into` is refused.
   */
  readonly dataDir?: string;
}

/** Handles `/logplane/v1/*`; returns false for any other path. The caller has authenticated the request. */
export type HistoryApi = (req: IncomingMessage, res: ServerResponse, url: URL, user: UserInfo | undefined) => Promise<boolean>;

/** The group whose members may replay (kube's `system:masters`, bound to cluster-admin). */
const ADMIN_GROUP = 'system:masters';

const sendJson = (res: ServerResponse, code: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void => {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
};

const sendStatus = (res: ServerResponse, error: HistoryRequestError): void =>
  sendJson(
    res,
    error.code,
    {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: error.message,
      reason: error.reason,
      ...(error.code === 429 ? { details: { retryAfterSeconds: 1 } } : {}),
      code: error.code,
    },
    error.code === 429 ? { 'retry-after': '1' } : {},
  );

/** The deepest existing ancestor of `path` (itself if it exists), with symlinks resolved. */
const realAncestor = (path: string): string => {
  let current = path;
  while (!existsSync(current)) current = dirname(current);
  return realpathSync(current);
};

/**
 * Where `replay?into=` may write: a new or empty directory below `dataDir` (a relative path
 * is taken from it); `..` segments, paths elsewhere and symlinks leading out are refused.
 */
export const replayTarget = (dataDir: string | undefined, into: string): string => {
  if (dataDir === undefined) throw new HistoryRequestError('"into" is not available: this server has no data directory', 400);
  if (into === '' || into.includes('\0') || into.split(/[\\/]/).includes('..')) {
    throw new HistoryRequestError(`"into" must be a directory below the server's data directory, without "..", got ${JSON.stringify(into)}`);
  }
  const isBelow = (root: string, path: string): boolean => {
    const rel = relative(root, path);
    return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
  };
  const root = realpathSync(resolve(dataDir));
  const spelled = resolve(dataDir);
  const given = isAbsolute(into) ? resolve(into) : resolve(root, into);
  // An absolute path may name the data directory as the server was given it (not resolved).
  const target = isBelow(spelled, given) ? join(root, relative(spelled, given)) : given;
  const ancestor = realAncestor(target);
  // Symlinks on the way must not lead out either.
  if (!isBelow(root, target) || (ancestor !== root && !isBelow(root, ancestor))) {
    throw new HistoryRequestError(`"into" must be a directory below the server's data directory (${root}), got ${JSON.stringify(into)}`);
  }
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new HistoryRequestError(`"into" must be a new or empty directory, got ${JSON.stringify(into)}`);
  }
  return target;
};

const keyFrom = (segments: readonly string[]): string => {
  const [segment, namespace, name] = segments;
  // A kind (EndpointSlice) or its ref as history and audit keys print it (EndpointSlice.discovery.k8s.io, CronTab.stable.example.com).
  const ref = segment === undefined ? undefined : historyKindRef(segment);
  if (!ref || !namespace || !name) {
    throw new HistoryRequestError('expected /{kind}/{namespace or _}/{name} with a kind such as Pod, Deployment, Node, or a custom resource\'s Kind.group');
  }
  return `${ref}/${namespace === '_' ? '' : namespace}/${name}`;
};

/** The kind ref of a `kind=` query parameter; null when absent, 400 when it names no kind. */
const kindParameter = (query: URLSearchParams): string | null => {
  const kind = query.get('kind');
  if (kind === null) return null;
  const ref = historyKindRef(kind);
  if (ref === undefined) throw new HistoryRequestError(`unknown kind "${kind.slice(0, 100)}"`);
  return ref;
};

/** Creates the handler of the history API. */
export const createHistoryApi = (options: HistoryApiOptions): HistoryApi => {
  const { projection, log } = options;
  const store = projection.store;
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  if (!Number.isInteger(waitMs) || waitMs < 0) throw new Error(`waitMs must be a non-negative integer, got ${waitMs}`);

  let replaying = false;

  /** Rebuilds a projection from the log into `into` (a temporary directory when null), streaming progress. */
  const replay = async (res: ServerResponse, toText: string | null, toMoment: PositionVector | undefined, into: string | null): Promise<void> => {
    const to = toMoment ?? projection.cursor();
    const dir = into ?? mkdtempSync(join(tmpdir(), 'logplane-replay-'));
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    let lastReport = 0;
    const replayer = createReplayer({
      log,
      dir,
      onProgress: (progress) => {
        const now = performance.now();
        if (now - lastReport < 100 && progress.applied < progress.total) return;
        lastReport = now;
        res.write(`${JSON.stringify({ type: 'progress', ...progress })}\n`);
      },
    });
    try {
      const started = performance.now();
      const events = await replayer.advanceTo(to);
      const seconds = (performance.now() - started) / 1000;
      // Compare with the live projection at the same position: a live cluster may have
      // moved on meanwhile, so catch the replay up (a few rounds) until both stand still.
      let live: string | null = null;
      if (!toText) {
        for (let round = 0; round < 5 && live === null; round++) {
          await projection.waitFor(replayer.cursor());
          const current = projection.cursor();
          if (formatVector(current) === formatVector(replayer.cursor())) live = projection.stateHash();
          else await replayer.advanceTo(current);
        }
      }
      const position = replayer.cursor();
      res.end(
        `${JSON.stringify({
          type: 'result',
          events,
          seconds,
          eventsPerSecond: events / Math.max(seconds, 1e-9),
          stateHash: replayer.stateHash(),
          position: formatVector(position),
          liveStateHash: live,
        })}\n`,
      );
    } finally {
      await replayer.close();
      if (into === null) rmSync(dir, { recursive: true, force: true });
    }
  };

  const routes = async (req: IncomingMessage, res: ServerResponse, url: URL, user: UserInfo | undefined): Promise<void> => {
    const segments = url.pathname.split('/').filter(Boolean).slice(2).map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        throw new HistoryRequestError(`the path segment ${JSON.stringify(segment)} is not valid percent-encoding`);
      }
    });
    const [route, ...rest] = segments;
    const query = url.searchParams;
    const context: MomentContext = { projection, log, now: Date.now(), waitMs };
    const parameter = (name: string): string | undefined => {
      const value = query.get(name);
      return value === null || value === '' ? undefined : value;
    };
    /** The moment in query parameter `name`, resolved; `undefined` when absent. */
    const optionalMoment = async (name: string): Promise<PositionVector | undefined> => {
      const value = parameter(name);
      return value === undefined ? undefined : resolveMoment(name, value, context);
    };
    const requiredMoment = async (name: string): Promise<PositionVector> => {
      const value = parameter(name);
      if (value === undefined) throw new HistoryRequestError(`query parameter "${name}" is required: ${MOMENT_FORMS}`);
      return resolveMoment(name, value, context);
    };
    switch (route) {
      case 'position':
        return sendJson(res, 200, { resourceVersion: formatVector(projection.cursor()), time: Date.now() });
      case 'history':
        // Without a key: the versions of every object of a namespace, paged.
        if (rest.length === 0) {
          // `view=timeline`: what the dashboard's timeline draws, instead of whole objects.
          const view = query.get('view') ?? '';
          if (view !== '' && view !== 'timeline') throw new HistoryRequestError(`view: Unsupported value: ${JSON.stringify(view.slice(0, 100))}: supported values: "timeline"`);
          return sendJson(res, 200, view === 'timeline' ? bulkTimeline(projection, query) : bulkHistory(projection, query));
        }
        return sendJson(res, 200, { versions: objectHistory(store, projection.partitions, keyFrom(rest)) });
      case 'at': {
        const position = await requiredMoment('at');
        const view = projection.viewAt(position);
        const kind = kindParameter(query);
        const namespace = query.get('namespace') ?? undefined;
        const name = query.get('name');
        // Without a kind: every stored kind, as the kind registry lists them, then the custom kinds the CRDs of that moment served.
        const kinds: readonly string[] = kind
          ? [kind]
          : [...KINDS, ...view.list(CUSTOM_RESOURCE_DEFINITION_REF).flatMap((crd) => (crd.kind === 'CustomResourceDefinition' ? [customKindRef(crd)] : []))];
        let objects = kinds.flatMap((k) => view.list(k, namespace));
        if (name) objects = objects.filter((o) => o.metadata.name === name);
        return sendJson(res, 200, { position: formatVector(position), objects });
      }
      case 'diff': {
        const fromPosition = await requiredMoment('from');
        const toPosition = (await optionalMoment('to')) ?? projection.cursor();
        return sendJson(res, 200, {
          from: formatVector(fromPosition),
          to: formatVector(toPosition),
          ...diffPositions(store, fromPosition, toPosition),
        });
      }
      case 'why':
        return sendJson(res, 200, { chains: await why(store, log, projection.partitions, keyFrom(rest)) });
      case 'audit': {
        const kind = kindParameter(query);
        const bounds: { since?: number; until?: number; after?: PositionVector; upTo?: PositionVector } = {};
        for (const [name, timeBound, positionBound] of [['since', 'since', 'after'], ['until', 'until', 'upTo']] as const) {
          const value = parameter(name);
          if (value === undefined) continue;
          // A time bounds the events' stamps; a position bounds their offsets (exactly what it holds).
          const bound = await resolveBound(name, value, context);
          if (bound.type === 'time') bounds[timeBound] = bound.ms;
          else bounds[positionBound] = bound.position;
        }
        const user = query.get('user');
        const limitText = query.get('limit');
        const limit = limitText === null ? undefined : Number(limitText);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
          throw new HistoryRequestError(`limit: Invalid value: ${JSON.stringify(limitText)}: must be a positive integer`);
        }
        const auditQuery: AuditQuery = {
          ...(user ? { user } : {}),
          ...bounds,
          ...(kind ? { kind } : {}),
          ...(limit !== undefined ? { limit } : {}),
          allActors: query.get('all') === 'true',
        };
        return sendJson(res, 200, { events: audit(store, projection.partitions, auditQuery) });
      }
      case 'replay': {
        if (req.method !== 'POST') throw new HistoryRequestError('replay is POST', 405, 'MethodNotAllowed');
        if (!user?.groups.includes(ADMIN_GROUP)) {
          throw new HistoryRequestError(`forbidden: User "${user?.name ?? 'system:anonymous'}" cannot post path "${url.pathname}": replay is for members of ${ADMIN_GROUP}`, 403, 'Forbidden');
        }
        const toText = query.get('to');
        const intoText = query.get('into');
        const into = intoText === null ? null : replayTarget(options.dataDir, intoText);
        if (replaying) throw new HistoryRequestError('a replay is already running on this server; try again when it has finished', 429, 'TooManyRequests');
        replaying = true;
        try {
          await replay(res, toText, await optionalMoment('to'), into);
        } finally {
          replaying = false;
        }
        return;
      }
      case 'debug': {
        if (rest[0] !== 'reconcile') throw new HistoryRequestError('unknown debug route', 404, 'NotFound');
        if (!options.debugReconcile) throw new HistoryRequestError('this server was started without controllers to debug', 501, 'NotImplemented');
        const controller = query.get('controller');
        const key = query.get('key');
        if (!controller || !key) throw new HistoryRequestError('query parameters "controller", "key" and "at" are required');
        if (!(options.debugControllers ?? []).includes(controller)) {
          throw new HistoryRequestError(`controller: Unsupported value: ${JSON.stringify(controller)}: supported values: ${(options.debugControllers ?? []).map((c) => JSON.stringify(c)).join(', ')}`);
        }
        const position = await requiredMoment('at');
        const result = await options.debugReconcile(controller, key, position);
        return sendJson(res, 200, { controller, key, at: formatVector(position), ...result });
      }
      default:
        throw new HistoryRequestError(`no such logplane API: ${url.pathname}`, 404, 'NotFound');
    }
  };

  return async (req, res, url, user) => {
    if (!url.pathname.startsWith('/logplane/v1/')) return false;
    try {
      await routes(req, res, url, user);
    } catch (error) {
      if (res.headersSent) {
        res.end(`${JSON.stringify({ type: 'error', message: String(error) })}\n`);
      } else if (error instanceof HistoryRequestError) {
        sendStatus(res, error);
      } else {
        sendStatus(res, new HistoryRequestError(error instanceof Error ? error.message : String(error), 500, 'InternalError'));
      }
    }
    return true;
  };
};
