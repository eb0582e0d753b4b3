/**
 * The deployment controller: rolls a Deployment's pod template out through ReplicaSets
 * named by template hash (RollingUpdate within maxSurge/maxUnavailable, or Recreate),
 * propagates scaling, keeps revisionHistoryLimit old ReplicaSets, and reports the status
 * and conditions `rollout status` reads.
 *
 * Keys are Deployments. A Deployment change maps to itself (its own status writes
 * excepted); a ReplicaSet change to its controlling Deployment (an orphan one to the
 * Deployments selecting it); a Pod change to the Deployment of its ReplicaSet.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import type { Deployment, KubeObject } from '../../schemas/index.ts';
import { controllerRef, isBeingDeleted, keyOf, ownerKey } from '../replicaset/objects.ts';
import { createPodCountsAttachment } from '../replicaset/pod-counts.ts';
import type { Controller } from '../runtime.ts';
import { decideDeployment } from './decide.ts';
import { narrateDeployment } from './events.ts';
import { withEvents } from '../events/index.ts';

export * from './decide.ts';
export * from './revision.ts';
export * from './rollback.ts';
export * from './status.ts';
export * from './strategy.ts';
export * from './template.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:deployment`). */
export const DEPLOYMENT_CONTROLLER = 'deployment';

export interface DeploymentControllerOptions {
  /** Periodic resync of every Deployment (ms); off by default (time-based conditions use requeues). */
  readonly resyncMs?: number;
}

/** The Deployment controlling `rs` (by its controller reference), as a key. */
const deploymentOf = (rs: KubeObject): string[] => {
  const owner = controllerRef(rs);
  return owner?.kind === 'Deployment' ? [ownerKey(owner, rs.metadata.namespace)] : [];
};

/** Deployments in the namespace of orphan ReplicaSet `rs` whose selector matches it. */
const selectingDeployments = (rs: KubeObject, view: View): string[] =>
  (view.list('Deployment', rs.metadata.namespace) as Deployment[])
    .filter((d) => {
      const selector = labelSelectorToRequirements(d.spec.selector);
      return selector.type === 'ok' && selector.requirements.length > 0 && matchesLabels(selector.requirements, rs.metadata.labels);
    })
    .map(keyOf);

/** The Deployments a change concerns. */
export const deploymentKeysFor = (change: AppliedChange, view: View): string[] => {
  const object = change.object;
  switch (object.kind) {
    case 'Deployment':
      return change.topic === 'observed' ? [] : [change.key];
    case 'ReplicaSet':
      if (controllerRef(object)) return deploymentOf(object);
      return change.type === 'DELETED' || isBeingDeleted(object) ? [] : selectingDeployments(object, view);
    case 'Pod': {
      const owner = controllerRef(object);
      if (owner?.kind !== 'ReplicaSet') return [];
      const rs = view.get(ownerKey(owner, object.metadata.namespace));
      return rs ? deploymentOf(rs) : [];
    }
    default:
      return [];
  }
};

/** Creates the deployment controller. */
export const createDeploymentController = (options: DeploymentControllerOptions = {}): Controller => {
  // Pod counts per ReplicaSet from the change feed, for views at the projection's cursor.
  const counts = createPodCountsAttachment();
  return withEvents(
    {
      name: DEPLOYMENT_CONTROLLER,
      keysFor: deploymentKeysFor,
      initialKeys: (view) => view.list('Deployment').map(keyOf),
      decide: (key, view, { now }) => decideDeployment(key, view, now, counts.countsFor(view)),
      attach: counts.attach,
      ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
    },
    { component: 'deployment-controller' },
    narrateDeployment,
  );
};
