/**
 * The nodes' Leases in `kube-node-lease` and their renewals, as kubelet's node lease
 * controller keeps them, with the log's split between history and liveness: the Lease
 * (holder the node, duration 40 s, owned by its Node) is created once on the desired topic,
 * and renewed by a `NodeHeartbeat` on the heartbeats topic every period (kubelet's 10 s),
 * so the forever log does not grow with the renewals. The node lifecycle controller judges
 * a node by the latest renewal, and the apiserver serves the Lease with it as `renewTime`.
 *
 * A missing Lease (not created yet because `kube-node-lease` did not exist, or deleted) is
 * created on the next renewal once the namespace exists and is not terminating, as kubelet's
 * `ensureLease`; a deleted one is recreated at once. The renewals do not wait for the Lease:
 * they are the node's liveness whether or not its Lease object exists yet.
 */
import type { Logger } from 'pino';
import { filter, type Subscription } from 'rxjs';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, appendBodies, type Projection, type View } from '../projections/index.ts';
import { kindRef, type EventBody, type Lease, type Node } from '../schemas/index.ts';

/** The namespace of the nodes' Leases (kube's `NamespaceNodeLease`). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** kubelet's `nodeLeaseDurationSeconds` default. */
export const NODE_LEASE_DURATION_SECONDS = 40;

/** The key of `node`'s Lease. */
export const nodeLeaseKey = (node: string): string => `${kindRef('Lease')}/${NODE_LEASE_NAMESPACE}/${node}`;

/** kube's MicroTime text (RFC 3339 with microseconds). */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/**
 * `node`'s Lease as kubelet's `newLease` makes it: held by the node for 40 s, renewed at
 * `now`, and owned by its Node (so the garbage collector deletes it with the Node).
 */
export const nodeLease = (node: Node, now: number): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {
    name: node.metadata.name,
    namespace: NODE_LEASE_NAMESPACE,
    ...(node.metadata.uid ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid }] } : {}),
  },
  spec: { holderIdentity: node.metadata.name, leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS, renewTime: microTime(now) },
});

/** The creations of the Leases `nodes` lack in `view` (none while `kube-node-lease` is missing or terminating). */
export const missingLeases = (view: View, nodes: readonly string[], now: number): EventBody[] => {
  const namespace = view.get(`Namespace//${NODE_LEASE_NAMESPACE}`);
  if (!namespace || namespace.metadata.deletionTimestamp) return [];
  const existing = new Set(view.keys('Lease', NODE_LEASE_NAMESPACE));
  const creations: EventBody[] = [];
  for (const name of nodes) {
    if (existing.has(nodeLeaseKey(name))) continue;
    const node = view.get(`Node//${name}`);
    if (node?.kind === 'Node') creations.push({ type: 'ObjectCreated', object: nodeLease(node, now) });
  }
  return creations;
};

export interface NodeLeaseOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly logger: Logger;
  /** The registered nodes whose Leases this agent keeps. */
  readonly nodes: readonly string[];
  /** How often the Leases are renewed (kubelet's 10 s: a quarter of the duration). */
  readonly renewIntervalMs: number;
}

export interface NodeLeases {
  /** Stops the renewals (the Leases stay, as kubelet leaves them; they expire). */
  close(): void;
}

/** Creates the nodes' missing Leases and renews them every `renewIntervalMs`, starting now. */
export const startNodeLeases = (options: NodeLeaseOptions): NodeLeases => {
  const { log, projection, logger, nodes } = options;
  const actor = { type: 'node' as const, name: nodes.length === 1 ? nodes[0]! : 'node-agent' };
  const leaseKeys = new Set(nodes.map(nodeLeaseKey));
  let creating = false;
  let closed = false;
  const ensureLeases = (): void => {
    if (creating || closed) return;
    const creations = missingLeases(projection.view(), nodes, Date.now());
    if (creations.length === 0) return;
    creating = true;
    // Waits for the projection, so the next look finds the Leases and does not create them twice.
    appendAndWait(log, projection, creations, { actor })
      .catch((error: unknown) => logger.warn({ error: String(error) }, 'creating node leases failed; will retry on the next renewal'))
      .finally(() => {
        creating = false;
      });
  };
  const renew = (): void => {
    const now = Date.now();
    void appendBodies(log, nodes.map((node): EventBody => ({ type: 'NodeHeartbeat', node, time: now })), { actor: { type: 'node', name: 'node-agent' } }).catch(
      (error: unknown) => logger.warn({ error: String(error) }, 'heartbeat append failed; will retry on the next beat'),
    );
    ensureLeases();
  };
  const recreate: Subscription = projection.changes$
    .pipe(filter((change) => (change.type === 'DELETED' && leaseKeys.has(change.key)) || (change.type === 'ADDED' && change.key === `Namespace//${NODE_LEASE_NAMESPACE}`)))
    .subscribe(ensureLeases);
  renew();
  const timer = setInterval(renew, options.renewIntervalMs);
  timer.unref();
  return {
    close: () => {
      closed = true;
      clearInterval(timer);
      recreate.unsubscribe();
    },
  };
};
