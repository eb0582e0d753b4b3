/**
 * The README walkthrough, non-interactively, with the real commands as child processes:
 * `logplane up` (3 process-runtime nodes), apply the echo Deployment and Service, rollout
 * status, every replica answering on the ClusterIP, a SIGKILLed pod process restarted,
 * scale, a new version rolled out with kubectl, then the history verbs (`history`,
 * `get --at`, `why`, `audit`, `replay`) and Ctrl-C leaving no pod process behind.
 *
 * The Service gets a ClusterIP of its own (the one change to examples/echo.yaml): test
 * files run in parallel, and every cluster's proxy listens on the same loopback range.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditReply, HistoryReply, ReplayLine, WhyReply } from '../../cli/history/api.ts';
import type { Client } from '../../cli/client.ts';
import type { Deployment, Node, Pod, Service } from '../../schemas/index.ts';
import {
  answeringPods,
  cleanup,
  clusterClient,
  echoManifest,
  freePort,
  httpGet,
  isServing,
  kubectl,
  listPods,
  logplane,
  ok,
  okJson,
  podProcesses,
  processAlive,
  startLogplane,
  tempDir,
  uniqueClusterIP,
  waitFor,
  type Daemon,
} from './process.ts';

type ReplayResult = Extract<ReplayLine, { type: 'result' }>;

describe('the README walkthrough on `logplane up`', { timeout: 180_000 }, () => {
  const dataDir = tempDir('logplane-walkthrough-');
  const manifest = join(dataDir, 'echo.yaml');
  const clusterIP = uniqueClusterIP();
  let up: Daemon;
  let kubeconfig: string;
  let client: Client;
  /** A moment after the scale and before the new version. */
  let beforeRollout: number;

  const cli = (...args: string[]) => logplane(kubeconfig, args);
  const kube = (...args: string[]) => kubectl(kubeconfig, join(dataDir, 'kube-cache'), args);
  const echoPods = async (): Promise<Pod[]> => listPods(client, 'app=echo');

  beforeAll(async () => {
    const port = await freePort();
    up = startLogplane('logplane up', ['up', '--data', dataDir, '--port', String(port), '--nodes', '3', '--runtime', 'process'], { dataDir });
    const [, path] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
    kubeconfig = path!;
    client = clusterClient(kubeconfig);
    writeFileSync(manifest, echoManifest({ clusterIP }));
  });

  afterAll(() => cleanup());

  it('prints how to use the cluster, whose three nodes become Ready', async () => {
    const { stdout } = up.output();
    expect(kubeconfig).toBe(join(dataDir, 'kubeconfig'));
    expect(stdout).toContain('logplane is up: apiserver https://127.0.0.1:');
    expect(stdout).toContain('kubectl get nodes');
    expect(stdout).toMatch(/Admin token: \w+/);
    await waitFor('three Ready nodes', async () => {
      const nodes = (await client.get<{ items: Node[] }>('/api/v1/nodes')).items;
      return nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 3;
    });
    const table = ok(await kube('get', 'nodes'));
    for (const node of ['node-1', 'node-2', 'node-3']) expect(table).toMatch(new RegExp(`^${node}\\s+Ready\\s`, 'm'));
  });

  it('applies the echo Deployment and Service and rolls them out', async () => {
    expect(ok(await cli('apply', '-f', manifest))).toBe('deployment.apps/echo created\nservice/echo created\n');
    expect(ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '90s'))).toContain('deployment "echo" successfully rolled out');
    const pods = await waitFor('3 serving echo pods', async () => {
      const all = await echoPods();
      return all.length === 3 && all.every(isServing) && all;
    });
    expect(new Set(pods.map((p) => p.spec.nodeName)).size).toBeGreaterThan(1);
  });

  it('answers on the ClusterIP from every replica', async () => {
    const service = okJson<Service>(await cli('get', 'svc', 'echo', '-o', 'json'));
    expect(service.spec.clusterIP).toBe(clusterIP);
    const port = service.spec.ports?.[0]?.port ?? 0;
    expect(port).toBe(80);
    const names = (okJson<{ items: Pod[] }>(await cli('get', 'pods', '-l', 'app=echo', '-o', 'json'))).items.map((p) => p.metadata.name);
    expect(names).toHaveLength(3);
    const answered = await answeringPods(clusterIP, port, names);
    expect([...answered].sort()).toEqual([...names].sort());
  });

  it('restarts a pod whose process is SIGKILLed', async () => {
    const [pod] = await echoPods();
    const name = pod!.metadata.name;
    const processes = podProcesses(dataDir).filter((p) => p.podName === name);
    expect(processes).toHaveLength(1);
    const killed = processes[0]!.pid;
    process.kill(killed, 'SIGKILL');
    await waitFor(`${name} to restart`, async () => {
      const current = await client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`);
      return current.status?.containerStatuses?.[0]?.restartCount === 1 && isServing(current);
    });
    const restarted = okJson<Pod>(await cli('get', 'pod', name, '-o', 'json'));
    expect(restarted.status?.containerStatuses?.[0]).toMatchObject({ restartCount: 1, ready: true });
    expect(ok(await cli('get', 'pods'))).toMatch(new RegExp(`^${name}\\s+1/1\\s+Running\\s+1 \\(\\d+s ago\\)`, 'm'));
    const replacement = podProcesses(dataDir).filter((p) => p.podName === name);
    expect(replacement).toHaveLength(1);
    expect(replacement[0]!.pid).not.toBe(killed);
    expect(processAlive(killed)).toBe(false);
  });

  it('scales to 4 replicas', async () => {
    expect(ok(await cli('scale', 'deploy/echo', '--replicas', '4'))).toBe('deployment.apps/echo scaled\n');
    ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '60s'));
    const pods = await waitFor('4 serving echo pods', async () => {
      const all = await echoPods();
      return all.length === 4 && all.every(isServing) && all;
    });
    await answeringPods(clusterIP, 80, pods.map((p) => p.metadata.name));
    beforeRollout = Date.now();
  });

  it('rolls out a new version with kubectl set image', async () => {
    expect(ok(await kube('set', 'image', 'deploy/echo', 'echo=logplane/echo:2'))).toBe('deployment.apps/echo image updated\n');
    expect(ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '120s'))).toContain('deployment "echo" successfully rolled out');
    const pods = await waitFor('4 serving echo:2 pods and no other', async () => {
      const all = await echoPods();
      return all.length === 4 && all.every((p) => isServing(p) && p.spec.containers[0]?.image === 'logplane/echo:2') && all;
    });
    await answeringPods(clusterIP, 80, pods.map((p) => p.metadata.name));
    expect(podProcesses(dataDir).map((p) => p.podName).sort()).toEqual(pods.map((p) => p.metadata.name).sort());
  });

  it('shows the history of the Deployment with both templates', async () => {
    const text = ok(await cli('history', 'deploy/echo'));
    expect(text).toMatch(/^POSITION\s+TIME\s+ACTOR\s+EVENT\s+VERDICT$/m);
    expect(text).toMatch(/^\d+\.\d+\s+\S+\s+user:admin\s+ObjectCreated\s+accepted$/m);
    expect(text).toContain('+ spec.template.spec.containers[0].image: logplane/echo:1');
    expect(text).toContain('~ spec.replicas: 3 → 4');
    expect(text).toContain('~ spec.template.spec.containers[0].image: logplane/echo:1 → logplane/echo:2');
    const { versions } = okJson<HistoryReply>(await cli('history', 'deploy/echo', '-o', 'json'));
    const byAdmin = versions.filter((v) => v.actor.type === 'user' && v.actor.name === 'admin');
    expect(byAdmin.map((v) => v.eventType)).toEqual(['ObjectCreated', 'ObjectUpdated', 'ObjectUpdated']);
    const images = byAdmin.map((v) => (v.object as Deployment | null)?.spec.template.spec.containers[0]?.image);
    expect(images).toEqual(['logplane/echo:1', 'logplane/echo:1', 'logplane/echo:2']);
  });

  it('gets the Deployment as it was before the rollout (get --at)', async () => {
    const at = new Date(beforeRollout).toISOString();
    const then = okJson<Deployment>(await cli('get', 'deploy', 'echo', '--at', at, '-o', 'json'));
    expect(then.kind).toBe('Deployment');
    expect(then.spec.replicas).toBe(4);
    expect(then.spec.template.spec.containers[0]?.image).toBe('logplane/echo:1');
    const now = okJson<Deployment>(await cli('get', 'deploy', 'echo', '-o', 'json'));
    expect(now.spec.template.spec.containers[0]?.image).toBe('logplane/echo:2');
  });

  it('explains a pod back to the request of user "admin" (why)', async () => {
    // A pod of the rollout's first step was created because admin changed the Deployment;
    // later steps were woken by pods becoming ready, so their chains end at a node's report.
    const pods = await echoPods();
    const whys = await Promise.all(pods.map(async (pod) => ({ pod, reply: okJson<WhyReply>(await cli('why', `pod/${pod.metadata.name}`, '-o', 'json')) })));
    const endsAtAdmin = (chain: WhyReply['chains'][number]): boolean => chain.at(-1)?.event.actor.type === 'user' && chain.at(-1)?.event.actor.name === 'admin';
    for (const { reply } of whys) {
      for (const chain of reply.chains) expect(chain.at(-1)?.event.causationId ?? null, 'every chain ends at a root event').toBeNull();
    }
    const traced = whys.find(({ reply }) => reply.chains.some(endsAtAdmin));
    expect(traced, 'a pod whose causation chain reaches a request of admin').toBeDefined();
    const { pod, reply } = traced!;
    const toAdmin = reply.chains.find(endsAtAdmin)!;
    expect(toAdmin.map((link) => `${link.event.actor.type}:${link.event.actor.name}`)).toEqual(
      expect.arrayContaining(['controller:replicaset', 'controller:deployment', 'user:admin']),
    );
    const binding = reply.chains.flat().find((link) => link.event.eventType === 'PodBound' && link.event.key === `Pod/default/${pod.metadata.name}`);
    expect(binding?.event.actor).toEqual({ type: 'controller', name: 'scheduler' });
    expect(binding?.event.decidedAt).toMatch(/^\d+\.\d+$/);
    expect(binding?.rationale?.scores.map((s) => s.node).sort()).toEqual(['node-1', 'node-2', 'node-3']);

    const name = pod.metadata.name;
    const text = ok(await cli('why', `pod/${name}`));
    expect(text.split('\n')[0]).toBe(`Pod default/${name} Running`);
    expect(text).toContain(`bound to node "${pod.spec.nodeName}" by controller "scheduler" (score `);
    expect(text).toContain('created by controller "replicaset"');
    expect(text).toMatch(/^ +← Deployment default\/echo updated by user "admin"/m);
  });

  it("audits admin's changes", async () => {
    const text = ok(await cli('audit', '--user', 'admin'));
    expect(text).toMatch(/^POSITION\s+TIME\s+ACTOR\s+EVENT\s+OBJECT\s+VERDICT$/m);
    expect(text).toMatch(/user:admin\s+ObjectCreated\s+Deployment\/default\/echo\s+accepted/);
    expect(text).toMatch(/user:admin\s+ObjectCreated\s+Service\/default\/echo\s+accepted/);
    const { events } = okJson<AuditReply>(await cli('audit', '--user', 'admin', '-o', 'json'));
    expect(events.every((e) => e.actor.type === 'user' && e.actor.name === 'admin')).toBe(true);
    // Newest first: the new version, the scale, then the two creations.
    expect(events.map((e) => `${e.eventType} ${e.key}`)).toEqual([
      'ObjectUpdated Deployment/default/echo',
      'ObjectUpdated Deployment/default/echo',
      expect.stringMatching(/^ObjectCreated (Deployment|Service)\/default\/echo$/),
      expect.stringMatching(/^ObjectCreated (Deployment|Service)\/default\/echo$/),
    ]);
  });

  it('replays the log into the same state hash', async () => {
    const text = await cli('replay');
    expect(ok(text)).toMatch(/^replayed \d+ events in [\d.]+ s \(\d+ events\/s\); state hash (\w+); live hash \1 \(equal\)$/m);
    const result = okJson<ReplayResult>(await cli('replay', '-o', 'json'));
    expect(result.events).toBeGreaterThan(50);
    expect(result.stateHash).toBe(result.liveStateHash);
  });

  it('stops on SIGINT and leaves no pod process behind', async () => {
    expect(podProcesses(dataDir)).toHaveLength(4);
    const stopped = await up.stop({ signal: 'SIGINT', timeoutMs: 60_000 });
    expect(stopped.code).toBe(0);
    expect(podProcesses(dataDir)).toEqual([]);
    expect(await httpGet(clusterIP, 80, '/', 500)).toBeUndefined();
  });
});
