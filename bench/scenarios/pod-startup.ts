/**
 * pod startup: real processes (`process` runtime, the built-in `logplane/sleeper` image)
 * on a `logplane up` cluster of 4 nodes, 100 pods (20 with --quick) in two ways:
 *
 * - burst: one Deployment of that many replicas applied over HTTP; for each pod, apply → Running.
 * - paced: as many bare Pods, one POST every 100 ms; for each pod, its POST → Running (what
 *   the Kubernetes pod-startup SLO measures: a pod's own creation to Running, under load).
 *
 * "Running" is the moment this process's projection applies the status report that says
 * phase Running (the apiserver and the agent share that projection). The burst starts once
 * the agent's container spawner helpers have started.
 */
import { sharedSpawner } from '../../node-agent/kubelet/spawner.ts';
import { deploymentManifest, startBenchCluster, trackPods } from '../cluster.ts';
import {
  atMost,
  expectStatus,
  plain,
  quantile,
  round,
  type ScenarioContext,
  type ScenarioResult,
  until,
  withTempDir,
} from '../support.ts';

const SLO = 'Kubernetes SLO: pod startup p99 ≤ 5 s';

export const podStartupScenario = async (context: ScenarioContext): Promise<ScenarioResult> => {
  const pods = context.quick ? 20 : 100;
  const nodes = 4;
  return withTempDir('startup', async (dir) => {
    const bench = await startBenchCluster({ dir, log: context.log, brokers: context.brokers, nodes, runtime: 'process' });
    const tracker = trackPods(bench.cluster.projection, 'Pod/');
    // When the burst's Deployment and ReplicaSet were first folded (the first hops of its chain).
    const ownersAt = new Map<string, number>();
    const owners = bench.cluster.projection.changes$.subscribe((change) => {
      const kind = change.key.slice(0, change.key.indexOf('/'));
      if ((kind === 'Deployment' || kind === 'ReplicaSet') && !ownersAt.has(kind)) ownersAt.set(kind, performance.now());
    });
    try {
      // The agent's container spawner helpers start with the cluster (~40 ms of CPU each): a
      // burst applied before they listen measured their start-up too (not part of a pod's
      // start on a running cluster).
      await sharedSpawner().warm();
      // burst
      const applied = performance.now();
      expectStatus(
        await bench.client.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploymentManifest('startup', pods)),
        201,
        'creating the Deployment',
      );
      await until(() => tracker.running.size >= pods, 120_000, `${pods} process pods Running`);
      const burstKeys = [...tracker.runningAt.keys()].filter((key) => key.startsWith('Pod/default/startup-'));
      const burst = burstKeys.map((key) => tracker.runningAt.get(key)! - applied);
      // Where a burst's time goes: to the binding (the control plane's chain), then to Running
      // (the agent: the containers' starts on the spawner helpers, the status reports).
      const burstBound = burstKeys.map((key) => (tracker.boundAt.get(key) ?? Number.NaN) - applied);
      const burstStart = burstKeys.map((key) => tracker.runningAt.get(key)! - (tracker.boundAt.get(key) ?? Number.NaN));
      const span = (at: ReadonlyMap<string, number>): string => {
        const times = burstKeys.map((key) => (at.get(key) ?? Number.NaN) - applied);
        return `${round(Math.min(...times))}–${round(Math.max(...times))}`;
      };
      const milestones =
        `burst milestones, ms after the apply, as this process's projection folded them: Deployment ${round((ownersAt.get('Deployment') ?? Number.NaN) - applied)}, ` +
        `ReplicaSet ${round((ownersAt.get('ReplicaSet') ?? Number.NaN) - applied)}, pods created ${span(tracker.seenAt)}, bound ${span(tracker.boundAt)}, Running ${span(tracker.runningAt)}`;
      context.progress(`startup/${context.log}: burst of ${pods} Running in ${(Math.max(...burst) / 1000).toFixed(1)} s`);

      // paced
      const posted = new Map<string, number>();
      for (let i = 0; i < pods; i++) {
        const name = `paced-${i}`;
        const sent = performance.now();
        const response = await bench.client.request('POST', '/api/v1/namespaces/default/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { containers: [{ name: 'main', image: 'logplane/sleeper:1' }], terminationGracePeriodSeconds: 1 },
        });
        expectStatus(response, 201, `creating pod ${name}`);
        posted.set(`Pod/default/${name}`, sent);
        const wait = sent + 100 - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      await until(() => [...posted.keys()].every((key) => tracker.runningAt.has(key)), 120_000, 'paced pods Running');
      const paced = [...posted.entries()].map(([key, sent]) => tracker.runningAt.get(key)! - sent);
      const pacedBound = [...posted.entries()].map(([key, sent]) => (tracker.boundAt.get(key) ?? Number.NaN) - sent);
      const pacedStart = [...posted.keys()].map((key) => tracker.runningAt.get(key)! - (tracker.boundAt.get(key) ?? Number.NaN));

      return {
        scenario: 'startup',
        log: context.log,
        figures: [
          plain(`burst: apply Deployment → pod Running p50 (${pods} pods)`, round(quantile(burst, 0.5)), 'ms'),
          atMost(`burst: apply Deployment → pod Running p99 (${pods} pods)`, round(quantile(burst, 0.99)), 'ms', 300, SLO),
          plain('burst: of which apply → bound p99 (apiserver, Deployment → ReplicaSet → pods, scheduler)', round(quantile(burstBound, 0.99)), 'ms'),
          plain('burst: of which bound → Running p99 (agent, process starts, status reports)', round(quantile(burstStart, 0.99)), 'ms'),
          plain('paced (10 pods/s): POST → Running p50', round(quantile(paced, 0.5)), 'ms'),
          atMost('paced (10 pods/s): POST → Running p99', round(quantile(paced, 0.99)), 'ms', 300, SLO),
          plain('paced: of which POST → bound p50 (apiserver, scheduler)', round(quantile(pacedBound, 0.5)), 'ms'),
          plain('paced: of which bound → Running p50 (agent, process start, status report)', round(quantile(pacedStart, 0.5)), 'ms'),
        ],
        setup: { pods, nodes, runtime: 'process', image: 'logplane/sleeper:1' },
        notes: [
          'Each pod is a real OS process (/bin/sh running the built-in sleeper image, a POSIX sh script), forked by the spawner process of the agent; the agent runs in this process.',
          `The burst includes the Deployment → ReplicaSet → Pods chain, the scheduler, and starting ${pods} processes at once.`,
          milestones,
        ],
      };
    } finally {
      owners.unsubscribe();
      tracker.close();
      await bench.stop();
    }
  });
};
