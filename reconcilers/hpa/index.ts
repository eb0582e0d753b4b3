/**
 * The horizontal-pod-autoscaler controller (kube-controller-manager 1.32's
 * `pkg/controller/podautoscaler`): every sync period (15 s, kube's
 * `--horizontal-pod-autoscaler-sync-period`, as a requeue of each decision) an HPA's target
 * is scaled to what its metrics ask, within its behavior and bounds.
 *
 * Keys are HPAs (`HorizontalPodAutoscaler.autoscaling/<ns>/<name>`); a change of one maps to
 * itself (its own status writes excepted). The pods' figures are read from a
 * {@link MetricsSource} through a cache refreshed in the background, and kube's in-memory
 * recommendations and scale events are kept per HPA in this controller's memory, as kube
 * keeps them. Both are inputs of the pure {@link planHpa}, and both are recorded with the
 * decision: the status write carries them in its copy of the HPA's metadata
 * (`autoscaling.logplane.io/decision-inputs`; the fold keeps only the status, so the figures
 * stay in the log's event, not in the object). `debug reconcile hpa` re-runs the decision
 * with the inputs it finds there, and gets the same commands.
 */
import type { View } from '../../projections/index.ts';
import { matchesLabels } from '../../projections/selectors.ts';
import type { EventBody, HorizontalPodAutoscaler, Pod } from '../../schemas/index.ts';
import { createRecorder } from '../../projections/event-recorder.ts';
import { keyOf } from '../replicaset/objects.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import type { ScalingHistory } from './behavior.ts';
import { HPA_EVENT_SOURCE, hpaStatusCommand, planHpa, planWrites, scaleTargetOf, type HpaInputs, type HpaSettings } from './decide.ts';
import { createMetricsCache, type MetricsSample, type MetricsSource } from './metrics.ts';

export * from './behavior.ts';
export * from './decide.ts';
export * from './metrics.ts';
export * from './replicas.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:hpa`; its Events' source is kube's `horizontal-pod-autoscaler`). */
export const HPA_CONTROLLER = 'hpa';

/** The annotation of a status write's HPA copy that records the decision's inputs (JSON of {@link HpaInputs}). */
export const DECISION_INPUTS_ANNOTATION = 'autoscaling.logplane.io/decision-inputs';

/** kube's `--horizontal-pod-autoscaler-sync-period`. */
export const DEFAULT_SYNC_PERIOD_MS = 15_000;

export interface HpaControllerOptions extends HpaSettings {
  /** Where pod metrics come from; without one every metric fails (FailedGetResourceMetric). */
  readonly metrics?: MetricsSource;
  /** How often an HPA is synced (default 15 s). */
  readonly syncPeriodMs?: number;
  /** How often the namespaces with HPAs have their metrics fetched again (default 5 s). */
  readonly metricsRefreshMs?: number;
}

/** The inputs a recorded decision about `key` used, read back from its status write. */
export const recordedInputs = (recorded: readonly EventBody[], key: string): HpaInputs | undefined => {
  for (const body of recorded) {
    if (body.type !== 'ObjectUpdated' || body.subresource !== 'status' || body.object.kind !== 'HorizontalPodAutoscaler' || keyOf(body.object) !== key) continue;
    const text = body.object.metadata.annotations?.[DECISION_INPUTS_ANNOTATION];
    if (text === undefined) return undefined;
    const parsed = JSON.parse(text) as { metrics: MetricsSample; history: ScalingHistory | null };
    return { metrics: parsed.metrics, history: parsed.history ?? undefined };
  }
  return undefined;
};

/** The figures of the target's pods only (what kube's label-selected metrics list holds), to record. */
const targetSample = (hpa: HorizontalPodAutoscaler, view: View, sample: MetricsSample): MetricsSample => {
  if (sample.type === 'error') return sample;
  const target = scaleTargetOf(hpa, view);
  if ('error' in target || typeof target.selector === 'string') return { type: 'ok', pods: [] };
  const selector = target.selector;
  const names = new Set((view.list('Pod', hpa.metadata.namespace) as Pod[]).filter((pod) => matchesLabels(selector, pod.metadata.labels)).map((pod) => pod.metadata.name));
  return { type: 'ok', pods: sample.pods.filter((pod) => names.has(pod.name)) };
};

/** Creates the HPA controller. */
export const createHpaController = (options: HpaControllerOptions = {}): Controller => {
  const syncPeriodMs = options.syncPeriodMs ?? DEFAULT_SYNC_PERIOD_MS;
  const cache = createMetricsCache(options.metrics, options.metricsRefreshMs !== undefined ? { intervalMs: options.metricsRefreshMs } : {});
  /** key → the HPA's uid and kube's in-memory history of it. */
  const memory = new Map<string, { uid: string; history: ScalingHistory }>();

  const decide = (key: string, view: View, context: DecideContext): Decision => {
    const hpa = view.get(key);
    if (hpa?.kind !== 'HorizontalPodAutoscaler' || !hpa.spec) {
      if (!context.recorded) memory.delete(key);
      return { commands: [] };
    }
    const uid = hpa.metadata.uid ?? '';
    let inputs: HpaInputs;
    if (context.recorded) {
      // A re-run of a recorded decision: its figures and history are what it recorded.
      const found = recordedInputs(context.recorded, key);
      if (!found) return { commands: [] };
      inputs = found;
    } else {
      const latest = cache.latest(hpa.metadata.namespace ?? 'default');
      // The first figures of a namespace are on their way: decide when they are here.
      if (!latest) return { commands: [], requeueAfterMs: 1_000 };
      const remembered = memory.get(key);
      inputs = { metrics: targetSample(hpa, view, latest), history: remembered?.uid === uid ? remembered.history : undefined };
    }
    const plan = planHpa(hpa, view, context.now, inputs, options);
    if (!context.recorded) memory.set(key, { uid, history: plan.history });
    // In the order the log keeps them (desired topic, then observed), so a re-run compares equal.
    const commands: EventBody[] = [];
    if (plan.scale) commands.push(...plan.scale);
    const recorder = createRecorder(view, context.now, HPA_EVENT_SOURCE);
    for (const event of plan.events) recorder.event(hpa, event.type, event.reason, event.message);
    commands.push(...recorder.commands());
    if (planWrites(plan)) {
      const record = JSON.stringify({ metrics: inputs.metrics, history: inputs.history ?? null });
      commands.push(hpaStatusCommand(hpa, plan.status, { [DECISION_INPUTS_ANNOTATION]: record }));
    }
    return { commands, requeueAfterMs: syncPeriodMs };
  };

  return {
    name: HPA_CONTROLLER,
    keysFor: (change) => (change.object.kind === 'HorizontalPodAutoscaler' && change.topic !== 'observed' ? [change.key] : []),
    initialKeys: (view) => (view.list('HorizontalPodAutoscaler') as HorizontalPodAutoscaler[]).map(keyOf),
    decide,
    attach: (projection) => cache.attach(projection),
  };
};
