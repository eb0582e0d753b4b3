/**
 * The garbage-collector decision, pure. A key is looked at in two roles:
 *
 * - as an owner being deleted with a finalizer the collector serves:
 *   `orphan`: strip this owner's reference from every dependent, then (next round, once
 *   the view shows none left) remove the finalizer so the fold completes the deletion;
 *   `foregroundDeletion`: delete the dependents (Foreground for those that own objects
 *   themselves), and remove the finalizer once no dependent that blocks owner deletion
 *   remains;
 * - as a dependent: when every owner it names (by uid) is gone it is deleted
 *   (Background); when only some are, the dangling references are removed.
 *
 * Owners and dependents are objects of any kind: the registry's, and custom resources'
 * (written as the apiserver writes them, `../object-writes.ts`).
 */
import type { View } from '../../projections/index.ts';
import type { EventBody, KubeObject, OwnerReference } from '../../schemas/index.ts';
import { deletionOf, updatesOf } from '../object-writes.ts';
import { isBeingDeleted, parseTime } from '../replicaset/objects.ts';
import type { Decision } from '../runtime.ts';

/** Finalizers the garbage collector serves. */
export const FINALIZER = { Orphan: 'orphan', Foreground: 'foregroundDeletion' } as const;

/**
 * Default time a dependent younger than this waits before its missing owner counts as
 * deleted, when the log has several partitions (the owner's partition may lag behind the
 * dependent's in this projection). With one partition the log order rules that out.
 */
export const DEFAULT_ABSENT_OWNER_GRACE_MS = 5_000;

export interface GarbageCollectorDecideOptions {
  /** See {@link DEFAULT_ABSENT_OWNER_GRACE_MS}. */
  readonly absentOwnerGraceMs?: number;
}

/** Whether `object` is being deleted and waits for the collector (orphan or foregroundDeletion finalizer). */
export const awaitsCollector = (object: KubeObject): boolean =>
  isBeingDeleted(object) &&
  (object.metadata.finalizers ?? []).some((f) => f === FINALIZER.Orphan || f === FINALIZER.Foreground);

const referenceTo = (dependent: KubeObject, uid: string): OwnerReference | undefined =>
  (dependent.metadata.ownerReferences ?? []).find((ref) => ref.uid === uid);

/** `object` without the owner references for which `drop` holds. */
const withoutReferences = (object: KubeObject, drop: (ref: OwnerReference) => boolean): KubeObject => {
  const kept = (object.metadata.ownerReferences ?? []).filter((ref) => !drop(ref));
  const { ownerReferences: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata: kept.length === 0 ? metadata : { ...metadata, ownerReferences: kept } } as KubeObject;
};

/** `object` without `finalizer`. */
const withoutFinalizer = (object: KubeObject, finalizer: string): KubeObject => {
  const kept = (object.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  const { finalizers: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata: kept.length === 0 ? metadata : { ...metadata, finalizers: kept } } as KubeObject;
};

/** Orphan: dependents lose their reference first; the finalizer goes once none is left. */
const orphanDependents = (owner: KubeObject, view: View): Decision => {
  const uid = owner.metadata.uid ?? '';
  const dependents = view.ownedBy(uid);
  if (dependents.length > 0) {
    return {
      commands: dependents.flatMap((dependent) => updatesOf(dependent, withoutReferences(dependent, (ref) => ref.uid === uid), view)),
      // The updates remove the references the change feed would map back to this owner: look again once they applied.
      requeueAfterMs: 0,
    };
  }
  return { commands: updatesOf(owner, withoutFinalizer(owner, FINALIZER.Orphan), view) };
};

/** Foreground: delete the dependents; the finalizer goes once no blocking dependent is left. */
const deleteDependentsFirst = (owner: KubeObject, view: View): Decision => {
  const uid = owner.metadata.uid ?? '';
  const dependents = view.ownedBy(uid);
  const commands: EventBody[] = [];
  for (const dependent of dependents) {
    const otherOwners = (dependent.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== uid);
    const survives = otherOwners.some((ref) => {
      const other = view.byUid(ref.uid);
      return other !== undefined && !awaitsCollector(other);
    });
    if (survives) {
      commands.push(...updatesOf(dependent, withoutReferences(dependent, (ref) => ref.uid === uid), view));
    } else if (!isBeingDeleted(dependent)) {
      const ownsOthers = view.ownedBy(dependent.metadata.uid ?? '').length > 0;
      commands.push(deletionOf(dependent, ownsOthers ? 'Foreground' : 'Background'));
    }
  }
  const blocking = dependents.filter((dependent) => referenceTo(dependent, uid)?.blockOwnerDeletion === true);
  if (blocking.length === 0) commands.push(...updatesOf(owner, withoutFinalizer(owner, FINALIZER.Foreground), view));
  return { commands };
};

/** As a dependent: delete it when all its owners are gone, or drop the references to the gone ones. */
const collectDependent = (object: KubeObject, view: View, now: number, graceMs: number): Decision => {
  const refs = object.metadata.ownerReferences ?? [];
  if (refs.length === 0) return { commands: [] };
  const absent = refs.filter((ref) => view.byUid(ref.uid) === undefined);
  if (absent.length === 0) return { commands: [] };
  if (view.position.desired.length > 1) {
    const created = parseTime(object.metadata.creationTimestamp) ?? 0;
    const wait = created + graceMs - now;
    if (wait > 0) return { commands: [], requeueAfterMs: wait };
  }
  if (absent.length < refs.length) {
    const gone = new Set(absent.map((ref) => ref.uid));
    return { commands: updatesOf(object, withoutReferences(object, (ref) => gone.has(ref.uid)), view) };
  }
  return { commands: isBeingDeleted(object) ? [] : [deletionOf(object, 'Background')] };
};

/** Decides object `key` for the garbage collector. */
export const decideGarbage = (key: string, view: View, now: number, options: GarbageCollectorDecideOptions = {}): Decision => {
  const object = view.get(key);
  if (!object) return { commands: [] };
  const finalizers = object.metadata.finalizers ?? [];
  if (isBeingDeleted(object) && finalizers.includes(FINALIZER.Orphan)) return orphanDependents(object, view);
  if (isBeingDeleted(object) && finalizers.includes(FINALIZER.Foreground)) return deleteDependentsFirst(object, view);
  return collectDependent(object, view, now, options.absentOwnerGraceMs ?? DEFAULT_ABSENT_OWNER_GRACE_MS);
};
