/**
 * kube-scheduler's Prometheus metrics, as far as logplane's scheduler has what they count:
 * attempts and their latency by result, preemption attempts and victims, pending pods per
 * queue. A round tallies into plain numbers ({@link ScheduleTally}) and the metrics are
 * updated once per round; pending pods are counted from the projection on scrape. Nothing
 * is recorded per node.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { View } from '../../projections/index.ts';
import type { Pod } from '../../schemas/index.ts';
import type { Profile } from './framework.ts';
import { preEnqueue } from './scheduler.ts';

/** What one round of the scheduler did, counted as it goes (durations in seconds, one per attempt). */
export interface ScheduleTally {
  readonly scheduledSeconds: number[];
  readonly unschedulableSeconds: number[];
  /** The profile (scheduler name) of each attempt of `scheduledSeconds` / `unschedulableSeconds`, in order (absent: the metrics' default profile). */
  readonly scheduledProfiles: string[];
  readonly unschedulableProfiles: string[];
  /** Attempts that ended in an error (the round's decision threw). */
  errors: number;
  /** PostFilter (preemption) runs. */
  preemptionAttempts: number;
  /** Victims of each preemption that nominated a node. */
  readonly victims: number[];
}

/** An empty tally. */
export const newTally = (): ScheduleTally => ({
  scheduledSeconds: [],
  unschedulableSeconds: [],
  scheduledProfiles: [],
  unschedulableProfiles: [],
  errors: 0,
  preemptionAttempts: 0,
  victims: [],
});

/** Pending pods per kube scheduling queue. */
export interface PendingPods {
  readonly active: number;
  readonly backoff: number;
  readonly unschedulable: number;
  readonly gated: number;
}

export interface SchedulerMetrics {
  /** Adds one round's tally. */
  record(tally: ScheduleTally): void;
  /** Sets where pending pods are counted on scrape; returns what unsets it. */
  countPendingWith(count: () => PendingPods): () => void;
}

/**
 * Counts the pods waiting for the schedulers `schedulerNames` (the profiles' names) in `view` by the queue kube would
 * hold them in: `gated` (a PreEnqueue plugin holds them back), `unschedulable` (the last
 * attempt found no node: PodScheduled=False, reason Unschedulable; retried when the cluster
 * changes), `active` (the rest). logplane keeps no per-pod backoff queue: `backoff` is 0.
 */
export const countPending = (view: View, profile: Profile, schedulerNames: ReadonlySet<string>): PendingPods => {
  let active = 0;
  let unschedulable = 0;
  let gated = 0;
  for (const pod of view.unscheduledPods() as Pod[]) {
    if (!schedulerNames.has(pod.spec.schedulerName ?? 'default-scheduler') || pod.metadata.deletionTimestamp) continue;
    if (preEnqueue(pod, profile).type === 'gated') gated += 1;
    else if (pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable')) unschedulable += 1;
    else active += 1;
  }
  return { active, backoff: 0, unschedulable, gated };
};

/** kube-scheduler's `scheduler_scheduling_attempt_duration_seconds` buckets: `ExponentialBuckets(0.001, 2, 15)`. */
const ATTEMPT_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);
/** kube-scheduler's `scheduler_preemption_victims` buckets: `ExponentialBuckets(1, 2, 7)`. */
const VICTIM_BUCKETS = Array.from({ length: 7 }, (_, i) => 2 ** i);

/**
 * Creates the scheduler metrics on `registry`; attempts carry kube's `profile` label, the
 * scheduler name of the pod's profile (`profile` for attempts the tally does not name, e.g. errors).
 */
export const createSchedulerMetrics = (registry: Registry, profile = 'default-scheduler'): SchedulerMetrics => {
  const registers = [registry];
  const attempts = new Counter({
    name: 'scheduler_schedule_attempts_total',
    help: 'Number of attempts to schedule pods, by the result. \'unschedulable\' means a pod could not be scheduled, while \'error\' means an internal scheduler problem.',
    labelNames: ['result', 'profile'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'scheduler_scheduling_attempt_duration_seconds',
    help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)',
    labelNames: ['result', 'profile'] as const,
    buckets: ATTEMPT_BUCKETS,
    registers,
  });
  const preemptionAttempts = new Counter({ name: 'scheduler_preemption_attempts_total', help: 'Total preemption attempts in the cluster till now', registers });
  const victims = new Histogram({ name: 'scheduler_preemption_victims', help: 'Number of selected preemption victims', buckets: VICTIM_BUCKETS, registers });
  let pending: (() => PendingPods) | undefined;
  new Gauge({
    name: 'scheduler_pending_pods',
    help: 'Number of pending pods, by the queue type. \'active\' means number of pods in activeQ; \'backoff\' means number of pods in backoffQ; \'unschedulable\' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; \'gated\' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.',
    labelNames: ['queue'] as const,
    registers,
    collect() {
      if (!pending) return;
      const counts = pending();
      for (const queue of ['active', 'backoff', 'unschedulable', 'gated'] as const) this.set({ queue }, counts[queue]);
    },
  });
  const error = { result: 'error', profile };
  const observeAll = (result: 'scheduled' | 'unschedulable', seconds: readonly number[], profiles: readonly string[]): void => {
    if (seconds.length === 0) return;
    const counts = new Map<string, number>();
    seconds.forEach((value, index) => {
      const labels = { result, profile: profiles[index] ?? profile };
      duration.observe(labels, value);
      counts.set(labels.profile, (counts.get(labels.profile) ?? 0) + 1);
    });
    for (const [name, count] of counts) attempts.inc({ result, profile: name }, count);
  };
  return {
    record: (tally) => {
      observeAll('scheduled', tally.scheduledSeconds, tally.scheduledProfiles);
      observeAll('unschedulable', tally.unschedulableSeconds, tally.unschedulableProfiles);
      if (tally.errors > 0) attempts.inc(error, tally.errors);
      if (tally.preemptionAttempts > 0) preemptionAttempts.inc(tally.preemptionAttempts);
      for (const count of tally.victims) victims.observe(count);
    },
    countPendingWith: (count) => {
      pending = count;
      return () => {
        if (pending === count) pending = undefined;
      };
    },
  };
};
