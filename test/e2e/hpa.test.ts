/**
 * The HorizontalPodAutoscaler with the real kubectl on the process runtime (`logplane up`), on
 * the embedded log and on the Kafka broker:
 * an autoscaling/v2 HPA on CPU (50 % of requests, a 10 s scale-down window instead of kube's
 * 300 s) scales a Deployment whose pods burn CPU from 1 to 3, and back to 1 once the load
 * stops; `kubectl get hpa` shows the measured TARGETS, `kubectl describe hpa` the conditions
 * and the SuccessfulRescale Events; `kubectl autoscale` makes an HPA that measures an idle
 * Deployment. `debug reconcile hpa` re-runs the scale-up decision with the figures it
 * recorded into the same commands, and a replay of the log gives the live state hash. In
 * distributed mode the controllers read the metrics from the apiserver's metrics.k8s.io over
 * the network with the credentials of `--kubeconfig`.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileReply } from '../../cli/history/api.ts';
import { runAgent, runApiserver, runControllers, type Component } from '../../cli/components.ts';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import type { LogTarget } from '../../cli/wiring.ts';
import { audit, type View } from '../../projections/index.ts';
import type { Deployment, HorizontalPodAutoscaler } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { LOG_ADAPTERS, replayToLive, waitForView } from './helpers.ts';
import { clusterClient, kubectl, logplane, ok, okJson, waitFor } from './process.ts';

const logger = pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' });

/** A Deployment whose pods burn a core until `stopFile` exists, then sleep. */
const burnerManifest = (stopFile: string): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: burn
spec:
  replicas: 1
  selector:
    matchLabels:
      app: burn
  template:
    metadata:
      labels:
        app: burn
    spec:
      containers:
        - name: burn
          image: logplane/sleeper
          command: ["sh", "-c", "while [ ! -e ${stopFile} ]; do :; done; exec sleep 100000"]
          resources:
            requests:
              cpu: 100m
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: burn
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: burn
  minReplicas: 1
  maxReplicas: 3
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 50
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 10
`;

const IDLE = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: idle
spec:
  replicas: 1
  selector:
    matchLabels:
      app: idle
  template:
    metadata:
      labels:
        app: idle
    spec:
      containers:
        - name: idle
          image: logplane/sleeper
          command: ["sleep", "100000"]
          resources:
            requests:
              cpu: 100m
`;

describe.each(LOG_ADAPTERS)('HorizontalPodAutoscaler on the process runtime on the %s log (logplane up, kubectl)', { timeout: 600_000 }, (adapter) => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-hpa-'));
  /** Where the pods (run as nobody when the tests run as root) can see the stop file. */
  const stopDir = mkdtempSync(join(tmpdir(), 'logplane-hpa-stop-'));
  const stopFile = join(stopDir, 'stop-burning');
  const cache = join(dir, 'kubectl-cache');
  let cluster: RunningCluster;
  const k = (...args: string[]) => kubectl(cluster.kubeconfig, cache, args);

  const replicasOf = (view: View, name: string): number | undefined => (view.get(`Deployment/default/${name}`) as Deployment | undefined)?.spec?.replicas;
  const hpaOf = (view: View, name: string): HorizontalPodAutoscaler | undefined =>
    view.get(`HorizontalPodAutoscaler.autoscaling/default/${name}`) as HorizontalPodAutoscaler | undefined;

  beforeAll(async () => {
    chmodSync(stopDir, 0o755);
    cluster = await startCluster({
      dataDir: dir,
      nodes: 1,
      runtime: 'process',
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      logger,
      metricsResolutionMs: 1_000,
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `e2e-hpa-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
    writeFileSync(join(dir, 'burn.yaml'), burnerManifest(stopFile));
    writeFileSync(join(dir, 'idle.yaml'), IDLE);
  }, 120_000);

  afterAll(async () => {
    if (!existsSync(stopFile)) writeFileSync(stopFile, '');
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(stopDir, { recursive: true, force: true });
  });

  it('scales the burning Deployment from 1 to 3, shows TARGETS, conditions and Events', async () => {
    expect(ok(await k('apply', '-f', join(dir, 'burn.yaml')))).toContain('horizontalpodautoscaler.autoscaling/burn created');
    await waitForView(cluster.projection, 'the Deployment scaled to 3 and the HPA status saying so', (view) => replicasOf(view, 'burn') === 3 && hpaOf(view, 'burn')?.status?.desiredReplicas === 3, {
      timeoutMs: 240_000,
      describe: (view) => hpaOf(view, 'burn')?.status,
    });
    const hpa = hpaOf(cluster.projection.view(), 'burn')!;
    expect(hpa.status?.desiredReplicas).toBe(3);
    expect(hpa.status?.lastScaleTime).toBeDefined();
    expect(hpa.status?.currentMetrics?.[0]?.resource?.name).toBe('cpu');
    expect(hpa.status?.currentMetrics?.[0]?.resource?.current.averageUtilization).toBeGreaterThan(50);

    const table = ok(await k('get', 'hpa', 'burn'));
    expect(table).toMatch(/^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE/);
    expect(table).toMatch(/burn\s+Deployment\/burn\s+cpu: \d+%\/50%\s+1\s+3\s+\d+/);

    const described = ok(await k('describe', 'hpa', 'burn'));
    expect(described).toMatch(/Reference:\s+Deployment\/burn/);
    expect(described).toMatch(/AbleToScale\s+True/);
    expect(described).toMatch(/ScalingActive\s+True\s+ValidMetricFound\s+the HPA was able to successfully calculate a replica count from cpu resource utilization \(percentage of request\)/);
    expect(described).toMatch(/SuccessfulRescale\s+.*New size: 3; reason: cpu resource utilization \(percentage of request\) above target/);
  });

  it('re-runs the scale-up decision with the figures it recorded into the same commands (debug reconcile hpa)', async () => {
    const scaled = audit(cluster.projection.store, cluster.log.layout.partitions, { allActors: true, limit: 100_000 }).find(
      (e) => e.actor.type === 'controller' && e.actor.name === 'hpa' && e.key === 'Deployment/default/burn',
    );
    expect(scaled?.decidedAt).toBeDefined();
    const reply = okJson<ReconcileReply>(await logplane(cluster.kubeconfig, ['debug', 'reconcile', 'hpa', 'hpa/burn', '--at', scaled!.decidedAt!, '-o', 'json']));
    expect(reply.identical).toBe(true);
    expect(reply.commands).toEqual(reply.recorded);
    const kinds = reply.commands.map((c) => (c.type === 'ObjectUpdated' || c.type === 'ObjectCreated' ? `${c.type} ${c.object.kind}` : c.type));
    expect(kinds).toEqual(expect.arrayContaining(['ObjectUpdated Deployment', 'ObjectUpdated HorizontalPodAutoscaler', 'ObjectCreated Event']));
    const scale = reply.commands.find((c) => c.type === 'ObjectUpdated' && c.object.kind === 'Deployment');
    expect(scale).toMatchObject({ subresource: 'scale', object: { spec: { replicas: 3 } } });
  });

  it('scales back to 1 once the load stops (a 10 s scale-down window)', async () => {
    writeFileSync(stopFile, '');
    await waitForView(cluster.projection, 'the Deployment scaled back to 1', (view) => replicasOf(view, 'burn') === 1 && hpaOf(view, 'burn')?.status?.desiredReplicas === 1, {
      timeoutMs: 240_000,
      describe: (view) => hpaOf(view, 'burn')?.status,
    });
    const described = ok(await k('describe', 'hpa', 'burn'));
    expect(described).toMatch(/SuccessfulRescale\s+.*New size: 1; reason: All metrics below target/);
  });

  it('kubectl autoscale makes an HPA that measures an idle Deployment and keeps it at its minimum', async () => {
    ok(await k('apply', '-f', join(dir, 'idle.yaml')));
    expect(ok(await k('autoscale', 'deployment', 'idle', '--cpu-percent=50', '--min=1', '--max=2'))).toContain('horizontalpodautoscaler.autoscaling/idle autoscaled');
    await waitForView(cluster.projection, 'the idle HPA measured', (view) => hpaOf(view, 'idle')?.status?.currentMetrics?.[0]?.resource?.current.averageUtilization !== undefined, {
      timeoutMs: 120_000,
      describe: (view) => hpaOf(view, 'idle')?.status,
    });
    const table = ok(await k('get', 'hpa', 'idle', '--no-headers'));
    expect(table).toMatch(/^idle\s+Deployment\/idle\s+cpu: \d+%\/50%\s+1\s+2\s+1\s+/);
    expect(replicasOf(cluster.projection.view(), 'idle')).toBe(1);
  });

  it('replays the log from offset 0 into the live state hash', async () => {
    const { events, replayHash, liveHash } = await replayToLive(cluster);
    expect(events).toBeGreaterThan(20);
    expect(liveHash).toBeDefined();
    expect(replayHash).toBe(liveHash);
  });
});

describe('HorizontalPodAutoscaler in distributed mode (metrics.k8s.io read from the apiserver)', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-hpa-dist-'));
  const components: Component[] = [];
  let kubeconfig = '';

  beforeAll(async () => {
    const pkiDir = join(dir, 'pki');
    const target: LogTarget = { type: 'embedded', dir: join(dir, 'log'), cluster: 'hpa', partitions: 1 };
    const api = await runApiserver({ target, dataDir: join(dir, 'api'), pkiDir, port: 0, host: '127.0.0.1', tls: false, logger, serviceCIDR: '127.95.0.0/16' });
    components.push(api);
    kubeconfig = api.kubeconfig;
    components.push(await runControllers({ target, dataDir: join(dir, 'controllers'), pkiDir, only: ['scheduler', 'deployment', 'replicaset', 'hpa', 'serviceaccount', 'root-ca-cert-publisher'], kubeconfig, logger }));
    components.push(
      await runAgent({ target, dataDir: join(dir, 'agent'), pkiDir, nodes: ['hpa-node'], runtime: 'process', proxy: 'none', podCIDR: '127.123.0.0/24', metricsResolutionMs: 1_000, logger }),
    );
  }, 90_000);

  afterAll(async () => {
    for (const component of components.reverse()) await component.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scales a Deployment on memory (AverageValue) with the figures the controllers fetched over the network', async () => {
    const client = clusterClient(kubeconfig);
    await client.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'holder' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'holder' } },
          template: {
            metadata: { labels: { app: 'holder' } },
            spec: { containers: [{ name: 'hold', image: 'logplane/sleeper', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], resources: { requests: { memory: '8Mi' } } }] },
          },
        },
      },
    });
    await client.request('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', {
      body: {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'holder' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'holder' },
          minReplicas: 1,
          maxReplicas: 2,
          // A Node process holds tens of MiB: far above 4 MiB a pod.
          metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '4Mi' } } }],
        },
      },
    });
    const hpa = await waitFor(
      'the HPA scaled the Deployment to 2 on memory',
      async () => {
        const current = await client.get<HorizontalPodAutoscaler>('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/holder');
        return current.status?.desiredReplicas === 2 && current.status.lastScaleTime !== undefined && current;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    expect(hpa.status?.currentMetrics?.[0]?.resource?.name).toBe('memory');
    expect(hpa.status?.currentMetrics?.[0]?.resource?.current.averageValue).toMatch(/^\d+(k|M)?$/);
    const deployment = await client.get<Deployment>('/apis/apps/v1/namespaces/default/deployments/holder');
    expect(deployment.spec?.replicas).toBe(2);
  });
});
