/**
 * The controllers apiextensions-apiserver runs for CustomResourceDefinitions, as one
 * reconciler (issue 16):
 *
 * - naming and establishing (`NamingConditionController`, `EstablishingController`): a
 *   CRD's names are accepted unless another CRD of its group has accepted one of them
 *   (`NamesAccepted`), and a CRD with accepted names is `Established`, which is when the
 *   apiserver serves its resources; `status.storedVersions` gains the storage version;
 * - finalizing (`crdFinalizer`): a deleted CRD is held by the finalizer
 *   `customresourcecleanup.apiextensions.k8s.io` (the fold adds it), `Terminating` is set,
 *   every object of its kind is deleted, and once none is left the finalizer is removed.
 *
 * Condition times are the decision's `now`, recorded with the commands it gives, so a
 * replay and `debug reconcile` decide the same.
 */
import { CUSTOM_RESOURCE_DEFINITION_FINALIZER, type AppliedChange, type View } from '../../projections/index.ts';
import type { CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames, EventBody, KubeObject } from '../../schemas/index.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { sameJson } from '../../schemas/canonical-json.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import { kindByRef } from '../../schemas/kinds/registry.ts';
import { deletionOf } from '../object-writes.ts';
import { isoTime, statusCommand, updateCommand } from '../replicaset/objects.ts';
import type { Controller, Decision } from '../runtime.ts';

/** The controller's name: its consumer group and the actor of its events. */
export const CUSTOM_RESOURCE_DEFINITION_CONTROLLER = 'customresourcedefinition';

const crdKey = (name: string): string => `${CUSTOM_RESOURCE_DEFINITION_REF}//${name}`;

/** The kind ref of the objects a CRD serves. */
const refOf = (crd: CustomResourceDefinition): string => kindRefOf(crd.spec.group, crd.spec.names.kind);

/** A CRD's names with kube's defaults (singular: the lowercased kind; listKind: `<Kind>List`). */
const namesOf = (crd: CustomResourceDefinition): CustomResourceDefinitionNames => {
  const { names } = crd.spec;
  return {
    ...names,
    singular: names.singular ?? names.kind.toLowerCase(),
    listKind: names.listKind ?? `${names.kind}List`,
  };
};

/** Why another CRD of the same group keeps `crd` from its names (kube's naming controller), or undefined. */
const namingConflict = (crd: CustomResourceDefinition, view: View): string | undefined => {
  const names = namesOf(crd);
  for (const other of view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[]) {
    if (other.metadata.name === crd.metadata.name || other.spec.group !== crd.spec.group) continue;
    const accepted = other.status?.acceptedNames;
    if (!accepted?.kind) continue;
    const taken = new Set([accepted.plural, accepted.singular, ...(accepted.shortNames ?? [])].filter((name): name is string => Boolean(name)));
    if (taken.has(names.plural)) return `"${names.plural}" is already in use`;
    if (names.singular !== undefined && taken.has(names.singular)) return `"${names.singular}" is already in use`;
    const short = (names.shortNames ?? []).find((name) => taken.has(name));
    if (short !== undefined) return `"${short}" is already in use`;
    if (accepted.kind === names.kind) return `"${names.kind}" is already in use`;
    if (accepted.listKind !== undefined && accepted.listKind === names.listKind) return `"${names.listKind}" is already in use`;
  }
  return undefined;
};

/** `conditions` with `next` set: its lastTransitionTime kept when its status did not change. */
const withCondition = (conditions: readonly CustomResourceDefinitionCondition[], next: CustomResourceDefinitionCondition): CustomResourceDefinitionCondition[] => {
  const current = conditions.find((condition) => condition.type === next.type);
  const condition = current && current.status === next.status ? { ...next, lastTransitionTime: current.lastTransitionTime } : next;
  return current ? conditions.map((existing) => (existing.type === next.type ? condition : existing)) : [...conditions, condition];
};


/** The status the naming and establishing controllers give `crd` at `now`. */
export const crdStatus = (crd: CustomResourceDefinition, view: View, now: number): NonNullable<CustomResourceDefinition['status']> => {
  const time = isoTime(now);
  const current = crd.status ?? {};
  let conditions = [...(current.conditions ?? [])];
  const conflict = namingConflict(crd, view);
  const storage = crd.spec.versions.find((version) => version.storage)?.name;
  const storedVersions = [...(current.storedVersions ?? [])];
  if (storage !== undefined && !storedVersions.includes(storage)) storedVersions.push(storage);
  if (conflict) {
    conditions = withCondition(conditions, { type: 'NamesAccepted', status: 'False', reason: 'MultipleNamesNotAllowed', message: conflict, lastTransitionTime: time });
    // Names once accepted stay served; a CRD whose names were never accepted is not established.
    if (!current.acceptedNames?.kind) {
      conditions = withCondition(conditions, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted', lastTransitionTime: time });
    }
    return { ...current, conditions, storedVersions, acceptedNames: current.acceptedNames ?? { plural: '', kind: '' } };
  }
  conditions = withCondition(conditions, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: time });
  conditions = withCondition(conditions, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: time });
  return { conditions, acceptedNames: namesOf(crd), storedVersions };
};

/** Commands for CRD `key` at `now`: its status, or, once deleted, the deletion of its objects and then its release. */
export const decideCustomResourceDefinition = (key: string, view: View, now: number): Decision => {
  const crd = view.get(key);
  if (crd?.kind !== 'CustomResourceDefinition') return { commands: [] };
  if (crd.metadata.deletionTimestamp) {
    if (!(crd.metadata.finalizers ?? []).includes(CUSTOM_RESOURCE_DEFINITION_FINALIZER)) return { commands: [] };
    const objects = view.list(refOf(crd));
    const commands: EventBody[] = [];
    const terminating = withCondition(crd.status?.conditions ?? [], {
      type: 'Terminating',
      status: 'True',
      reason: objects.length > 0 ? 'InstanceDeletionInProgress' : 'InstanceDeletionCompleted',
      message: objects.length > 0 ? 'CustomResource deletion is in progress' : `removed all instances`,
      lastTransitionTime: isoTime(now),
    });
    if (!sameJson(terminating, crd.status?.conditions ?? [])) commands.push(statusCommand(crd, { ...crd.status, conditions: terminating }));
    if (objects.length > 0) return { commands: [...commands, ...objects.filter((object) => !object.metadata.deletionTimestamp).map((object) => deletionOf(object, 'Background'))] };
    const released = { ...crd, metadata: { ...crd.metadata, finalizers: (crd.metadata.finalizers ?? []).filter((finalizer) => finalizer !== CUSTOM_RESOURCE_DEFINITION_FINALIZER) } };
    return { commands: [...commands, updateCommand(crd, released)] };
  }
  const status = crdStatus(crd, view, now);
  return sameJson(status, crd.status ?? {}) ? { commands: [] } : { commands: [statusCommand(crd, status)] };
};

/** A CRD's changes map to it; a custom object's deletion maps to its CRD while the CRD is being deleted. */
export const crdKeysFor = (change: AppliedChange, view: View): readonly string[] => {
  if (change.object.kind === 'CustomResourceDefinition') return [change.key];
  const ref = change.key.slice(0, change.key.indexOf('/'));
  if (change.type !== 'DELETED' || kindByRef(ref) !== undefined || !ref.includes('.')) return [];
  const crd = (view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[]).find((candidate) => refOf(candidate) === ref);
  return crd?.metadata.deletionTimestamp ? [crdKey(crd.metadata.name ?? '')] : [];
};

/** Creates the CustomResourceDefinition controller. */
export const createCustomResourceDefinitionController = (): Controller => ({
  name: CUSTOM_RESOURCE_DEFINITION_CONTROLLER,
  keysFor: crdKeysFor,
  initialKeys: (view) => (view.list(CUSTOM_RESOURCE_DEFINITION_REF) as CustomResourceDefinition[]).map((crd) => crdKey(crd.metadata.name ?? '')),
  decide: (key, view, { now }) => decideCustomResourceDefinition(key, view, now),
});
