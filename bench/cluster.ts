/**
 * A whole logplane cluster for a scenario (`startCluster` of `logplane up`), on the
 * embedded log or on Kafka, plus what scenarios watch it for: which pods are bound and
 * which are Running, with the time each got there.
 */
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { startCluster, type RunningCluster, type UpOptions } from '../cli/up.ts';
import type { Projection } from '../projections/index.ts';
import type { Pod } from '../schemas/index.ts';
import { benchKafkaCluster } from './kafka-clusters.ts';
import { createBenchClient, quietLogger, type BenchClient, type LogKind } from './support.ts';

export interface BenchClusterOptions {
  readonly dir: string;
  readonly log: LogKind;
  readonly brokers: readonly string[];
  readonly nodes: number;
  readonly runtime: UpOptions['runtime'];
  readonly simStartDelayMs?: number;
  readonly nodeCapacity?: UpOptions['nodeCapacity'];
  readonly nodeGracePeriodMs?: number;
  readonly tolerationSeconds?: number;
  readonly heartbeatMs?: number;
  /** False: no Events recorded (to price them). */
  readonly events?: boolean;
}

/** The sim nodes of the scheduling scenarios: kube's scheduler_perf node (32 cores, 64 GiB, 110 pods). */
export const SIM_NODE_CAPACITY = { cpu: '32', memory: '64Gi', pods: '110' } as const;

export interface BenchCluster {
  readonly cluster: RunningCluster;
  readonly client: BenchClient;
  stop(): Promise<void>;
}

/** Starts a cluster in this process: no TLS, no service proxy. */
export const startBenchCluster = async (options: BenchClusterOptions): Promise<BenchCluster> => {
  const cluster = await startCluster({
    dataDir: join(options.dir, 'cluster'),
    nodes: options.nodes,
    runtime: options.runtime,
    port: 0,
    host: '127.0.0.1',
    proxy: 'none',
    tls: false,
    logger: quietLogger(),
    ...(options.log === 'kafka'
      ? { kafka: { type: 'kafka' as const, brokers: [...options.brokers], cluster: benchKafkaCluster(), partitions: 1 } }
      : {}),
    ...(options.simStartDelayMs !== undefined ? { simStartDelayMs: options.simStartDelayMs } : {}),
    ...(options.nodeCapacity ? { nodeCapacity: options.nodeCapacity } : {}),
    ...(options.nodeGracePeriodMs !== undefined ? { nodeGracePeriodMs: options.nodeGracePeriodMs } : {}),
    ...(options.tolerationSeconds !== undefined ? { tolerationSeconds: options.tolerationSeconds } : {}),
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.events === false ? { events: false } : {}),
  });
  const bench: BenchCluster = {
    cluster,
    client: createBenchClient(cluster.url, cluster.token),
    stop: () => {
      running.delete(bench);
      return cluster.stop();
    },
  };
  running.add(bench);
  return bench;
};

/** The clusters started in this process and not stopped yet. */
const running = new Set<BenchCluster>();

/**
 * Stops every cluster still running in this process (its process-runtime pods too): for a
 * unit told to stop early (a timeout, Ctrl-C), whose scenario code never reaches its own
 * `stop`. The pods run detached, in sessions of their own, so they would outlive it.
 */
export const stopRunningClusters = async (): Promise<void> => {
  await Promise.allSettled([...running].map((bench) => bench.stop()));
};

/** Rounds and their total time per controller, from the reconciler runtime's histogram. */
export const controllerRounds = async (cluster: RunningCluster): Promise<Map<string, { rounds: number; seconds: number }>> => {
  const rounds = new Map<string, { rounds: number; seconds: number }>();
  const metric = cluster.apiserver.metrics.getSingleMetric('reconciler_round_duration_seconds');
  if (!metric) return rounds;
  for (const value of (await metric.get()).values) {
    const controller = String(value.labels['controller'] ?? '');
    const entry = rounds.get(controller) ?? { rounds: 0, seconds: 0 };
    const name = (value as { metricName?: string }).metricName ?? '';
    if (name.endsWith('_count')) entry.rounds = value.value;
    if (name.endsWith('_sum')) entry.seconds = value.value;
    rounds.set(controller, entry);
  }
  return rounds;
};

/** Pods seen by a projection: when each was first seen, first bound and first Running, and on which node. */
export interface PodTracker {
  /** When the projection first applied a change of the pod (its creation, unless it existed before tracking). */
  readonly seenAt: ReadonlyMap<string, number>;
  readonly boundAt: ReadonlyMap<string, number>;
  readonly runningAt: ReadonlyMap<string, number>;
  /** Node of each pod, as last seen. */
  readonly nodeOf: ReadonlyMap<string, string>;
  /** Pods currently Running (phase), by key. */
  readonly running: ReadonlySet<string>;
  /** Stops following the change feed and forgets what it saw (read the figures first). */
  close(): void;
}

/** Follows the projection's change feed for pods whose key starts with `prefix` ("Pod/ns/"). */
export const trackPods = (projection: Projection, prefix: string): PodTracker => {
  const seenAt = new Map<string, number>();
  const boundAt = new Map<string, number>();
  const runningAt = new Map<string, number>();
  const nodeOf = new Map<string, string>();
  const running = new Set<string>();
  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (!change.key.startsWith(prefix)) return;
    if (change.type === 'DELETED') {
      running.delete(change.key);
      return;
    }
    const pod = change.object as Pod;
    const now = performance.now();
    if (!seenAt.has(change.key)) seenAt.set(change.key, now);
    const node = pod.spec.nodeName;
    if (node) {
      nodeOf.set(change.key, node);
      if (!boundAt.has(change.key)) boundAt.set(change.key, now);
    }
    if (pod.status?.phase === 'Running' && !pod.metadata.deletionTimestamp) {
      running.add(change.key);
      if (!runningAt.has(change.key)) runningAt.set(change.key, now);
    } else {
      running.delete(change.key);
    }
  });
  const close = (): void => {
    subscription.unsubscribe();
    for (const seen of [seenAt, boundAt, runningAt, nodeOf, running]) seen.clear();
  };
  return { seenAt, boundAt, runningAt, nodeOf, running, close };
};

/** A Deployment of `replicas` pods of `image`, small requests so capacity is not the limit. */
export const deploymentManifest = (name: string, replicas: number, image = 'logplane/sleeper:1', extra: Partial<Pod['spec']> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [{ name: 'main', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
        terminationGracePeriodSeconds: 1,
        ...extra,
      },
    },
  },
});
