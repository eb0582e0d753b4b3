/**
 * The GET of an httpGet probe or hook against a real local HTTP server: kubelet's headers
 * (user agent and Accept unless the pod sets them, an empty Accept removed, a Host header as
 * the request's host), the probe's status verdicts, and a header value the pod spec got wrong.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet } from './http-get.ts';
import { runProbe, type ProbeTarget } from './probes.ts';

describe('httpGet of probes and hooks', () => {
  let server: Server;
  let target: ProbeTarget;
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.statusCode = req.url === '/broken' ? 500 : req.url === '/moved' ? 302 : 200;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    target = { podIP: '127.0.0.1', env: {}, cwd: '/', ports: [{ name: 'http', containerPort: (server.address() as AddressInfo).port }] };
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const last = () => seen.at(-1)!;

  it('sends kubelet\'s user agent and Accept when the pod sets none, to the path on the named port', async () => {
    expect(await httpGet({ port: 'http', path: 'healthz?full=1' }, target, { userAgentFragment: 'kube-probe', timeoutMs: 5_000 })).toEqual({ type: 'response', statusCode: 200 });
    expect(last().url).toBe('/healthz?full=1');
    expect(last().headers['user-agent']).toBe('kube-probe/1.32');
    expect(last().headers['accept']).toBe('*/*');
  });

  it('sends the pod\'s headers over the defaults; an empty Accept removes it; Host names the host', async () => {
    await httpGet(
      {
        port: 'http',
        path: '/',
        httpHeaders: [
          { name: 'User-Agent', value: 'mine' },
          { name: 'Accept', value: '' },
          { name: 'Host', value: 'app.example.com' },
          { name: 'X-Trace', value: 'a' },
          { name: 'X-Trace', value: 'b' },
        ],
      },
      target,
      { userAgentFragment: 'kube-lifecycle', timeoutMs: 5_000 },
    );
    expect(last().headers['user-agent']).toBe('mine');
    expect(last().headers['accept']).toBeUndefined();
    expect(last().headers['host']).toBe('app.example.com');
    expect(last().headers['x-trace']).toBe('a, b');
  });

  it('gives a probe kubelet\'s verdicts: 2xx and 3xx succeed, others fail with the status', async () => {
    const probe = (path: string) => runProbe({ httpGet: { port: 'http', path, httpHeaders: [{ name: 'X-Probe', value: 'yes' }] } }, target, 5_000);
    expect(await probe('/')).toEqual({ type: 'success' });
    expect(last().headers['x-probe']).toBe('yes');
    expect(await probe('/moved')).toEqual({ type: 'success' });
    expect(await probe('/broken')).toEqual({ type: 'failure', detail: 'HTTP probe failed with statuscode: 500' });
  });

  it('fails, without throwing, on a header value no request may carry and on an unknown port name', async () => {
    const bad = await httpGet({ port: 'http', path: '/', httpHeaders: [{ name: 'X-Bad', value: 'a\r\nInjected: yes' }] }, target, { userAgentFragment: 'kube-probe', timeoutMs: 5_000 });
    expect(bad.type).toBe('error');
    expect(await httpGet({ port: 'nope', path: '/' }, target, { userAgentFragment: 'kube-probe', timeoutMs: 5_000 })).toEqual({ type: 'error', message: 'no container port named "nope"' });
  });
});
