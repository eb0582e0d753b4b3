/**
 * The classic story of the Kubernetes architecture, in distributed mode on Kafka with the
 * process runtime: a ReplicationController of 1 replica is scaled to 2 with kubectl, the
 * node agent that runs one of its pods is killed (SIGKILL: the node goes silent), and the
 * node-lifecycle controller marks the node unreachable and evicts its pods, so the RC
 * recreates the pod on the node that is left. `logplane why` of the new pod names the RC
 * and the node-lifecycle controller. Short timings (`--heartbeat`, `--node-grace`,
 * `--toleration`) keep the story to seconds; the code path is the one of the defaults.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../cli/client.ts';
import type { Node, Pod } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { cleanup, clusterClient, freePort, kubectl, listPods, logplane, ok, startLogplane, tempDir, waitFor, type Daemon } from './process.ts';

const RC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: mysql
spec:
  replicas: 1
  selector:
    app: mysql
  template:
    metadata:
      labels:
        app: mysql
    spec:
      containers:
      - name: mysql
        image: logplane/sleeper
`;

describe('an RC of MySQL scaled to 2, a node dies, its pod is recreated on the other node (distributed, Kafka, process pods)', { timeout: 240_000 }, () => {
  const root = tempDir('logplane-rc-node-death-');
  const dirs = { apiserver: join(root, 'apiserver'), controllers: join(root, 'controllers'), node1: join(root, 'node-1'), node2: join(root, 'node-2') };
  const cluster = `e2e-rc-node-death-${randomUUID().slice(0, 8)}`;
  let daemons: { apiserver: Daemon; controllers: Daemon; node1: Daemon; node2: Daemon };
  let kubeconfig: string;
  let client: Client;
  let original: string[] = [];
  let dead: { node: 'node-1' | 'node-2'; pod: string; uid: string };

  const cli = (...args: string[]) => logplane(kubeconfig, args);
  const kube = (...args: string[]) => kubectl(kubeconfig, join(root, 'kube-cache'), args);
  const mysqlPods = (): Promise<Pod[]> => listPods(client, 'app=mysql');
  const running = (pods: readonly Pod[]) => pods.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);

  beforeAll(async () => {
    const kafka = ['--kafka', kafkaBrokers().join(','), '--cluster', cluster];
    const pki = ['--pki', join(root, 'pki')];
    const agent = (node: string, dir: string) =>
      startLogplane(`agent ${node}`, ['agent', '--node', node, '--proxy', 'none', '--no-dns-cluster-ip', '--heartbeat', '500', ...kafka, ...pki, '--data', dir], { dataDir: dir });
    // The apiserver first: the agents join it, calling it as their nodes for their pods' tokens.
    const apiserver = startLogplane('apiserver', ['apiserver', ...kafka, ...pki, '--data', dirs.apiserver, '--port', String(await freePort())]);
    const [, path] = await apiserver.waitForOutput(/\(kubeconfig (\S+)\)/, 90_000);
    daemons = {
      apiserver,
      controllers: startLogplane('controllers', ['controllers', ...kafka, ...pki, '--data', dirs.controllers, '--node-grace', '3', '--toleration', '2']),
      node1: agent('node-1', dirs.node1),
      node2: agent('node-2', dirs.node2),
    };
    await daemons.controllers.waitForOutput(/^controllers scheduler, /m, 90_000);
    await daemons.node1.waitForOutput(/^agent for node-1 /m, 90_000);
    await daemons.node2.waitForOutput(/^agent for node-2 /m, 90_000);
    kubeconfig = path!;
    client = clusterClient(kubeconfig);
    await waitFor('both nodes Ready', async () => {
      const nodes = (await client.get<{ items: Node[] }>('/api/v1/nodes')).items;
      return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 2;
    });
  });

  // The killed agent's pod processes outlive it, as a dead kubelet's containers do: cleanup kills them.
  afterAll(() => cleanup());

  it('creates the RC of 1 replica and scales it to 2 with kubectl', async () => {
    const file = join(root, 'rc.yaml');
    writeFileSync(file, RC);
    expect(ok(await kube('create', '-f', file))).toBe('replicationcontroller/mysql created\n');
    await waitFor('1 mysql pod Running', async () => running(await mysqlPods()).length === 1);
    expect(ok(await kube('scale', 'rc', 'mysql', '--replicas=2'))).toBe('replicationcontroller/mysql scaled\n');
    const pods = await waitFor('2 mysql pods Running', async () => {
      const now = running(await mysqlPods());
      return now.length === 2 && now;
    });
    original = pods.map((p) => p.metadata.uid!);
    const victim = pods.find((p) => p.spec.nodeName === 'node-2') ?? pods[0]!;
    dead = { node: victim.spec.nodeName as 'node-1' | 'node-2', pod: victim.metadata.name, uid: victim.metadata.uid! };
  });

  it('kills the agent of a node that runs one of its pods: the node goes NotReady and the pod runs again on the other node', async () => {
    const daemon = dead.node === 'node-1' ? daemons.node1 : daemons.node2;
    const survivor = dead.node === 'node-1' ? 'node-2' : 'node-1';
    process.kill(daemon.pid, 'SIGKILL');
    await daemon.exited;
    await waitFor(`${dead.node} not Ready`, async () => {
      const node = await client.get<Node>(`/api/v1/nodes/${dead.node}`);
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'Unknown') === true;
    });
    // The evicted pod is gone or Terminating (no kubelet confirms it stopped); the RC counts it
    // out and replaces it. (The replacement may take the freed name: the RC names pods by slot,
    // deterministically, so the pods are told apart by uid.)
    let last: Pod[] = [];
    const pods = await waitFor(
      `2 mysql pods Running on ${survivor}, ${dead.pod} (uid ${dead.uid}) evicted`,
      async () => {
        const all = (last = await mysqlPods());
        const now = running(all).filter((p) => p.spec.nodeName === survivor);
        return now.length === 2 && !now.some((p) => p.metadata.uid === dead.uid) && now;
      },
      { timeoutMs: 90_000, describe: () => JSON.stringify(last.map((p) => [p.metadata.name, p.metadata.uid, p.spec.nodeName, p.status?.phase, p.metadata.deletionTimestamp ?? null])) },
    );
    const table = ok(await kube('get', 'rc', 'mysql', '--no-headers'));
    expect(table).toMatch(/^mysql\s+2\s+2\s+2\s/);
    const replacement = pods.find((p) => !original.includes(p.metadata.uid!))!;
    expect(replacement, 'a pod the RC created after the node died').toBeDefined();
    const why = ok(await cli('why', `pod/${replacement.metadata.name}`));
    expect(why).toMatch(/replicationcontroller/);
    expect(why).toMatch(/node-lifecycle/);
    expect(why).toMatch(new RegExp(`ReplicationController default/mysql`));
  });
});
