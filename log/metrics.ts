/**
 * Prometheus metrics of the log as this process uses it: how long appends take to be
 * acknowledged (durable) and how many records they carry, per topic. Measured by wrapping
 * an `EventLog`, so both adapters are measured the same way and the port stays unchanged.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { TOPICS, type EventLog, type Topic } from './port.ts';

/** Append latency buckets (s): an embedded append is sub-millisecond to a few ms (fsync), a Kafka one a few ms to seconds. */
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Returns `log` with its appends measured on `registry`: `logplane_log_append_duration_seconds{topic}`
 * (from the call to the acknowledgement, failed appends included) and
 * `logplane_log_appended_records_total{topic}` (acknowledged records). One observation per
 * append call, not per record.
 */
export const instrumentLog = <L extends EventLog>(log: L, registry: Registry): L => {
  const duration = new Histogram({
    name: 'logplane_log_append_duration_seconds',
    help: 'Time from an append call to its acknowledgement by the log (durable), per topic; failed appends included.',
    labelNames: ['topic'] as const,
    buckets: APPEND_BUCKETS,
    registers: [registry],
  });
  const records = new Counter({
    name: 'logplane_log_appended_records_total',
    help: 'Records appended to the log and acknowledged, per topic.',
    labelNames: ['topic'] as const,
    registers: [registry],
  });
  // One labels object per topic, made once: an append allocates none.
  const labels = Object.fromEntries(TOPICS.map((topic) => [topic, { topic }])) as Record<Topic, { topic: Topic }>;
  const append: EventLog['append'] = async (topic, batch) => {
    const started = performance.now();
    try {
      const positions = await log.append(topic, batch);
      records.inc(labels[topic], positions.length);
      return positions;
    } finally {
      duration.observe(labels[topic], (performance.now() - started) / 1000);
    }
  };
  return { ...log, append };
};
