/**
 * The HPA controller's metrics sources: in `logplane up`, the metrics API of the apiserver
 * in this process (the agents' figures, read from memory through the same `resourceUsage`
 * hook); in distributed mode (`logplane controllers`), the apiserver's
 * `metrics.k8s.io/v1beta1` over HTTPS as the controller manager (or the user of
 * `--kubeconfig`), as kube's HPA reads metrics-server through kube-apiserver.
 */
import type { Logger } from 'pino';
import { serveMetrics, type ResourceUsageHook } from '../apiserver/metrics-api.ts';
import type { Projection } from '../projections/index.ts';
import type { MetricsSource, PodMetricsItem } from '../reconcilers/hpa/index.ts';
import type { Client } from './client.ts';

/** Pod metrics served in process, from `resourceUsage` (the apiserver's own hook). */
export const inProcessMetricsSource = (projection: Projection, resourceUsage: ResourceUsageHook, logger: Logger): MetricsSource => ({
  podMetrics: async (namespace) => {
    const list = (await serveMetrics({ projection, resourceUsage, logger }, { resource: 'pods', namespace, name: undefined }, new URLSearchParams())) as {
      items: PodMetricsItem[];
    };
    return list.items;
  },
});

/** Pod metrics listed by `client` (the apiserver's metrics.k8s.io, with the client's credentials). */
export const remoteMetricsSource = (client: Pick<Client, 'request'>): MetricsSource => ({
  podMetrics: async (namespace, signal) => {
    const list = await client.request<{ items: PodMetricsItem[] }>('GET', `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/pods`, { signal });
    return list.items;
  },
});
