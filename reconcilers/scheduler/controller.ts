/**
 * The scheduler as a reconciler: unscheduled pods are keys; a round decides them in
 * order against one snapshot of the nodes, "assuming" each binding it makes so later
 * pods of the round see the capacity taken. Each binding is a `PodBound` event carrying
 * the rationale; the fold still judges it (capacity, still unbound) in log order.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { EventBody, Node, Pod, PodCondition } from '../../schemas/index.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import { assumePod, buildNodeInfos, type NodeInfo } from './framework.ts';
import { createDefaultProfile } from './plugins/index.ts';
import { schedule } from './scheduler.ts';

export interface SchedulerOptions {
  /** Pods whose spec.schedulerName differs are left alone (default "default-scheduler"). */
  readonly schedulerName?: string;
}

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const podKey = (pod: Pod): string => `Pod/${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** Decides where each pod of `keys` goes, in key order, against one snapshot of the cluster. */
export const decidePods = (
  keys: readonly string[],
  view: View,
  context: DecideContext,
  schedulerName: string,
): Map<string, Decision> => {
  const profile = createDefaultProfile();
  const nodes = view.list('Node') as Node[];
  const bound = (view.list('Pod') as Pod[]).filter((p) => p.spec.nodeName);
  let infos: NodeInfo[] = buildNodeInfos(nodes, bound);
  const decisions = new Map<string, Decision>();
  for (const key of [...keys].sort()) {
    const pod = view.get(key) as Pod | undefined;
    if (!pod || pod.kind !== 'Pod' || pod.spec.nodeName || pod.metadata.deletionTimestamp) {
      decisions.set(key, { commands: [] });
      continue;
    }
    if ((pod.spec.schedulerName ?? 'default-scheduler') !== schedulerName) {
      decisions.set(key, { commands: [] });
      continue;
    }
    const result = schedule(pod, infos, profile);
    switch (result.type) {
      case 'bound': {
        const command: EventBody = {
          type: 'PodBound',
          namespace: pod.metadata.namespace ?? 'default',
          name: pod.metadata.name,
          node: result.node,
          expectedPodVersion: pod.metadata.resourceVersion ?? null,
          rationale: {
            filtered: result.rationale.filtered.map((f) => ({ node: f.node, reasons: [...f.reasons] })),
            scores: result.rationale.scores.map((s) => ({ node: s.node, score: s.score, plugins: s.plugins.map((p) => ({ ...p })) })),
            feasibleNodes: result.rationale.feasibleNodes,
            totalNodes: result.rationale.totalNodes,
          },
        };
        infos = infos.map((info) => (info.node.metadata.name === result.node ? assumePod(info, pod) : info));
        decisions.set(key, { commands: [command] });
        break;
      }
      case 'unschedulable': {
        const conditions = pod.status?.conditions ?? [];
        const current = conditions.find((c) => c.type === 'PodScheduled');
        if (current?.status === 'False' && current.message === result.message) {
          decisions.set(key, { commands: [] });
          break;
        }
        const condition: PodCondition = {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: result.message,
          lastTransitionTime: isoTime(context.now),
        };
        decisions.set(key, {
          commands: [
            {
              type: 'ObjectUpdated',
              object: {
                ...pod,
                status: { ...pod.status, phase: 'Pending', conditions: [...conditions.filter((c) => c.type !== 'PodScheduled'), condition] },
              },
              expectedResourceVersion: null,
              subresource: 'status',
            },
          ],
        });
        break;
      }
      default: {
        const unreachable: never = result;
        throw new Error(`unexpected schedule result ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return decisions;
};

const unscheduledKeys = (view: View): string[] => view.unscheduledPods().map(podKey);

/** Keys to retry when the cluster changed in a way that may make room. */
const keysFor = (change: AppliedChange, view: View): readonly string[] => {
  if (change.key.startsWith('Node/')) return unscheduledKeys(view);
  if (!change.key.startsWith('Pod/')) return [];
  const pod = change.object as Pod;
  if (!pod.spec.nodeName) return [change.key];
  // A bound pod that went away (or finished) may have freed room for the waiting ones.
  const phase = pod.status?.phase;
  if (change.type === 'DELETED' || phase === 'Succeeded' || phase === 'Failed') return unscheduledKeys(view);
  return [];
};

/** Creates the scheduler controller. */
export const createSchedulerController = (options: SchedulerOptions = {}): Controller => {
  const schedulerName = options.schedulerName ?? 'default-scheduler';
  return {
    name: 'scheduler',
    keysFor,
    initialKeys: unscheduledKeys,
    decide: (key, view, context) => decidePods([key], view, context, schedulerName).get(key) ?? { commands: [] },
    decideAll: (keys, view, context) => decidePods(keys, view, context, schedulerName),
  };
};
