import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { readBody } from './http.ts';

/** A server whose every request is read with `readBody(req, limit)`; resolves with each outcome. */
const serveReads = async (limit: number) => {
  // Wrapped in objects: a promise resolved with a promise would adopt it.
  const outcomes: { outcome: Promise<Buffer> }[] = [];
  const arrived: ((read: { outcome: Promise<Buffer> }) => void)[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const outcome = readBody(req, limit);
    outcome.then(
      (body) => res.end(`read ${body.length}`),
      () => undefined,
    );
    const waiter = arrived.shift();
    if (waiter) waiter({ outcome });
    else outcomes.push({ outcome });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    server,
    /** The next request's read, once the request arrived. */
    next: (): Promise<{ outcome: Promise<Buffer> }> =>
      new Promise((resolve) => (outcomes.length > 0 ? resolve(outcomes.shift()!) : arrived.push(resolve))),
  };
};

/** Sends `chunks` one by one as a chunked POST body; `end: false` leaves the body unfinished. */
const send = (port: number, chunks: string[], end = true) => {
  const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' });
  req.on('error', () => undefined); // the server may reset it
  for (const chunk of chunks) req.write(chunk);
  if (end) req.end();
  return req;
};

describe('readBody', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reads a body sent in several chunks, and an empty one', async () => {
    const { port, server, next } = await serveReads(100);
    servers.push(server);
    send(port, ['{"a":', '1,', '"b":2}']);
    expect((await (await next()).outcome).toString()).toBe('{"a":1,"b":2}');
    send(port, []);
    expect((await (await next()).outcome).length).toBe(0);
  });

  it('refuses a body larger than the limit with 413 RequestEntityTooLarge', async () => {
    const { port, server, next } = await serveReads(10);
    servers.push(server);
    send(port, ['0123456', '789', 'x']);
    const error = await (await next()).outcome.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toMatchObject({ code: 413, reason: 'RequestEntityTooLarge' });
  });

  it('fails instead of waiting forever when the client goes away mid-body', async () => {
    const { port, server, next } = await serveReads(100);
    servers.push(server);
    const req = send(port, ['{"a":'], false);
    const { outcome } = await next();
    req.destroy();
    // Node reports the abort as an error ("aborted"); without a listener for it the read would never settle.
    await expect(outcome).rejects.toBeInstanceOf(Error);
  });
});
