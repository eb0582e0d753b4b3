/**
 * envelope: the Kubernetes scalability envelope on one machine. Kubernetes publishes its
 * limits at 5,000 nodes and 150,000 pods (at most 110 per node); this scenario starts 5,000
 * sim nodes with the whole control plane in one process, applies 15 Deployments of 10,000
 * replicas one after another, and waits until all 150,000 pods are Running. Then, on that
 * cluster:
 *
 * - pods/s end to end (first apply → last pod Running) and the RSS of the process;
 * - list of all pods: one unchunked GET of every pod, and kubectl's chunked walk (limit=500,
 *   continue tokens), wall time of each;
 * - the whole cluster at a position: `viewAt(p).list` of every kind, at the position halfway
 *   through the pods' creation;
 * - a replay of the resulting log into a fresh projection: events/s, and whether its state
 *   hash equals the live projection's.
 *
 * `--quick`: 500 nodes, 15,000 pods. Only on the embedded log (one run is ~10 minutes).
 */
import { join } from 'node:path';
import { createReplayer, formatVector, type PositionVector } from '../../projections/index.ts';
import { KIND_VALUES } from '../../schemas/index.ts';
import { deploymentManifest, startBenchCluster, trackPods, SIM_NODE_CAPACITY } from '../cluster.ts';
import { atMost, expectStatus, memoryBreakdown, plain, round, type ScenarioContext, type ScenarioResult, until, withTempDir } from '../support.ts';

const ANCHOR = 'Kubernetes scalability thresholds: 5,000 nodes, 150,000 pods, 110 pods per node; SLO: list of all pods (cluster scope) p99 ≤ 30 s';

export const envelopeScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const nodes = context.quick ? 500 : 5_000;
  const deployments = 15;
  const replicas = context.quick ? 1_000 : 10_000;
  const pods = deployments * replicas;
  return withTempDir('envelope', async (dir) => {
    const startedAt = performance.now();
    const bench = await startBenchCluster({
      dir,
      log: context.log,
      brokers: context.brokers,
      nodes,
      runtime: 'sim',
      simStartDelayMs: 5,
      nodeCapacity: SIM_NODE_CAPACITY,
    });
    const startupSeconds = (performance.now() - startedAt) / 1000;
    context.progress(`envelope/${context.log}: ${nodes} nodes up in ${startupSeconds.toFixed(1)} s`);
    const tracker = trackPods(bench.cluster.projection, 'Pod/default/');
    try {
      const applied = performance.now();
      const cpuAtApply = process.cpuUsage();
      let halfway: PositionVector | undefined;
      for (let i = 0; i < deployments; i++) {
        const response = await bench.client.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploymentManifest(`envelope-${i}`, replicas));
        expectStatus(response, 201, `creating Deployment ${i}`);
        await until(() => tracker.running.size >= (i + 1) * replicas, 900_000, `${(i + 1) * replicas} pods Running`, 100);
        if (i === Math.floor(deployments / 2) - 1) halfway = bench.cluster.projection.cursor();
        context.progress(`envelope/${context.log}: ${tracker.running.size}/${pods} Running after ${((performance.now() - applied) / 1000).toFixed(0)} s, RSS ${memoryBreakdown().rssMB} MB`);
      }
      const allRunning = [...tracker.runningAt.values()].reduce((latest, at) => Math.max(latest, at), 0);
      const podsPerSecond = round(pods / ((allRunning - applied) / 1000));
      const cpu = process.cpuUsage(cpuAtApply);
      const cpuSeconds = round((cpu.user + cpu.system) / 1e6, 1);
      tracker.close();
      const memory = memoryBreakdown();

      // Lists of every pod, as a client sees them (HTTP, JSON).
      let listed = performance.now();
      const all = await bench.client.download('/api/v1/pods');
      if (all.status !== 200 || !all.complete) throw new Error(`listing every pod: HTTP ${all.status}, ${all.bytes} bytes, ${all.complete ? 'complete' : 'cut short'}`);
      const unchunkedSeconds = (performance.now() - listed) / 1000;
      const unchunkedMB = round(all.bytes / 1e6);
      listed = performance.now();
      let chunks = 0;
      let chunkedItems = 0;
      for (let token: string | undefined = ''; token !== undefined; ) {
        const page = await bench.client.request('GET', `/api/v1/pods?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
        expectStatus(page, 200, 'listing pods in chunks');
        const body = page.body as { items: unknown[]; metadata: { continue?: string } };
        chunks += 1;
        chunkedItems += body.items.length;
        token = body.metadata.continue || undefined;
      }
      const chunkedSeconds = (performance.now() - listed) / 1000;
      if (chunkedItems !== pods) throw new Error(`the chunked list walked ${chunkedItems} pods, not ${pods}`);
      context.progress(`envelope/${context.log}: listed every pod (${unchunkedMB} MB) in ${unchunkedSeconds.toFixed(1)} s, ${chunkedItems} in ${chunks} chunks in ${chunkedSeconds.toFixed(1)} s`);

      // The whole cluster at the position halfway through.
      const atStarted = performance.now();
      const past = bench.cluster.projection.viewAt(halfway ?? bench.cluster.projection.cursor());
      const objectsAtHalfway = KIND_VALUES.reduce((sum, kind) => sum + past.list(kind).length, 0);
      const atSeconds = (performance.now() - atStarted) / 1000;

      // A replay of the whole log, against the live state hash.
      const live = bench.cluster.projection.cursor();
      const liveHash = bench.cluster.projection.stateHash();
      const replayer = createReplayer({ log: bench.cluster.log, dir: join(dir, 'replay') });
      const replayStarted = performance.now();
      let events = 0;
      try {
        events = await replayer.advanceTo(live);
        const replaySeconds = (performance.now() - replayStarted) / 1000;
        const same = formatVector(replayer.cursor()) === formatVector(live) && replayer.stateHash() === liveHash;
        return {
          scenario: 'envelope',
          log: context.log,
          figures: [
            plain('pods/s end to end (first apply → all Running)', podsPerSecond, 'pods/s', ANCHOR),
            plain('CPU time of the process, first apply → all Running', cpuSeconds, 's'),
            plain(`RSS at ${pods} pods on ${nodes} nodes`, memory.rssMB, 'MB'),
            plain('of which anonymous (heap, native allocations)', memory.anon, 'MiB'),
            atMost('list of all pods, one unchunked GET', round(unchunkedSeconds, 2), 's', 30, ANCHOR),
            plain('size of that list (JSON)', unchunkedMB, 'MB'),
            plain('list of all pods in chunks of 500 (kubectl), whole walk', round(chunkedSeconds, 2), 's'),
            plain(`whole cluster at the halfway position (${objectsAtHalfway} objects)`, round(atSeconds, 2), 's'),
            plain(`replay of the resulting log (${events} events)`, round(events / replaySeconds), 'events/s'),
            plain('replay state hash equals the live one (1 = yes)', same ? 1 : 0, ''),
          ],
          setup: { nodes, deployments, replicas, pods, startupSeconds: round(startupSeconds, 1), listedItems: chunkedItems, chunks },
          notes: [
            'One process runs the log, projection, apiserver, every controller and the sim agent of all nodes (startCluster, runtime sim, no TLS, no proxy); 15 Deployments applied one after another, each once the previous one runs.',
            'Kubernetes measures its envelope with the control plane on its own machines and kubelets (or hollow nodes) elsewhere; here everything shares 2 cores.',
          ],
        };
      } finally {
        await replayer.close();
      }
    } finally {
      tracker.close();
      await bench.stop();
    }
  });
};
