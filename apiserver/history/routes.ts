/**
 * The logplane history API (`/logplane/v1/...`): object history with diffs, the cluster at
 * a past moment, diffs between moments, causation chains, the audit trail, replay, and
 * re-running a reconciler decision. The CLI's history verbs are clients of this API.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { EventLog } from '../../log/port.ts';
import {
  audit,
  diffPositions,
  formatVector,
  objectHistory,
  parseVector,
  createReplayer,
  why,
  type PositionVector,
  type Projection,
} from '../../projections/index.ts';
import { isKind, type EventBody, type Kind } from '../../schemas/index.ts';

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
}

/** Handles `/logplane/v1/*`; returns false for any other path. The caller has authenticated the request. */
export type HistoryApi = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

class BadRequest extends Error {
  constructor(
    message: string,
    readonly code = 400,
    readonly reason = 'BadRequest',
  ) {
    super(message);
  }
}

const sendJson = (res: ServerResponse, code: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

const sendStatus = (res: ServerResponse, code: number, reason: string, message: string): void =>
  sendJson(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

const RELATIVE = /^-(\d+)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A moment as the user wrote it: a position vector, epoch ms, RFC3339, or relative ("-5m"). */
export const resolveMoment = (text: string, projection: Projection, now = Date.now()): PositionVector => {
  const partitions = projection.partitions;
  if (/^\d+(\.\d+)+$/.test(text)) return parseVector(text, partitions);
  const relative = RELATIVE.exec(text);
  if (relative) return projection.positionAtTime(now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS]);
  if (/^\d+$/.test(text)) return projection.positionAtTime(Number(text));
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) {
    throw new BadRequest(`"${text}" is neither a position (like 42.17), a time (RFC3339 or epoch ms) nor a relative time (like -5m)`);
  }
  return projection.positionAtTime(parsed);
};

const keyFrom = (segments: readonly string[]): string => {
  const [kind, namespace, name] = segments;
  if (!kind || !namespace || !name || !isKind(kind)) {
    throw new BadRequest('expected /{kind}/{namespace or _}/{name} with a kind such as Pod, Deployment, Node');
  }
  return `${kind}/${namespace === '_' ? '' : namespace}/${name}`;
};

/** Creates the handler of the history API. */
export const createHistoryApi = (options: HistoryApiOptions): HistoryApi => {
  const { projection, log } = options;
  const store = projection.store;

  const routes = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const segments = url.pathname.split('/').filter(Boolean).slice(2).map(decodeURIComponent);
    const [route, ...rest] = segments;
    const query = url.searchParams;
    switch (route) {
      case 'position':
        return sendJson(res, 200, { resourceVersion: formatVector(projection.cursor()), time: Date.now() });
      case 'history':
        return sendJson(res, 200, { versions: objectHistory(store, keyFrom(rest)) });
      case 'at': {
        const at = query.get('at');
        if (!at) throw new BadRequest('query parameter "at" is required (a time or a position)');
        const position = resolveMoment(at, projection);
        const view = projection.viewAt(position);
        const kind = query.get('kind');
        if (kind !== null && !isKind(kind)) throw new BadRequest(`unknown kind "${kind}"`);
        const namespace = query.get('namespace') ?? undefined;
        const name = query.get('name');
        const kinds: Kind[] = kind ? [kind] : ['Namespace', 'Node', 'Deployment', 'ReplicaSet', 'Pod', 'Service', 'Endpoints'];
        let objects = kinds.flatMap((k) => view.list(k, namespace));
        if (name) objects = objects.filter((o) => o.metadata.name === name);
        return sendJson(res, 200, { position: formatVector(position), objects });
      }
      case 'diff': {
        const from = query.get('from');
        const to = query.get('to');
        if (!from) throw new BadRequest('query parameter "from" is required');
        const fromPosition = resolveMoment(from, projection);
        const toPosition = to ? resolveMoment(to, projection) : projection.cursor();
        return sendJson(res, 200, {
          from: formatVector(fromPosition),
          to: formatVector(toPosition),
          ...diffPositions(store, fromPosition, toPosition),
        });
      }
      case 'why':
        return sendJson(res, 200, { chains: await why(store, log, keyFrom(rest)) });
      case 'audit': {
        const kind = query.get('kind');
        if (kind !== null && !isKind(kind)) throw new BadRequest(`unknown kind "${kind}"`);
        const time = (name: string): number | undefined => {
          const value = query.get(name);
          if (value === null) return undefined;
          const relative = RELATIVE.exec(value);
          if (relative) return Date.now() - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
          const parsed = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
          if (Number.isNaN(parsed)) throw new BadRequest(`"${name}" must be a time (RFC3339, epoch ms or like -1h), got "${value}"`);
          return parsed;
        };
        const since = time('since');
        const until = time('until');
        const user = query.get('user');
        const limit = query.get('limit');
        return sendJson(res, 200, {
          events: audit(store, projection.partitions, {
            ...(user ? { user } : {}),
            ...(since !== undefined ? { since } : {}),
            ...(until !== undefined ? { until } : {}),
            ...(kind ? { kind } : {}),
            ...(limit ? { limit: Number(limit) } : {}),
            allActors: query.get('all') === 'true',
          }),
        });
      }
      case 'replay': {
        if (req.method !== 'POST') throw new BadRequest('replay is POST', 405, 'MethodNotAllowed');
        const toText = query.get('to');
        const to = toText ? resolveMoment(toText, projection) : projection.cursor();
        const into = query.get('into');
        if (into !== null && (!isAbsolute(into) || (existsSync(into) && readdirSync(into).length > 0))) {
          throw new BadRequest(`"into" must be an absolute path to a new or empty directory, got "${into}"`);
        }
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
        return;
      }
      case 'debug': {
        if (rest[0] !== 'reconcile') throw new BadRequest('unknown debug route', 404, 'NotFound');
        if (!options.debugReconcile) throw new BadRequest('this server was started without controllers to debug', 501, 'NotImplemented');
        const controller = query.get('controller');
        const key = query.get('key');
        const at = query.get('at');
        if (!controller || !key || !at) throw new BadRequest('query parameters "controller", "key" and "at" are required');
        const position = resolveMoment(at, projection);
        const result = await options.debugReconcile(controller, key, position);
        return sendJson(res, 200, { controller, key, at: formatVector(position), ...result });
      }
      default:
        throw new BadRequest(`no such logplane API: ${url.pathname}`, 404, 'NotFound');
    }
  };

  return async (req, res, url) => {
    if (!url.pathname.startsWith('/logplane/v1/')) return false;
    try {
      await routes(req, res, url);
    } catch (error) {
      if (res.headersSent) {
        res.end(`${JSON.stringify({ type: 'error', message: String(error) })}\n`);
      } else if (error instanceof BadRequest) {
        sendStatus(res, error.code, error.reason, error.message);
      } else {
        sendStatus(res, 500, 'InternalError', error instanceof Error ? error.message : String(error));
      }
    }
    return true;
  };
};
