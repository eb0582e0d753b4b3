/**
 * The resource metrics API (`metrics.k8s.io/v1beta1`, NodeMetrics and PodMetrics), which
 * metrics-server serves behind kube-apiserver's aggregation layer: `kubectl top nodes`,
 * `kubectl top pods` and the HPA read it. Here the apiserver serves it itself, from the
 * node agents' latest figures (the `resourceUsage` hook: the agent's memory in `logplane
 * up`, its HTTPS endpoint in distributed mode); nothing of it is in the log.
 *
 * As metrics-server: `get` and `list` only, a node or pod without two samples yet is left
 * out of lists and is NotFound by name (`podmetrics.metrics.k8s.io "ns/name" not found`),
 * CPU in nanocores (`123456n`), memory in bytes (`Ki` when whole), `window` the time
 * between the two samples. Label selectors select on the Node's or Pod's labels.
 */
import type { Logger } from 'pino';
import type { Projection } from '../projections/index.ts';
import type { KubeObject, Node, Pod } from '../schemas/index.ts';
import { ApiError, apiErrors } from './errors.ts';
import { findResource, type GroupVersion } from './resources.ts';
import { parseSelection } from './selection.ts';
import { failureStatus } from './status.ts';

/** Usage over a window ending at `timeMs` (what an agent measured). */
export interface UsageFigures {
  readonly timeMs: number;
  readonly windowMs: number;
  readonly cpuNanoCores: number;
  readonly memoryWorkingSetBytes: number;
}

/** What a node's agent reports: the node's usage and every measured pod's containers'. */
export interface NodeResourceUsage {
  readonly node: string;
  readonly usage: UsageFigures | undefined;
  readonly pods: readonly {
    readonly namespace: string;
    readonly name: string;
    readonly uid: string;
    readonly timeMs: number;
    readonly windowMs: number;
    readonly containers: readonly { readonly name: string; readonly cpuNanoCores: number; readonly memoryWorkingSetBytes: number }[];
  }[];
}

/**
 * Fetches the latest resource usage of `node` from its agent; undefined when the agent has
 * none (not running). Throw to say the agent could not be asked (the node is left out).
 */
export type ResourceUsageHook = (node: Node, signal: AbortSignal) => Promise<NodeResourceUsage | undefined>;

export const METRICS_GROUP_VERSION: GroupVersion = { group: 'metrics.k8s.io', version: 'v1beta1' };
const API_VERSION = 'metrics.k8s.io/v1beta1';

/** The metrics API's resources as discovery lists them (metrics-server's verbs). */
export const METRICS_RESOURCES = [
  { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
  { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
] as const;

/** A request to the metrics API, as the router parses it. */
export interface MetricsTarget {
  readonly resource: 'nodes' | 'pods';
  /** Pods: the namespace, undefined for all namespaces. */
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

export interface MetricsApiContext {
  readonly projection: Projection;
  readonly resourceUsage: ResourceUsageHook | undefined;
  readonly logger: Logger;
  /** How long one agent may take to answer (default 10 s, metrics-server's `--kubelet-request-timeout`). */
  readonly agentTimeoutMs?: number;
}

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const windowText = (ms: number): string => `${Math.round(ms) / 1000}s`;

/** CPU as metrics-server prints it: nanocores. */
export const cpuQuantity = (nanoCores: number): string => `${Math.max(0, Math.round(nanoCores))}n`;

/** Memory in bytes as a BinarySI quantity: the largest of Ki, Mi, Gi that divides it, else plain bytes. */
export const memoryQuantity = (bytes: number): string => {
  let value = Math.max(0, Math.round(bytes));
  if (value === 0) return '0';
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti'];
  let power = 0;
  while (power < suffixes.length - 1 && value % 1024 === 0) {
    value /= 1024;
    power++;
  }
  return `${value}${suffixes[power]}`;
};

const notFound = (target: MetricsTarget, name: string): ApiError =>
  new ApiError(
    failureStatus('NotFound', `${target.resource === 'nodes' ? 'nodemetrics' : 'podmetrics'}.metrics.k8s.io "${name}" not found`, {
      name,
      group: 'metrics.k8s.io',
      kind: target.resource,
    }),
  );

const objectMeta = (object: KubeObject) => ({
  name: object.metadata.name,
  ...(object.metadata.namespace !== undefined ? { namespace: object.metadata.namespace } : {}),
  creationTimestamp: object.metadata.creationTimestamp ?? null,
  ...(object.metadata.labels ? { labels: object.metadata.labels } : {}),
});

/** Asks the agents of `nodes` at once; an agent that fails or is slow is logged and left out. */
const usageOfNodes = async (ctx: MetricsApiContext, nodes: readonly Node[]): Promise<NodeResourceUsage[]> => {
  const hook = ctx.resourceUsage;
  if (!hook) throw apiErrors.serviceUnavailable('the metrics API is not available: this apiserver has no node agents to ask (no resourceUsage hook)');
  const signal = AbortSignal.timeout(ctx.agentTimeoutMs ?? 10_000);
  const answers = await Promise.all(
    nodes.map((node) =>
      hook(node, signal).catch((err: unknown) => {
        ctx.logger.warn({ node: node.metadata.name, err: err instanceof Error ? err.message : String(err) }, 'cannot read resource usage from the node agent; its node and pods are left out');
        return undefined;
      }),
    ),
  );
  return answers.filter((answer) => answer !== undefined);
};

const nodeMetrics = (node: Node, usage: UsageFigures) => ({
  kind: 'NodeMetrics',
  apiVersion: API_VERSION,
  metadata: objectMeta(node),
  timestamp: isoTime(usage.timeMs),
  window: windowText(usage.windowMs),
  usage: { cpu: cpuQuantity(usage.cpuNanoCores), memory: memoryQuantity(usage.memoryWorkingSetBytes) },
});

const podMetrics = (pod: Pod, measured: NodeResourceUsage['pods'][number]) => ({
  kind: 'PodMetrics',
  apiVersion: API_VERSION,
  metadata: objectMeta(pod),
  timestamp: isoTime(measured.timeMs),
  window: windowText(measured.windowMs),
  containers: measured.containers.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.cpuNanoCores), memory: memoryQuantity(c.memoryWorkingSetBytes) } })),
});

const list = (kind: 'NodeMetricsList' | 'PodMetricsList', items: unknown[]) => ({ kind, apiVersion: API_VERSION, metadata: {}, items });

/** Answers a GET of the metrics API (the object or list as JSON), or throws the Status. */
export const serveMetrics = async (ctx: MetricsApiContext, target: MetricsTarget, query: URLSearchParams): Promise<unknown> => {
  const view = ctx.projection.view();
  if (target.resource === 'nodes') {
    const selection = parseSelection(findResource('', 'v1', 'nodes')!, query);
    const nodes = (target.name !== undefined ? [view.get(`Node//${target.name}`)] : view.list('Node'))
      .filter((node): node is Node => node !== undefined && selection.matches(node))
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const usage = new Map((await usageOfNodes(ctx, nodes)).map((answer) => [answer.node, answer.usage]));
    const items = nodes.flatMap((node) => {
      const figures = usage.get(node.metadata.name);
      return figures ? [nodeMetrics(node, figures)] : [];
    });
    if (target.name === undefined) return list('NodeMetricsList', items);
    if (items.length === 0) throw notFound(target, target.name);
    return items[0];
  }
  const selection = parseSelection(findResource('', 'v1', 'pods')!, query);
  const pods = (target.name !== undefined ? [view.get(`Pod/${target.namespace ?? 'default'}/${target.name}`)] : view.list('Pod', target.namespace))
    .filter((pod): pod is Pod => pod !== undefined && selection.matches(pod))
    .filter((pod) => pod.spec.nodeName !== undefined && pod.spec.nodeName !== '')
    .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  const nodeNames = [...new Set(pods.map((pod) => pod.spec.nodeName!))];
  const nodes = nodeNames.map((name) => view.get(`Node//${name}`)).filter((node): node is Node => node !== undefined);
  const measured = new Map<string, NodeResourceUsage['pods'][number]>();
  for (const answer of await usageOfNodes(ctx, nodes)) {
    for (const pod of answer.pods) measured.set(pod.uid, pod);
  }
  const items = pods.flatMap((pod) => {
    const figures = pod.metadata.uid === undefined ? undefined : measured.get(pod.metadata.uid);
    return figures ? [podMetrics(pod, figures)] : [];
  });
  if (target.name === undefined) return list('PodMetricsList', items);
  if (items.length === 0) throw notFound(target, `${target.namespace ?? 'default'}/${target.name}`);
  return items[0];
};
