/**
 * Admission of a custom object, as apiextensions-apiserver's customresource strategy does it:
 * metadata checked as every object's, unknown fields pruned by the version's structural
 * schema (reported per `fieldValidation`), defaults applied, then the object validated
 * against the schema, and converted to the storage version. A failure throws an `ApiError`; nothing has been appended then.
 */
import type { KubeObject, ObjectMeta } from '../../schemas/index.ts';
import { apiErrors } from '../errors.ts';
import type { ResourceInfo } from '../resources.ts';
import { CAUSE_TYPES } from '../status.ts';
import { validateMetadata } from '../validation/objects.ts';
import { checkShapeOf } from '../validation/shape.ts';
import { versionSchema } from './conversion.ts';
import { applyDefaults } from './defaulting.ts';
import { prune } from './pruning.ts';
import { validateCustomObject } from './schema-validation.ts';

/** How unknown fields are treated (`?fieldValidation=`). */
type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The schema a version of a custom resource is validated with (a version without one keeps every field, as kube's v1beta1 CRDs). */
export const schemaOf = (resource: ResourceInfo): unknown => versionSchema(resource.custom?.version);

const decodeError = (resource: ResourceInfo, detail: string, fields: readonly string[]) =>
  apiErrors.badRequest(
    `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: ${detail}`,
    fields.map((field) => ({ reason: CAUSE_TYPES.FieldValueUnknown, message: `unknown field "${field}"`, field })),
  );

/**
 * Admits `body` (type meta and namespace already checked) as a custom object of `resource`
 * named `name`; returns the object to append and the warnings to send back.
 */
export const admitCustomObject = (
  resource: ResourceInfo,
  body: Record<string, unknown>,
  fieldValidation: FieldValidation,
  name: string,
): { object: KubeObject; warnings: string[] } => {
  const schema = schemaOf(resource);
  const metadata = checkShapeOf('logplane.k8s.meta.v1.ObjectMeta', body['metadata'] ?? {}, 'metadata');
  const typeProblems = metadata.problems.filter((p) => p.reason === CAUSE_TYPES.FieldValueTypeInvalid);
  if (typeProblems.length > 0) {
    throw apiErrors.badRequest(`${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: ${typeProblems.map((p) => `${p.field}: ${p.message}`).join(', ')}`, typeProblems);
  }
  const object = { ...structuredClone(body), metadata: metadata.value } as Record<string, unknown>;
  const unknownFields = [...metadata.unknownFields, ...prune(schema, object, true)];
  if (unknownFields.length > 0 && fieldValidation === 'Strict') {
    throw decodeError(resource, `strict decoding error: ${unknownFields.map((field) => `unknown field "${field}"`).join(', ')}`, unknownFields);
  }
  const defaulted = applyDefaults(schema, object) as Record<string, unknown>;
  const causes = [...validateMetadata(resource, defaulted['metadata'] as ObjectMeta), ...validateCustomObject(schema, defaulted)];
  if (causes.length > 0) throw apiErrors.invalid(resource, name, causes);
  const warnings = fieldValidation === 'Warn' ? unknownFields.map((field) => `unknown field "${field}"`) : [];
  // Admitted at the request's version, stored at the storage version (None conversion).
  const stored = resource.conversion ? resource.conversion.toStored(defaulted) : defaulted;
  return { object: stored as unknown as KubeObject, warnings };
};

/**
 * Refuses the patch type a custom resource does not take: a strategic merge patch (custom
 * resources have no patch strategies, as in kube: 415).
 */
export const checkCustomPatchType = (resource: ResourceInfo, type: string): void => {
  if (resource.custom && type === 'strategic') {
    throw apiErrors.unsupportedMediaType(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  }
};
