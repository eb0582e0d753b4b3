/**
 * No-op writes, as kube-apiserver tells them: its storage (`GuaranteedUpdate`) compares
 * the object it would store with the stored one and writes nothing when they are the
 * same, after `BeforeUpdate` has put back the fields a writer cannot set and
 * `IgnoreManagedFieldsTimestampsTransformer` has reverted managedFields timestamps of an
 * otherwise unchanged object. Such a write answers the stored object, resourceVersion
 * unchanged, and appends nothing.
 */
import type { KubeObject } from '../../schemas/index.ts';
import { jsonEqual, type Json } from '../patch/json.ts';

/**
 * `object` as the fold would store it over `current`, for comparison: without its
 * resourceVersion and managedFields timestamps, with the system fields the fold keeps
 * from the stored object (uid when absent, creationTimestamp, generation, the deletion
 * fields; kube's `BeforeUpdate`).
 */
const comparable = (object: KubeObject, current: KubeObject): Json => {
  const { resourceVersion: _version, managedFields, ...metadata } = object.metadata;
  const kept = current.metadata;
  return {
    ...object,
    metadata: {
      ...metadata,
      uid: metadata.uid || kept.uid,
      creationTimestamp: kept.creationTimestamp,
      generation: kept.generation,
      deletionTimestamp: kept.deletionTimestamp,
      deletionGracePeriodSeconds: kept.deletionGracePeriodSeconds,
      managedFields: managedFields?.map(({ time: _time, ...entry }) => entry),
    },
  };
};

/** Whether writing `object` (admitted, with its managedFields recorded) over `current` would change nothing. */
export const changesNothing = (object: KubeObject, current: KubeObject): boolean =>
  jsonEqual(comparable(object, current), comparable(current, current));
