/**
 * A long list is written item by item (sendJson's stream): over a real HTTP connection the
 * client gets the same JSON as one string would have been, every item in order, and a small
 * socket buffer (the client reading slowly) only delays it.
 */
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendJson } from './http.ts';

const serve = async (body: unknown): Promise<{ server: Server; url: string }> => {
  const server = createServer((_req, res) => sendJson(res, 200, body, { Warning: '299 - "w"' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
};

const fetchText = (url: string, pauseEveryChunk = false): Promise<{ text: string; headers: Record<string, unknown> }> =>
  new Promise((resolve, reject) => {
    get(url, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (pauseEveryChunk) {
          res.pause();
          setImmediate(() => res.resume());
        }
      });
      res.on('end', () => resolve({ text, headers: res.headers }));
      res.on('error', reject);
    }).on('error', reject);
  });

describe('sendJson of a long list', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('streams the items of a list over 1,000 long: the same JSON, chunked, headers kept', async () => {
    const list = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '42' }, items: Array.from({ length: 2_345 }, (_, i) => ({ metadata: { name: `cm-${i}` }, data: { text: 'x'.repeat(i % 50) } })) };
    const started = await serve(list);
    server = started.server;
    const { text, headers } = await fetchText(started.url, true);
    expect(JSON.parse(text)).toEqual(list);
    expect(headers['transfer-encoding']).toBe('chunked');
    expect(headers['content-length']).toBeUndefined();
    expect(headers['warning']).toBe('299 - "w"');
  });

  it('leaves no listener behind on the response while waiting for a slow reader', async () => {
    let response: import('node:http').ServerResponse | undefined;
    const list = { kind: 'List', apiVersion: 'v1', metadata: {}, items: Array.from({ length: 20_000 }, (_, i) => ({ name: `item-${i}`, pad: 'y'.repeat(200) })) };
    server = createServer((_req, res) => {
      response = res;
      sendJson(res, 200, list);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { text } = await fetchText(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, true);
    expect(JSON.parse(text).items).toHaveLength(20_000);
    expect(response?.listenerCount('drain')).toBe(0);
  });

  it('sends a short list as one string with its length', async () => {
    const list = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [{ metadata: { name: 'a' } }] };
    const started = await serve(list);
    server = started.server;
    const { text, headers } = await fetchText(started.url);
    expect(JSON.parse(text)).toEqual(list);
    expect(headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(list))));
  });
});
