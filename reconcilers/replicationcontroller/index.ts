/**
 * The replicationcontroller controller: kube-controller-manager's ReplicationManager, the
 * ReplicaSet controller over core/v1 ReplicationControllers (an equality selector, the
 * apiserver defaulting it from the template's labels). Same guarantees as the replicaset
 * controller: deterministic pod names, adoption of matching orphans, replacement of
 * finished and deleted pods, surplus removal in kube's order, and status (replicas,
 * fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration).
 */
import type { Controller } from '../runtime.ts';
import { createReplicatedController, type ReplicaSetControllerOptions } from '../replicaset/index.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:replicationcontroller`). */
export const REPLICATION_CONTROLLER = 'replicationcontroller';

/** Creates the replicationcontroller controller. */
export const createReplicationController = (options: ReplicaSetControllerOptions = {}): Controller =>
  createReplicatedController('ReplicationController', REPLICATION_CONTROLLER, options, 'replication-controller');
