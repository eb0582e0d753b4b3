/**
 * `pods/NAME/log` in distributed mode: the apiserver runs in another component than the
 * agent that runs the pod, and streams the container's output from the agent's log endpoint.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, runApiserver, runControllers, type Component } from '../../cli/components.ts';
import type { LogTarget } from '../../cli/wiring.ts';
import { adminCredentials } from '../../cli/wiring.ts';

const logger = pino({ level: 'silent' });

describe('pod logs across components (embedded log)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-agent-logs-'));
  const components: Component[] = [];
  let url = '';
  let token = '';

  beforeAll(async () => {
    const target: LogTarget = { type: 'embedded', dir: join(dir, 'log'), cluster: 'logs', partitions: 1, serviceCIDR: '127.95.0.0/16' };
    const api = await runApiserver({ target, dataDir: join(dir, 'api'), port: 0, host: '127.0.0.1', tls: false, logger });
    components.push(api);
    url = api.url;
    token = adminCredentials(join(dir, 'api')).token;
    components.push(await runControllers({ target, dataDir: join(dir, 'controllers'), only: ['scheduler'], logger }));
    components.push(
      await runAgent({ target, dataDir: join(dir, 'agent'), nodes: ['logs-node'], runtime: 'process', proxy: 'none', podCIDR: '127.121.0.0/24', logger }),
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
});
