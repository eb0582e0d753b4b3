/**
 * The agent's resource metrics (what kubelet's `/metrics/resource` and metrics-server do
 * together): every `resolutionMs` (metrics-server's `--metric-resolution`, 15 s by
 * default) it samples the cumulative CPU time and working set of every running container
 * of each of its nodes, and of the host; CPU usage is the rate between the last two
 * samples (nanocores), memory the last sample's working set.
 *
 * The figures live in the agent's memory only, two samples per container: they are
 * observed state that is stale within seconds and worth nothing as history (as
 * metrics-server keeps them in memory), and putting them in the log would add one event
 * per pod per resolution to every projection's fold. The apiserver asks the agent for
 * them when a client reads `metrics.k8s.io`.
 */
import type { Logger } from 'pino';
import type { PodRuntime, RuntimeKind } from './kubelet/index.ts';
import { type ContainerUsage, type HostUsage, type PodUsage, hostUsage } from './kubelet/usage.ts';

/** A cumulative CPU figure at a moment. */
export interface CpuSample {
  readonly timeMs: number;
  readonly cpuUsageNanoSeconds: number;
}

/** Usage over a window ending at `timeMs`. */
export interface UsageRate {
  readonly timeMs: number;
  readonly windowMs: number;
  readonly cpuNanoCores: number;
  readonly memoryWorkingSetBytes: number;
}

/** One pod's containers' usage, measured over the same window. */
export interface PodUsageRate {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly timeMs: number;
  readonly windowMs: number;
  readonly containers: readonly { readonly name: string; readonly cpuNanoCores: number; readonly memoryWorkingSetBytes: number }[];
}

/** What one node's agent reports: the node's usage (none before its second sample) and every pod's with two samples. */
export interface NodeResourceUsage {
  readonly node: string;
  readonly usage: UsageRate | undefined;
  readonly pods: readonly PodUsageRate[];
}

/**
 * CPU usage in nanocores between two samples (metrics-server's rate), or undefined when
 * there is no rate: the samples are not in time order, or the counter went back (a new
 * process), as metrics-server drops such points.
 */
export function cpuRate(previous: CpuSample, current: CpuSample): number | undefined {
  const elapsedMs = current.timeMs - previous.timeMs;
  const usedNs = current.cpuUsageNanoSeconds - previous.cpuUsageNanoSeconds;
  if (!(elapsedMs > 0) || !(usedNs >= 0)) return undefined;
  return Math.round((usedNs * 1000) / elapsedMs);
}

/**
 * A pod's usage from its previous and current samples: every container of the current one
 * needs a previous sample of the same instance, else the pod has no figures yet (as
 * metrics-server leaves out a pod whose container lacks a previous point).
 */
export function podUsageRate(previous: PodUsage | undefined, current: PodUsage): PodUsageRate | undefined {
  if (previous === undefined || previous.uid !== current.uid) return undefined;
  const containers: PodUsageRate['containers'][number][] = [];
  let timeMs = 0;
  let windowMs = 0;
  for (const container of current.containers) {
    const before: ContainerUsage | undefined = previous.containers.find((c) => c.name === container.name && c.restartCount === container.restartCount);
    const cpuNanoCores = before === undefined ? undefined : cpuRate(before, container);
    if (cpuNanoCores === undefined) return undefined;
    containers.push({ name: container.name, cpuNanoCores, memoryWorkingSetBytes: container.memoryWorkingSetBytes });
    timeMs = Math.max(timeMs, container.timeMs);
    windowMs = Math.max(windowMs, container.timeMs - before!.timeMs);
  }
  return containers.length === 0 ? undefined : { namespace: current.namespace, name: current.name, uid: current.uid, timeMs, windowMs, containers };
}

/** The host's usage between two samples. */
export function hostUsageRate(previous: HostUsage | undefined, current: HostUsage): UsageRate | undefined {
  const cpuNanoCores = previous === undefined ? undefined : cpuRate(previous, current);
  if (cpuNanoCores === undefined) return undefined;
  return { timeMs: current.timeMs, windowMs: current.timeMs - previous!.timeMs, cpuNanoCores, memoryWorkingSetBytes: current.memoryWorkingSetBytes };
}

/** Options of {@link startResourceUsage}. */
export interface ResourceUsageOptions {
  /** The agent's nodes and their runtimes (read at every sample). */
  readonly runtimes: () => ReadonlyMap<string, PodRuntime>;
  readonly runtimeKind: RuntimeKind;
  /** Sampling period; default 15 s. */
  readonly resolutionMs?: number;
  readonly logger: Logger;
  readonly now?: () => number;
}

export interface ResourceUsage {
  /** The latest figures of `node`, or undefined when this agent does not run it. */
  of(node: string): NodeResourceUsage | undefined;
  close(): void;
}

interface NodeSamples {
  readonly previous: ReadonlyMap<string, PodUsage>;
  readonly current: ReadonlyMap<string, PodUsage>;
}

/** Starts sampling (the first sample at once). */
export function startResourceUsage(options: ResourceUsageOptions): ResourceUsage {
  const { logger, runtimeKind } = options;
  const resolutionMs = options.resolutionMs ?? 15_000;
  const now = options.now ?? Date.now;
  const samples = new Map<string, NodeSamples>();
  /** The node's own figures: the host's (process, cri), or none for simulated nodes. */
  let host: { previous: HostUsage | undefined; current: HostUsage } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const sample = async (): Promise<void> => {
    if (runtimeKind !== 'sim') host = { previous: host?.current, current: hostUsage(now()) };
    await Promise.all(
      [...options.runtimes()].map(async ([node, runtime]) => {
        const pods = await runtime.usage();
        samples.set(node, { previous: samples.get(node)?.current ?? new Map(), current: new Map(pods.map((pod) => [`${pod.namespace}/${pod.name}`, pod])) });
      }),
    );
  };

  const tick = (): void => {
    sample()
      .catch((err: unknown) => logger.warn({ err }, 'sampling resource usage failed; the metrics API serves the previous figures'))
      .finally(() => {
        if (closed) return;
        timer = setTimeout(tick, resolutionMs);
        timer.unref();
      });
  };
  tick();

  const zeroNode = (timeMs: number): UsageRate => ({ timeMs, windowMs: resolutionMs, cpuNanoCores: 0, memoryWorkingSetBytes: 0 });

  return {
    of(node) {
      if (!options.runtimes().has(node)) return undefined;
      const nodeSamples = samples.get(node);
      const pods = [...(nodeSamples?.current.values() ?? [])].flatMap((pod) => podUsageRate(nodeSamples?.previous.get(`${pod.namespace}/${pod.name}`), pod) ?? []);
      const usage = runtimeKind === 'sim' ? (nodeSamples ? zeroNode(now()) : undefined) : host && hostUsageRate(host.previous, host.current);
      return { node, usage, pods };
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
