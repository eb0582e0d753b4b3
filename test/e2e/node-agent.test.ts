/**
 * Acceptance of the node agent (issue 5) on a whole one-process cluster (`startCluster`),
 * on both logs: echo replicas behind a ClusterIP (userspace proxy), restart after SIGKILL,
 * crash-loop backoff, restartPolicy Never replaced by its ReplicaSet, readiness gating
 * the Endpoints and the forwarding, graceful deletion (SIGTERM, then SIGKILL after the
 * grace period), and 1,000 sim nodes registering and heartbeating from one agent.
 *
 * Every echo Deployment listens on its own random port and every Service gets a random
 * ClusterIP, so clusters of other test files running at the same time never collide.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, map, mergeMap, scan, timeout } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAndWait, type View } from '../../projections/index.ts';
import { decodeEvent, type Endpoints, type Node, type Pod, type ReplicaSet, type Service } from '../../schemas/index.ts';
import {
  containerPid,
  httpRequest,
  isPodReady,
  LOG_ADAPTERS,
  podsOfApp,
  pollUntil,
  processAlive,
  recordChanges,
  startTestCluster,
  waitForView,
  type TestCluster,
} from './helpers.ts';

const PODS = '/api/v1/namespaces/default/pods';
const SERVICES = '/api/v1/namespaces/default/services';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const REPLICASETS = '/apis/apps/v1/namespaces/default/replicasets';
const SERVICE_PORT = 8080;

/** A ClusterIP in the default service CIDR, away from the sequentially allocated low addresses. */
const randomClusterIP = (): string => `127.96.${randomInt(100, 255)}.${randomInt(1, 255)}`;

const echoDeployment = (name: string, replicas: number, port: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          {
            name: 'echo',
            image: 'logplane/echo',
            env: [{ name: 'PORT', value: String(port) }],
            ports: [{ name: 'http', containerPort: port }],
            // One probe "second" is 100 ms here: probe every 100 ms, allow 1 s per answer.
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, timeoutSeconds: 10, failureThreshold: 2 },
          },
        ],
      },
    },
  },
});

const echoService = (name: string, clusterIP: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { clusterIP, selector: { app: name }, ports: [{ name: 'http', port: SERVICE_PORT, targetPort: 'http' }] },
});

const endpointsOf = (view: View, name: string): Endpoints | undefined => view.get(`Endpoints/default/${name}`) as Endpoints | undefined;
const readyIPs = (endpoints: Endpoints | undefined): string[] => (endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
const notReadyIPs = (endpoints: Endpoints | undefined): string[] =>
  (endpoints?.subsets ?? []).flatMap((s) => (s.notReadyAddresses ?? []).map((a) => a.ip));
const firstContainer = (pod: Pod | undefined) => pod?.status?.containerStatuses?.[0];

/** An echo Deployment behind a Service, all replicas ready and programmed into the proxy. */
interface EchoApp {
  readonly name: string;
  readonly clusterIP: string;
  readonly port: number;
  readonly pods: readonly Pod[];
}

describe.each(LOG_ADAPTERS)('node agent end to end on the %s log', (adapter) => {
  let harness: TestCluster;
  /** Where pods write the files the tests read: pods run as `nobody`, the cluster's directory is its own (0700). */
  let podFiles: string;

  beforeAll(async () => {
    podFiles = mkdtempSync(join(tmpdir(), 'e2e-agent-pod-files-'));
    chmodSync(podFiles, 0o777);
    harness = await startTestCluster(adapter, 'e2e-agent', { crashLoop: { initialMs: 200, maxMs: 2000 }, probeSecondMs: 100 });
  });

  afterAll(async () => {
    await harness?.stop();
    rmSync(podFiles, { recursive: true, force: true });
  });

  const view = (): View => harness.cluster.projection.view();

  const deployEcho = async (name: string, replicas: number): Promise<EchoApp> => {
    const port = randomInt(20_000, 30_000);
    await harness.api.create(DEPLOYMENTS, echoDeployment(name, replicas, port));
    const service = (await harness.api.create(SERVICES, echoService(name, randomClusterIP()))) as Service;
    const clusterIP = service.spec?.clusterIP ?? '';
    const pods = await waitForView(
      harness.cluster.projection,
      `${replicas} ready ${name} pods in the Endpoints`,
      (v) => {
        const running = podsOfApp(v, name);
        const ips = readyIPs(endpointsOf(v, name));
        return running.length === replicas && running.every((p) => isPodReady(p) && ips.includes(p.status?.podIP ?? '')) && ips.length === replicas
          ? running
          : undefined;
      },
      { describe: (v) => ({ pods: podsOfApp(v, name).map((p) => p.status), endpoints: endpointsOf(v, name) }) },
    );
    await harness.cluster.proxy?.settled();
    return { name, clusterIP, port, pods };
  };

  /** The pod name the Service answers one request with (a new connection each time). */
  const askService = async (app: EchoApp): Promise<string> => {
    const answer = await httpRequest(app.clusterIP, SERVICE_PORT, '/');
    expect(answer.status).toBe(200);
    return answer.body.trim();
  };

  const askServiceTimes = async (app: EchoApp, times: number): Promise<string[]> => {
    const names: string[] = [];
    for (let i = 0; i < times; i++) names.push(await askService(app));
    return names;
  };

  it('answers through the ClusterIP from every replica of an echo Deployment', async () => {
    const app = await deployEcho('echo-rr', 3);
    expect(app.clusterIP).toMatch(/^127\.96\./);
    const answered = await askServiceTimes(app, 12);
    expect(new Set(answered)).toEqual(new Set(app.pods.map((p) => p.metadata.name)));
  });

  it('restarts an echo pod whose process was SIGKILLed, and the Service answers from it again', async () => {
    const app = await deployEcho('echo-kill', 2);
    const victim = app.pods[0]!;
    const pid = containerPid(victim);
    process.kill(pid, 'SIGKILL');

    const restarted = await waitForView(
      harness.cluster.projection,
      `${victim.metadata.name} restarted and ready again`,
      (v) => {
        const pod = v.get(`Pod/default/${victim.metadata.name}`) as Pod | undefined;
        return pod !== undefined &&
          pod.metadata.uid === victim.metadata.uid &&
          firstContainer(pod)?.restartCount === 1 &&
          isPodReady(pod) &&
          readyIPs(endpointsOf(v, app.name)).includes(pod.status?.podIP ?? '')
          ? pod
          : undefined;
      },
      { describe: (v) => (v.get(`Pod/default/${victim.metadata.name}`) as Pod | undefined)?.status },
    );
    expect(firstContainer(restarted)?.lastState?.terminated).toMatchObject({ exitCode: 137, signal: 9 });
    expect(containerPid(restarted)).not.toBe(pid);
    expect(processAlive(pid)).toBe(false);
    expect(restarted.status?.podIP).toBe(victim.status?.podIP);

    await harness.cluster.proxy?.settled();
    const answered = await pollUntil(`an answer from ${victim.metadata.name} through the Service`, async () => {
      const names = await askServiceTimes(app, 2);
      return names.includes(victim.metadata.name) ? names : undefined;
    }, { timeoutMs: 10_000 });
    expect(new Set(answered)).toEqual(new Set(app.pods.map((p) => p.metadata.name)));
  });

  it('backs a crash-looping pod off with growing delays between restarts (CrashLoopBackOff)', async () => {
    const name = 'crash-loop';
    const key = `Pod/default/${name}`;
    const [observedFrom] = await harness.cluster.log.endOffsets('observed');
    await harness.api.create(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        restartPolicy: 'Always',
        containers: [{ name: 'crash', image: 'logplane/crasher', env: [{ name: 'EXIT_CODE', value: '3' }, { name: 'EXIT_AFTER_MS', value: '50' }] }],
      },
    });
    await waitForView(harness.cluster.projection, `${name} restarted 5 times`, (v) => (firstContainer(v.get(key) as Pod)?.restartCount ?? 0) >= 5, {
      describe: (v) => (v.get(key) as Pod | undefined)?.status,
    });

    // The status changes the agent reported, timed by their events (the log has one partition).
    const statuses = (await harness.cluster.log.read('observed', 0, observedFrom ?? 0))
      .map((record) => decodeEvent(record.value))
      .flatMap((event) => (event.body.type === 'PodStatusChanged' && event.body.name === name ? [{ at: event.time, status: event.body.status.containerStatuses?.[0] }] : []));
    /** When each restart count was first seen, and when the container first waited in CrashLoopBackOff at that count. */
    const restartedAt = new Map<number, number>();
    const backingOffAt = new Map<number, number>();
    const backOffMessages: string[] = [];
    for (const { at, status } of statuses) {
      if (!status) continue;
      if (!restartedAt.has(status.restartCount)) restartedAt.set(status.restartCount, at);
      if (status.state?.waiting?.reason === 'CrashLoopBackOff' && !backingOffAt.has(status.restartCount)) {
        backingOffAt.set(status.restartCount, at);
        backOffMessages.push(status.state.waiting.message ?? '');
      }
    }
    // The first restart is immediate; then exit k waits 200·2^(k-1) ms in CrashLoopBackOff before restart k+1.
    const backOffs = [1, 2, 3, 4].map((count) => {
      const from = backingOffAt.get(count);
      const to = restartedAt.get(count + 1);
      if (from === undefined || to === undefined) throw new Error(`no CrashLoopBackOff → restart ${count + 1} in ${JSON.stringify(statuses)}`);
      return to - from;
    });
    const described = `measured back-offs ${backOffs.join(', ')} ms`;
    for (let i = 1; i < backOffs.length; i++) expect(backOffs[i], described).toBeGreaterThan(backOffs[i - 1]!);
    backOffs.forEach((backOff, i) => expect(backOff, described).toBeGreaterThanOrEqual(200 * 2 ** i * 0.9));
    expect(backOffs[3], described).toBeLessThan(1600 + 1000);
    expect(backOffMessages.slice(0, 4).map((m) => /^back-off (\S+) restarting failed container=crash /.exec(m)?.[1])).toEqual(['200ms', '400ms', '800ms', '1.6s']);
    const last = firstContainer(view().get(key) as Pod);
    expect(last?.lastState?.terminated).toMatchObject({ exitCode: 3 });

    expect((await harness.api.request('DELETE', `${PODS}/${name}`)).status).toBe(200);
    await waitForView(harness.cluster.projection, `${name} deleted`, (v) => v.get(key) === undefined);
  });

  it('fails a crashed restartPolicy Never pod, and its ReplicaSet replaces it', async () => {
    const app = 'crash-never';
    const crasherKey = `Pod/default/${app}`;
    const recorder = recordChanges(harness.cluster.projection, (change) => change.key.startsWith('Pod/default/') && (change.object as Pod).metadata.labels?.['app'] === app);
    try {
      // A bare pod first; the ReplicaSet created next adopts it (it matches the selector) instead of creating one.
      await harness.api.create(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: app, labels: { app } },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'crash', image: 'logplane/crasher', env: [{ name: 'EXIT_CODE', value: '4' }, { name: 'EXIT_AFTER_MS', value: '3000' }] }],
        },
      });
      const rs = (await harness.api.create(REPLICASETS, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: app },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app } },
          template: {
            metadata: { labels: { app } },
            spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'sleep', image: 'logplane/sleeper' }] },
          },
        },
      })) as ReplicaSet;
      const rsUid = rs.metadata.uid;
      const controlledBy = (pod: Pod): boolean => pod.metadata.ownerReferences?.some((o) => o.controller && o.uid === rsUid) ?? false;

      const adopted = await waitForView(harness.cluster.projection, `${app} adopted by its ReplicaSet`, (v) => {
        const pod = v.get(crasherKey) as Pod | undefined;
        return pod && controlledBy(pod) ? pod : undefined;
      });
      expect(adopted.status?.phase, 'the crasher was adopted before it exited').not.toBe('Failed');

      const replacement = await waitForView(
        harness.cluster.projection,
        `a running replacement of ${app}`,
        (v) => podsOfApp(v, app).find((p) => p.metadata.name !== app && controlledBy(p) && p.status?.phase === 'Running'),
        { describe: (v) => podsOfApp(v, app).map((p) => ({ name: p.metadata.name, status: p.status })) },
      );

      const crasherChanges = recorder.changes.filter(({ change }) => change.key === crasherKey);
      const failedAt = crasherChanges.findIndex(({ change }) => change.type !== 'DELETED' && (change.object as Pod).status?.phase === 'Failed');
      expect(failedAt, 'the crasher was reported Failed').toBeGreaterThanOrEqual(0);
      const failed = crasherChanges[failedAt]!.change.object as Pod;
      expect(firstContainer(failed)).toMatchObject({ restartCount: 0, state: { terminated: { exitCode: 4, reason: 'Error' } } });
      const replacementAdded = recorder.changes.findIndex(({ change }) => change.key === `Pod/default/${replacement.metadata.name}` && change.type === 'ADDED');
      expect(replacementAdded, 'the replacement was created after the crasher failed').toBeGreaterThan(recorder.changes.indexOf(crasherChanges[failedAt]!));
      expect(podsOfApp(view(), app).filter((p) => p.status?.phase !== 'Failed')).toHaveLength(1);
    } finally {
      recorder.stop();
    }

    expect((await harness.api.request('DELETE', `${REPLICASETS}/${app}`)).status).toBe(200);
    await waitForView(harness.cluster.projection, `the pods of ${app} deleted`, (v) => (v.list('Pod', 'default') as Pod[]).every((p) => p.metadata.labels?.['app'] !== app), {
      describe: (v) =>
        (v.list('Pod', 'default') as Pod[])
          .filter((p) => p.metadata.labels?.['app'] === app)
          .map((p) => ({ name: p.metadata.name, deletionTimestamp: p.metadata.deletionTimestamp, status: p.status })),
    });
  });

  it('takes an unready pod out of the Endpoints and the forwarding, and back when it is ready again', async () => {
    const app = await deployEcho('echo-ready', 3);
    const victim = app.pods[0]!;
    const victimName = victim.metadata.name;
    const victimIP = victim.status?.podIP ?? '';
    const others = new Set(app.pods.filter((p) => p !== victim).map((p) => p.metadata.name));

    expect((await httpRequest(victimIP, app.port, '/fail-readiness', 'POST')).status).toBe(200);
    await waitForView(
      harness.cluster.projection,
      `${victimName} in notReadyAddresses only`,
      (v) => {
        const endpoints = endpointsOf(v, app.name);
        return notReadyIPs(endpoints).includes(victimIP) && !readyIPs(endpoints).includes(victimIP) && !isPodReady(v.get(`Pod/default/${victimName}`) as Pod);
      },
      { describe: (v) => endpointsOf(v, app.name) },
    );
    await harness.cluster.proxy?.settled();
    const whileUnready = await askServiceTimes(app, 12);
    expect(whileUnready).not.toContain(victimName);
    expect(new Set(whileUnready)).toEqual(others);

    expect((await httpRequest(victimIP, app.port, '/pass-readiness', 'POST')).status).toBe(200);
    await waitForView(
      harness.cluster.projection,
      `${victimName} back in the ready addresses`,
      (v) => {
        const endpoints = endpointsOf(v, app.name);
        return readyIPs(endpoints).includes(victimIP) && !notReadyIPs(endpoints).includes(victimIP);
      },
      { describe: (v) => endpointsOf(v, app.name) },
    );
    await harness.cluster.proxy?.settled();
    const afterReady = await askServiceTimes(app, 9);
    expect(new Set(afterReady)).toEqual(new Set(app.pods.map((p) => p.metadata.name)));
  });

  describe('deleting a pod', () => {
    const startSleeper = async (name: string, env: Record<string, string>, grace: number): Promise<{ pod: Pod; pid: number; signalLog: string }> => {
      const signalLog = join(podFiles, `${name}.signals`);
      const readyFile = join(podFiles, `${name}.ready`);
      await harness.api.create(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          terminationGracePeriodSeconds: grace,
          containers: [
            {
              name: 'sleep',
              image: 'logplane/sleeper',
              env: Object.entries({ SIGNAL_LOG: signalLog, READY_FILE: readyFile, ...env }).map(([n, value]) => ({ name: n, value })),
              readinessProbe: { exec: { command: ['test', '-f', readyFile] }, periodSeconds: 1, failureThreshold: 1 },
            },
          ],
        },
      });
      const pod = await waitForView(harness.cluster.projection, `${name} ready`, (v) => {
        const p = v.get(`Pod/default/${name}`) as Pod | undefined;
        return isPodReady(p) ? p : undefined;
      });
      const pid = containerPid(pod);
      expect(processAlive(pid)).toBe(true);
      return { pod, pid, signalLog };
    };

    const waitUntilGone = async (name: string): Promise<void> => {
      await waitForView(harness.cluster.projection, `${name} gone`, (v) => v.get(`Pod/default/${name}`) === undefined, {
        describe: (v) => v.get(`Pod/default/${name}`),
      });
      expect((await harness.api.request('GET', `${PODS}/${name}`)).status).toBe(404);
    };

    it('sends SIGTERM to the pod process', async () => {
      const { pid, signalLog } = await startSleeper('sleeper-term', {}, 30);
      expect(existsSync(signalLog)).toBe(false);
      expect((await harness.api.request('DELETE', `${PODS}/sleeper-term`)).status).toBe(200);
      await pollUntil('the process to exit', async () => !processAlive(pid), { timeoutMs: 10_000 });
      expect(readFileSync(signalLog, 'utf8')).toMatch(new RegExp(`^SIGTERM ${pid} `));
      await waitUntilGone('sleeper-term');
    });

    it('SIGKILLs a process that ignores SIGTERM after the grace period (1 s)', async () => {
      const { pid, signalLog } = await startSleeper('sleeper-stubborn', { IGNORE_SIGTERM: '1' }, 1);
      const deletedAt = Date.now();
      expect((await harness.api.request('DELETE', `${PODS}/sleeper-stubborn`)).status).toBe(200);
      await pollUntil('SIGTERM recorded', async () => existsSync(signalLog) && readFileSync(signalLog, 'utf8').startsWith(`SIGTERM ${pid} `), {
        timeoutMs: 10_000,
      });
      expect(processAlive(pid), 'still alive right after SIGTERM').toBe(true);
      await pollUntil('the process to be killed', async () => !processAlive(pid), { timeoutMs: 10_000 });
      const elapsed = Date.now() - deletedAt;
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(15_000); // after its 1 s grace, not the 30 s default
      await waitUntilGone('sleeper-stubborn');
    });

    it('removes a pod deleted before its node agent started it, without ever starting its process', async () => {
      // Created bound and deleted in one append: the agent first sees the pod already terminating.
      const name = 'never-started';
      const uid = randomUUID();
      // The container's first act would be to write this file (outside the pod's directories,
      // which go with the pod), with SIGTERM ignored until it has.
      const startedFile = join(podFiles, `${name}-${uid}.started`);
      await appendAndWait(
        harness.cluster.log,
        harness.cluster.projection,
        [
          {
            type: 'ObjectCreated',
            object: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name, namespace: 'default', uid, creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') },
              spec: {
                nodeName: 'node-1',
                restartPolicy: 'Always',
                terminationGracePeriodSeconds: 30,
                containers: [{ name: 'sleep', image: 'logplane/sleeper', command: ['/bin/sh', '-c', 'trap "" TERM; echo "$$" >>"$0"; trap - TERM; exec sleep 3600', startedFile] }],
              },
            },
          },
          { type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name, expectedResourceVersion: null, uid, propagationPolicy: null, gracePeriodSeconds: 30 },
        ],
        { actor: { type: 'user', name: 'admin' } },
      );
      await waitUntilGone(name);
      expect(existsSync(startedFile), 'the container process ran').toBe(false);
      // Nor did the agent ever report a container of it as created or running.
      const containerStatuses = [];
      for (const [partition] of (await harness.cluster.log.endOffsets('observed')).entries()) {
        for (const record of await harness.cluster.log.read('observed', partition, 0)) {
          const { body } = decodeEvent(record.value);
          if (body.type === 'PodStatusChanged' && body.name === name) containerStatuses.push(...(body.status.containerStatuses ?? []));
        }
      }
      expect(containerStatuses.filter((status) => status.containerID || status.state?.running || status.state?.terminated)).toEqual([]);
    });
  });

  it('registers 1,000 sim nodes from one agent process, all Ready and heartbeating', async () => {
    const nodes = 1000;
    const sim = await startTestCluster(adapter, 'e2e-agent-sim', { nodes, runtime: 'sim', proxy: 'none', heartbeatMs: 500 });
    try {
      const names = new Set(Array.from({ length: nodes }, (_, i) => `node-${i + 1}`));
      await waitForView(
        sim.cluster.projection,
        `${nodes} Ready nodes`,
        (v) =>
          (v.list('Node') as Node[]).filter(
            (n) => names.has(n.metadata.name) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          ).length === nodes,
        { describe: (v) => v.list('Node').length },
      );
      // Beats sent after every node was Ready: the agent keeps heartbeating for all of them.
      const since = Date.now();
      const beating = await firstValueFrom(
        sim.cluster.log.subscribe('heartbeats').pipe(
          mergeMap((batch) => batch.records),
          map((record) => decodeEvent(record.value).body),
          filter((body) => body.type === 'NodeHeartbeat' && body.time >= since),
          scan((seen, body) => (body.type === 'NodeHeartbeat' ? seen.add(body.node) : seen), new Set<string>()),
          filter((seen) => seen.size >= nodes),
          timeout(30_000),
        ),
      );
      expect(beating).toEqual(names);
      const stillReady = (sim.cluster.projection.view().list('Node') as Node[]).filter((n) =>
        n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      expect(stillReady).toHaveLength(nodes);
      // kubelet's initial labels, the architecture in Go's name as nodeInfo has it.
      const first = sim.cluster.projection.view().get('Node//node-1') as Node;
      const arch = first.status?.nodeInfo?.architecture;
      expect(arch).toMatch(/^(amd64|arm64|386|arm|ppc64le|s390x|riscv64)$/);
      expect(first.metadata.labels).toMatchObject({
        'kubernetes.io/hostname': 'node-1',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': arch,
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': arch,
      });
    } finally {
      await sim.stop();
    }
  }, 120_000);
});
