/**
 * Admission of a request body: everything between "the client sent JSON" and "this object
 * may be appended": kind and namespace checks, generateName, system fields, the schema
 * check (types, unknown fields per `fieldValidation`), defaults and semantic validation.
 * Any failure throws an `ApiError`; nothing has been appended at that point.
 */
import { randomInt } from 'node:crypto';
import { validateObjectShape, type KubeObject } from '../../schemas/index.ts';
import { ApiError, apiErrors, fieldErrors } from '../errors.ts';
import { storedFromServed, toServed } from '../conversion/index.ts';
import { apiVersionOf, type ResourceInfo } from '../resources.ts';
import { CAUSE_TYPES, failureStatus, type StatusCause } from '../status.ts';
import { applyDefaults, prepareForCreate, type Requester } from './defaults.ts';
import { prepareForStatusUpdate, prepareForUpdate } from './strategies.ts';
import { validateStatus } from './objects.ts';
import { validateObject, warningsOf } from './validators.ts';
import { checkShape } from './shape.ts';
import { typeMetaError } from './type-meta.ts';
import { admitCustomObject } from '../custom-resources/admit.ts';

/** How unknown fields are treated (`?fieldValidation=`): rejected, dropped with a warning, or dropped. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Parses `fieldValidation`; kube's default is Warn. */
export const parseFieldValidation = (value: string | null): FieldValidation => {
  if (value === null || value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw apiErrors.badRequest(`fieldValidation parameter must be one of Ignore, Warn or Strict, got "${value}"`);
};

/** An object ready to append, and the warnings to send back. */
export interface Admitted {
  readonly object: KubeObject;
  readonly warnings: readonly string[];
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** kube's alphabet for generated name suffixes (no vowels, no confusable characters). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** 5 random characters of kube's suffix alphabet (kube's `utilrand.String(5)`). */
export const randomNameSuffix = (): string => {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return suffix;
};

/** `prefix` + a suffix (5 random characters), with the prefix cut so the name stays within 63 characters. */
export const generateName = (prefix: string, suffix: () => string = randomNameSuffix): string => `${prefix.slice(0, 58)}${suffix()}`;

/** Checks apiVersion/kind of a body against the resource as kube's decoder does (`./type-meta.ts`), filling them in when absent. */
const checkTypeMeta = (resource: ResourceInfo, body: Record<string, unknown>): void => {
  const refused = typeMetaError(resource, body);
  if (refused) throw refused;
  body['apiVersion'] = apiVersionOf(resource);
  body['kind'] = resource.kind;
};

const decodeError = (resource: ResourceInfo, detail: string, causes: readonly StatusCause[]): ApiError =>
  apiErrors.badRequest(`${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: ${detail}`, causes);

/**
 * Runs the schema check and applies `fieldValidation`: returns the cleaned object and
 * warnings, or throws 400 (wrong types, unknown fields under Strict) or 422 (missing
 * required fields).
 */
const checkSchema = (
  resource: ResourceInfo,
  body: Record<string, unknown>,
  fieldValidation: FieldValidation,
  name: string,
  servedUnknownFields: readonly string[] = [],
): { object: KubeObject; warnings: string[] } => {
  const checked = checkShape(resource.kind, body);
  const report = servedUnknownFields.length === 0 ? checked : { ...checked, unknownFields: [...servedUnknownFields, ...checked.unknownFields] };
  const typeProblems = report.problems.filter((p) => p.reason === CAUSE_TYPES.FieldValueTypeInvalid || p.reason === CAUSE_TYPES.FieldValueNotSupported);
  if (typeProblems.length > 0) {
    throw decodeError(resource, typeProblems.map((p) => `${p.field}: ${p.message}`).join(', '), typeProblems);
  }
  if (report.unknownFields.length > 0 && fieldValidation === 'Strict') {
    const text = report.unknownFields.map((f) => `unknown field "${f}"`).join(', ');
    throw decodeError(resource, `strict decoding error: ${text}`, report.unknownFields.map((f) => ({ reason: CAUSE_TYPES.FieldValueUnknown, message: `unknown field "${f}"`, field: f })));
  }
  if (report.problems.length > 0) {
    const causes = report.problems.map((p) =>
      p.field === 'metadata.name' && p.reason === CAUSE_TYPES.FieldValueRequired ? fieldErrors.required('metadata.name', 'name or generateName is required') : p,
    );
    throw apiErrors.invalid(resource, name, causes);
  }
  const warnings = fieldValidation === 'Warn' ? report.unknownFields.map((f) => `unknown field "${f}"`) : [];
  return { object: report.value as unknown as KubeObject, warnings };
};

/**
 * A body of the resource's version as the stored kind (a served version that is a
 * conversion: kube decodes into the request's version, then converts), with the top-level
 * fields that version does not have; the body itself for the stored version.
 */
const toStoredBody = (resource: ResourceInfo, body: Record<string, unknown>): { body: Record<string, unknown>; unknownFields: readonly string[] } => {
  if (!resource.conversion) return { body, unknownFields: [] };
  try {
    const { stored, unknownFields } = storedFromServed(resource.conversion, body);
    return { body: stored, unknownFields };
  } catch (error) {
    throw decodeError(resource, error instanceof Error ? error.message : String(error), []);
  }
};

/** Last line of defence: the object must encode (a failure here is a bug, hence 500). */
const assertEncodable = (object: KubeObject): void => {
  const result = validateObjectShape(object);
  if (!result.valid) throw apiErrors.internal(`the admitted object does not fit the schema at ${result.path}: ${result.detail}`);
};

const throwIfInvalid = (resource: ResourceInfo, name: string, causes: readonly StatusCause[]): void => {
  if (causes.length > 0) throw apiErrors.invalid(resource, name, causes);
};

export interface AdmitOptions {
  readonly resource: ResourceInfo;
  readonly body: unknown;
  readonly fieldValidation: FieldValidation;
  /** Namespace from the URL (namespaced resources). */
  readonly namespace: string | undefined;
  /** The user of the request, for the kinds that record who created them (CertificateSigningRequest). */
  readonly requester?: Requester;
  /** The random part of a generated name (default: {@link randomNameSuffix}). */
  readonly nameSuffix?: () => string;
}

/** Admits a create (POST to a collection): generateName resolved, system fields cleared. */
export const admitCreate = (options: AdmitOptions): Admitted => {
  const { resource, fieldValidation } = options;
  const body = requireObject(options.body);
  checkTypeMeta(resource, body);
  const metadata = isPlainObject(body['metadata']) ? { ...body['metadata'] } : {};
  body['metadata'] = metadata;
  applyNamespace(resource, metadata, options.namespace);
  if ((metadata['name'] === undefined || metadata['name'] === '') && typeof metadata['generateName'] === 'string' && metadata['generateName'] !== '') {
    metadata['name'] = generateName(metadata['generateName'], options.nameSuffix);
  }
  for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds']) {
    delete metadata[field];
  }
  delete body['status'];
  if (!resource.custom && resource.kind === 'Namespace') body['status'] = { phase: 'Active' };
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  // A custom resource is its CRD's schema's (a create without a status subresource keeps the status it sends).
  if (resource.custom) return admitCustomObject(resource, options.body !== undefined && !hasStatusSubresource(resource) ? { ...body, ...statusOf(options.body) } : body, fieldValidation, name);
  const stored = toStoredBody(resource, body);
  const { object, warnings } = checkSchema(resource, stored.body, fieldValidation, name, stored.unknownFields);
  applyDefaults(object);
  prepareForCreate(object, options.requester);
  throwIfInvalid(resource, name, validateObject(resource, object));
  assertEncodable(object);
  return { object, warnings: [...warnings, ...warningsOf(object)] };
};

/** Admits a replacement of `current` (PUT, or the result of a PATCH) of the main resource. */
export const admitUpdate = (options: AdmitOptions & { readonly name: string; readonly current: KubeObject }): Admitted => {
  const { resource, fieldValidation, name, current } = options;
  const body = requireObject(options.body);
  checkTypeMeta(resource, body);
  const metadata = isPlainObject(body['metadata']) ? { ...body['metadata'] } : {};
  body['metadata'] = metadata;
  applyNamespace(resource, metadata, options.namespace);
  if (metadata['name'] === undefined || metadata['name'] === '') metadata['name'] = name;
  if (metadata['name'] !== name) {
    throw apiErrors.badRequest(`the name of the object (${String(metadata['name'])}) does not match the name on the URL (${name})`);
  }
  // The status of the main resource is not writable through it (kube ignores it; /status writes it).
  const sentStatus = statusOf(body);
  delete body['status'];
  const currentStatus = (current as { status?: unknown }).status;
  if (resource.custom) {
    // Without a status subresource a custom resource's status is a field like any other.
    const status = hasStatusSubresource(resource) ? (currentStatus === undefined ? {} : { status: currentStatus }) : sentStatus;
    return admitCustomObject(resource, { ...body, ...status }, fieldValidation, name);
  }
  const stored = toStoredBody(resource, body);
  const { object, warnings } = checkSchema(resource, stored.body, fieldValidation, name, stored.unknownFields);
  applyDefaults(object);
  prepareForUpdate(object, current);
  throwIfInvalid(resource, name, validateObject(resource, object, current));
  if (currentStatus !== undefined) (object as { status?: unknown }).status = currentStatus;
  assertEncodable(object);
  return { object, warnings: [...warnings, ...warningsOf(object)] };
};

/**
 * Admits a status write: only `status` of the body is taken, over the current object,
 * with `metadata.uid` of the live object (the fold ignores statuses of other incarnations).
 */
export const admitStatus = (options: AdmitOptions & { readonly name: string; readonly current: KubeObject }): Admitted => {
  const { resource, fieldValidation, name, current } = options;
  const body = requireObject(options.body);
  checkTypeMeta(resource, body);
  const metadata = isPlainObject(body['metadata']) ? body['metadata'] : {};
  if (metadata['name'] !== undefined && metadata['name'] !== name) {
    throw apiErrors.badRequest(`the name of the object (${String(metadata['name'])}) does not match the name on the URL (${name})`);
  }
  if (resource.custom) {
    const { object, warnings } = admitCustomObject(resource, { ...(toServed(resource.conversion, structuredClone(current)) as Record<string, unknown>), ...statusOf(body) }, fieldValidation, name);
    object.metadata.uid = current.metadata.uid;
    return { object, warnings };
  }
  // The status is the served version's: it replaces the current object's as that version shows it.
  const merged = { ...(toServed(resource.conversion, structuredClone(current)) as Record<string, unknown>), status: body['status'] ?? {} };
  const stored = toStoredBody(resource, merged);
  const { object, warnings } = checkSchema(resource, stored.body, fieldValidation, name, stored.unknownFields);
  object.metadata.uid = current.metadata.uid;
  prepareForStatusUpdate(object, current);
  throwIfInvalid(resource, name, validateStatus(object));
  assertEncodable(object);
  return { object, warnings };
};

/** `{ status }` of a body that has one, else `{}`. */
const statusOf = (body: unknown): { status?: unknown } =>
  isPlainObject(body) && body['status'] !== undefined ? { status: body['status'] } : {};

/** Whether a custom resource's version serves the status subresource (then its main resource does not write status). */
const hasStatusSubresource = (resource: ResourceInfo): boolean => resource.subresources.some((sub) => sub.name === 'status');

const requireObject = (body: unknown): Record<string, unknown> => {
  if (!isPlainObject(body)) throw apiErrors.badRequest('the request body must be a JSON object');
  return { ...body };
};

const applyNamespace = (resource: ResourceInfo, metadata: Record<string, unknown>, namespace: string | undefined): void => {
  if (!resource.namespaced) {
    delete metadata['namespace'];
    return;
  }
  const given = metadata['namespace'];
  if (given !== undefined && given !== '' && given !== namespace) {
    throw new ApiError(
      failureStatus('BadRequest', 'the namespace of the provided object does not match the namespace sent on the request'),
    );
  }
  metadata['namespace'] = namespace;
};

