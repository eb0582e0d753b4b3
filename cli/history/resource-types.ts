/**
 * Resource types of the past. The history verbs resolve a type argument so: the kinds
 * logplane stores without asking the server; a custom resource's type (`database`, `db`,
 * `databases.ops.example.com`) through the server's discovery, as every other verb resolves
 * it; and a custom resource whose CustomResourceDefinition is gone (history keeps its
 * objects) as `<plural>.<group>`, its CRD's name, from the CRD's last version in the history.
 * `get --at` resolves also the custom resources served at its moment, and prints them with
 * their CRD's printer columns of that moment.
 */
import type { CustomResourceDefinition } from '../../schemas/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import type { Session } from '../verbs/common.ts';
import { kindByRef } from '../../schemas/kinds/registry.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import { resolveResourceType, Resources, splitObjectReference, UnknownResourceTypeError, type ObjectReference, type ResourceType } from '../verbs/kinds.ts';
import { historyApi } from './api.ts';

/**
 * The resource types a CRD served, as discovery listed them then: one per served version,
 * its storage version first (the one a bare plural or kind resolves to).
 */
export const resourceTypesOfCrd = (crd: CustomResourceDefinition): ResourceType[] => {
  const { names } = crd.spec;
  const served = crd.spec.versions.filter((v) => v.served);
  return [...served.filter((v) => v.storage), ...served.filter((v) => !v.storage)].map((version) => ({
    group: crd.spec.group,
    version: version.name,
    kind: names.kind,
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    namespaced: crd.spec.scope === 'Namespaced',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    verbs: [],
    subresources: version.subresources?.status ? ['status'] : [],
  }));
};

/**
 * The CRD `type` (a custom resource's) was served by at `position`, or undefined when that
 * moment had none (or `type` is a built-in kind's).
 */
export const crdAt = async (session: Session, type: ResourceType, position: string): Promise<CustomResourceDefinition | undefined> => {
  if (kindByRef(kindRefOf(type.group, type.kind))) return undefined;
  const reply = await historyApi(session.client).at(position, { kind: CUSTOM_RESOURCE_DEFINITION_REF, name: `${type.plural}.${type.group}` });
  const crd = reply.objects[0];
  return crd?.kind === 'CustomResourceDefinition' ? crd : undefined;
};

/** Discovery's resource types, with those of the CRDs served at moment `at` after them (a custom resource may be gone since). */
export const resourcesAt = async (session: Session, at: string): Promise<Resources> => {
  const crds = (await historyApi(session.client).at(at, { kind: CUSTOM_RESOURCE_DEFINITION_REF })).objects;
  const past = crds.flatMap((crd) => (crd.kind === 'CustomResourceDefinition' ? resourceTypesOfCrd(crd) : []));
  return new Resources([...(await session.resources()).all, ...past]);
};

/** The type a `<plural>.<group>` argument named, from the last version its CRD had in the history; undefined when no CRD of that name ever existed. */
const pastCustomType = async (session: Session, name: string): Promise<ResourceType | undefined> => {
  const lower = name.toLowerCase();
  if (!lower.includes('.') || lower.includes('/')) return undefined;
  const { versions } = await historyApi(session.client).history(`${CUSTOM_RESOURCE_DEFINITION_REF}//${lower}`);
  for (let index = versions.length - 1; index >= 0; index--) {
    const crd = versions[index]!.object;
    if (crd?.kind === 'CustomResourceDefinition') return resourceTypesOfCrd(crd)[0];
  }
  return undefined;
};

/**
 * The resource type `name` stands for in a history verb: a stored kind, else what the
 * server's discovery serves, else a custom resource that is gone, named `<plural>.<group>`.
 * Throws {@link UnknownResourceTypeError} when none has it.
 */
export const resolveHistoryType = async (session: Session, name: string): Promise<ResourceType> => {
  try {
    return resolveResourceType(name);
  } catch (error) {
    if (!(error instanceof UnknownResourceTypeError)) throw error;
  }
  try {
    return (await session.resources()).resolve(name);
  } catch (error) {
    if (!(error instanceof UnknownResourceTypeError)) throw error;
    const past = await pastCustomType(session, name);
    if (past) return past;
    throw error;
  }
};

/** `KIND/NAME` or `KIND NAME` as the history verbs take it, the type resolved by {@link resolveHistoryType}. */
export const historyReference = async (session: Session, args: readonly string[], usage: string): Promise<ObjectReference> => {
  const { type, name } = splitObjectReference(args, usage);
  return { type: await resolveHistoryType(session, type), name };
};
