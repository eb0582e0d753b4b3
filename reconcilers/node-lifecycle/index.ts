/**
 * The node-lifecycle controller: a node whose heartbeats stop is marked Ready=Unknown
 * after the grace period and tainted `node.kubernetes.io/unreachable:NoExecute`; its pods
 * are evicted once their toleration of that taint runs out, so their ReplicaSets replace
 * them elsewhere. A node that heartbeats again loses the taint.
 */
import type { View } from '../../projections/index.ts';
import type { EventBody, Node, NodeCondition, Pod, Taint } from '../../schemas/index.ts';
import { toleratesTaint } from '../scheduler/plugins/taint-toleration/index.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import type { HeartbeatTracker } from './heartbeats.ts';

export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';

export interface NodeLifecycleOptions {
  readonly heartbeats: HeartbeatTracker;
  /** How long a node may be silent before it is Ready=Unknown (default 50 s, as Kubernetes 1.32). */
  readonly gracePeriodMs?: number;
  /** Toleration of the unreachable taint for pods that do not say (default 300 s). */
  readonly defaultTolerationSeconds?: number;
  /** How often nodes are re-checked (default 1 s). */
  readonly resyncMs?: number;
}

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Seconds `pod` tolerates `taint` (Infinity: forever; 0: not at all). */
export const tolerationSeconds = (pod: Pod, taint: Taint, defaultSeconds: number): number => {
  const matching = (pod.spec.tolerations ?? []).filter((t) => toleratesTaint(t, taint));
  if (matching.length === 0) return defaultSeconds;
  if (matching.some((t) => t.tolerationSeconds === undefined)) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.min(...matching.map((t) => t.tolerationSeconds ?? 0)));
};

/** Decides one node: condition, taint and evictions, from the heartbeat age at `now`. */
export const decideNode = (
  node: Node,
  view: View,
  lastHeartbeat: number,
  context: DecideContext,
  options: { gracePeriodMs: number; defaultTolerationSeconds: number },
  /** Whether `lastHeartbeat` is a heartbeat actually seen (not the tracker's start). */
  heardFrom = true,
): Decision => {
  const name = node.metadata.name;
  const silentFor = context.now - lastHeartbeat;
  const taints = node.spec?.taints ?? [];
  const unreachable = taints.find((t) => t.key === UNREACHABLE_TAINT && t.effect === 'NoExecute');
  const commands: EventBody[] = [];
  const nodeUpdate = (nextTaints: Taint[]): EventBody => ({
    type: 'ObjectUpdated',
    object: { ...node, spec: { ...node.spec, taints: nextTaints } },
    expectedResourceVersion: node.metadata.resourceVersion ?? null,
    subresource: null,
  });

  const conditions = node.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');

  if (silentFor <= options.gracePeriodMs) {
    if (unreachable) commands.push(nodeUpdate(taints.filter((t) => t !== unreachable)));
    // The agent posts its status only when it starts; heartbeats are its lease renewals, so the
    // Unknown this controller set is lifted here, or the node would stay NotReady (and unschedulable).
    if (heardFrom && ready?.status === 'Unknown' && ready.reason === 'NodeStatusUnknown') {
      const readyAgain: NodeCondition = {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'logplane agent is posting ready status',
        lastHeartbeatTime: isoTime(lastHeartbeat),
        lastTransitionTime: isoTime(context.now),
      };
      commands.push({
        type: 'NodeStatusChanged',
        name,
        status: { ...node.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), readyAgain] },
      });
    }
    return { commands, requeueAfterMs: options.gracePeriodMs - silentFor + 1 };
  }

  if (ready?.status !== 'Unknown') {
    const unknown: NodeCondition = {
      type: 'Ready',
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: isoTime(lastHeartbeat),
      lastTransitionTime: isoTime(context.now),
    };
    commands.push({
      type: 'NodeStatusChanged',
      name,
      status: { ...node.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), unknown] },
    });
  }
  if (!unreachable) {
    commands.push(nodeUpdate([...taints, { key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: isoTime(context.now) }]));
    return { commands, requeueAfterMs: 1000 };
  }

  const taintedAt = Date.parse(unreachable.timeAdded ?? isoTime(context.now));
  let nextCheck = Number.POSITIVE_INFINITY;
  for (const pod of view.podsOnNode(name)) {
    if (pod.metadata.deletionTimestamp && pod.metadata.deletionGracePeriodSeconds === 0) continue;
    const seconds = tolerationSeconds(pod, unreachable, options.defaultTolerationSeconds);
    const due = taintedAt + seconds * 1000;
    if (due <= context.now) {
      commands.push({
        type: 'ObjectDeleted',
        kind: 'Pod',
        namespace: pod.metadata.namespace ?? 'default',
        name: pod.metadata.name,
        expectedResourceVersion: null,
        uid: pod.metadata.uid ?? null,
        propagationPolicy: null,
        gracePeriodSeconds: 0,
      });
    } else {
      nextCheck = Math.min(nextCheck, due - context.now);
    }
  }
  return Number.isFinite(nextCheck) ? { commands, requeueAfterMs: nextCheck } : { commands };
};

/** Creates the node-lifecycle controller. */
export const createNodeLifecycleController = (options: NodeLifecycleOptions): Controller => {
  const settings = {
    gracePeriodMs: options.gracePeriodMs ?? 50_000,
    defaultTolerationSeconds: options.defaultTolerationSeconds ?? 300,
  };
  const nodeKeys = (view: View): string[] => view.list('Node').map((n) => `Node//${n.metadata.name}`);
  return {
    name: 'node-lifecycle',
    keysFor: (change) => (change.key.startsWith('Node/') ? [change.key] : []),
    initialKeys: nodeKeys,
    resyncMs: options.resyncMs ?? 1000,
    decide: (key, view, context) => {
      const node = view.get(key) as Node | undefined;
      if (!node) return { commands: [] };
      const seen = options.heartbeats.lastSeen(node.metadata.name);
      return decideNode(node, view, seen ?? options.heartbeats.since, context, settings, seen !== undefined);
    },
  };
};

export { trackHeartbeats, type HeartbeatTracker } from './heartbeats.ts';
