/**
 * The double-binding check of the chaos checker, from the topics alone (its own consumer;
 * no apiserver, no projection's verdicts).
 *
 * The log holds every PodBound a scheduler appended, the refused ones too (two schedulers of
 * a failing-over group may both bind a pod; the fold refuses the second), so a second PodBound
 * is not by itself a double binding. What the checker does judge:
 * - a pod uid that node agents of two different nodes reported status for (PodStatusChanged on
 *   the observed topic, actor = the node): the pod ran on two nodes;
 * - a pod uid reported by a node that no PodBound for it names (nor its create's spec.nodeName);
 * - a pod uid that two projections hold bound to different nodes, or that a projection holds
 *   bound to a node no PodBound for it names.
 * A PodBound's pod is resolved to its uid through the version it was decided on: its
 * `expectedPodVersion` names the pod's desired version (1 + the offset of the pod's latest
 * write, Pods and Nodes share one partition, so the order is total), and the write at that
 * offset names the uid. Resolving through "the latest create of that key" was wrong: pod names
 * are deterministic (`<rs>-<hash of rs uid and slot>`), so a ReplicaSet controller that fails
 * over re-creates a name that already exists with another uid, and the fold refuses that create.
 * Without a version (a binding posted by a user) the latest create of the key stands in.
 */
import type { EventLog, LogRecord } from '../../log/port.ts';
import type { EventEnvelope } from '../../schemas/index.ts';
import { decodeEvent } from '../../schemas/index.ts';

export interface BindingIndex {
  /** Pod key → uid of its latest create (while reading the desired topic in order). */
  readonly uidOfKey: Map<string, string>;
  /** Pod key → desired version (1 + offset of a write to it) → the uid that write names. */
  readonly uidAtVersion: Map<string, Map<number, string>>;
  /** Pod uid → the nodes its PodBound events (and its create's spec.nodeName) name, in log order. */
  readonly boundTo: Map<string, string[]>;
  /** Pod uid → the nodes whose agents reported its status. */
  readonly reportedBy: Map<string, Set<string>>;
  podBounds: number;
}

export const createBindingIndex = (): BindingIndex => ({ uidOfKey: new Map(), uidAtVersion: new Map(), boundTo: new Map(), reportedBy: new Map(), podBounds: 0 });

const POD_KEY = 'Pod/';

/** The uid the write at `version` of `key` named, if the index saw one. */
const uidAt = (index: BindingIndex, key: string, version: string | null | undefined): string | undefined => {
  const desired = Number(version?.split('.')[0]);
  return Number.isInteger(desired) ? index.uidAtVersion.get(key)?.get(desired) : undefined;
};

const remember = (index: BindingIndex, key: string, offset: number, uid: string | null | undefined): void => {
  if (!uid) return;
  const versions = index.uidAtVersion.get(key) ?? new Map<number, string>();
  versions.set(offset + 1, uid);
  index.uidAtVersion.set(key, versions);
};

/** Folds one desired event, read at `offset` of its partition, into the index (in partition order). */
export const indexDesired = (index: BindingIndex, event: EventEnvelope, offset: number): void => {
  const body = event.body;
  if (!event.key.startsWith(POD_KEY)) return;
  switch (body.type) {
    case 'ObjectCreated': {
      if (body.object.kind !== 'Pod') return;
      const uid = body.object.metadata.uid ?? event.id;
      index.uidOfKey.set(event.key, uid);
      remember(index, event.key, offset, uid);
      const node = body.object.spec?.nodeName;
      if (node) index.boundTo.set(uid, [...(index.boundTo.get(uid) ?? []), node]);
      return;
    }
    case 'PodBound': {
      index.podBounds++;
      const uid = body.expectedPodVersion ? uidAt(index, event.key, body.expectedPodVersion) : index.uidOfKey.get(event.key);
      remember(index, event.key, offset, uid);
      if (uid !== undefined) index.boundTo.set(uid, [...(index.boundTo.get(uid) ?? []), body.node]);
      return;
    }
    case 'ObjectUpdated':
      remember(index, event.key, offset, body.object.metadata.uid ?? uidAt(index, event.key, body.expectedResourceVersion));
      return;
    case 'ObjectDeleted':
      remember(index, event.key, offset, body.uid ?? uidAt(index, event.key, body.expectedResourceVersion));
      return;
    default:
      return;
  }
};

/** Reads the observed topic from 0 to `end` and records which node reported each pod uid. */
export const indexObserved = async (index: BindingIndex, log: EventLog, end: readonly number[], each?: (record: LogRecord) => void): Promise<number> => {
  let events = 0;
  for (let partition = 0; partition < end.length; partition++) {
    for (let from = 0; from < end[partition]!; ) {
      const records = await log.read('observed', partition, from, Math.min(end[partition]!, from + 5_000));
      if (records.length === 0) break;
      for (const record of records) {
        events++;
        each?.(record);
        const event = decodeEvent(record.value);
        if (event.body.type !== 'PodStatusChanged' || event.actor.type !== 'node' || !event.body.uid) continue;
        const nodes = index.reportedBy.get(event.body.uid) ?? new Set<string>();
        nodes.add(event.actor.name);
        index.reportedBy.set(event.body.uid, nodes);
      }
      from = records[records.length - 1]!.offset + 1;
    }
  }
  return events;
};

export interface BindingVerdict {
  readonly podBounds: number;
  /** Pods with PodBound events naming more than one node (all but one must have been refused). */
  readonly contested: number;
  readonly doubleBindings: readonly string[];
}

/** `projections`: per projection, pod uid → the node it holds the pod bound to. */
export const judgeBindings = (index: BindingIndex, projections: ReadonlyMap<string, ReadonlyMap<string, string>>): BindingVerdict => {
  const doubleBindings: string[] = [];
  for (const [uid, nodes] of index.reportedBy) {
    if (nodes.size > 1) doubleBindings.push(`pod ${uid} ran on ${[...nodes].join(' and ')} (status reported by each)`);
    const named = index.boundTo.get(uid) ?? [];
    for (const node of nodes) {
      if (!named.includes(node)) doubleBindings.push(`pod ${uid} reported by ${node}, which no binding of it names (${named.join(', ') || 'none'})`);
    }
  }
  const heldBy = new Map<string, { node: string; projection: string }>();
  for (const [projection, pods] of projections) {
    for (const [uid, node] of pods) {
      const first = heldBy.get(uid);
      if (first && first.node !== node) doubleBindings.push(`pod ${uid} bound to ${first.node} in ${first.projection}, to ${node} in ${projection}`);
      if (!first) heldBy.set(uid, { node, projection });
      const named = index.boundTo.get(uid);
      if (named && !named.includes(node)) doubleBindings.push(`${projection}: pod ${uid} bound to ${node}, which no binding of it names (${named.join(', ')})`);
    }
  }
  const contested = [...index.boundTo.values()].filter((nodes) => new Set(nodes).size > 1).length;
  return { podBounds: index.podBounds, contested, doubleBindings };
};
