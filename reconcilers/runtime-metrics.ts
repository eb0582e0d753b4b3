/**
 * Prometheus metrics of the reconciler runtime, shared by every runtime registered on one
 * registry: kube's workqueue metrics per controller (client-go's workqueue metrics as
 * k8s.io/component-base/metrics/prometheus/workqueue registers them: same names, `name`
 * label, buckets), logplane's own round metrics, and the consumer-group membership of each
 * controller. Counters and gauges a key touches are plain numbers the runtime bumps; they
 * reach Prometheus on scrape (`collect`), so enqueueing a key costs no labelled update.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Assignment, Topic } from '../log/port.ts';
import { workqueueName } from './controller-names.ts';

/** client-go's workqueue latency buckets: `prometheus.ExponentialBuckets(10e-9, 10, 10)` (10 ns … 10 s). */
export const WORKQUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/** What a runtime's queue holds, read on scrape. */
export interface QueueProbe {
  /** Keys waiting (not in the round being processed). */
  depth(): number;
  /** The keys of the round being processed and when it started (`performance.now()` ms); undefined between rounds. */
  processing(): { readonly keys: number; readonly sinceMs: number } | undefined;
  /** Keys added to the queue so far (a key already waiting is not added again, as client-go counts). */
  readonly adds: number;
  /** Keys put back after a failure, with backoff (client-go's `AddRateLimited`). */
  readonly retries: number;
}

/** What one runtime records; obtained from {@link RuntimeMetrics.register}. */
export interface ControllerMetrics {
  /** A key waited `seconds` in the queue before its round took it. */
  queued(seconds: number): void;
  /** A round of `keys` keys took `seconds` (each key's work duration) and appended `commands` commands. */
  round(keys: number, seconds: number, commands: number): void;
  /** A reconcile of one key failed. */
  failed(): void;
  /** The consumer group assigned this member `assignment`. */
  assigned(assignment: Assignment): void;
  /** Unregisters the runtime (its gauges go; counters keep what they counted). */
  close(): void;
}

export interface RuntimeMetrics {
  /** Registers the runtime of `controller`, member `memberId` of consumer group `group`. */
  register(controller: string, group: string, memberId: string, probe: QueueProbe): ControllerMetrics;
}

interface Registered {
  readonly name: string;
  readonly probe: QueueProbe;
  reportedAdds: number;
  reportedRetries: number;
}

/** Creates the runtime metrics on `registry`. */
export const createRuntimeMetrics = (registry: Registry): RuntimeMetrics => {
  const runtimes = new Set<Registered>();
  const registers = [registry];
  const labelNames = ['name'] as const;
  /** A counter of a number each runtime's probe keeps (`adds`, `retries`): on scrape, what grew since the last one. */
  const probeCounter = (name: string, help: string, count: 'adds' | 'retries', reported: 'reportedAdds' | 'reportedRetries'): void => {
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        for (const runtime of runtimes) {
          const value = runtime.probe[count];
          this.inc({ name: runtime.name }, value - runtime[reported]);
          runtime[reported] = value;
        }
      },
    });
  };
  probeCounter('workqueue_adds_total', 'Total number of adds handled by workqueue', 'adds', 'reportedAdds');
  probeCounter('workqueue_retries_total', 'Total number of retries handled by workqueue', 'retries', 'reportedRetries');
  const depth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames,
    registers,
    collect() {
      for (const runtime of runtimes) this.set({ name: runtime.name }, runtime.probe.depth());
    },
  });
  /** A gauge of the round each runtime has in progress: `seconds(keys, runningSeconds)`, 0 between rounds. */
  const processingGauge = (name: string, help: string, seconds: (keys: number, running: number) => number): Gauge<'name'> =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      collect() {
        const now = performance.now();
        for (const runtime of runtimes) {
          const processing = runtime.probe.processing();
          this.set({ name: runtime.name }, processing ? seconds(processing.keys, (now - processing.sinceMs) / 1000) : 0);
        }
      },
    });
  const unfinished = processingGauge(
    'workqueue_unfinished_work_seconds',
    'How many seconds of work has done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
    (keys, running) => keys * running,
  );
  const longest = processingGauge(
    'workqueue_longest_running_processor_seconds',
    'How many seconds has the longest running processor for workqueue been running.',
    (_keys, running) => running,
  );
  const queueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested.',
    labelNames,
    buckets: WORKQUEUE_BUCKETS,
    registers,
  });
  const workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames,
    buckets: WORKQUEUE_BUCKETS,
    registers,
  });
  const roundDuration = new Histogram({
    name: 'reconciler_round_duration_seconds',
    help: 'Time of one reconcile round (decide + append + wait for the projection), per controller.',
    labelNames: ['controller'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers,
  });
  const errors = new Counter({ name: 'reconciler_errors_total', help: 'Failed reconciles of a key, per controller.', labelNames: ['controller'] as const, registers });
  const commands = new Counter({ name: 'reconciler_commands_total', help: 'Commands appended to the log, per controller.', labelNames: ['controller'] as const, registers });
  const assignedPartitions = new Gauge({
    name: 'logplane_consumer_group_assigned_partitions',
    help: 'Partitions of a topic the consumer group assigned to this member (a controller kind is one group).',
    labelNames: ['group', 'topic'] as const,
    registers,
  });
  const member = new Gauge({
    name: 'logplane_consumer_group_member',
    help: 'One per member of a consumer group in this process; summed over every process it is the group\'s member count.',
    labelNames: ['group', 'member_id'] as const,
    registers,
  });
  const rebalances = new Counter({
    name: 'logplane_consumer_group_rebalances_total',
    help: 'Assignments this process\'s members of a consumer group received (the first one included).',
    labelNames: ['group'] as const,
    registers,
  });
  return {
    register: (controller, group, memberId, probe) => {
      const registered: Registered = { name: workqueueName(controller), probe, reportedAdds: 0, reportedRetries: 0 };
      runtimes.add(registered);
      const queueLabels = { name: registered.name };
      const controllerLabels = { controller };
      const groupLabels = { group };
      const memberLabels = { group, member_id: memberId };
      member.set(memberLabels, 1);
      let topics: readonly Topic[] = [];
      return {
        queued: (seconds) => queueDuration.observe(queueLabels, seconds),
        round: (keys, seconds, appended) => {
          for (let i = 0; i < keys; i++) workDuration.observe(queueLabels, seconds);
          roundDuration.observe(controllerLabels, seconds);
          if (appended > 0) commands.inc(controllerLabels, appended);
        },
        failed: () => errors.inc(controllerLabels),
        assigned: (assignment) => {
          rebalances.inc(groupLabels);
          topics = Object.keys(assignment.partitions) as Topic[];
          for (const topic of topics) assignedPartitions.set({ group, topic }, assignment.partitions[topic].length);
        },
        close: () => {
          runtimes.delete(registered);
          // Another runtime of the same name in this process (a test) keeps its gauges.
          if (![...runtimes].some((other) => other.name === registered.name)) {
            depth.remove(queueLabels);
            unfinished.remove(queueLabels);
            longest.remove(queueLabels);
          }
          member.remove(memberLabels);
          for (const topic of topics) assignedPartitions.remove({ group, topic });
        },
      };
    },
  };
};
