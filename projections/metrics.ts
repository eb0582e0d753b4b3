/**
 * Prometheus metrics of a projection: how long folding a batch of records takes (one LMDB
 * transaction) and how far the projection lags behind the log's end, per topic and partition.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { EventLog } from '../log/port.ts';
import { FOLDED_TOPICS, type FoldedTopic } from './positions.ts';
import type { Projection } from './projection.ts';

/** What `createProjection` records per folded batch. */
export interface FoldMetrics {
  /** Records one batch of `events` records of `topic` folded in `seconds` (its transaction included). */
  folded(topic: FoldedTopic, events: number, seconds: number): void;
}

/** Fold latency buckets (s): a batch is one transaction of one to a few thousand events. */
const FOLD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Creates `logplane_projection_fold_duration_seconds{topic}` and `logplane_projection_folded_events_total{topic}` on `registry`. */
export const createFoldMetrics = (registry: Registry): FoldMetrics => {
  const duration = new Histogram({
    name: 'logplane_projection_fold_duration_seconds',
    help: 'Time to fold one batch of records of a topic into the projection (decode, fold, history, one LMDB transaction).',
    labelNames: ['topic'] as const,
    buckets: FOLD_BUCKETS,
    registers: [registry],
  });
  const events = new Counter({
    name: 'logplane_projection_folded_events_total',
    help: 'Records folded into the projection, per topic.',
    labelNames: ['topic'] as const,
    registers: [registry],
  });
  const labels = Object.fromEntries(FOLDED_TOPICS.map((topic) => [topic, { topic }])) as Record<FoldedTopic, { topic: FoldedTopic }>;
  return {
    folded: (topic, count, seconds) => {
      duration.observe(labels[topic], seconds);
      events.inc(labels[topic], count);
    },
  };
};

/** The name of the projection-lag gauge. */
export const PROJECTION_LAG_METRIC = 'logplane_projection_lag_events';

/**
 * Registers `logplane_projection_lag_events{topic,partition}` on `registry` (once: a second
 * call for the same registry does nothing): on each scrape it asks the log for its end
 * offsets and subtracts the projection's applied cursor.
 */
export const registerProjectionLag = (registry: Registry, projection: Projection, log: EventLog): void => {
  if (registry.getSingleMetric(PROJECTION_LAG_METRIC)) return;
  new Gauge({
    name: PROJECTION_LAG_METRIC,
    help: 'Events appended to the log that this process\'s projection has not applied yet, per topic and partition.',
    labelNames: ['topic', 'partition'] as const,
    registers: [registry],
    async collect() {
      const cursor = projection.cursor();
      for (const topic of FOLDED_TOPICS) {
        const ends = await log.endOffsets(topic);
        ends.forEach((end, partition) => this.set({ topic, partition: String(partition) }, Math.max(0, end - (cursor[topic][partition] ?? 0))));
      }
    },
  });
};
