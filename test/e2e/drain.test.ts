/**
 * `kubectl cordon`, `kubectl drain` and `kubectl uncordon` end to end on both logs, with
 * the real kubectl against `startCluster` (every controller — the disruption controller
 * among them —, the scheduler, two sim-runtime nodes):
 *
 * - node-2 cordoned, a Deployment of 3 (with an emptyDir) and a PodDisruptionBudget
 *   `minAvailable: 2` applied, so all three pods land on node-1; a DaemonSet beside them;
 * - the budget's status reported by the disruption controller (3 healthy, 1 allowed);
 * - node-2 uncordoned, then `kubectl drain node-1 --ignore-daemonsets
 *   --delete-emptydir-data`: node-1 cordoned, the Deployment's pods evicted through
 *   pods/eviction, refused with kube's 429 while the budget is spent, each next one once a
 *   replacement is Ready on node-2 — at no moment fewer than 2 ready pods —, each evicted
 *   pod marked with kube's DisruptionTarget condition (EvictionByEvictionAPI) by the time
 *   it is terminating, the DaemonSet pod left alone, and the drain finishing;
 * - `kubectl uncordon node-1`;
 * - a replay of the log from offset 0 giving the live state hash.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { filter, firstValueFrom, throwError, timeout, type Subscription } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import { createReplayer, formatVector, type View } from '../../projections/index.ts';
import { isPodReady } from '../../reconcilers/replicaset/pods.ts';
import type { Node, Pod, PodCondition, PodDisruptionBudget } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { LOG_ADAPTERS } from './helpers.ts';

const WORKLOAD = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: logplane/echo:1
        volumeMounts:
        - name: scratch
          mountPath: /scratch
      volumes:
      - name: scratch
        emptyDir: {}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: web
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: logplane/echo:1
`;

interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const serving = (pod: Pod): boolean => !pod.metadata.deletionTimestamp && pod.status?.phase === 'Running' && isPodReady(pod);
const webPods = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === 'web');
const node = (view: View, name: string): Node | undefined => view.get(`Node//${name}`) as Node | undefined;
const budget = (view: View): PodDisruptionBudget | undefined => view.get('PodDisruptionBudget.policy/default/web') as PodDisruptionBudget | undefined;

describe.each(LOG_ADAPTERS)('kubectl drain within a PodDisruptionBudget on the %s log', (adapter) => {
  let cluster: RunningCluster;
  let dir: string;

  const kubectl = (...args: string[]): Promise<KubectlResult> =>
    new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', cluster.kubeconfig, '--cache-dir', join(dir, 'kube-cache'), '--request-timeout', '30s', ...args],
        { timeout: 300_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const ok = async (...args: string[]): Promise<string> => {
    const result = await kubectl(...args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
  /** Resolves once `condition` holds on the projection's view (checked at every position it reaches). */
  const waitUntil = (what: string, condition: (view: View) => boolean, timeoutMs = 120_000): Promise<unknown> =>
    firstValueFrom(
      cluster.projection.cursor$.pipe(
        filter(() => condition(cluster.projection.view())),
        timeout({ first: timeoutMs, with: () => throwError(() => new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)) }),
      ),
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'e2e-drain-'));
    cluster = await startCluster({
      dataDir: dir,
      nodes: 2,
      runtime: 'sim',
      simStartDelayMs: 300,
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `e2e-drain-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('cordons node-2, so the Deployment of 3 lands on node-1, and reports the budget', async () => {
    expect(await ok('cordon', 'node-2')).toBe('node/node-2 cordoned\n');
    expect(node(cluster.projection.view(), 'node-2')?.spec?.unschedulable).toBe(true);
    const path = join(dir, 'workload.yaml');
    writeFileSync(path, WORKLOAD);
    expect(await ok('apply', '-f', path)).toBe('deployment.apps/web created\npoddisruptionbudget.policy/web created\ndaemonset.apps/agent created\n');
    await waitUntil('3 web pods serve on node-1', (view) => webPods(view).filter((pod) => serving(pod) && pod.spec.nodeName === 'node-1').length === 3);
    await waitUntil('the budget reports 3 healthy and 1 disruption allowed', (view) => {
      const status = budget(view)?.status;
      return status?.currentHealthy === 3 && status.desiredHealthy === 2 && status.expectedPods === 3 && status.disruptionsAllowed === 1;
    });
    const status = budget(cluster.projection.view())?.status;
    expect(status?.conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods' })]);
    expect(status?.observedGeneration).toBe(1);
    const shown = await ok('get', 'pdb', 'web');
    expect(shown).toMatch(/^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nweb\s+2\s+N\/A\s+1\s+/);
  }, 180_000);

  it('drains node-1 one eviction at a time as replacements become ready on node-2, then uncordons it', async () => {
    expect(await ok('uncordon', 'node-2')).toBe('node/node-2 uncordoned\n');
    await waitUntil('node-2 is schedulable', (view) => !node(view, 'node-2')?.spec?.unschedulable);
    // The budget's promise, checked at every position the projection reaches during the drain.
    let fewest = Number.POSITIVE_INFINITY;
    // The DisruptionTarget condition of each web pod of node-1 when it is first seen terminating.
    const terminating = new Map<string, PodCondition | undefined>();
    const watch: Subscription = cluster.projection.cursor$.subscribe(() => {
      const pods = webPods(cluster.projection.view());
      fewest = Math.min(fewest, pods.filter(serving).length);
      for (const pod of pods) {
        if (pod.spec.nodeName !== 'node-1' || !pod.metadata.deletionTimestamp || terminating.has(pod.metadata.name)) continue;
        terminating.set(pod.metadata.name, pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget'));
      }
    });
    let drained: KubectlResult;
    try {
      drained = await kubectl('drain', 'node-1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout', '240s');
    } finally {
      watch.unsubscribe();
    }
    expect(drained.code, drained.stderr).toBe(0);
    expect(drained.stdout).toContain('node/node-1 cordoned');
    expect(drained.stdout).toContain('node/node-1 drained');
    expect(drained.stdout.match(/pod\/web-[a-z0-9-]+ evicted/g)).toHaveLength(3);
    // At least one eviction was refused while the budget was spent, and retried.
    expect(drained.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect(drained.stderr).toMatch(/Warning: ignoring DaemonSet-managed Pods: default\/agent-/);
    expect(fewest).toBeGreaterThanOrEqual(2);
    expect([...terminating.keys()].sort()).toEqual([...drained.stdout.matchAll(/pod\/(web-[a-z0-9-]+) evicted/g)].map((m) => m[1]).sort());
    for (const condition of terminating.values()) {
      expect(condition).toMatchObject({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' });
    }

    const view = cluster.projection.view();
    expect(node(view, 'node-1')?.spec?.unschedulable).toBe(true);
    expect((view.list('Pod', 'default') as Pod[]).some((pod) => pod.metadata.labels?.['app'] === 'agent' && pod.spec.nodeName === 'node-1')).toBe(true);
    await waitUntil('3 web pods serve on node-2 and the budget allows 1 again', (current) => {
      const pods = webPods(current).filter(serving);
      return pods.length === 3 && pods.every((pod) => pod.spec.nodeName === 'node-2') && budget(current)?.status?.disruptionsAllowed === 1;
    });
    expect(budget(cluster.projection.view())?.status?.disruptedPods).toBeUndefined();

    expect(await ok('uncordon', 'node-1')).toBe('node/node-1 uncordoned\n');
    await waitUntil('node-1 is schedulable', (current) => !node(current, 'node-1')?.spec?.unschedulable);
  }, 300_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replayDir = mkdtempSync(join(tmpdir(), 'e2e-drain-replay-'));
    const replayer = createReplayer({ log: cluster.log, dir: replayDir });
    try {
      await replayer.advanceTo(cluster.projection.cursor());
      let live: string | undefined;
      for (let round = 0; round < 20 && live === undefined; round++) {
        await cluster.projection.waitFor(replayer.cursor());
        const current = cluster.projection.cursor();
        if (formatVector(current) === formatVector(replayer.cursor())) live = cluster.projection.stateHash();
        else await replayer.advanceTo(current);
      }
      expect(live).toBeDefined();
      expect(replayer.stateHash()).toBe(live);
    } finally {
      await replayer.close();
      rmSync(replayDir, { recursive: true, force: true });
    }
  }, 60_000);
});
