/**
 * The machine's own HTTP limit for the api scenario: a bare `node:http` server that answers
 * the creates of the load clients (`api-clients.ts`, `createsOnly`) and does nothing else.
 * It reads each request body fully, `JSON.parse`s it and answers 201 with the object echoed
 * back with what the apiserver adds to a Pod (uid, creationTimestamp, generation,
 * resourceVersion, the spec defaults, status Pending), `JSON.stringify`d: a response of
 * about the size of the apiserver's (≈ 470 bytes). No authentication, validation, log or
 * fold: the floor for any Node HTTP server answering these clients on this machine.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The only path the creates-only load sends to: POST /api/v1/namespaces/<ns>/pods. */
const CREATE_PATH = /^\/api\/v1\/namespaces\/[^/]+\/pods$/;

export interface BareHttpServer {
  readonly url: string;
  close(): Promise<void>;
}

interface PodLike {
  readonly metadata?: Record<string, unknown>;
  readonly spec?: { readonly containers?: readonly Record<string, unknown>[] };
}

const answer = (res: ServerResponse, status: number, body: unknown): void => {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
  res.end(payload);
};

let resourceVersion = 0;

const handle = (req: IncomingMessage, res: ServerResponse): void => {
  if (req.method !== 'POST' || !CREATE_PATH.test(req.url ?? '')) {
    req.resume();
    answer(res, 404, { kind: 'Status', status: 'Failure', message: `bare server: no route for ${req.method} ${req.url}`, code: 404 });
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let pod: PodLike;
    try {
      pod = JSON.parse(Buffer.concat(chunks).toString('utf8')) as PodLike;
    } catch (error) {
      answer(res, 400, { kind: 'Status', status: 'Failure', message: `bare server: body is not JSON: ${String(error)}`, code: 400 });
      return;
    }
    resourceVersion += 1;
    answer(res, 201, {
      ...pod,
      metadata: {
        ...pod.metadata,
        uid: randomUUID(),
        creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        generation: 1,
        resourceVersion: `${resourceVersion}.0`,
      },
      spec: {
        ...pod.spec,
        containers: (pod.spec?.containers ?? []).map((container) => ({ ...container, imagePullPolicy: 'IfNotPresent' })),
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        schedulerName: 'default-scheduler',
      },
      status: { phase: 'Pending' },
    });
  });
  req.on('error', () => res.destroy());
};

/** Starts the bare server on loopback, on a free port. */
export const startBareHttpServer = async (): Promise<BareHttpServer> => {
  const server = createServer(handle);
  server.keepAliveTimeout = 65_000; // as the apiserver's
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
};
