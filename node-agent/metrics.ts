/**
 * kubelet's Prometheus metrics for the pods an agent runs: running pods and containers,
 * how long pods take to start, how long a node's sync takes, the node name, and the CRI
 * operations. One agent may run many nodes (the sim runtime runs hundreds), so the gauges
 * kubelet has per process carry a `node` label here. Pod and container counts are taken on
 * scrape from the statuses the runtimes last reported, so a status update costs no metric
 * update.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PodStatus } from '../schemas/index.ts';

/** kubelet's `kubelet_pod_start_duration_seconds` buckets. */
const POD_START_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];
/** Prometheus' default buckets (kubelet's `metrics.DefBuckets`). */
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** kubelet's `container_state` label values. */
export const CONTAINER_STATES = ['created', 'exited', 'running', 'unknown'] as const;
export type ContainerState = (typeof CONTAINER_STATES)[number];

/**
 * The `container_state` of each container of `status`, as kubelet counts them from the
 * runtime: running, exited (terminated, or waiting to restart after it ran), created
 * (waiting, never ran).
 */
export const containerStates = (status: PodStatus): ContainerState[] =>
  (status.containerStatuses ?? []).map((container) => {
    if (container.state?.running) return 'running';
    if (container.state?.terminated) return 'exited';
    if (container.state?.waiting) return container.lastState?.terminated ? 'exited' : 'created';
    return 'unknown';
  });

/**
 * Whether a pod counts as running: kubelet counts pods with a running sandbox; the process
 * and sim runtimes have no sandbox, so a pod counts while its reported phase is Running.
 */
const isRunning = (status: PodStatus): boolean => status.phase === 'Running';

/** The latest status the runtime of `node` reported for one pod. */
export interface ReportedPod {
  readonly node: string;
  readonly status: PodStatus;
}

export interface KubeletMetrics {
  /** Publishes `kubelet_node_name{node}` for a node this agent runs. */
  nodeRegistered(node: string): void;
  /** Counts pods and containers on scrape from `pods` (the latest reported status of each pod). */
  countFrom(pods: () => Iterable<ReportedPod>): void;
  /** A pod's first status showed it running `seconds` after the agent first saw it bound here. */
  podStarted(seconds: number): void;
  /** A node's sync (its pod set handed to its runtime) took `seconds`. */
  synced(seconds: number): void;
  /** One CRI call `method` (the proto's name) ended, failed or not, after `seconds` (kubelet's buckets: `ExponentialBuckets(0.005, 2.5, 14)`). */
  criOperation(method: string, failed: boolean, seconds: number): void;
}

/** The `operation_type` kubelet gives a CRI method: `runPodSandbox` → `run_podsandbox`, `pullImage` → `pull_image`. */
export const operationType = (method: string): string =>
  method
    .replace(/([Pp])odSandbox/g, '$1odsandbox')
    .replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** Creates the kubelet metrics on `registry`. */
export const createKubeletMetrics = (registry: Registry): KubeletMetrics => {
  const registers = [registry];
  let pods: (() => Iterable<ReportedPod>) | undefined;
  /** The nodes registered: each shows its counts, zeros included. */
  const nodes = new Set<string>();
  const nodeName = new Gauge({ name: 'kubelet_node_name', help: 'The node\'s name. The count is always 1.', labelNames: ['node'] as const, registers });
  /** Pods with phase Running and containers per state, per node, from the latest reported statuses. */
  const count = (): Map<string, { pods: number; containers: Record<ContainerState, number> }> => {
    const byNode = new Map<string, { pods: number; containers: Record<ContainerState, number> }>();
    for (const node of nodes) byNode.set(node, { pods: 0, containers: { created: 0, exited: 0, running: 0, unknown: 0 } });
    for (const { node, status } of pods?.() ?? []) {
      let counts = byNode.get(node);
      if (!counts) {
        counts = { pods: 0, containers: { created: 0, exited: 0, running: 0, unknown: 0 } };
        byNode.set(node, counts);
      }
      for (const state of containerStates(status)) counts.containers[state] += 1;
      if (isRunning(status)) counts.pods += 1;
    }
    return byNode;
  };
  new Gauge({
    name: 'kubelet_running_pods',
    help: 'Number of pods that have a running pod sandbox',
    labelNames: ['node'] as const,
    registers,
    collect() {
      this.reset();
      for (const [node, counts] of count()) this.set({ node }, counts.pods);
    },
  });
  new Gauge({
    name: 'kubelet_running_containers',
    help: 'Number of containers currently running',
    labelNames: ['container_state', 'node'] as const,
    registers,
    collect() {
      this.reset();
      for (const [node, counts] of count()) {
        for (const state of CONTAINER_STATES) this.set({ container_state: state, node }, counts.containers[state]);
      }
    },
  });
  const podStart = new Histogram({
    name: 'kubelet_pod_start_duration_seconds',
    help: 'Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run',
    buckets: POD_START_BUCKETS,
    registers,
  });
  const worker = new Histogram({
    name: 'kubelet_pod_worker_duration_seconds',
    help: 'Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync',
    labelNames: ['operation_type'] as const,
    buckets: DEFAULT_BUCKETS,
    registers,
  });
  const operations = new Counter({
    name: 'kubelet_runtime_operations_total',
    help: 'Cumulative number of runtime operations by operation type.',
    labelNames: ['operation_type'] as const,
    registers,
  });
  const operationErrors = new Counter({
    name: 'kubelet_runtime_operations_errors_total',
    help: 'Cumulative number of runtime operation errors by operation type.',
    labelNames: ['operation_type'] as const,
    registers,
  });
  const operationDuration = new Histogram({
    name: 'kubelet_runtime_operations_duration_seconds',
    help: 'Duration in seconds of runtime operations. Broken down by operation type.',
    labelNames: ['operation_type'] as const,
    buckets: Array.from({ length: 14 }, (_, i) => 0.005 * 2.5 ** i),
    registers,
  });
  const sync = { operation_type: 'sync' };
  return {
    nodeRegistered: (node) => {
      nodes.add(node);
      nodeName.set({ node }, 1);
    },
    countFrom: (source) => {
      pods = source;
    },
    podStarted: (seconds) => podStart.observe(seconds),
    synced: (seconds) => worker.observe(sync, seconds),
    criOperation: (method, failed, seconds) => {
      const labels = { operation_type: operationType(method) };
      operations.inc(labels);
      operationDuration.observe(labels, seconds);
      if (failed) operationErrors.inc(labels);
    },
  };
};
