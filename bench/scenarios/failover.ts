/**
 * failover: a cluster whose sim nodes are split between two agents (the `logplane up`
 * agent and a second one on the same log), a Deployment spread over both; then the second
 * agent is closed without stopping its pods (as if its machine vanished: no heartbeats, no
 * status, pods never confirmed stopped). With node grace 2 s and toleration 2 s, the
 * node-lifecycle controller marks its nodes unreachable, evicts their pods, and the
 * ReplicaSet's replacements are scheduled on the surviving nodes.
 *
 * Figure: seconds from the agent's death until every replica is Running on a live node,
 * with the milestones (node tainted, first eviction).
 */
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { startNodeAgent } from '../../node-agent/agent.ts';
import type { Node, Pod } from '../../schemas/index.ts';
import { deploymentManifest, startBenchCluster, trackPods } from '../cluster.ts';
import { expectStatus, plain, quietLogger, round, type ScenarioContext, type ScenarioResult, until, withTempDir } from '../support.ts';

const ANCHOR = 'Kubernetes defaults: 40–50 s node grace + 300 s toleration ≈ 5–6 min';

export const failoverScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const nodesPerAgent = 5;
  const replicas = context.quick ? 40 : 200;
  const graceMs = 2_000;
  const tolerationSeconds = 2;
  const heartbeatMs = 500;
  const capacity = { cpu: '32', memory: '64Gi', pods: '110' };
  return withTempDir('failover', async (dir) => {
    const bench = await startBenchCluster({
      dir,
      log: context.log,
      brokers: context.brokers,
      nodes: nodesPerAgent,
      runtime: 'sim',
      simStartDelayMs: 5,
      nodeCapacity: capacity,
      nodeGracePeriodMs: graceMs,
      tolerationSeconds,
      heartbeatMs,
    });
    const { log, projection } = bench.cluster;
    const doomedNodes = Array.from({ length: nodesPerAgent }, (_, i) => `doomed-${i + 1}`);
    const doomed = await startNodeAgent({
      log,
      projection,
      logger: quietLogger(),
      nodes: doomedNodes,
      runtime: 'sim',
      dataDir: join(dir, 'doomed'),
      heartbeatMs,
      simStartDelayMs: 5,
      capacity,
    });
    let doomedOpen = true;
    const tracker = trackPods(projection, 'Pod/default/');
    const milestones: { tainted?: number; firstEvicted?: number } = {};
    let killedAt = 0;
    const watchers: Subscription[] = [
      projection.changes$.subscribe((change) => {
        if (killedAt === 0) return;
        const now = performance.now();
        if (change.key.startsWith('Node//doomed-') && milestones.tainted === undefined) {
          const taints = (change.object as Node).spec?.taints ?? [];
          if (taints.some((t) => t.key === 'node.kubernetes.io/unreachable')) milestones.tainted = now;
        }
        if (change.key.startsWith('Pod/default/') && milestones.firstEvicted === undefined) {
          const pod = change.object as Pod;
          const leaving = change.type === 'DELETED' || Boolean(pod.metadata.deletionTimestamp);
          if (leaving && doomedNodes.includes(pod.spec.nodeName ?? '')) milestones.firstEvicted = now;
        }
      }),
    ];
    try {
      expectStatus(
        await bench.client.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploymentManifest('failover', replicas)),
        201,
        'creating the Deployment',
      );
      await until(() => tracker.running.size >= replicas, 120_000, `${replicas} pods Running`);
      const onDoomed = [...tracker.running].filter((key) => doomedNodes.includes(tracker.nodeOf.get(key) ?? '')).length;
      context.progress(`failover/${context.log}: ${replicas} Running, ${onDoomed} on the agent about to die`);

      killedAt = performance.now();
      await doomed.close({ stopPods: false });
      doomedOpen = false;
      const healthy = (): number =>
        [...tracker.running].filter((key) => !doomedNodes.includes(tracker.nodeOf.get(key) ?? '')).length;
      await until(() => healthy() >= replicas, 120_000, `${replicas} pods Running on surviving nodes`);
      const recovered = performance.now();
      const seconds = (from: number | undefined): number => (from === undefined ? Number.NaN : round((from - killedAt) / 1000, 2));
      return {
        scenario: 'failover',
        log: context.log,
        figures: [
          plain('agent killed → all replicas Running elsewhere', seconds(recovered), 's', ANCHOR),
          plain('agent killed → its nodes tainted unreachable', seconds(milestones.tainted), 's'),
          plain('agent killed → first pod evicted', seconds(milestones.firstEvicted), 's'),
        ],
        setup: { replicas, podsOnKilledAgent: onDoomed, nodesPerAgent, graceMs, tolerationSeconds, heartbeatMs },
        notes: [
          'Lower bound by configuration: grace 2 s + toleration 2 s (taint times have 1 s resolution, as Kubernetes).',
          'The killed agent ran in this process on the same log; closing it stops heartbeats and status reports but not its (simulated) pods.',
        ],
      };
    } finally {
      for (const watcher of watchers) watcher.unsubscribe();
      tracker.close();
      if (doomedOpen) await doomed.close({ stopPods: false });
      await bench.stop();
    }
  });
};
