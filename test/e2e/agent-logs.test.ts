/**
 * `pods/NAME/log` in distributed mode: the apiserver runs in another component than the
 * agent that runs the pod, and streams the container's output from the agent's log endpoint.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, runApiserver, runControllers, type Component } from '../../cli/components.ts';
import type { LogTarget } from '../../cli/wiring.ts';
import { adminCredentials } from '../../cli/wiring.ts';

const logger = pino({ level: 'silent' });

/** GET `path` on the agent's HTTPS endpoint, presenting `client` (none when null); resolves with the status and body. */
const agentGet = (port: number, ca: string, path: string, client: { cert: string; key: string } | null): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const outgoing = httpsRequest({ host: '127.0.0.1', port, path, ca, agent: false, ...(client ?? {}) }, (reply) => {
      let body = '';
      reply.setEncoding('utf8');
      reply.on('data', (chunk: string) => (body += chunk));
      reply.on('end', () => resolve({ status: reply.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });

describe('pod logs across components (embedded log)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-agent-logs-'));
  const components: Component[] = [];
  const pkiDir = join(dir, 'pki');
  let url = '';
  let token = '';

  beforeAll(async () => {
    const target: LogTarget = { type: 'embedded', dir: join(dir, 'log'), cluster: 'logs', partitions: 1 };
    const api = await runApiserver({ target, dataDir: join(dir, 'api'), pkiDir, port: 0, host: '127.0.0.1', tls: false, logger, serviceCIDR: '127.95.0.0/16' });
    components.push(api);
    url = api.url;
    token = adminCredentials(join(dir, 'api')).token;
    components.push(await runControllers({ target, dataDir: join(dir, 'controllers'), pkiDir, only: ['scheduler', 'serviceaccount', 'root-ca-cert-publisher'], logger }));
    components.push(
      await runAgent({ target, dataDir: join(dir, 'agent'), pkiDir, nodes: ['logs-node'], runtime: 'process', proxy: 'none', podCIDR: '127.121.0.0/24', logger }),
    );
  }, 60_000);

  afterAll(async () => {
    for (const component of components.reverse()) await component.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

  it('streams a pod\'s output from the agent that runs it', async () => {
    const created = await api('/api/v1/namespaces/default/pods', {
      method: 'POST',
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'talker' },
        spec: { containers: [{ name: 'main', image: 'logplane/sleeper' }] },
      }),
    });
    expect(created.status).toBe(201);
    const deadline = Date.now() + 30_000;
    let text = '';
    while (Date.now() < deadline && !text.includes('sleeper: pod talker')) {
      const response = await api('/api/v1/namespaces/default/pods/talker/log');
      text = response.ok ? await response.text() : '';
      if (!text.includes('sleeper: pod talker')) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(text).toContain('sleeper: pod talker');
    const missing = await api('/api/v1/namespaces/default/pods/talker/log?container=other');
    expect(missing.status).toBe(400);
  }, 60_000);

  it('passes tailLines and limitBytes to the agent, and relays its 400 for a value it refuses', async () => {
    const created = await api('/api/v1/namespaces/default/pods', {
      method: 'POST',
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'counter' },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'echo one; echo two; echo three; exec sleep 600'] }] },
      }),
    });
    expect(created.status).toBe(201);
    const deadline = Date.now() + 30_000;
    let text = '';
    while (Date.now() < deadline && text !== 'one\ntwo\nthree\n') {
      const response = await api('/api/v1/namespaces/default/pods/counter/log');
      text = response.ok ? await response.text() : '';
      if (text !== 'one\ntwo\nthree\n') await new Promise((resolve) => setImmediate(resolve));
    }
    expect(text).toBe('one\ntwo\nthree\n');
    expect(await (await api('/api/v1/namespaces/default/pods/counter/log?tailLines=1')).text()).toBe('three\n');
    expect(await (await api('/api/v1/namespaces/default/pods/counter/log?limitBytes=6')).text()).toBe('one\ntw');
    const tooMany = await api('/api/v1/namespaces/default/pods/counter/log?tailLines=100000000000');
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { message: string }).message).toMatch(/node logs-node: tailLines: invalid value/);
  }, 60_000);

  it('serves the agent endpoint to the apiserver\'s kubelet-client certificate only, and survives a bad %-escape', async () => {
    const node = (await (await api('/api/v1/nodes/logs-node')).json()) as { status: { daemonEndpoints: { kubeletEndpoint: { Port: number } } } };
    const port = node.status.daemonEndpoints.kubeletEndpoint.Port;
    const ca = readFileSync(join(pkiDir, 'ca', 'ca.crt'), 'utf8');
    const apiserverClient = { cert: readFileSync(join(pkiDir, 'apiserver-kubelet-client.crt'), 'utf8'), key: readFileSync(join(pkiDir, 'apiserver-kubelet-client.key'), 'utf8') };
    // Plain HTTP, as the endpoint was before, gets no log.
    const plain = await fetch(`http://127.0.0.1:${port}/containerLogs/logs-node/default/talker/main`).then((r) => r.status, () => 0);
    expect(plain).not.toBe(200);
    await expect(agentGet(port, ca, '/containerLogs/logs-node/default/talker/main', null)).rejects.toThrow(/alert certificate required/);
    const bad = await agentGet(port, ca, '/containerLogs/%E0%A4%A', apiserverClient);
    expect(bad.status).toBe(400);
    const direct = await agentGet(port, ca, '/containerLogs/logs-node/default/talker/main', apiserverClient);
    expect(direct.status).toBe(200);
    expect(direct.body).toContain('sleeper: pod talker');
    const viaApiserver = await api('/api/v1/namespaces/default/pods/talker/log');
    expect(await viaApiserver.text()).toContain('sleeper: pod talker');
  }, 60_000);

  it('dials only endpoints that prove to be the pod\'s node: a Node pointing at another service or another node\'s agent gets no log', async () => {
    let dialed = 0;
    const plainService = createServer((_, res) => {
      dialed++;
      res.end('secret of another local service\n');
    });
    await new Promise<void>((resolve) => plainService.listen(0, '127.0.0.1', resolve));
    try {
      const agentNode = (await (await api('/api/v1/nodes/logs-node')).json()) as { status: { daemonEndpoints: { kubeletEndpoint: { Port: number } } } };
      const ports = { plain: (plainService.address() as AddressInfo).port, otherAgent: agentNode.status.daemonEndpoints.kubeletEndpoint.Port };
      for (const [name, port] of Object.entries(ports)) {
        const nodeName = `fake-${name.toLowerCase()}`;
        const node = await api('/api/v1/nodes', {
          method: 'POST',
          body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName } }),
        });
        expect(node.status).toBe(201);
        const status = await api(`/api/v1/nodes/${nodeName}/status`, {
          method: 'PUT',
          body: JSON.stringify({
            ...((await node.json()) as object),
            status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } },
          }),
        });
        expect(status.status).toBe(200);
        const pod = await api('/api/v1/namespaces/default/pods', {
          method: 'POST',
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `on-${nodeName}` },
            spec: { nodeName, containers: [{ name: 'main', image: 'logplane/sleeper' }] },
          }),
        });
        expect(pod.status).toBe(201);
        const logs = await api(`/api/v1/namespaces/default/pods/on-${nodeName}/log`);
        expect(logs.status, name).toBe(500);
        const message = ((await logs.json()) as { message: string }).message;
        expect(message, name).toMatch(name === 'plain' ? /node fake-plain: log endpoint 127\.0\.0\.1:\d+: .*(wrong version number|packet length|SSL)/i : /is not node fake-otheragent's/);
      }
      expect(dialed).toBe(0);
    } finally {
      plainService.close();
    }
  }, 60_000);
});
