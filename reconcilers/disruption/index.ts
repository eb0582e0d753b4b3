/**
 * The disruption controller (kube's `pkg/controller/disruption`): keeps every
 * PodDisruptionBudget's status — expected pods, desired and current healthy pods,
 * disruptions allowed, the evictions still pending in `disruptedPods`, and the
 * `DisruptionAllowed` condition — which the eviction subresource of the apiserver
 * consumes. Keys are budgets; a pod change maps to the budgets of its namespace that
 * select it. Budgets and pods share the scheduling partition domain, so one instance
 * owns a budget with all of its pods.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../schemas/index.ts';
import { createRecorder, type Recorder } from '../events/index.ts';
import { canonicalJson, keyOf } from '../replicaset/objects.ts';
import type { Controller, Decision } from '../runtime.ts';
import {
  budgetsForPod,
  countHealthyPods,
  expectedPodCount,
  failSafeStatus,
  nextStatus,
  pendingDisruptions,
  podsForBudget,
} from './budget.ts';

export * from './budget.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:disruption`). */
export const DISRUPTION_CONTROLLER = 'disruption';

/** kube's component of the disruption controller's Events. */
export const DISRUPTION_SOURCE = { component: 'controllermanager' } as const;

/** The budgets a change concerns: a budget itself (spec or status), or those selecting a pod. */
export const disruptionKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  if (object.kind === 'PodDisruptionBudget') return [change.key];
  if (object.kind !== 'Pod') return [];
  return budgetsForPod(object, view).map(keyOf);
};

/**
 * A status write of `pdb`, judged by the fold against the resourceVersion it was read at,
 * so a write decided before an eviction's decrement is rejected rather than undoing it.
 */
const statusWrite = (pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus): Decision['commands'][number] => {
  const object = structuredClone(pdb);
  const expected = object.metadata.resourceVersion ?? null;
  delete object.metadata.resourceVersion;
  object.status = status;
  return { type: 'ObjectUpdated', object, expectedResourceVersion: expected, subresource: 'status' };
};

/** kube's `trySync`, and its `failSafe` when the sync fails: the status write and the Events of one budget. */
export const decideBudget = (pdb: PodDisruptionBudget, view: View, now: number, recorder: Recorder): Decision => {
  const events: (() => void)[] = [];
  try {
    const pods = podsForBudget(pdb, view);
    if (pods.length === 0) events.push(() => recorder.event(pdb, 'Normal', 'NoPods', 'No matching pods found'));
    let counts: ReturnType<typeof expectedPodCount>;
    try {
      counts = expectedPodCount(pdb, pods, view);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      events.push(() => recorder.event(pdb, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${message}`));
      throw error;
    }
    if (counts.unmanagedPods.length > 0) {
      events.push(() =>
        recorder.event(
          pdb,
          'Warning',
          'UnmanagedPods',
          `Pods selected by this PodDisruptionBudget (selector: ${selectorText(pdb)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
        ),
      );
    }
    const { disruptedPods, expired, recheckAt } = pendingDisruptions(pdb, pods, now);
    for (const pod of expired) {
      const namespace = pdb.metadata.namespace ?? '';
      // kube's message names the namespace twice (its format string passes Namespace for the name).
      events.push(() => recorder.event(pod, 'Warning', 'NotDeleted', `Pod was expected by PDB ${namespace}/${namespace} to be deleted but it wasn't`));
    }
    const currentHealthy = countHealthyPods(pods, disruptedPods, now);
    const status = nextStatus(pdb, { currentHealthy, desiredHealthy: counts.desiredHealthy, expectedCount: counts.expectedCount, disruptedPods }, now);
    const requeue = recheckAt !== undefined ? { requeueAfterMs: Math.max(0, recheckAt - now) + 1 } : {};
    if (!status) return { commands: [], ...requeue };
    for (const record of events) record();
    return { commands: [statusWrite(pdb, status), ...recorder.commands()], ...requeue };
  } catch (error) {
    const status = failSafeStatus(pdb, error instanceof Error ? error.message : String(error), now);
    if (canonicalJson(status) === canonicalJson(pdb.status)) return { commands: [] };
    for (const record of events) record();
    return { commands: [statusWrite(pdb, status), ...recorder.commands()] };
  }
};

const selectorText = (pdb: PodDisruptionBudget): string => JSON.stringify(pdb.spec?.selector ?? null);

/** Creates the disruption controller. */
export const createDisruptionController = (): Controller => ({
  name: DISRUPTION_CONTROLLER,
  keysFor: disruptionKeysFor,
  initialKeys: (view) => view.list('PodDisruptionBudget').map(keyOf),
  decide: (key, view, { now }) => {
    const pdb = view.get(key);
    if (pdb?.kind !== 'PodDisruptionBudget') return { commands: [] };
    return decideBudget(pdb, view, now, createRecorder(view, now, DISRUPTION_SOURCE));
  },
});
