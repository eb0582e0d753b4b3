/**
 * The garbage collector: the ownerReference cascade (Deployment → ReplicaSet → Pod, and
 * any other owner/dependent pair) with Background, Foreground and Orphan propagation.
 *
 * Keys are objects: those being deleted with an `orphan` or `foregroundDeletion`
 * finalizer, and dependents whose owners may be gone. A deleted object maps to its
 * dependents and to its owners that wait for their dependents; a changed object maps to
 * itself (when it awaits the collector or names a missing owner) and to its owners that
 * await the collector. Custom objects (of every CRD's kind) are owners and dependents too.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { KINDS, type CustomResourceDefinition } from '../../schemas/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { objectKeyOf } from '../object-writes.ts';
import type { Controller } from '../runtime.ts';
import { awaitsCollector, decideGarbage, type GarbageCollectorDecideOptions } from './decide.ts';

export * from './decide.ts';

/** The controller's name: its consumer group and the actor of its events (`controller:garbage-collector`). */
export const GARBAGE_COLLECTOR = 'garbage-collector';

export interface GarbageCollectorOptions extends GarbageCollectorDecideOptions {
  /** Periodic full scan (ms); off by default. */
  readonly resyncMs?: number;
}

/** The objects a change concerns. */
export const garbageKeysFor = (change: AppliedChange, view: View): string[] => {
  if (change.topic === 'observed') return [];
  const object = change.object;
  const keys = new Set<string>();
  // Each owner is looked up once (a uid-index read per owner reference and change).
  const owners = (object.metadata.ownerReferences ?? []).map((ref) => view.byUid(ref.uid));
  if (change.type === 'DELETED') {
    for (const dependent of view.ownedBy(object.metadata.uid ?? '')) keys.add(objectKeyOf(dependent));
  } else {
    if (awaitsCollector(object)) keys.add(change.key);
    if (owners.includes(undefined)) keys.add(change.key);
  }
  for (const owner of owners) {
    if (owner && awaitsCollector(owner)) keys.add(objectKeyOf(owner));
  }
  return [...keys];
};

/** The kind refs of the registry's kinds and of the custom resources the CRDs in `view` serve. */
const collectedKinds = (view: View): string[] => [
  ...KINDS,
  ...(view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[]).map((crd) => kindRefOf(crd.spec.group, crd.spec.names.kind)),
];

/** Every object, of a registry kind or a custom one, that awaits the collector or names a missing owner. */
export const garbageInitialKeys = (view: View): string[] =>
  collectedKinds(view)
    .flatMap((kind) => view.list(kind))
    .filter((object) => awaitsCollector(object) || (object.metadata.ownerReferences ?? []).some((ref) => view.byUid(ref.uid) === undefined))
    .map(objectKeyOf);

/** Creates the garbage collector. */
export const createGarbageCollector = (options: GarbageCollectorOptions = {}): Controller => ({
  name: GARBAGE_COLLECTOR,
  keysFor: garbageKeysFor,
  initialKeys: garbageInitialKeys,
  decide: (key, view, { now }) => decideGarbage(key, view, now, options),
  ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
});
