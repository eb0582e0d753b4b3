/**
 * The walkthrough in distributed mode on Kafka: `logplane apiserver`, `logplane
 * controllers` and two `logplane agent`s as separate processes, each with its own data
 * directory and projection, on one cluster name no other test uses. Only node-1's agent
 * runs the service proxy. The CLI and kubectl use the kubeconfig the apiserver writes; the
 * controllers and the agents are given none: each calls the apiserver as its own identity
 * (`system:kube-controller-manager`, `system:node:<name>`), issued from the shared PKI
 * directory, and the agents fetch their pods' service-account tokens as their node.
 * Pods spread over both nodes, every replica answers on the ClusterIP, a killed pod
 * process restarts, scale and a new version roll out, and the history verbs (history,
 * get --at, why, audit, replay, debug reconcile) work against the apiserver's projection.
 * Each agent runs the cluster DNS on a free loopback port (not on the kube-dns ClusterIP,
 * which other tests' clusters on this machine may hold), answering from its own projection.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../cli/client.ts';
import type { AuditReply, HistoryReply, ReconcileReply, ReplayLine, WhyReply } from '../../cli/history/api.ts';
import type { Deployment, Node, Pod, Service } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import {
  answeringPods,
  cleanup,
  clusterClient,
  echoManifest,
  freePort,
  isServing,
  kubectl,
  listPods,
  logplane,
  ok,
  okJson,
  podProcesses,
  startLogplane,
  tempDir,
  uniqueClusterIP,
  waitFor,
  type Daemon,
} from './process.ts';

type ReplayResult = Extract<ReplayLine, { type: 'result' }>;

describe('the walkthrough in distributed mode (apiserver, controllers, two agents on Kafka)', { timeout: 180_000 }, () => {
  const root = tempDir('logplane-distributed-');
  const dirs = { apiserver: join(root, 'apiserver'), controllers: join(root, 'controllers'), node1: join(root, 'node-1'), node2: join(root, 'node-2') };
  const manifest = join(root, 'echo.yaml');
  const clusterIP = uniqueClusterIP();
  const cluster = `e2e-distributed-${randomUUID().slice(0, 8)}`;
  let daemons: { apiserver: Daemon; controllers: Daemon; node1: Daemon; node2: Daemon };
  let kubeconfig: string;
  let client: Client;
  let beforeRollout: number;
  let node2Dns: { host: string; port: number };

  const cli = (...args: string[]) => logplane(kubeconfig, args);
  const kube = (...args: string[]) => kubectl(kubeconfig, join(root, 'kube-cache'), args);
  const echoPods = (): Promise<Pod[]> => listPods(client, 'app=echo');
  const allPodProcesses = () => [...podProcesses(dirs.node1), ...podProcesses(dirs.node2)];
  const servingPods = (count: number, image: string) =>
    waitFor(
      `${count} serving ${image} pods and no other`,
      async () => {
        const pods = await echoPods();
        return pods.length === count && pods.every((p) => isServing(p) && p.spec.containers[0]?.image === image) && pods;
      },
      { timeoutMs: 60_000 },
    );

  beforeAll(async () => {
    const kafka = ['--kafka', kafkaBrokers().join(','), '--cluster', cluster];
    // The cluster CA the apiserver and the agents share (their log endpoints are HTTPS).
    const pki = ['--pki', join(root, 'pki')];
    const port = await freePort();
    // The apiserver first, as a node joins a running cluster: it publishes where it is in the PKI directory.
    const apiserver = startLogplane('apiserver', ['apiserver', ...kafka, ...pki, '--data', dirs.apiserver, '--port', String(port)]);
    const [, path] = await apiserver.waitForOutput(/\(kubeconfig (\S+)\)/, 90_000);
    daemons = {
      apiserver,
      controllers: startLogplane('controllers', ['controllers', ...kafka, ...pki, '--data', dirs.controllers]),
      node1: startLogplane('agent node-1', ['agent', '--node', 'node-1', '--proxy', 'userspace', '--no-dns-cluster-ip', ...kafka, ...pki, '--data', dirs.node1], { dataDir: dirs.node1 }),
      node2: startLogplane('agent node-2', ['agent', '--node', 'node-2', '--proxy', 'none', '--no-dns-cluster-ip', ...kafka, ...pki, '--data', dirs.node2], { dataDir: dirs.node2 }),
    };
    await daemons.controllers.waitForOutput(/^controllers scheduler, /m, 90_000);
    await daemons.node1.waitForOutput(/^agent for node-1 \(process runtime, proxy userspace\)/m, 90_000);
    const [, dnsHost, dnsPort] = await daemons.node2.waitForOutput(/^agent for node-2 \(process runtime, proxy none\); cluster DNS (\S+):(\d+) \(UDP and TCP\)/m, 90_000);
    node2Dns = { host: dnsHost!, port: Number(dnsPort) };
    kubeconfig = path!;
    client = clusterClient(kubeconfig);
    writeFileSync(manifest, echoManifest({ clusterIP }));
  });

  afterAll(() => cleanup());

  it('writes a kubeconfig in the apiserver data directory; both nodes register and become Ready', async () => {
    expect(kubeconfig).toBe(join(dirs.apiserver, 'kubeconfig'));
    await waitFor('node-1 and node-2 Ready', async () => {
      const nodes = (await client.get<{ items: Node[] }>('/api/v1/nodes')).items;
      const ready = nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.map((n) => n.metadata.name).sort().join(',') === 'node-1,node-2';
    });
    const table = ok(await kube('get', 'nodes'));
    expect(table).toMatch(/^node-1\s+Ready\s/m);
    expect(table).toMatch(/^node-2\s+Ready\s/m);
  });

  it('ships the default local-path StorageClass from the controllers process, as logplane up does', async () => {
    await waitFor('the local-path StorageClass', async () => (await client.get<{ items: { metadata: { name: string } }[] }>('/apis/storage.k8s.io/v1/storageclasses')).items.some((c) => c.metadata.name === 'local-path'));
    expect(ok(await kube('get', 'storageclass'))).toMatch(/^local-path \(default\)\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s/m);
  });

  it('schedules the echo pods over both nodes', async () => {
    expect(ok(await cli('apply', '-f', manifest))).toBe('deployment.apps/echo created\nservice/echo created\n');
    expect(ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '90s'))).toContain('deployment "echo" successfully rolled out');
    const pods = await servingPods(3, 'logplane/echo:1');
    expect(new Set(pods.map((p) => p.spec.nodeName))).toEqual(new Set(['node-1', 'node-2']));
    // Each agent runs the processes of its own node's pods.
    for (const [node, dir] of [['node-1', dirs.node1], ['node-2', dirs.node2]] as const) {
      const expected = pods.filter((p) => p.spec.nodeName === node).map((p) => p.metadata.name).sort();
      expect(podProcesses(dir).map((p) => p.podName).sort()).toEqual(expected);
    }
  });

  it('runs the controllers and each agent as its own identity, with its own kubeconfig, and each agent fetches its pods\' tokens as its node', async () => {
    const kubeconfigs = {
      'system:kube-controller-manager': join(dirs.controllers, 'controller-manager.kubeconfig'),
      'system:node:node-1': join(dirs.node1, 'kubelet-node-1.kubeconfig'),
      'system:node:node-2': join(dirs.node2, 'kubelet-node-2.kubeconfig'),
    };
    // Each is written at its component's first call to the apiserver: an agent's for its pods' first tokens.
    expect(ok(await kubectl(kubeconfigs['system:node:node-1'], join(root, 'kube-cache'), ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']))).toBe('system:node:node-1');
    expect((await kubectl(kubeconfigs['system:node:node-2'], join(root, 'kube-cache'), ['auth', 'can-i', 'get', 'nodes/node-1'])).stdout).toBe(
      "no - node 'node-2' cannot read 'node-1', only its own Node object\n",
    );
    expect(daemons.controllers.output().stdout).toContain(`calls the apiserver as system:kube-controller-manager (${kubeconfigs['system:kube-controller-manager']})`);
    // The apiserver's audit log: every pod's token was asked for by the pod's own node, and granted.
    const tokenRequests = readFileSync(join(dirs.apiserver, 'audit', 'audit.log'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { user: { username?: string }; objectRef?: { resource?: string; subresource?: string; name?: string }; responseStatus: { code: number } })
      .filter((event) => event.objectRef?.resource === 'serviceaccounts' && event.objectRef.subresource === 'token');
    expect(new Set(tokenRequests.map((event) => `${event.user.username ?? ''} ${event.responseStatus.code}`))).toEqual(new Set(['system:node:node-1 201', 'system:node:node-2 201']));
  });

  it('answers on the ClusterIP (proxied by node-1) from the replicas of both nodes', async () => {
    const service = okJson<Service>(await cli('get', 'svc', 'echo', '-o', 'json'));
    expect(service.spec.clusterIP).toBe(clusterIP);
    const names = (await echoPods()).map((p) => p.metadata.name);
    const answered = await answeringPods(clusterIP, 80, names);
    expect([...answered].sort()).toEqual([...names].sort());
  });

  it('dig @<node-2 agent DNS> echo.default.svc.cluster.local answers the ClusterIP', async () => {
    const { stdout } = await promisify(execFile)('dig', [`@${node2Dns.host}`, '-p', String(node2Dns.port), '+short', '+tries=1', '+time=5', 'echo.default.svc.cluster.local', 'A']);
    expect(stdout.trim()).toBe(clusterIP);
  });

  it('restarts a SIGKILLed pod process on node-2', async () => {
    const pod = (await echoPods()).find((p) => p.spec.nodeName === 'node-2')!;
    const name = pod.metadata.name;
    const [target] = podProcesses(dirs.node2).filter((p) => p.podName === name);
    expect(target).toBeDefined();
    process.kill(target!.pid, 'SIGKILL');
    await waitFor(`${name} to restart`, async () => {
      const current = await client.get<Pod>(`/api/v1/namespaces/default/pods/${name}`);
      return current.status?.containerStatuses?.[0]?.restartCount === 1 && isServing(current);
    });
    expect(okJson<Pod>(await cli('get', 'pod', name, '-o', 'json')).status?.containerStatuses?.[0]).toMatchObject({ restartCount: 1, ready: true });
    await answeringPods(clusterIP, 80, [name]);
  });

  it('scales to 4 and rolls out a new version', async () => {
    expect(ok(await cli('scale', 'deploy/echo', '--replicas', '4'))).toBe('deployment.apps/echo scaled\n');
    ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '60s'));
    await servingPods(4, 'logplane/echo:1');
    beforeRollout = Date.now();
    expect(ok(await kube('set', 'image', 'deploy/echo', 'echo=logplane/echo:2'))).toBe('deployment.apps/echo image updated\n');
    expect(ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '120s'))).toContain('deployment "echo" successfully rolled out');
    const pods = await servingPods(4, 'logplane/echo:2');
    expect(new Set(pods.map((p) => p.spec.nodeName))).toEqual(new Set(['node-1', 'node-2']));
    await answeringPods(clusterIP, 80, pods.map((p) => p.metadata.name));
    expect(allPodProcesses().map((p) => p.podName).sort()).toEqual(pods.map((p) => p.metadata.name).sort());
  });

  it('shows history and the Deployment before the rollout', async () => {
    const text = ok(await cli('history', 'deploy/echo'));
    expect(text).toContain('~ spec.replicas: 3 → 4');
    expect(text).toContain('~ spec.template.spec.containers[0].image: logplane/echo:1 → logplane/echo:2');
    const { versions } = okJson<HistoryReply>(await cli('history', 'deploy/echo', '-o', 'json'));
    const byAdmin = versions.filter((v) => v.actor.type === 'user' && v.actor.name === 'admin');
    expect(byAdmin.map((v) => (v.object as Deployment | null)?.spec.template.spec.containers[0]?.image)).toEqual([
      'logplane/echo:1',
      'logplane/echo:1',
      'logplane/echo:2',
    ]);
    const then = okJson<Deployment>(await cli('get', 'deploy', 'echo', '--at', new Date(beforeRollout).toISOString(), '-o', 'json'));
    expect(then.spec.replicas).toBe(4);
    expect(then.spec.template.spec.containers[0]?.image).toBe('logplane/echo:1');
  });

  it('explains pods (why), audits admin, and re-runs a binding decision (debug reconcile)', async () => {
    const pods = await echoPods();
    const whys = await Promise.all(pods.map(async (pod) => ({ pod, reply: okJson<WhyReply>(await cli('why', `pod/${pod.metadata.name}`, '-o', 'json')) })));
    const reachesAdmin = whys.filter(({ reply }) => reply.chains.some((c) => c.at(-1)?.event.actor.type === 'user' && c.at(-1)?.event.actor.name === 'admin'));
    expect(reachesAdmin.length, 'pods whose causation chain reaches a request of admin').toBeGreaterThan(0);
    const { pod, reply } = reachesAdmin[0]!;
    expect(ok(await cli('why', `pod/${pod.metadata.name}`))).toMatch(/^ +← Deployment default\/echo updated by user "admin"/m);

    const binding = reply.chains.flat().find((l) => l.event.eventType === 'PodBound' && l.event.key === `Pod/default/${pod.metadata.name}`)!;
    const replayed = okJson<ReconcileReply>(
      await cli('debug', 'reconcile', 'scheduler', `pod/${pod.metadata.name}`, '--at', binding.event.decidedAt!, '-o', 'json'),
    );
    expect(replayed.identical).toBe(true);
    expect(replayed.commands).toEqual(replayed.recorded);
    // The binding and its Scheduled Event, which Kafka keeps on another partition than the pod.
    expect(replayed.commands).toMatchObject([
      { type: 'PodBound', name: pod.metadata.name, node: pod.spec.nodeName, rationale: binding.rationale },
      { type: 'ObjectCreated', object: { kind: 'Event', reason: 'Scheduled', involvedObject: { kind: 'Pod', name: pod.metadata.name } } },
    ]);

    const { events } = okJson<AuditReply>(await cli('audit', '--user', 'admin', '-o', 'json'));
    expect(events.map((e) => `${e.eventType} ${e.key}`).sort()).toEqual([
      'ObjectCreated Deployment/default/echo',
      'ObjectCreated Service/default/echo',
      'ObjectUpdated Deployment/default/echo',
      'ObjectUpdated Deployment/default/echo',
    ]);
  });

  it('replays the Kafka log into the live state hash', async () => {
    const result = okJson<ReplayResult>(await cli('replay', '-o', 'json'));
    expect(result.events).toBeGreaterThan(50);
    expect(result.stateHash).toBe(result.liveStateHash);
    expect(ok(await cli('replay'))).toMatch(/live hash (\w+) \(equal\)/);
  });

  it('stops every component on SIGINT, leaving no pod process behind', async () => {
    expect(allPodProcesses()).toHaveLength(4);
    const stopped = await Promise.all([daemons.node1, daemons.node2, daemons.controllers].map((d) => d.stop({ timeoutMs: 60_000 })));
    expect(stopped.map((s) => s.code)).toEqual([0, 0, 0]);
    expect((await daemons.apiserver.stop({ timeoutMs: 30_000 })).code).toBe(0);
    expect(allPodProcesses()).toEqual([]);
  });
});
