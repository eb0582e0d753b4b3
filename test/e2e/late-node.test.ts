/**
 * A Pod naming a node that is not registered yet (issue 15, item 5), on both logs: the
 * apiserver accepts it and it stays Pending; when the node's agent registers the node,
 * the pods that fit run and the one that does not is Failed with kubelet's `OutOfcpu`
 * reason and message, so the node is never charged past its allocatable; the rejected
 * pod is deleted at once (nothing runs it); a replay from offset 0 gives the live hash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeAgent, type NodeAgent } from '../../node-agent/agent.ts';
import type { Pod } from '../../schemas/index.ts';
import { LOG_ADAPTERS, startTestCluster, waitForView, type TestCluster, replayToLive } from './helpers.ts';

const PODS = '/api/v1/namespaces/default/pods';
const NODE = 'late-1';

const podOn = (name: string, cpu: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName: NODE, containers: [{ name: 'main', image: 'logplane/sleeper', resources: { requests: { cpu, memory: '64Mi' } } }] },
});

describe.each(LOG_ADAPTERS)('a pod naming a node not registered yet, on the %s log', (adapter) => {
  let test: TestCluster;
  let agent: NodeAgent | undefined;
  let agentDir: string;

  beforeAll(async () => {
    test = await startTestCluster(adapter, 'e2e-late-node', { nodes: 1, runtime: 'sim', proxy: 'none' });
    agentDir = mkdtempSync(join(tmpdir(), 'e2e-late-node-agent-'));
  }, 60_000);

  afterAll(async () => {
    await agent?.close({ stopPods: true });
    await test?.stop();
    rmSync(agentDir, { recursive: true, force: true });
  });

  const pod = (name: string): Pod | undefined => test.cluster.projection.view().get(`Pod/default/${name}`) as Pod | undefined;

  it('is accepted and stays Pending, bound to its node, while the node does not exist', async () => {
    for (const [name, cpu] of [['first', '1500m'], ['too-big', '3'], ['third', '1']] as const) {
      const created = (await test.api.create(PODS, podOn(name, cpu))) as Pod;
      expect(created.spec.nodeName).toBe(NODE);
      expect(created.status?.phase).toBe('Pending');
    }
    expect(test.cluster.projection.view().get(`Node//${NODE}`)).toBeUndefined();
    expect(test.cluster.projection.store.usage.get(NODE)).toBeUndefined();
    expect(pod('first')?.status?.phase).toBe('Pending');
  });

  it('when the node registers, the pods that fit run and the one that does not is Failed OutOfcpu', async () => {
    agent = await startNodeAgent({
      log: test.cluster.log,
      projection: test.cluster.projection,
      logger: pino({ level: 'silent' }),
      nodes: [NODE],
      runtime: 'sim',
      dataDir: agentDir,
      capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    });
    await waitForView(
      test.cluster.projection,
      'first and third Running, too-big Failed',
      () => pod('first')?.status?.phase === 'Running' && pod('third')?.status?.phase === 'Running' && pod('too-big')?.status?.phase === 'Failed',
      { describe: () => ['first', 'too-big', 'third'].map((name) => pod(name)?.status) },
    );
    expect(pod('too-big')?.status).toMatchObject({
      phase: 'Failed',
      reason: 'OutOfcpu',
      message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 1500, capacity: 4000",
    });
    // As kubelet, the node reports its filesystem as ephemeral-storage (pods may request it) and no huge pages.
    const node = test.cluster.projection.view().get(`Node//${NODE}`) as { status?: { allocatable?: Record<string, string> } } | undefined;
    expect(node?.status?.allocatable).toMatchObject({ 'ephemeral-storage': expect.stringMatching(/^[1-9]\d*Ki$/), 'hugepages-2Mi': '0' });
    // Charged: first and third only (1.5 + 1 cores of 4).
    expect(test.cluster.projection.store.usage.get(NODE)).toMatchObject({ cpuMilli: 2500, pods: 2 });
    const answer = await test.api.request('GET', `${PODS}/too-big`);
    expect(answer.body).toMatchObject({ status: { phase: 'Failed', reason: 'OutOfcpu' } });
  }, 60_000);

  it('deletes the rejected pod at once (nothing runs it) and leaves the node’s usage alone', async () => {
    // A dry run says what the delete will do: gone at once (a Success Status), not a graceful deletion.
    const dryRun = await test.api.request('DELETE', `${PODS}/too-big?dryRun=All`);
    expect(dryRun).toMatchObject({ status: 200, body: { kind: 'Status', status: 'Success' } });
    expect(pod('too-big')?.metadata.deletionTimestamp).toBeUndefined();
    const answer = await test.api.request('DELETE', `${PODS}/too-big`);
    expect(answer.status).toBe(200);
    await waitForView(test.cluster.projection, 'too-big gone', () => pod('too-big') === undefined);
    expect(test.cluster.projection.store.usage.get(NODE)).toMatchObject({ cpuMilli: 2500, pods: 2 });
  });

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(test.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
