/**
 * Micro-benchmark of `schedule`: decisions per second on 1,000 nodes, binding each pod
 * and counting it on its node (as the scheduler reconciler does) before the next one.
 * Not a test. Run: `npx tsx reconcilers/scheduler/bench.ts [pods] [nodes]`.
 */
import { assumePod, buildNodeInfos, type NodeInfo } from './framework.ts';
import type { Pod } from '../../schemas/index.ts';
import { createDefaultProfile } from './plugins/index.ts';
import { schedule } from './scheduler.ts';
import { antiAffinityToApp, makeNode, makePod } from './test-fixtures.ts';

const podCount = Number(process.argv[2] ?? 10_000);
const nodeCount = Number(process.argv[3] ?? 1_000);

function run(label: string, pods: readonly Pod[]): void {
  const nodes = Array.from({ length: nodeCount }, (_, index) =>
    makeNode({ name: `node-${String(index).padStart(4, '0')}`, cpu: '32', memory: '128Gi', pods: '110', labels: { zone: `z${index % 3}` } }),
  );
  let nodeInfos: NodeInfo[] = buildNodeInfos(nodes, []);
  const indexByName = new Map(nodeInfos.map((nodeInfo, index) => [nodeInfo.node.metadata.name, index]));
  const profile = createDefaultProfile();
  let bound = 0;
  const started = performance.now();
  for (const pod of pods) {
    const result = schedule(pod, nodeInfos, profile);
    if (result.type !== 'bound') continue;
    bound += 1;
    const index = indexByName.get(result.node) as number;
    nodeInfos = nodeInfos.slice();
    nodeInfos[index] = assumePod(nodeInfos[index] as NodeInfo, { ...pod, spec: { ...pod.spec, nodeName: result.node } });
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${label}: ${pods.length} pods on ${nodeCount} nodes in ${seconds.toFixed(2)} s → ` +
      `${Math.round(pods.length / seconds)} decisions/s (${((seconds / pods.length) * 1e6).toFixed(0)} µs each), ${bound} bound`,
  );
}

run(
  'no affinity',
  Array.from({ length: podCount }, (_, index) => makePod({ name: `pod-${index}`, cpu: '100m', memory: '128Mi' })),
);
run(
  'nodeSelector',
  Array.from({ length: podCount }, (_, index) =>
    makePod({ name: `pod-${index}`, cpu: '100m', memory: '128Mi', nodeSelector: { zone: `z${index % 3}` } }),
  ),
);
const antiAffinityPods = Math.min(podCount, 2_000);
run(
  'anti-affinity (one per node per app, 20 apps)',
  Array.from({ length: antiAffinityPods }, (_, index) =>
    makePod({
      name: `pod-${index}`,
      cpu: '100m',
      memory: '128Mi',
      labels: { app: `app-${index % 20}` },
      antiAffinity: [antiAffinityToApp(`app-${index % 20}`)],
    }),
  ),
);
