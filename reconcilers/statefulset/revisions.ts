/**
 * A StatefulSet's current and update revisions (kube's `getStatefulSetRevisions`): the
 * update revision is the one whose data equals the set's template now (created when none
 * does, renumbered to the newest when an older one does: a rollback), the current one is
 * `status.currentRevision` (the update revision when unknown). A revision name already
 * taken by other data bumps the collision count until the name is free.
 */
import type { View } from '../../projections/index.ts';
import type { ControllerRevision, EventBody, PodTemplateSpec, StatefulSet } from '../../schemas/index.ts';
import {
  controllerRevisionName,
  equalRevision,
  hashControllerRevision,
  newControllerRevision,
  nextRevision,
  renumberCommand,
  templateOfRevision,
  templatePatch,
  CONTROLLER_REVISION_HASH_LABEL,
} from '../history/index.ts';

/** Collision counts tried before giving up (a name is taken only by other data; far beyond what happens). */
const MAX_COLLISIONS = 1000;

export interface SetRevisions {
  readonly current: ControllerRevision;
  readonly update: ControllerRevision;
  readonly collisionCount: number;
  /** The template of the current and of the update revision. */
  readonly currentTemplate: PodTemplateSpec;
  readonly updateTemplate: PodTemplateSpec;
  /** The revision create or renumbering this needs (none when the update revision exists as the newest). */
  readonly commands: readonly EventBody[];
}

/** The set's pod template (a set without a spec has an empty one). */
const templateOf = (set: StatefulSet): PodTemplateSpec => set.spec?.template ?? { spec: { containers: [] } };

/** The revision of `set`'s template now, numbered `revision`, hashed with `collisionCount`. */
export const newSetRevision = (set: StatefulSet, revision: number, collisionCount: number): ControllerRevision => {
  const data = templatePatch(templateOf(set));
  const hash = hashControllerRevision(data, collisionCount);
  return newControllerRevision({
    owner: set,
    name: controllerRevisionName(set.metadata.name, hash),
    labels: { ...set.spec?.template.metadata?.labels, [CONTROLLER_REVISION_HASH_LABEL]: hash },
    data,
    revision,
  });
};

/** Decides the current and update revisions of `set` among `revisions` (its own, sorted by revision). */
export const setRevisions = (set: StatefulSet, revisions: readonly ControllerRevision[], view: View): SetRevisions => {
  let collisionCount = set.status?.collisionCount ?? 0;
  let update = newSetRevision(set, nextRevision(revisions), collisionCount);
  const commands: EventBody[] = [];
  const equal = revisions.filter((r) => equalRevision(r, update));
  const last = revisions.at(-1);
  const newestEqual = equal.at(-1);
  if (newestEqual && last && newestEqual.metadata.name === last.metadata.name) {
    update = last;
  } else if (newestEqual) {
    commands.push(renumberCommand(newestEqual, update.revision));
    update = { ...newestEqual, revision: update.revision };
  } else {
    const namespace = set.metadata.namespace ?? 'default';
    for (let tries = 0; tries < MAX_COLLISIONS; tries++) {
      const taken = view.get(`ControllerRevision/${namespace}/${update.metadata.name}`);
      if (taken === undefined) break;
      collisionCount += 1;
      update = newSetRevision(set, update.revision, collisionCount);
    }
    commands.push({ type: 'ObjectCreated', object: update });
  }
  const current = revisions.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
  const updateTemplate = templateOf(set);
  return {
    current,
    update,
    collisionCount,
    currentTemplate: current === update ? updateTemplate : (templateOfRevision(current) ?? updateTemplate),
    updateTemplate,
    commands,
  };
};
