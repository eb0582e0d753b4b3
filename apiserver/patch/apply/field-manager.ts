/**
 * kube-apiserver's field manager for one write, as its wrapper chain does it
 * (`NewDefaultFieldManager`: version check, last-applied updater and manager, cap on
 * update managers, managedFields times, stripped metadata, structured merge):
 * - `recordUpdate`: a create, update or non-apply patch; the writer takes the fields it
 *   added or changed (operation Update);
 * - `serverSideApply`: an apply patch merged into the live object (operation Apply),
 *   with conflicts, `force`, pruning, and kubectl's client-side → server-side migration.
 * Both run in the request path with the request's time; the fold only stores the result.
 */
import { apiErrors, ApiError } from '../../errors.ts';
import { CAUSE_TYPES, failureStatus } from '../../status.ts';
import { isObject, type Json, type JsonObject } from '../json.ts';
import { difference, fieldElement, isEmpty, pathString, setOf, type FieldSet } from './fieldpath.ts';
import {
  capUpdateManagers,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managedTime,
  managerIdentifier,
  type Managed,
  type ManagedFieldsEntry,
  type ManagerInfo,
} from './managed-fields.ts';
import type { MergeType } from './schema.ts';
import { compareValues, toFieldSet, TypedValueError } from './typed.ts';
import { applyConfig, ApplyConflicts, updateManagers, type Conflict, type UpdaterContext } from './updater.ts';

/** kube's annotation of client-side apply. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The object a write is about. */
export interface FieldManagerTarget {
  /** The merge type of the kind's objects at this version (`mergeTypeOf`, `customMergeType`). */
  readonly type: MergeType;
  /** `apps/v1`. */
  readonly apiVersion: string;
  /**
   * Whether status is written only through /status, so the main resource's writes and
   * applies own none of it (the built-in kinds; a custom resource with a status subresource).
   */
  readonly statusIsSubresource: boolean;
}

/** The fields kube's stripMeta manager keeps out of every manager's set. */
const STRIPPED: FieldSet = setOf(
  [fieldElement('apiVersion')],
  [fieldElement('kind')],
  [fieldElement('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => [
    fieldElement('metadata'),
    fieldElement(f),
  ]),
);

/** The main resource's reset fields when status is written only through /status. */
const STATUS_IGNORED: FieldSet = setOf([fieldElement('status')]);

/** The updater's context; a write through /status owns what it changes there (only status differs then). */
const contextOf = (target: FieldManagerTarget, subresource?: string): UpdaterContext => ({
  type: target.type,
  ignored: target.statusIsSubresource && subresource !== 'status' ? STATUS_IGNORED : setOf(),
  stripped: STRIPPED,
});

/** The object without `metadata.managedFields`. */
const withoutManagedFields = (object: Json): Json => {
  if (!isObject(object) || !isObject(object['metadata'])) return object;
  const { managedFields: _managedFields, ...metadata } = object['metadata'];
  return { ...object, metadata };
};

const managedFieldsOf = (object: Json): unknown => (isObject(object) && isObject(object['metadata']) ? object['metadata']['managedFields'] : undefined);

const decodeOrEmpty = (entries: unknown): Managed => {
  try {
    return decodeManagedFields(entries);
  } catch {
    return emptyManaged();
  }
};

/**
 * kube's `decodeLiveOrNew`: managedFields the request set explicitly win (an empty list
 * clears them); absent or undecodable ones are the live object's.
 */
const managedOfUpdate = (live: Json, requested: unknown): Managed => {
  if (isResetManagedFields(requested)) return emptyManaged();
  if (Array.isArray(requested) && requested.length > 0) {
    try {
      return decodeManagedFields(requested);
    } catch {
      return decodeOrEmpty(managedFieldsOf(live));
    }
  }
  return decodeOrEmpty(managedFieldsOf(live));
};

const withManager = (managed: Managed, fields: Map<string, { set: FieldSet; applied: boolean }>): Managed => {
  const info = new Map([...managed.info].filter(([id]) => fields.has(id)));
  const times = new Map([...managed.times].filter(([id]) => fields.has(id)));
  return { fields, info, times };
};

/**
 * The managedFields after `manager` wrote `next` over `live` (undefined: a create) with
 * a create, update or non-apply patch at `time` (epoch millis). `requested` is the
 * managedFields the request body carried.
 */
export const recordUpdate = (options: {
  readonly target: FieldManagerTarget;
  readonly live: Json;
  readonly next: Json;
  readonly requested: unknown;
  readonly manager: string;
  readonly time: number;
  /** `scale` or `status` for a write through that subresource: its entry is its own, naming the subresource. */
  readonly subresource?: string;
}): ManagedFieldsEntry[] => {
  const { target, manager, time } = options;
  const managed = options.live === undefined ? (Array.isArray(options.requested) && !isResetManagedFields(options.requested) ? decodeOrEmpty(options.requested) : emptyManaged()) : managedOfUpdate(options.live, options.requested);
  const info: ManagerInfo = { manager, operation: 'Update', apiVersion: target.apiVersion, subresource: options.subresource ?? '' };
  const id = managerIdentifier(info);
  const live = options.live === undefined ? {} : withoutManagedFields(options.live);
  const updated = updateManagers(contextOf(target, options.subresource), live, withoutManagedFields(options.next), managed.fields, id);
  const result = withManager(managed, updated.managers);
  if (updated.touched) {
    result.info.set(id, info);
    result.times.set(id, managedTime(time));
  }
  capUpdateManagers(result);
  return encodeManagedFields(result);
};

const printManager = (id: string): string => {
  const info = JSON.parse(id) as Partial<ManagerInfo>;
  let text = JSON.stringify(info.manager ?? '');
  if (info.subresource) text = `${text} with subresource ${JSON.stringify(info.subresource)}`;
  return info.operation === 'Update' ? `${text} using ${info.apiVersion ?? ''}` : text;
};

/** kube's `NewConflictError`: 409 Conflict naming each manager and field. */
export const conflictError = (conflicts: readonly Conflict[]): ApiError => {
  const causes = conflicts.map((c) => ({ reason: CAUSE_TYPES.FieldManagerConflict, message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), pathString(c.path)]);
    const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${printManager(m)}:`, ...byManager.get(m)!.map((p) => `- ${p}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(failureStatus('Conflict', message, { causes }));
};

/**
 * The fields the client-side apply annotation says kubectl applied and that still hold
 * their applied values: what `kubectl apply --server-side` may take over without a
 * conflict (kube's lastAppliedManager). Undefined when there is no usable annotation.
 */
const allowedFromLastApplied = (target: FieldManagerTarget, live: Json): FieldSet | undefined => {
  const annotations = isObject(live) && isObject(live['metadata']) ? live['metadata']['annotations'] : undefined;
  const text = isObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof text !== 'string' || text === '') return undefined;
  let lastApplied: Json;
  try {
    lastApplied = JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
  if (!isObject(lastApplied) || lastApplied['apiVersion'] !== target.apiVersion) return undefined;
  const type = target.type;
  try {
    const set = toFieldSet(type, lastApplied, { strict: true });
    const comparison = compareValues(type, lastApplied, live);
    return difference(difference(difference(set, comparison.modified), comparison.added), comparison.removed);
  } catch (error) {
    if (error instanceof TypedValueError) return undefined;
    throw error;
  }
};

/** kube's lastAppliedUpdater: kubectl's applies keep the client-side annotation, when there is one, in step. */
const syncLastApplied = (object: Json, config: JsonObject): Json => {
  if (!isObject(object) || !isObject(object['metadata'])) return object;
  const annotations = object['metadata']['annotations'];
  if (!isObject(annotations) || annotations[LAST_APPLIED_ANNOTATION] === undefined) return object;
  const applied = structuredClone(config) as JsonObject;
  const appliedMetadata = isObject(applied['metadata']) ? applied['metadata'] : undefined;
  if (appliedMetadata && isObject(appliedMetadata['annotations'])) {
    const { [LAST_APPLIED_ANNOTATION]: _last, ...rest } = appliedMetadata['annotations'];
    if (Object.keys(rest).length === 0) delete appliedMetadata['annotations'];
    else appliedMetadata['annotations'] = rest;
  }
  return { ...object, metadata: { ...object['metadata'], annotations: { ...annotations, [LAST_APPLIED_ANNOTATION]: JSON.stringify(applied) } } };
};

/** The result of an apply: the object to admit (with its managedFields) and whether anything changed. */
export interface Applied {
  readonly object: Json;
  readonly changed: boolean;
}

/**
 * Server-side apply of `config` by `manager` over `live` (undefined: the object is
 * created). Throws 409 (kube's conflict Status) or 400 (a configuration the schema does
 * not fit; managedFields set; another apiVersion).
 */
export const serverSideApply = (options: {
  readonly target: FieldManagerTarget;
  readonly live: Json;
  readonly config: Json;
  readonly manager: string;
  readonly force: boolean;
  readonly time: number;
}): Applied => {
  const { target, manager, force, time } = options;
  const config = options.config;
  if (!isObject(config)) throw apiErrors.badRequest('an apply patch must be an object');
  if (isObject(config['metadata']) && config['metadata']['managedFields'] !== undefined && config['metadata']['managedFields'] !== null) {
    throw apiErrors.badRequest('metadata.managedFields must be nil');
  }
  if (config['apiVersion'] !== target.apiVersion) {
    throw apiErrors.badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(config['apiVersion'] ?? '')}, expected: ${target.apiVersion}`);
  }
  const context = contextOf(target);
  const managed = decodeOrEmpty(options.live === undefined ? undefined : managedFieldsOf(options.live));
  const info: ManagerInfo = { manager, operation: 'Apply', apiVersion: target.apiVersion, subresource: '' };
  const id = managerIdentifier(info);
  const live = options.live === undefined ? {} : withoutManagedFields(options.live);
  const run = (forced: boolean) => applyConfig(context, live, config, managed.fields, id, forced);
  let result: ReturnType<typeof run>;
  try {
    try {
      result = run(force);
    } catch (error) {
      if (!(error instanceof ApplyConflicts) || manager !== 'kubectl') throw error;
      const allowed = allowedFromLastApplied(target, live);
      if (!allowed) throw error;
      const remaining = error.conflicts.filter((c) => {
        const single = setOf(c.path);
        return !isEmpty(difference(single, allowed));
      });
      if (remaining.length > 0) throw new ApplyConflicts(remaining);
      result = run(true);
    }
  } catch (error) {
    if (error instanceof ApplyConflicts) throw conflictError(error.conflicts);
    if (error instanceof TypedValueError) {
      throw apiErrors.badRequest(`failed to create typed patch object (${target.apiVersion}, Kind=${String(config['kind'] ?? '')}): ${error.message}`);
    }
    throw error;
  }
  let object = result.object;
  if (manager === 'kubectl') object = syncLastApplied(object, config);
  const changed = result.changed || object !== result.object;
  const recorded = withManager(managed, result.managers);
  if (result.managers.has(id)) {
    recorded.info.set(id, info);
    if (changed) recorded.times.set(id, managedTime(time));
  }
  const entries = encodeManagedFields(recorded);
  return { object: withEntries(object, entries), changed };
};

const withEntries = (object: Json, entries: ManagedFieldsEntry[]): Json => {
  if (!isObject(object)) return object;
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  const { managedFields: _previous, ...rest } = metadata;
  return { ...object, metadata: entries.length > 0 ? { ...rest, managedFields: entries } : rest };
};
