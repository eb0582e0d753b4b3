/**
 * Micro-benchmark of `schedule`: decisions per second on 1,000 nodes, binding each pod
 * and counting it on its node (as the scheduler reconciler does) before the next one.
 * Not a test. Run: `npx tsx reconcilers/scheduler/bench.ts [pods] [nodes] [scenario substring]`.
 */
import { assumePod, buildNodeInfos, type ClusterLister, EMPTY_CLUSTER, type NodeInfo } from './framework.ts';
import { createRoundScheduler } from './round-scheduler.ts';
import type { Pod } from '../../schemas/index.ts';
import { createDefaultProfile } from './plugins/index.ts';
import { schedule } from './scheduler.ts';
import { antiAffinityToApp, makeNode, makePod } from './test-fixtures.ts';

const podCount = Number(process.argv[2] ?? 10_000);
const nodeCount = Number(process.argv[3] ?? 1_000);

const only = process.argv[4];

function run(label: string, pods: readonly Pod[]): void {
  if (only !== undefined && !label.includes(only)) return;
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

/**
 * The scheduler reconciler's path for a Deployment's replicas: one round scheduler per round
 * of 500 pods, each binding logged as a replaced entry, with kube's default spreading
 * (the pods' ReplicaSet gives the selector).
 */
function runRounds(label: string, pods: readonly Pod[], cluster: ClusterLister, roundSize = 500): void {
  if (only !== undefined && !label.includes(only)) return;
  const nodes = Array.from({ length: nodeCount }, (_, index) =>
    makeNode({ name: `node-${String(index).padStart(4, '0')}`, cpu: '32', memory: '128Gi', pods: '110', labels: { zone: `z${index % 3}` } }),
  );
  let nodeInfos: NodeInfo[] = buildNodeInfos(nodes, []);
  const indexByName = new Map(nodeInfos.map((nodeInfo, index) => [nodeInfo.node.metadata.name, index]));
  const profile = createDefaultProfile();
  let bound = 0;
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  for (let start = 0; start < pods.length; start += roundSize) {
    const schedule = createRoundScheduler(profile, cluster);
    const infos = [...nodeInfos];
    const changes: number[] = [];
    for (const pod of pods.slice(start, start + roundSize)) {
      const result = schedule(pod, infos, changes);
      if (result.type !== 'bound') continue;
      bound += 1;
      const index = indexByName.get(result.node) as number;
      infos[index] = assumePod(infos[index] as NodeInfo, { ...pod, spec: { ...pod.spec, nodeName: result.node } });
      changes.push(index);
    }
    nodeInfos = infos;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  console.log(
    `${label}: ${pods.length} pods on ${nodeCount} nodes in ${seconds.toFixed(2)} s → ` +
      `${Math.round(pods.length / seconds)} decisions/s (${((seconds / pods.length) * 1e6).toFixed(0)} µs each), ${bound} bound; ` +
      `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s`,
  );
}

const replicaSet = { kind: 'ReplicaSet', apiVersion: 'apps/v1', metadata: { name: 'web-abc', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } };
const replicaSetCluster: ClusterLister = {
  ...EMPTY_CLUSTER,
  get: (kind, namespace, name) => (kind === 'ReplicaSet' && namespace === 'default' && name === 'web-abc' ? replicaSet : undefined),
};
runRounds(
  'ReplicaSet replicas, default spreading, rounds of 500',
  Array.from({ length: podCount }, (_, index) =>
    makePod({
      name: `web-abc-${index}`,
      cpu: '100m',
      memory: '128Mi',
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'u-1', controller: true }],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    }),
  ),
  replicaSetCluster,
);
