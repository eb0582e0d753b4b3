/**
 * The node-lifecycle controller: a node whose Lease in `kube-node-lease` is not renewed (its
 * heartbeats stop; see lease.ts) is marked Ready=Unknown
 * after the grace period and tainted `node.kubernetes.io/unreachable:NoExecute`; a node
 * whose agent reports Ready=False is tainted `node.kubernetes.io/not-ready:NoExecute`
 * (the two taints are exclusive, as kube's); its pods are evicted once their toleration of
 * that taint runs out, so their ReplicaSets replace them elsewhere. A node that heartbeats
 * again and is Ready loses the taint.
 */
import type { View } from '../../projections/index.ts';
import type { EventBody, Node, NodeCondition, Pod, Taint } from '../../schemas/index.ts';
import { toleratesTaint } from '../scheduler/plugins/taint-toleration/index.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import type { HeartbeatTracker } from './heartbeats.ts';
import { withNodeEvents } from './events.ts';
import { lastRenewal, nodeOfLeaseKey } from './lease.ts';

/** The NoExecute taint of a node whose Ready condition is Unknown. */
export const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
/** The NoExecute taint of a node whose Ready condition is False. */
export const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

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

/**
 * Seconds `pod` tolerates `taint` (Infinity: forever; 0: not at all), as kube's taint
 * manager (`getMinTolerationTime`): the smallest `tolerationSeconds` among the tolerations
 * that match (a toleration without one does not lengthen it), forever only when no matching
 * toleration sets any. A pod with no matching toleration gets `defaultSeconds`, the
 * toleration kube's DefaultTolerationSeconds admission adds for the not-ready and
 * unreachable taints.
 */
export const tolerationSeconds = (pod: Pod, taint: Taint, defaultSeconds: number): number => {
  const matching = (pod.spec.tolerations ?? []).filter((t) => toleratesTaint(t, taint));
  if (matching.length === 0) return defaultSeconds;
  const limited = matching.flatMap((t) => (t.tolerationSeconds === undefined || t.tolerationSeconds === null ? [] : [t.tolerationSeconds]));
  if (limited.length === 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.min(...limited));
};

/** The NoExecute taint a Ready condition status calls for (kube keeps the two mutually exclusive), if any. */
const taintKeyFor = (status: string | undefined): string | undefined => {
  switch (status) {
    case 'False':
      return NOT_READY_TAINT;
    case 'Unknown':
      return UNREACHABLE_TAINT;
    default:
      return undefined;
  }
};

const isLifecycleTaint = (taint: Taint): boolean =>
  taint.effect === 'NoExecute' && (taint.key === UNREACHABLE_TAINT || taint.key === NOT_READY_TAINT);

/**
 * Decides one node from the age at `now` of its Lease's last renewal (`lastHeartbeat`, see
 * lease.ts): its Ready condition (Unknown once silent
 * past the grace period, True again when heard from), the NoExecute taint that condition
 * calls for (`node.kubernetes.io/not-ready` for False, `…/unreachable` for Unknown, none for
 * True), and the eviction of its pods once their toleration of that taint has run out.
 */
export const decideNode = (
  node: Node,
  view: View,
  lastHeartbeat: number,
  context: DecideContext,
  options: { gracePeriodMs: number; defaultTolerationSeconds: number },
  /** Whether `lastHeartbeat` is a renewal actually seen (not the tracker's start). */
  heardFrom = true,
): Decision => {
  const name = node.metadata.name;
  const silentFor = context.now - lastHeartbeat;
  const silent = silentFor > options.gracePeriodMs;
  const taints = node.spec?.taints ?? [];
  const commands: EventBody[] = [];
  const conditions = node.status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  const setReady = (condition: NodeCondition): void => {
    commands.push({
      type: 'NodeStatusChanged',
      name,
      status: { ...node.status, conditions: [...conditions.filter((c) => c.type !== 'Ready'), condition] },
    });
  };

  let readyStatus = ready?.status;
  if (silent && ready?.status !== 'Unknown') {
    readyStatus = 'Unknown';
    setReady({
      type: 'Ready',
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastHeartbeatTime: isoTime(lastHeartbeat),
      lastTransitionTime: isoTime(context.now),
    });
  } else if (!silent && heardFrom && ready?.status === 'Unknown' && ready.reason === 'NodeStatusUnknown') {
    // The agent posts its status only when it starts; heartbeats are its lease renewals, so the
    // Unknown this controller set is lifted here, or the node would stay NotReady (and unschedulable).
    readyStatus = 'True';
    setReady({
      type: 'Ready',
      status: 'True',
      reason: 'KubeletReady',
      message: 'logplane agent is posting ready status',
      lastHeartbeatTime: isoTime(lastHeartbeat),
      lastTransitionTime: isoTime(context.now),
    });
  }

  const wantedKey = taintKeyFor(readyStatus);
  const kept = taints.filter((t) => !isLifecycleTaint(t) || t.key === wantedKey);
  const current = kept.find((t) => isLifecycleTaint(t) && t.key === wantedKey);
  if (wantedKey !== undefined && !current) {
    commands.push(nodeUpdate(node, [...kept, { key: wantedKey, effect: 'NoExecute', timeAdded: isoTime(context.now) }]));
    return { commands, requeueAfterMs: 1000 };
  }
  if (kept.length !== taints.length) commands.push(nodeUpdate(node, kept));
  if (!current) return silent ? { commands } : { commands, requeueAfterMs: options.gracePeriodMs - silentFor + 1 };

  const taintedAt = Date.parse(current.timeAdded ?? isoTime(context.now));
  let nextCheck = silent ? Number.POSITIVE_INFINITY : options.gracePeriodMs - silentFor + 1;
  for (const pod of view.podsOnNode(name)) {
    if (pod.metadata.deletionTimestamp && pod.metadata.deletionGracePeriodSeconds === 0) continue;
    const seconds = tolerationSeconds(pod, current, options.defaultTolerationSeconds);
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

const nodeUpdate = (node: Node, taints: Taint[]): EventBody => ({
  type: 'ObjectUpdated',
  object: { ...node, spec: { ...node.spec, taints } },
  expectedResourceVersion: node.metadata.resourceVersion ?? null,
  subresource: null,
});

/** Creates the node-lifecycle controller. */
export const createNodeLifecycleController = (options: NodeLifecycleOptions): Controller => {
  const settings = {
    gracePeriodMs: options.gracePeriodMs ?? 50_000,
    defaultTolerationSeconds: options.defaultTolerationSeconds ?? 300,
  };
  const nodeKeys = (view: View): string[] => view.list('Node').map((n) => `Node//${n.metadata.name}`);
  return {
    name: 'node-lifecycle',
    keysFor: (change) => {
      if (change.key.startsWith('Node/')) return [change.key];
      const leased = nodeOfLeaseKey(change.key);
      return leased === undefined ? [] : [`Node//${leased}`];
    },
    initialKeys: nodeKeys,
    resyncMs: options.resyncMs ?? 1000,
    decide: (key, view, context) => {
      const node = view.get(key) as Node | undefined;
      if (!node) return { commands: [] };
      const renewed = lastRenewal(view, node.metadata.name, options.heartbeats);
      return withNodeEvents(node, view, context.now, decideNode(node, view, renewed ?? options.heartbeats.since, context, settings, renewed !== undefined));
    },
  };
};

export { trackHeartbeats, type HeartbeatTracker } from './heartbeats.ts';
export { lastRenewal, NODE_LEASE_NAMESPACE } from './lease.ts';
