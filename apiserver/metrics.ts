/**
 * Prometheus metrics of one apiserver, in its own registry or the one the process's wiring
 * hands in (never the global one, so several apiservers in a process do not collide):
 * request latency and counts by verb, resource and code, open watches, and how far the
 * projection lags behind the log.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventLog } from '../log/port.ts';
import type { Projection } from '../projections/index.ts';
import { registerProjectionLag } from '../projections/index.ts';

export interface ApiMetrics {
  readonly registry: Registry;
  readonly requestDuration: Histogram<'verb' | 'resource' | 'subresource' | 'code'>;
  readonly requests: Counter<'verb' | 'resource' | 'subresource' | 'code'>;
  readonly openWatches: Gauge<'resource'>;
  readonly watchEvents: Counter<'resource' | 'type'>;
}

/**
 * Creates the metrics on `registry` (default a new one), with the projection-lag gauge
 * (which asks the log for its end offsets on scrape) unless the registry has it already.
 */
export const createApiMetrics = (log: EventLog, projection: Projection, registry: Registry = new Registry()): ApiMetrics => {
  const labelNames = ['verb', 'resource', 'subresource', 'code'] as const;
  const requestDuration = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, resource and subresource.',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out by verb, resource, subresource and HTTP response code.',
    labelNames,
    registers: [registry],
  });
  const openWatches = new Gauge({
    name: 'apiserver_registered_watchers',
    help: 'Number of currently open watches for a given resource.',
    labelNames: ['resource'] as const,
    registers: [registry],
  });
  const watchEvents = new Counter({
    name: 'apiserver_watch_events_total',
    help: 'Number of events sent in watch clients, by resource and event type.',
    labelNames: ['resource', 'type'] as const,
    registers: [registry],
  });
  registerProjectionLag(registry, projection, log);
  return { registry, requestDuration, requests, openWatches, watchEvents };
};
