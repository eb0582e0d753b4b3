/**
 * Field ownership across managers, as structured-merge-diff's `merge.Updater` keeps it:
 * `update` (a create, update or non-apply patch: the writer takes every field it added or
 * changed, others lose them and any field removed) and `apply` (server-side apply: the
 * configuration is merged in, fields the applier stopped applying and nobody else owns
 * are pruned, and a change to a field another manager owns is a conflict unless forced).
 */
import { jsonEqual, type Json } from '../json.ts';
import { difference, intersection, isEmpty, leaves, recursiveDifference, union, type FieldSet, type Path } from './fieldpath.ts';
import type { MergeType } from './schema.ts';
import { compareValues, ensureNamedFieldsAreMembers, mergeValues, removeItems, toFieldSet, type Comparison } from './typed.ts';

/** One manager's fields. `applied`: from Apply operations. */
export interface ManagerFields {
  readonly set: FieldSet;
  readonly applied: boolean;
}

/** Managers by identifier (see `managed-fields.ts`). */
export type Managers = ReadonlyMap<string, ManagerFields>;

/** Fields the apply would take from another manager. */
export interface Conflict {
  readonly manager: string;
  readonly path: Path;
}

/** The apply changed fields other managers own; nothing was changed. */
export class ApplyConflicts extends Error {
  override readonly name = 'ApplyConflicts';
  constructor(readonly conflicts: readonly Conflict[]) {
    super(`${conflicts.length} apply conflicts`);
  }
}

/**
 * The schema of one object; the fields no manager owns below them (`status` for the main
 * resource: kube's reset fields); the fields taken out of a writer's set, not below them
 * (kube's stripMeta: apiVersion, kind, metadata and its system fields).
 */
export interface UpdaterContext {
  readonly type: MergeType;
  readonly ignored: FieldSet;
  readonly stripped: FieldSet;
}

const without = (comparison: Comparison, ignored: FieldSet): Comparison => ({
  added: recursiveDifference(comparison.added, ignored),
  modified: recursiveDifference(comparison.modified, ignored),
  removed: recursiveDifference(comparison.removed, ignored),
});

/**
 * Takes from every manager but `writer` the fields `live → next` changed (a conflict
 * unless `force`) or removed, and drops managers left with nothing.
 */
const takeOwnership = (
  context: UpdaterContext,
  live: Json,
  next: Json,
  managers: Managers,
  writer: string,
  force: boolean,
): { managers: Map<string, ManagerFields>; comparison: Comparison } => {
  const comparison = without(compareValues(context.type, live, next), context.ignored);
  const changed = union(comparison.modified, comparison.added);
  const conflicts: Conflict[] = [];
  const out = new Map<string, ManagerFields>();
  for (const [manager, fields] of managers) {
    if (manager === writer) {
      out.set(manager, fields);
      continue;
    }
    const conflicting = intersection(fields.set, changed);
    if (!isEmpty(conflicting)) for (const path of leaves(conflicting)) conflicts.push({ manager, path });
    const kept = difference(difference(fields.set, conflicting), comparison.removed);
    if (!isEmpty(kept)) out.set(manager, { set: kept, applied: fields.applied });
  }
  if (!force && conflicts.length > 0) throw new ApplyConflicts(conflicts);
  return { managers: out, comparison };
};

/** What a write left: the object and its managers. */
export interface Updated {
  readonly object: Json;
  readonly managers: Map<string, ManagerFields>;
  /** Whether `writer`'s fields changed, so its entry's time moves. */
  readonly touched: boolean;
}

/** SMD's `Update` wrapped as kube's managedFieldsUpdater does: `writer` takes what `live → next` added or changed. */
export const updateManagers = (context: UpdaterContext, live: Json, next: Json, managers: Managers, writer: string): Updated => {
  const { managers: out, comparison } = takeOwnership(context, live, next, managers, writer, true);
  const taken = difference(recursiveDifference(union(comparison.modified, comparison.added), context.ignored), context.stripped);
  const previous = out.get(writer);
  if (isEmpty(taken)) {
    if (previous) {
      const kept = difference(previous.set, comparison.removed);
      if (isEmpty(kept)) out.delete(writer);
      else out.set(writer, { set: kept, applied: false });
    }
    return { object: next, managers: out, touched: false };
  }
  const base = previous ? difference(previous.set, comparison.removed) : undefined;
  out.set(writer, { set: base ? union(base, taken) : taken, applied: false });
  return { object: next, managers: out, touched: true };
};

/**
 * Removes what `applier` applied last time (`lastSet`) and applies no more, unless
 * another manager (or its new configuration) owns it (SMD's `prune`).
 */
const prune = (context: UpdaterContext, merged: Json, managers: Managers, lastSet: FieldSet | undefined): Json => {
  if (!lastSet || isEmpty(lastSet)) return merged;
  const ensure = (set: FieldSet) => ensureNamedFieldsAreMembers(context.type, set);
  let owned: FieldSet | undefined;
  for (const fields of managers.values()) owned = owned ? union(owned, fields.set) : fields.set;
  const mergedSet = ensure(toFieldSet(context.type, merged));
  const toRemove = difference(intersection(mergedSet, ensure(lastSet)), ensure(owned ?? lastSet));
  return isEmpty(toRemove) ? merged : removeItems(context.type, merged, toRemove);
};

/**
 * SMD's `Apply`: merges `config` into `live`, gives `applier` exactly the fields of the
 * configuration, prunes what it no longer applies, and takes fields from other managers
 * (throwing `ApplyConflicts` when it would change a field they own, unless `force`).
 * `changed` is false when the object stays as it was.
 */
export const applyConfig = (
  context: UpdaterContext,
  live: Json,
  config: Json,
  managers: Managers,
  applier: string,
  force: boolean,
): Updated & { readonly changed: boolean } => {
  const configSet = recursiveDifference(toFieldSet(context.type, config, { strict: true }), context.ignored);
  const merged = mergeValues(context.type, live, config, { strict: true });
  const lastSet = managers.get(applier)?.set;
  const withApplier = new Map(managers);
  withApplier.set(applier, { set: configSet, applied: true });
  const pruned = prune(context, merged, withApplier, lastSet);
  const { managers: out } = takeOwnership(context, live, pruned, withApplier, applier, force);
  const applied = difference(configSet, context.stripped);
  if (isEmpty(applied)) out.delete(applier);
  else out.set(applier, { set: applied, applied: true });
  const changed = !jsonEqual(live, pruned);
  return { object: pruned, managers: out, touched: changed, changed };
};
