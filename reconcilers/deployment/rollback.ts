/**
 * Rollback as kubectl does it (`rollout undo`): the client copies the pod template of an
 * earlier revision's ReplicaSet into the Deployment; the controller then finds that
 * ReplicaSet again by its template and makes it current under a new revision number.
 */
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../schemas/index.ts';
import { isControlledBy } from '../replicaset/objects.ts';
import { revisionOf, sameTemplate, templateWithoutHash } from './template.ts';

/** What a rollback would do. */
export type RollbackResult =
  /** Apply `template` to the Deployment's spec.template to roll back to `revision`. */
  | { readonly type: 'rollback'; readonly revision: number; readonly template: PodTemplateSpec }
  /** The Deployment already runs that revision's template; nothing to apply. */
  | { readonly type: 'skipped'; readonly revision: number; readonly message: string }
  /** No such revision (or no earlier one) among the Deployment's ReplicaSets. */
  | { readonly type: 'notFound'; readonly message: string };

/**
 * The template to roll `deployment` back to: `toRevision`'s, or without it (or with 0)
 * the revision before the latest, among the ReplicaSets the Deployment controls. The
 * template comes without the pod-template-hash label, as kubectl copies it.
 */
export const rollbackTemplate = (
  deployment: Deployment,
  replicaSets: readonly ReplicaSet[],
  toRevision?: number,
): RollbackResult => {
  const history = replicaSets
    .filter((rs) => isControlledBy(rs, deployment.metadata.uid) && revisionOf(rs) > 0 && rs.spec.template)
    .sort((a, b) => revisionOf(b) - revisionOf(a));
  const name = deployment.metadata.name;
  let target: ReplicaSet | undefined;
  if (toRevision === undefined || toRevision === 0) {
    if (history.length === 0) return { type: 'notFound', message: `no rollout history found for deployment "${name}"` };
    target = history[1];
    if (!target) return { type: 'notFound', message: `no previous revision to roll back to for deployment "${name}"` };
  } else {
    target = history.find((rs) => revisionOf(rs) === toRevision);
    if (!target) return { type: 'notFound', message: `unable to find specified revision ${toRevision} in history` };
  }
  const revision = revisionOf(target);
  const template = templateWithoutHash(target.spec.template as PodTemplateSpec);
  if (sameTemplate(template, deployment.spec.template)) {
    return { type: 'skipped', revision, message: `skipped rollback (current template already matches revision ${revision})` };
  }
  return { type: 'rollback', revision, template };
};
