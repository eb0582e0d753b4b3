/**
 * A node's Lease in `kube-node-lease`, as the node lifecycle controller reads it: the Lease
 * object (created once by the node's agent) is in the view, and its renewals are the node's
 * heartbeats, on their own topic (node-agent/node-lease.ts).
 */
import type { View } from '../../projections/index.ts';
import { kindRef, type Lease } from '../../schemas/index.ts';
import type { HeartbeatTracker } from './heartbeats.ts';

/** The namespace of the nodes' Leases (kube's `NamespaceNodeLease`). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

const LEASE_PREFIX = `${kindRef('Lease')}/${NODE_LEASE_NAMESPACE}/`;

/** The node whose Lease `key` names, if it names one. */
export const nodeOfLeaseKey = (key: string): string | undefined => (key.startsWith(LEASE_PREFIX) ? key.slice(LEASE_PREFIX.length) : undefined);

/**
 * Epoch ms of the latest renewal of `node`'s Lease: the later of the Lease's own `renewTime`
 * (its creation by the agent, or a client's update) and its latest heartbeat; undefined when
 * neither is known. A `renewTime` before the tracker's horizon does not count, as heartbeats
 * that old are not read either.
 */
export const lastRenewal = (view: View, node: string, heartbeats: Pick<HeartbeatTracker, 'lastSeen' | 'horizon'>): number | undefined => {
  const lease = view.get(`${LEASE_PREFIX}${node}`) as Lease | undefined;
  const renewed = Date.parse(lease?.spec?.renewTime ?? '');
  const recorded = Number.isFinite(renewed) && renewed >= heartbeats.horizon ? renewed : undefined;
  const beat = heartbeats.lastSeen(node);
  if (recorded === undefined) return beat;
  return beat === undefined ? recorded : Math.max(recorded, beat);
};
