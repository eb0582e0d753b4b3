/**
 * The nodes' Leases as served: each node's Lease in `kube-node-lease` is stored once (its
 * agent creates it) and renewed by the node's heartbeats, which are not folded (their topic
 * is liveness, not history). A read of the current state serves the Lease with its latest
 * renewal as `renewTime`, as kube's Lease reads show it; a read of the past, and a watch,
 * show the stored Lease.
 */
import type { KubeObject } from '../schemas/index.ts';
import { microTime } from './system-objects/plan.ts';

/** The namespace of the nodes' Leases (kube's `NamespaceNodeLease`). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Where the apiserver learns the nodes' latest renewals (the composition root follows the heartbeats topic). */
export interface NodeLeaseRenewals {
  /** Epoch ms of `node`'s latest renewal seen, if any. */
  lastSeen(node: string): number | undefined;
}

/** `object` with its latest renewal as `renewTime` when it is a node's Lease renewed since it was stored. */
export const withLatestRenewal = (object: KubeObject, renewals: NodeLeaseRenewals | undefined): KubeObject => {
  if (renewals === undefined || object.kind !== 'Lease' || object.metadata.namespace !== NODE_LEASE_NAMESPACE) return object;
  const renewed = renewals.lastSeen(object.metadata.name);
  if (renewed === undefined) return object;
  const stored = Date.parse(object.spec?.renewTime ?? '');
  if (Number.isFinite(stored) && stored >= renewed) return object;
  return { ...object, spec: { ...object.spec, renewTime: microTime(renewed) } };
};
