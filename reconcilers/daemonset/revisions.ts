/**
 * A DaemonSet's ControllerRevisions (kube's `constructHistory`): the current revision is
 * the one whose data is the DaemonSet's template now (created as `<ds>-<hash>` when none
 * is, renumbered past the others when an older one is: a rollback); the others are old.
 * Its `controller-revision-hash` label is the hash its pods carry.
 */
import type { View } from '../../projections/index.ts';
import type { ControllerRevision, DaemonSet, EventBody, PodTemplateSpec } from '../../schemas/index.ts';
import {
  computeTemplateHash,
  CONTROLLER_REVISION_HASH_LABEL,
  controllerRevisionName,
  newControllerRevision,
  renumberCommand,
  templatePatch,
} from '../history/index.ts';
import { canonicalJson, deleteCommand } from '../replicaset/objects.ts';

/** Collision counts tried before giving up. */
const MAX_COLLISIONS = 1000;

export interface DaemonSetRevisions {
  readonly current: ControllerRevision;
  /** The hash of the current revision: the label of up-to-date pods. */
  readonly hash: string;
  readonly old: readonly ControllerRevision[];
  readonly collisionCount: number | undefined;
  readonly commands: readonly EventBody[];
}

/** The DaemonSet's template (empty without a spec). */
export const dsTemplate = (ds: DaemonSet): PodTemplateSpec => ds.spec?.template ?? { spec: { containers: [] } };

/** Decides the current revision of `ds` among `revisions` (its own, sorted by revision). */
export const daemonSetRevisions = (ds: DaemonSet, revisions: readonly ControllerRevision[], view: View): DaemonSetRevisions => {
  const template = dsTemplate(ds);
  const data = templatePatch(template);
  const matches = (r: ControllerRevision): boolean => canonicalJson(r.data) === canonicalJson(data);
  const currents = revisions.filter(matches);
  const old = revisions.filter((r) => !matches(r));
  const next = Math.max(0, ...old.map((r) => r.revision)) + 1;
  let collisionCount = ds.status?.collisionCount;
  const commands: EventBody[] = [];
  let current: ControllerRevision;
  if (currents.length === 0) {
    let hash = computeTemplateHash(template, collisionCount);
    for (let tries = 0; tries < MAX_COLLISIONS && view.get(`ControllerRevision/${ds.metadata.namespace ?? 'default'}/${controllerRevisionName(ds.metadata.name, hash)}`); tries++) {
      collisionCount = (collisionCount ?? 0) + 1;
      hash = computeTemplateHash(template, collisionCount);
    }
    current = newControllerRevision({
      owner: ds,
      name: controllerRevisionName(ds.metadata.name, hash),
      labels: { ...template.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
      data,
      revision: next,
    });
    commands.push({ type: 'ObjectCreated', object: current });
  } else {
    // kube's dedupCurHistories: the highest revision stays, the duplicates go.
    const sorted = [...currents].sort((a, b) => a.revision - b.revision);
    current = sorted.at(-1) as ControllerRevision;
    for (const duplicate of sorted.slice(0, -1)) commands.push(deleteCommand(duplicate));
    if (current.revision < next) {
      commands.push(renumberCommand(current, next));
      current = { ...current, revision: next };
    }
  }
  const hash = current.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? current.metadata.name;
  return { current, hash, old, collisionCount, commands };
};
