import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDashboardAssets } from './ui.ts';

/** One request with the path sent as it is (no client-side normalization). */
const send = (port: number, path: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });

const serve = async (dir: string): Promise<{ server: Server; port: number }> => {
  const assets = createDashboardAssets(dir);
  const server = createServer((req, res) => {
    void assets(req, res, new URL(req.url ?? '/', 'http://logplane.invalid')).then((handled) => {
      if (!handled) {
        res.writeHead(418);
        res.end('not the dashboard\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
};

describe('the dashboard files at /ui/', () => {
  let dir: string;
  let built: { server: Server; port: number };
  let unbuilt: { server: Server; port: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'logplane-ui-'));
    const dist = join(dir, 'dist');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>logplane</title>');
    writeFileSync(join(dist, 'assets', 'index-abc.js'), 'console.log(1)');
    writeFileSync(join(dist, 'assets', 'index-abc.css'), 'body{}');
    writeFileSync(join(dist, '.env'), 'SECRET=1');
    writeFileSync(join(dir, 'secret.txt'), 'outside');
    symlinkSync(join(dir, 'secret.txt'), join(dist, 'assets', 'link.txt'));
    built = await serve(dist);
    unbuilt = await serve(join(dir, 'never-built'));
  });

  afterAll(async () => {
    await new Promise((resolve) => built.server.close(resolve));
    await new Promise((resolve) => unbuilt.server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page, never cached, and the hashed assets, cached for good, with their types and the CSP', async () => {
    const page = await send(built.port, '/ui/');
    expect(page).toMatchObject({ status: 200, body: '<!doctype html><title>logplane</title>' });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const script = await send(built.port, '/ui/assets/index-abc.js');
    expect(script).toMatchObject({ status: 200, body: 'console.log(1)' });
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toContain('immutable');
    expect((await send(built.port, '/ui/assets/index-abc.css')).headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('answers HEAD without a body, other methods 405, /ui with a redirect, other paths not at all', async () => {
    const head = await send(built.port, '/ui/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect((await send(built.port, '/ui/', 'PUT')).status).toBe(405);
    const redirect = await send(built.port, '/ui');
    expect(redirect.status).toBe(308);
    expect(redirect.headers['location']).toBe('/ui/');
    expect((await send(built.port, '/api/v1/pods')).status).toBe(418);
    expect((await send(built.port, '/uix/index.html')).status).toBe(418);
  });

  it.each([
    '/ui/missing.js',
    '/ui/..%2fsecret.txt',
    '/ui/assets/..%2f..%2fsecret.txt',
    '/ui/%2e%2e%2fsecret.txt',
    '/ui/..%5csecret.txt',
    '/ui/.env',
    '/ui/assets/',
    '/ui/%00',
    '/ui/%zz',
  ])('%s is 404', async (path) => {
    const answer = await send(built.port, path);
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('outside');
    expect(answer.body).not.toContain('SECRET');
  });

  it('serves a symlink only as far as it stays below the directory', async () => {
    // The link points out of dist; the resolved file is outside, so it is not served.
    const answer = await send(built.port, '/ui/assets/link.txt');
    expect(answer.body).not.toContain('outside');
    expect(answer.status).toBe(404);
  });

  it('says how to build it when it was never built', async () => {
    const answer = await send(unbuilt.port, '/ui/');
    expect(answer.status).toBe(503);
    expect(answer.body).toContain('npm run dashboard:build');
  });
});
