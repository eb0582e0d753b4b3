/**
 * A node agent whose status reports the log refuses for a while (a broker failing over): the
 * reports are sent again until the log takes them, as kubelet's status manager syncs a pod's
 * status until the apiserver has it. Before, a refused batch was dropped, and a pod that had
 * started meanwhile stayed Pending in the log for good (the runtime reports a pod only when it
 * changes). On both logs, with a real agent (sim runtime) and the log wrapped to refuse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogUnavailableError } from '../../log/errors.ts';
import type { EventLog } from '../../log/port.ts';
import { startNodeAgent, type NodeAgent } from '../../node-agent/agent.ts';
import type { Pod } from '../../schemas/index.ts';
import { LOG_ADAPTERS, pollUntil, startTestCluster, waitForView, type TestCluster } from './helpers.ts';

const NODE = 'flaky-1';

describe.each(LOG_ADAPTERS)('status reports the %s log refuses for a while', (adapter) => {
  let test: TestCluster;
  let agent: NodeAgent | undefined;
  let agentDir: string;
  /** While true, every append of the agent to the observed topic is refused. */
  let refusing = false;
  let refused = 0;

  beforeAll(async () => {
    test = await startTestCluster(adapter, 'e2e-status-retry', { nodes: 1, runtime: 'sim', proxy: 'none' });
    agentDir = mkdtempSync(join(tmpdir(), 'e2e-status-retry-agent-'));
    const log = test.cluster.log;
    const flaky: EventLog = {
      ...log,
      append: (topic, records) => {
        if (refusing && topic === 'observed') {
          refused++;
          return Promise.reject(new LogUnavailableError('the log is unavailable (refused by the test)', {}));
        }
        return log.append(topic, records);
      },
    };
    agent = await startNodeAgent({ log: flaky, projection: test.cluster.projection, logger: pino({ level: 'silent' }), nodes: [NODE], runtime: 'sim', dataDir: agentDir });
    await waitForView(test.cluster.projection, `node ${NODE} registered`, (view) => view.get(`Node//${NODE}`) !== undefined);
  }, 60_000);

  afterAll(async () => {
    await agent?.close({ stopPods: true });
    await test?.stop();
    rmSync(agentDir, { recursive: true, force: true });
  });

  it('sends a started pod\'s Running status again until the log takes it', async () => {
    refusing = true;
    await test.api.create('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'survivor' },
      spec: { nodeName: NODE, containers: [{ name: 'main', image: 'logplane/echo' }] },
    });
    const pod = (): Pod | undefined => test.cluster.projection.view().get('Pod/default/survivor') as Pod | undefined;
    // The pod starts while its reports are refused; nothing else about it changes afterwards.
    await pollUntil('three refused reports', async () => refused >= 3, { intervalMs: 20 });
    expect(pod()?.status?.phase ?? 'Pending').toBe('Pending');
    refusing = false;
    await waitForView(test.cluster.projection, 'the pod Running in the log', () => pod()?.status?.phase === 'Running', { describe: () => pod()?.status });
    expect(pod()?.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  });
});
