import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate } from '../apiserver/tls.ts';
import { ApiError, ConnectionError, createClient, splitLines, statusFromReply } from './client.ts';

let server: Server;
let base = '';
const seen: { method?: string; url?: string; auth?: string; contentType?: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, contentType: req.headers['content-type'], body });
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/api/v1/namespaces/default/pods/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', message: 'pods "missing" not found', code: 404 }));
      } else if (url.pathname === '/plain-404') {
        res.writeHead(404);
        res.end('404 page not found');
      } else if (url.pathname === '/api/v1/namespaces/default/pods' && url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const first = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } });
        res.write(first.slice(0, 10));
        setTimeout(() => {
          res.write(`${first.slice(10)}\n${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a' } } })}\n`);
          res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', reason: 'Expired', message: 'too old resource version', code: 410 } })}\n`);
        }, 20);
      } else if (url.pathname === '/echo') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body || '');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('client', () => {
  it('sends the bearer token and query, and parses JSON', async () => {
    const client = createClient({ server: `${base}/`, token: 't0k' });
    expect(await client.get('/api/v1/pods', { labelSelector: 'app=web', watch: false, limit: undefined })).toEqual({ ok: true });
    const request = seen.at(-1)!;
    expect(request.url).toBe('/api/v1/pods?labelSelector=app%3Dweb');
    expect(request.auth).toBe('Bearer t0k');
  });

  it('sends bodies as JSON with the given content type', async () => {
    const client = createClient({ server: base });
    const reply = await client.request('PATCH', '/echo', { body: { spec: { replicas: 2 } }, contentType: 'application/merge-patch+json' });
    expect(reply).toEqual({ spec: { replicas: 2 } });
    expect(seen.at(-1)?.contentType).toBe('application/merge-patch+json');
  });

  it('throws the server Status as an ApiError', async () => {
    const client = createClient({ server: base });
    const error = await client.get('/api/v1/namespaces/default/pods/missing').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 404, reason: 'NotFound', message: 'pods "missing" not found', retriable: false });
  });

  it('makes up a Status for replies without one, like client-go', async () => {
    const client = createClient({ server: base });
    await expect(client.get('/plain-404')).rejects.toMatchObject({ reason: 'NotFound', message: 'the server could not find the requested resource' });
    expect(statusFromReply(500, 'boom')).toMatchObject({ reason: 'InternalError', message: 'an error on the server ("boom") has prevented the request from succeeding' });
    expect(statusFromReply(409, '{"message":"conflict!"}')).toMatchObject({ reason: 'Conflict', message: 'conflict!' });
    expect(statusFromReply(418, '')).toMatchObject({ reason: '', message: 'the server responded with the status code 418 but did not return more information' });
  });

  it('streams watch events split across chunks and ends with the ERROR event\'s Status', async () => {
    const client = createClient({ server: base });
    const types: string[] = [];
    const error = await (async () => {
      for await (const event of client.watch('/api/v1/namespaces/default/pods', { resourceVersion: '5' })) types.push(event.type);
    })().catch((e: unknown) => e);
    expect(types).toEqual(['ADDED', 'MODIFIED']);
    expect(error).toMatchObject({ code: 410, reason: 'Expired' });
    expect(seen.at(-1)?.url).toBe('/api/v1/namespaces/default/pods?resourceVersion=5&watch=true');
  });

  it('reports a refused connection like kubectl', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const error = await createClient({ server: `http://127.0.0.1:${port}` }).get('/version').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toBe(`The connection to the server 127.0.0.1:${port} was refused - did you specify the right host or port?`);
  });

  it('takes host:port as http, and rejects a server that is not an http(s) URL', () => {
    expect(createClient({ server: '127.0.0.1:6443' }).server).toBe('http://127.0.0.1:6443');
    expect(() => createClient({ server: 'ftp://x' })).toThrow(/invalid server address/);
    expect(() => createClient({ server: 'http://' })).toThrow(/invalid server address/);
  });
});

describe('splitLines', () => {
  it('splits on newlines across chunks, including multi-byte characters cut in half', async () => {
    const bytes = new TextEncoder().encode('one\ntwo → three\nfour');
    const chunks = async function* () {
      yield bytes.slice(0, 6);
      yield bytes.slice(6, 13);
      yield bytes.slice(13);
    };
    const lines: string[] = [];
    for await (const line of splitLines(chunks())) lines.push(line);
    expect(lines).toEqual(['one', 'two → three', 'four']);
  });
});

describe('https with a self-signed certificate', () => {
  it('trusts the kubeconfig CA, streams through it, and refuses the server without it', async () => {
    const tls = generateSelfSignedCertificate();
    const https = createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      if (req.url?.startsWith('/stream')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type":"ADDED","object":{"n":1}}\n');
        res.end('{"type":"DELETED","object":{"n":1}}\n');
        return;
      }
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'gone', code: 404 }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ auth: req.headers.authorization }));
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    const server = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
    try {
      const trusted = createClient({ server, token: 'tls-token', certificateAuthority: tls.cert });
      expect(await trusted.get('/version')).toEqual({ auth: 'Bearer tls-token' });
      await expect(trusted.get('/missing')).rejects.toMatchObject({ reason: 'NotFound', message: 'gone' });
      const types: string[] = [];
      for await (const event of trusted.watch('/stream')) types.push(event.type);
      expect(types).toEqual(['ADDED', 'DELETED']);
      expect(await createClient({ server, insecureSkipTlsVerify: true }).get('/version')).toEqual({});
      const untrusted = await createClient({ server }).get('/version').catch((e: unknown) => e);
      expect(untrusted).toBeInstanceOf(ConnectionError);
      expect((untrusted as Error).message).toMatch(/^Unable to connect to the server: .*certificate/i);
    } finally {
      await new Promise((resolve) => https.close(resolve));
    }
  });
});
