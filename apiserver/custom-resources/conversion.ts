/**
 * The `None` conversion of a custom resource's versions, as apiextensions-apiserver does it
 * (`nopConverter`, and the schema coercion around it in `crConversionRESTOptionsGetter`): an
 * object changes version by its apiVersion alone, then it is pruned by the target version's
 * schema and that version's defaults are applied.
 * - A write at any served version is stored at the CRD's storage version (the log holds the
 *   object encoded with the storage version's schema; kube prunes by it when it reads the
 *   object back from etcd, logplane when it writes it).
 * - A read at any served version shows the stored object at that version, whatever version
 *   it was stored at (an object stored before the storage version changed included), pruned
 *   and defaulted by that version's current schema: an object written before a schema change
 *   is read as the new schema has it (a removed field gone, a new default filled in), as kube
 *   reads objects from etcd.
 */
import { storageVersionOf, versionSchema } from '../../projections/index.ts';
import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from '../../schemas/index.ts';

export { storageVersionOf, versionSchema };
import type { Conversion, JsonObject } from '../conversion/types.ts';
import { applyDefaults } from './defaulting.ts';
import { prune } from './pruning.ts';

/** `object` as `apiVersion`: pruned by `schema`, then defaulted by it. */
const convert = (object: JsonObject, apiVersion: string, schema: unknown): JsonObject => {
  const copy = { ...structuredClone(object), apiVersion };
  prune(schema, copy);
  return applyDefaults(schema, copy);
};

/** A stored object read by the current schema of the version it is stored at (as is, for a version the CRD no longer has). */
const readAsStored = (crd: CustomResourceDefinition, stored: JsonObject): JsonObject => {
  const apiVersion = typeof stored['apiVersion'] === 'string' ? stored['apiVersion'] : '';
  const name = apiVersion.slice(apiVersion.lastIndexOf('/') + 1);
  const storedAt = crd.spec.versions.find((known) => known.name === name);
  return storedAt ? convert(stored, apiVersion, versionSchema(storedAt)) : stored;
};

/** How the CRD's `version` converts to and from its storage version. */
export const noneConversion = (crd: CustomResourceDefinition, version: CustomResourceDefinitionVersion, kind: string): Conversion => {
  const group = crd.spec.group;
  const storage = storageVersionOf(crd) ?? version;
  const servedSchema = versionSchema(version);
  const storageSchema = versionSchema(storage);
  return {
    group,
    version: version.name,
    kind,
    definition: '',
    toStored: (served) => (storage.name === version.name ? served : convert(served, `${group}/${storage.name}`, storageSchema)),
    // As kube decodes from storage (pruned and defaulted by the stored version's schema), then converts.
    fromStored: (stored) => convert(readAsStored(crd, stored), `${group}/${version.name}`, servedSchema),
    everyRead: true,
  };
};
