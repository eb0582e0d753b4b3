/**
 * DefaultPreemption end to end with the real kubectl on `logplane up --runtime sim`, on both
 * logs (issue 23's acceptance): with every node full of priority-0 pods, a priority-1000 pod
 * preempts exactly the victims it needs on one node (each gets the DisruptionTarget
 * condition and a Preempted event, and is deleted gracefully), waits nominated to that node,
 * binds there once they are gone and runs; its binding's rationale (schema v9) names the
 * victims and the reason, and `logplane why` and the why API show them; a replay from offset 0
 * gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import type { ReconcileReply, WhyReply } from '../../cli/history/api.ts';
import type { Pod } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';
import { clusterClient, logplane, ok, okJson } from './process.ts';

const NODES = ['node-1', 'node-2'];
const LOW = ['low-1', 'low-2', 'low-3', 'low-4', 'low-5', 'low-6'];

const podManifest = (name: string, cpu: string, priority?: number): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
    app: ${priority === undefined ? 'filler' : 'urgent'}
spec:
${priority === undefined ? '' : `  priorityClassName: urgent-${priority}\n`}  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: logplane/sleeper
      resources:
        requests:
          cpu: ${cpu}
          memory: 64Mi
`;

describe.each(LOG_ADAPTERS)('preemption by a higher-priority pod, on the %s log', (adapter) => {
  const k = useKubectlCluster(adapter, `e2e-preempt-${adapter}`, { nodes: NODES.length, nodeCapacity: { cpu: '3', memory: '4Gi', pods: '110' } });
  const podOf = (name: string): Pod | undefined => k.cluster.projection.view().get(`Pod/default/${name}`) as Pod | undefined;

  it('fills every node with priority-0 pods', async () => {
    await k.expectOk('apply', '-f', k.file('low.yaml', LOW.map((name) => podManifest(name, '1')).join('---\n')));
    await k.waitUntil('six low pods Running', () => LOW.every((name) => podOf(name)?.status?.phase === 'Running'));
    const perNode = NODES.map((node) => LOW.filter((name) => podOf(name)?.spec.nodeName === node).length);
    expect(perNode).toEqual([3, 3]);
  }, 90_000);

  let victims: Pod[] = [];
  let chosen = '';

  it('a priority-1000 pod preempts exactly two pods of one node, binds there once they are gone, and runs', async () => {
    const before = new Map(LOW.map((name) => [name, podOf(name) as Pod]));
    // kube's Priority admission: a pod's priority comes from its PriorityClass.
    await k.expectOk('apply', '-f', k.file('urgent.yaml', 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: urgent-1000\nvalue: 1000\n'));
    await k.expectOk('apply', '-f', k.file('high.yaml', podManifest('high', '2', 1000)));
    await k.waitUntil('high Running', () => podOf('high')?.status?.phase === 'Running', 90_000);
    const high = podOf('high') as Pod;
    chosen = high.spec.nodeName ?? '';
    expect(NODES).toContain(chosen);
    // kube 1.32 keeps the nomination after binding (kubelet's status merge keeps what it does not own).
    expect(high.status?.nominatedNodeName).toBe(chosen);
    const shown = await k.expectOk('get', 'pod', 'high', '-o', 'jsonpath={.status.nominatedNodeName}');
    expect(shown.trim()).toBe(chosen);
    victims = LOW.filter((name) => podOf(name) === undefined).map((name) => before.get(name) as Pod);
    // 2 cpu on a node of 3 holding three 1-cpu pods: two must go, the third is reprieved.
    expect(victims.map((v) => v.spec.nodeName)).toEqual([chosen, chosen]);
    const survivors = LOW.filter((name) => podOf(name) !== undefined);
    expect(survivors).toHaveLength(4);
    for (const name of survivors) expect(podOf(name)?.status?.phase).toBe('Running');
  }, 120_000);

  it('records kube’s Preempted event on each victim and the preemption in the pod’s FailedScheduling event', async () => {
    const uid = podOf('high')?.metadata.uid ?? '';
    const events = JSON.parse(await k.expectOk('get', 'events', '-o', 'json')) as {
      items: { reason: string; message: string; involvedObject: { name: string } }[];
    };
    const preempted = events.items.filter((e) => e.reason === 'Preempted');
    expect(preempted.map((e) => [e.involvedObject.name, e.message]).sort()).toEqual(
      victims.map((v) => [v.metadata.name, `Preempted by pod ${uid} on node ${chosen}`]).sort(),
    );
    const failed = events.items.filter((e) => e.reason === 'FailedScheduling' && e.involvedObject.name === 'high').map((e) => e.message);
    const names = victims.map((v) => `default/${v.metadata.name}`).sort().join(', ');
    expect(failed).toContain(`0/2 nodes are available: 2 Insufficient cpu. preemption: nominated node ${chosen}, preempting 2 pod(s): ${names}.`);
    const scheduled = events.items.filter((e) => e.reason === 'Scheduled' && e.involvedObject.name === 'high').map((e) => e.message);
    expect(scheduled).toEqual([`Successfully assigned default/high to ${chosen}`]);
  }, 60_000);

  it('logplane why of the preemptor names the node it was nominated to and the victims', async () => {
    const text = ok(await logplane(k.cluster.kubeconfig, ['why', 'pod/high']));
    const names = victims.map((v) => `default/${v.metadata.name}`).sort().join(', ');
    expect(text).toContain(`updated by controller "scheduler": 0/2 nodes are available: 2 Insufficient cpu. preemption: nominated node ${chosen}, preempting 2 pod(s): ${names}.`);
    expect(text).toContain(`bound to node "${chosen}" by controller "scheduler"`);
  }, 60_000);

  it('the binding’s rationale names the victims (uid, priority) and the reason, and why shows them from it', async () => {
    const why = await clusterClient(k.cluster.kubeconfig).get<WhyReply>('/logplane/v1/why/Pod/default/high');
    const binding = why.chains.flat().find((link) => link.event.eventType === 'PodBound' && link.event.key === 'Pod/default/high');
    const preemption = binding?.rationale?.preemption;
    expect(preemption?.nominatedNode).toBe(chosen);
    expect(preemption?.reason).toBe('0/2 nodes are available: 2 Insufficient cpu.');
    const expected = victims.map((v) => ({ namespace: 'default', name: v.metadata.name, uid: v.metadata.uid ?? null, priority: 0 }));
    const byName = (left: { name: string }, right: { name: string }): number => left.name.localeCompare(right.name);
    expect([...(preemption?.victims ?? [])].sort(byName)).toEqual(expected.sort(byName));
    // The CLI prints the victims in the order the rationale holds them.
    const text = ok(await logplane(k.cluster.kubeconfig, ['why', 'pod/high']));
    const listed = (preemption?.victims ?? []).map((v) => `${v.namespace}/${v.name} (priority 0, uid ${v.uid})`).join(', ');
    expect(text).toContain(`preempted 2 pods on node "${chosen}": ${listed}; because 0/2 nodes are available: 2 Insufficient cpu.`);
    // Re-run on the view it read, the binding decision gives the same PodBound, its preemption included.
    const at = binding?.event.decidedAt ?? '';
    const reply = okJson<ReconcileReply>(await logplane(k.cluster.kubeconfig, ['debug', 'reconcile', 'scheduler', 'pod/high', '--at', at, '-o', 'json']));
    expect(reply.identical).toBe(true);
    expect(reply.commands[0]).toMatchObject({ type: 'PodBound', name: 'high', node: chosen, rationale: { preemption } });
  }, 60_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(k.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
