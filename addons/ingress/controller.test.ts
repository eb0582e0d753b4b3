/**
 * The Ingress controller over a real projection, on both logs: real HTTP backends on
 * loopback behind selector-less Services and their Endpoints (or EndpointSlices), requests
 * through the real proxy (Node's http client), HTTPS with SNI from kubernetes.io/tls
 * Secrets, a WebSocket-style upgrade, keep-alive reuse of backend connections, a retry past
 * an endpoint that refuses, 404/503 answers, malformed and oversized requests, and the
 * Ingresses' status.loadBalancer written through the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate } from '../../apiserver/tls.ts';
import { pollUntil } from '../../test/e2e/helpers.ts';
import type { EventLog } from '../../log/port.ts';
import { appendEnvelopes, createProjection, envelope, type Projection } from '../../projections/index.ts';
import { admin, LOG_ADAPTERS, openTestLog } from '../../projections/testing.ts';
import { decodeEvent, type EventBody, type Ingress, type KubeObject } from '../../schemas/index.ts';
import { DEFAULT_CLASS_ANNOTATION, INGRESS_CONTROLLER_NAME, startIngressController, type IngressController } from './index.ts';
import { INGRESS_CONTROLLER_ACTOR } from './status.ts';
import { resolveBackend } from './backends.ts';

interface Backend {
  readonly name: string;
  readonly port: number;
  /** TCP connections the backend accepted. */
  connections: number;
  /** Upgraded connections still open. */
  readonly upgraded: Set<Socket>;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering `<name> <path>`, echoing WebSocket-style upgrades. */
const startBackend = (name: string): Promise<Backend> =>
  new Promise((resolve) => {
    const server: Server = createServer((req, res) => {
      let received = 0;
      req.on('data', (chunk: Buffer) => (received += chunk.length));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/plain', 'x-forwarded-proto-seen': String(req.headers['x-forwarded-proto']) });
        res.end(req.method === 'POST' ? `${name} ${req.url} ${received}` : `${name} ${req.url}`);
      });
    });
    const sockets = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    const upgraded = new Set<Socket>();
    server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      // HTTP server sockets allow half-open connections: close ours when the proxy ends its side.
      socket.on('end', () => socket.end());
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: ${req.headers.upgrade}\r\nconnection: Upgrade\r\nx-backend: ${name}\r\n\r\n`);
      socket.on('data', (chunk) => socket.write(Buffer.concat([Buffer.from(`${name}:`), chunk])));
    });
    const backend = {
      name,
      port: 0,
      connections: 0,
      upgraded,
      close: () =>
        new Promise<void>((done) => {
          server.close(() => done());
          for (const socket of sockets) socket.destroy();
        }),
    };
    server.on('connection', () => backend.connections++);
    server.listen(0, '127.0.0.1', () => {
      backend.port = (server.address() as AddressInfo).port;
      resolve(backend);
    });
  });

/** A port on 127.0.0.1 that refuses connections (listened on once, then closed). */
const refusedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: IncomingMessage['headers'];
}

const get = (port: number, host: string, path: string, options: { body?: Buffer } = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const method = options.body ? 'POST' : 'GET';
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });

/** Sends raw bytes and reads the answer until the server closes (or 5 s pass). */
const raw = (port: number, bytes: string, timeoutMs = 5000): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.write(bytes);
  });

const service = (name: string, ports: { name?: string; port: number }[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { ports: ports.map((p) => ({ ...p, protocol: 'TCP' })) },
});

const endpoints = (name: string, addresses: { ip: string; port: number }[], portName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: 'default' },
  subsets: addresses.map((a) => ({ addresses: [{ ip: a.ip }], ports: [{ ...(portName ? { name: portName } : {}), port: a.port, protocol: 'TCP' }] })),
});

const A_CERT = generateSelfSignedCertificate({ commonName: 'a.example', hosts: ['a.example'] });
const B_CERT = generateSelfSignedCertificate({ commonName: 'b.example', hosts: ['b.example'] });

const tlsSecret = (name: string, material: { cert: string; key: string }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'default' },
  type: 'kubernetes.io/tls',
  data: { 'tls.crt': Buffer.from(material.cert).toString('base64'), 'tls.key': Buffer.from(material.key).toString('base64') },
});

const INGRESSES = (): KubeObject[] => [
  { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'logplane', annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } }, spec: { controller: INGRESS_CONTROLLER_NAME } },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'a', namespace: 'default' },
    spec: {
      tls: [{ hosts: ['a.example'], secretName: 'a-tls' }],
      rules: [{ host: 'a.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'a', port: { number: 80 } } } }] } }],
    },
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'b', namespace: 'default' },
    spec: {
      ingressClassName: 'logplane',
      tls: [{ hosts: ['b.example'], secretName: 'b-tls' }],
      rules: [
        {
          host: 'b.example',
          http: {
            paths: [
              { path: '/api', pathType: 'Prefix', backend: { service: { name: 'b', port: { name: 'http' } } } },
              { path: '/empty', pathType: 'Exact', backend: { service: { name: 'empty', port: { number: 80 } } } },
              { path: '/retry', pathType: 'Prefix', backend: { service: { name: 'flaky', port: { number: 80 } } } },
              { path: '/sliced', pathType: 'Prefix', backend: { service: { name: 'sliced', port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'elsewhere', namespace: 'default' },
    spec: { ingressClassName: 'other', rules: [{ host: 'c.example', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'a', port: { number: 80 } } } }] } }] },
  },
];

describe.each(LOG_ADAPTERS)('the Ingress controller on the %s log', (adapter) => {
  const dirs = [mkdtempSync(join(tmpdir(), 'ingress-log-')), mkdtempSync(join(tmpdir(), 'ingress-proj-'))] as const;
  let log: EventLog;
  let projection: Projection;
  let controller: IngressController;
  let a: Backend;
  let b: Backend;
  let sliced: Backend;
  let port: number;
  let tlsPort: number;

  const append = async (bodies: EventBody[]): Promise<void> => {
    await appendEnvelopes(log, bodies.map((body) => envelope(body, { actor: admin })));
    await projection.waitFor({ desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') }, 60_000);
  };

  beforeAll(async () => {
    [a, b, sliced] = await Promise.all([startBackend('a'), startBackend('b'), startBackend('sliced')]);
    const refused = await refusedPort();
    log = await openTestLog(adapter, { dir: dirs[0], partitions: 1 });
    projection = createProjection({ dir: dirs[1], log });
    const objects: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } },
      service('a', [{ port: 80 }]),
      endpoints('a', [{ ip: '127.0.0.1', port: a.port }]),
      service('b', [{ name: 'http', port: 8080 }]),
      endpoints('b', [{ ip: '127.0.0.1', port: b.port }], 'http'),
      service('empty', [{ port: 80 }]),
      endpoints('empty', []),
      // One endpoint refuses; whichever is tried first, every request must reach `b`.
      service('flaky', [{ port: 80 }]),
      endpoints('flaky', [{ ip: '127.0.0.1', port: refused }, { ip: '127.0.0.2', port: refused }, { ip: '127.0.0.1', port: b.port }]),
      service('sliced', [{ name: 'web', port: 80 }]),
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'sliced-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'sliced' } },
        addressType: 'IPv4',
        ports: [{ name: 'web', port: sliced.port, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['127.0.0.1'], conditions: { ready: true } },
          { addresses: ['127.0.0.3'], conditions: { ready: false } },
        ],
      },
      tlsSecret('a-tls', A_CERT),
      tlsSecret('b-tls', B_CERT),
      ...INGRESSES(),
    ];
    await append(objects.map((object) => ({ type: 'ObjectCreated', object })));
    controller = await startIngressController({ projection, log, host: '127.0.0.1', httpPort: 0, httpsPort: 0, logger: pino({ level: 'silent' }) });
    port = controller.address.httpPort;
    tlsPort = controller.address.httpsPort!;
  }, 120_000);

  afterAll(async () => {
    await controller?.close();
    await Promise.all([a, b, sliced].map((backend) => backend?.close()));
    await projection?.close();
    await log?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('routes by host and path to the backends, with the class default for an Ingress without a class', async () => {
    expect(await get(port, 'a.example', '/anything?q=1')).toMatchObject({ status: 200, body: 'a /anything?q=1' });
    expect(await get(port, 'b.example:80', '/api/users')).toMatchObject({ status: 200, body: 'b /api/users' });
    expect((await get(port, 'b.example', '/api')).headers['x-forwarded-proto-seen']).toBe('http');
    expect(await get(port, 'b.example', '/other')).toMatchObject({ status: 404 });
    // Another class's Ingress is not served.
    expect(await get(port, 'c.example', '/')).toMatchObject({ status: 404 });
  });

  it('answers 503 without ready endpoints and reads EndpointSlices (ready endpoints only)', async () => {
    expect(await get(port, 'b.example', '/empty')).toMatchObject({ status: 503, body: '503 Service Temporarily Unavailable\n' });
    for (let i = 0; i < 4; i++) expect(await get(port, 'b.example', '/sliced')).toMatchObject({ status: 200, body: 'sliced /sliced' });
  });

  it('resolves backends to ready endpoints only, by port number or name', () => {
    const view = projection.view();
    const ref = (service: string, port: { type: 'number'; number: number } | { type: 'name'; name: string }) => ({ namespace: 'default', service, port, ingress: 'default/x' });
    expect(resolveBackend(view, ref('sliced', { type: 'number', number: 80 }))).toEqual({ type: 'ready', endpoints: [{ ip: '127.0.0.1', port: sliced.port }] });
    expect(resolveBackend(view, ref('b', { type: 'name', name: 'http' }))).toEqual({ type: 'ready', endpoints: [{ ip: '127.0.0.1', port: b.port }] });
    expect(resolveBackend(view, ref('b', { type: 'number', number: 8080 }))).toEqual({ type: 'ready', endpoints: [{ ip: '127.0.0.1', port: b.port }] });
    expect(resolveBackend(view, ref('b', { type: 'number', number: 80 }))).toEqual({ type: 'unavailable', reason: 'Service default/b has no TCP port 80' });
    expect(resolveBackend(view, ref('missing', { type: 'number', number: 80 }))).toEqual({ type: 'unavailable', reason: 'Service default/missing does not exist' });
    expect(resolveBackend(view, ref('empty', { type: 'number', number: 80 }))).toMatchObject({ type: 'unavailable' });
  });

  it('retries a bodiless request on the next ready endpoint when one refuses the connection', async () => {
    for (let i = 0; i < 6; i++) expect(await get(port, 'b.example', `/retry/${i}`)).toMatchObject({ status: 200, body: `b /retry/${i}` });
  });

  it('streams a request body to the backend and does not replay it on another endpoint', async () => {
    const body = Buffer.alloc(1024 * 1024, 7);
    expect(await get(port, 'a.example', '/upload', { body })).toMatchObject({ status: 200, body: `a /upload ${body.length}` });
    // Three POSTs start at each of flaky's three endpoints once: the two that refuse answer 502.
    const answers = await Promise.all([0, 1, 2].map(async (i) => (await get(port, 'b.example', `/retry/post-${i}`, { body: Buffer.from('x') })).status));
    expect(answers.sort()).toEqual([200, 502, 502]);
  });

  it('keeps connections to a backend alive across requests', async () => {
    const before = a.connections;
    for (let i = 0; i < 10; i++) expect((await get(port, 'a.example', `/${i}`)).status).toBe(200);
    expect(a.connections - before).toBeLessThanOrEqual(1);
  });

  it('serves HTTPS with the certificate of the SNI host', async () => {
    const tlsGet = (servername: string, ca: string): Promise<{ body: string; subject: string }> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port: tlsPort, path: '/api/x', servername, headers: { host: servername }, ca, agent: false }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ body, subject: (res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN as string }));
        });
        req.on('error', reject);
        req.end();
      });
    expect(await tlsGet('a.example', A_CERT.cert)).toEqual({ body: 'a /api/x', subject: 'a.example' });
    expect(await tlsGet('b.example', B_CERT.cert)).toEqual({ body: 'b /api/x', subject: 'b.example' });
    // The HTTPS listener tells the backend the request came in over TLS.
    await expect(tlsGet('c.example', A_CERT.cert)).rejects.toThrow();
  });

  it('passes a WebSocket upgrade through, both ways', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('\r\n\r\n') && !text.includes('a:ping')) socket.write('ping');
        if (text.includes('a:ping')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.write('GET /socket HTTP/1.1\r\nHost: a.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 101/);
    expect(answer.toLowerCase()).toContain('x-backend: a');
    expect(answer).toContain('a:ping');
    // The client went away: the proxy closes its side to the backend too.
    await pollUntil('the upgraded backend connection closed', async () => a.upgraded.size === 0, { timeoutMs: 10_000 });
    expect(await raw(port, 'GET / HTTP/1.1\r\nHost: nowhere.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')).toMatch(/^HTTP\/1\.1 404/);
  });

  it('answers malformed and oversized requests with 4xx and keeps serving', async () => {
    expect(await raw(port, 'NOT HTTP AT ALL\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    expect(await raw(port, `GET / HTTP/1.1\r\nHost: a.example\r\nX-Big: ${'x'.repeat(32 * 1024)}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 431/);
    expect(await raw(tlsPort, 'GET / HTTP/1.1\r\n\r\n')).toBe('');
    expect(await get(port, 'a.example', '/still')).toMatchObject({ status: 200, body: 'a /still' });
  });

  it('survives arbitrary bytes on both listeners (bounded fuzz)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 2048 }), fc.boolean(), async (bytes, tls) => {
        // The head ends, so the parser decides at once (a complete head may still wait for a body: the client gives up after 1 s).
        const answer = await raw(tls ? tlsPort : port, `${Buffer.from(bytes).toString('latin1')}\r\n\r\n`, 1000);
        // HTTP: nothing (the connection was closed) or an HTTP answer; TLS: at most an alert, then the close.
        if (!tls) expect(answer === '' || answer.startsWith('HTTP/1.1 ')).toBe(true);
      }),
      { numRuns: 30 },
    );
    expect(await get(port, 'a.example', '/after-fuzz')).toMatchObject({ status: 200, body: 'a /after-fuzz' });
  }, 90_000);

  it('writes status.loadBalancer of its own Ingresses through the log', async () => {
    await controller.statusSettled();
    const lb = (name: string) => (projection.view().get(`Ingress.networking.k8s.io/default/${name}`) as Ingress).status?.loadBalancer?.ingress;
    const wanted = [{ ip: '127.0.0.1', ports: [{ port, protocol: 'TCP' }, { port: tlsPort, protocol: 'TCP' }] }];
    expect(lb('a')).toEqual(wanted);
    expect(lb('b')).toEqual(wanted);
    expect(lb('elsewhere')).toBeUndefined();
    const observed = (await log.read('observed', 0, 0)).map((record) => decodeEvent(record.value));
    const writes = observed.filter((event) => event.key.startsWith('Ingress.networking.k8s.io/') && event.body.type === 'ObjectUpdated' && event.body.subresource === 'status');
    expect(writes.map((event) => event.actor)).toEqual([INGRESS_CONTROLLER_ACTOR, INGRESS_CONTROLLER_ACTOR]);
    // Moving an Ingress to another class clears the status this controller wrote.
    const b = projection.view().get('Ingress.networking.k8s.io/default/b') as Ingress;
    await append([{ type: 'ObjectUpdated', object: { ...b, spec: { ...b.spec, ingressClassName: 'other' } }, expectedResourceVersion: null, subresource: null }]);
    await controller.statusSettled();
    expect(lb('b')).toBeUndefined();
    expect(await get(port, 'b.example', '/api')).toMatchObject({ status: 404 });
  });
});
