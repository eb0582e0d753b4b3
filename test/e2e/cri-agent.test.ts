/**
 * Distributed mode with the CRI runtime: an apiserver, the scheduler and `logplane agent
 * --runtime cri` as separate components on one log, the agent driving a real containerd the
 * test starts (its own root, socket and CNI bridge in a network namespace the test creates;
 * a busybox image built locally). The pod runs as a container and its output reaches
 * `pods/NAME/log` from the agent's authenticated log endpoint. Needs root, as CI runs it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, runApiserver, runControllers, type Component } from '../../cli/components.ts';
import { adminCredentials, type LogTarget } from '../../cli/wiring.ts';
import { BUSYBOX_IMAGE, type TestContainerd, startTestContainerd } from '../../node-agent/kubelet/cri/testing.ts';
import type { Pod } from '../../schemas/index.ts';
import { waitFor } from './process.ts';

const logger = pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' });

describe('logplane agent --runtime cri in distributed mode (embedded log)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-cri-agent-'));
  const components: Component[] = [];
  let harness: TestContainerd;
  let url = '';
  let token = '';
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

  beforeAll(async () => {
    harness = await startTestContainerd();
    const target: LogTarget = { type: 'embedded', dir: join(dir, 'log'), cluster: 'cri', partitions: 1 };
    const pkiDir = join(dir, 'pki');
    const apiserver = await runApiserver({ target, dataDir: join(dir, 'api'), pkiDir, port: 0, host: '127.0.0.1', tls: false, logger, serviceCIDR: '127.94.0.0/16' });
    components.push(apiserver);
    url = apiserver.url;
    token = adminCredentials(join(dir, 'api')).token;
    components.push(await runControllers({ target, dataDir: join(dir, 'controllers'), pkiDir, only: ['scheduler', 'serviceaccount', 'root-ca-cert-publisher'], logger }));
    components.push(
      await runAgent({
        target,
        dataDir: join(dir, 'agent'),
        pkiDir,
        nodes: ['cri-node'],
        runtime: 'cri',
        cri: { endpoint: harness.containerd.endpoint, cgroupParent: harness.cgroupParent },
        proxy: 'none',
        podCIDR: '127.122.0.0/24',
        logger,
      }),
    );
  }, 120_000);

  afterAll(async () => {
    try {
      for (const component of components.reverse()) await component.stop();
    } finally {
      await harness?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs a pod bound to the node as a container; its logs come from the agent; stopping the agent removes it', async () => {
    const created = await api('/api/v1/namespaces/default/pods', {
      method: 'POST',
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'counter' },
        spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'echo one; echo two; echo three; exec sleep 600'] }] },
      }),
    });
    expect(created.status).toBe(201);
    const pod = await waitFor('counter Running', async () => {
      const current = (await (await api('/api/v1/namespaces/default/pods/counter')).json()) as Pod;
      return current.status?.phase === 'Running' && current;
    });
    expect(pod.spec.nodeName).toBe('cri-node');
    expect(pod.status?.podIP).toMatch(new RegExp(`^10\\.244\\.${harness.subnetOctet}\\.\\d+$`));
    expect(pod.status?.containerStatuses?.[0]?.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    const text = await waitFor('three log lines', async () => {
      const response = await api('/api/v1/namespaces/default/pods/counter/log');
      const body = response.ok ? await response.text() : '';
      return body === 'one\ntwo\nthree\n' && body;
    });
    expect(text).toBe('one\ntwo\nthree\n');
    expect(await (await api('/api/v1/namespaces/default/pods/counter/log?tailLines=1')).text()).toBe('three\n');
    expect(await harness.containerd.cri.listPodSandboxes({ labelSelector: { 'io.kubernetes.pod.name': 'counter' } })).toHaveLength(1);

    // The agent stops its pods when it stops (as `logplane agent` does on Ctrl-C).
    const agent = components.pop()!;
    await agent.stop();
    expect(await harness.containerd.cri.listPodSandboxes()).toEqual([]);
  }, 90_000);
});
