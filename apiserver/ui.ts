/**
 * Serves the dashboard's built files (`dashboard/dist`, made by `npm run dashboard:build`,
 * which `npm install` runs as `prepare`) at `/ui/`. They are static browser code with no
 * cluster data in them, so, as kube-apiserver serves nothing but its APIs with data, they
 * are served without a token: the page asks for one and reads the cluster only through the
 * authenticated APIs. Anything that is not a GET or HEAD of a file below the directory is
 * a 4xx; a directory that was never built answers 503 saying how to build it.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the apiserver finds the dashboard's build output. */
export const DASHBOARD_DIST = fileURLToPath(new URL('../dashboard/dist/', import.meta.url));

/** The URL prefix the dashboard is served at. */
export const DASHBOARD_PATH = '/ui/';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * The page may run only its own scripts and talk only to this server. Inline styles are
 * allowed because the timeline and graph libraries write their own (without it Chromium
 * refuses them; the browser test fails on any CSP violation).
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Handles `/ui` and `/ui/*`; resolves false for any other path. */
export type DashboardAssets = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

const sendText = (res: ServerResponse, code: number, text: string, headers: Readonly<Record<string, string>> = {}): void => {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...SECURITY_HEADERS, ...headers });
  res.end(text);
};

/** The file below `root` that `pathname` (below `/ui/`) names, or undefined for a path that is not one. */
const fileOf = (root: string, pathname: string): string | undefined => {
  let relative: string;
  try {
    relative = decodeURIComponent(pathname.slice(DASHBOARD_PATH.length));
  } catch {
    return undefined;
  }
  if (relative === '') relative = 'index.html';
  if (relative.includes('\0') || relative.includes('\\') || relative.split('/').some((segment) => segment === '..' || segment.startsWith('.'))) return undefined;
  const file = normalize(join(root, relative));
  return file.startsWith(root.endsWith(sep) ? root : `${root}${sep}`) ? file : undefined;
};

/** Creates the handler of the dashboard's files in `dir` (default `DASHBOARD_DIST`). */
export const createDashboardAssets = (dir: string = DASHBOARD_DIST): DashboardAssets => {
  const root = normalize(dir);
  return async (req, res, url) => {
    if (url.pathname === '/ui') {
      res.writeHead(308, { location: DASHBOARD_PATH, 'content-length': 0 });
      res.end();
      return true;
    }
    if (!url.pathname.startsWith(DASHBOARD_PATH)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendText(res, 405, 'the dashboard is read with GET\n', { allow: 'GET, HEAD' });
      return true;
    }
    const file = fileOf(root, url.pathname);
    if (file === undefined) {
      sendText(res, 404, 'not found\n');
      return true;
    }
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      const built = await stat(join(root, 'index.html')).catch(() => undefined);
      if (!built) sendText(res, 503, 'the dashboard is not built: run `npm run dashboard:build` in the logplane directory (npm install does it)\n');
      else sendText(res, 404, 'not found\n');
      return true;
    }
    // A symlink may not lead out of the directory either.
    const [realFile, realRoot] = await Promise.all([realpath(file), realpath(root)]);
    if (!realFile.startsWith(`${realRoot}${sep}`)) {
      sendText(res, 404, 'not found\n');
      return true;
    }
    const body = await readFile(realFile);
    res.writeHead(200, {
      'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': body.length,
      // Vite names what it builds by content hash; the page itself must be fetched anew.
      'cache-control': file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...SECURITY_HEADERS,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
};

/** The dashboard of this installation (`DASHBOARD_DIST`), as the apiserver serves it. */
export const serveDashboard: DashboardAssets = createDashboardAssets();
