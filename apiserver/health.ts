/**
 * `/livez`, `/readyz` and `/healthz` as kube-apiserver answers them: each runs named checks
 * (`ping`; `log`: the log answers within the bound; for readyz also `projection`: this
 * apiserver's projection reaches the log's end within the bound, and `shutdown`); `ok` or
 * 500 with the failed checks; `?verbose` lists every check as `[+]name ok`, `?exclude=name`
 * skips one, `/readyz/<name>` runs one. Reasons are logged, not sent ("reason withheld").
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { EventLog } from '../log/port.ts';
import { FOLDED_TOPICS, type PositionVector, type Projection } from '../projections/index.ts';

export type HealthEndpoint = 'healthz' | 'readyz' | 'livez';

/** One check: resolves when healthy, throws saying why not. */
type Check = () => Promise<void>;

export interface HealthOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  /** Aborted when the server shuts down (readyz then fails, as kube's `shutdown` check). */
  readonly closing: AbortSignal;
  /** How long the log may take to answer and the projection to catch up (default 5 s). */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

const within = async <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

/** Creates the handler of the three health endpoints. */
export const createHealth = (options: HealthOptions) => {
  const { log, projection, timeoutMs } = options;
  const logEnd = async (): Promise<PositionVector> => {
    const [desired, observed] = await within(Promise.all(FOLDED_TOPICS.map((topic) => log.endOffsets(topic))), timeoutMs, 'reading the log\'s end offsets');
    return { desired: desired!, observed: observed! };
  };
  const ping: Check = async () => undefined;
  const logCheck: Check = async () => {
    await logEnd();
  };
  const projectionCheck: Check = async () => {
    const end = await logEnd();
    await projection.waitFor(end, timeoutMs);
  };
  const shutdown: Check = async () => {
    if (options.closing.aborted) throw new Error('the apiserver is shutting down');
  };
  const checks: Readonly<Record<HealthEndpoint, ReadonlyMap<string, Check>>> = {
    livez: new Map([['ping', ping], ['log', logCheck]]),
    healthz: new Map([['ping', ping], ['log', logCheck]]),
    readyz: new Map([['ping', ping], ['log', logCheck], ['projection', projectionCheck], ['shutdown', shutdown]]),
  };

  /** Answers `GET /<endpoint>[/<check>]`. */
  return async (endpoint: HealthEndpoint, pathname: string, query: URLSearchParams, res: ServerResponse): Promise<void> => {
    const all = checks[endpoint];
    const only = pathname.split('/').filter(Boolean)[1];
    const send = (code: number, text: string): void => {
      res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache, private' });
      res.end(text);
    };
    if (only !== undefined) {
      const check = all.get(only);
      if (!check) return send(404, `404 page not found: no ${endpoint} check "${only}"\n`);
      try {
        await check();
        return send(200, 'ok');
      } catch (error) {
        options.logger.warn({ endpoint, check: only, reason: String(error) }, 'health check failed');
        return send(500, `internal server error: ${only} failed: reason withheld\n`);
      }
    }
    const excluded = new Set(query.getAll('exclude'));
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const results = await Promise.all(
      [...all].filter(([name]) => !excluded.has(name)).map(async ([name, check]) => {
        try {
          await check();
          return { name, ok: true };
        } catch (error) {
          options.logger.warn({ endpoint, check: name, reason: String(error) }, 'health check failed');
          return { name, ok: false };
        }
      }),
    );
    const failed = results.some((r) => !r.ok);
    const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
    for (const name of excluded) if (all.has(name)) lines.push(`[+]${name} excluded: ok`);
    if (failed) return send(500, `${lines.join('\n')}\n${endpoint} check failed\n`);
    return send(200, verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok');
  };
};
