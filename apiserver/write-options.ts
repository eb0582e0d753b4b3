/**
 * The options of a write request as kube-apiserver reads and validates them
 * (`ValidateCreateOptions`, `ValidateUpdateOptions`, `ValidatePatchOptions`,
 * `ValidateDeleteOptions` in apimachinery's meta/v1 validation): `dryRun` (only `All`),
 * `fieldValidation` (`Ignore`, `Warn`, `Strict` or empty: Warn, the 1.32 default) and,
 * for deletes, `propagationPolicy`. Invalid options are a 422 naming the options kind,
 * before the body is looked at, so nothing is appended.
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../schemas/index.ts';
import { apiErrors } from './errors.ts';
import { CAUSE_TYPES, type StatusCause } from './status.ts';
import type { FieldValidation } from './validation/admit.ts';

/** The meta/v1 options kinds of the write verbs. */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

/** What a create, update or patch was asked to do besides writing. */
export interface WriteOptions {
  /** `dryRun=All`: admit and answer as if written, append nothing. */
  readonly dryRun: boolean;
  readonly fieldValidation: FieldValidation;
  /** `fieldManager`: who the write's fields are recorded for; '' when not given. */
  readonly fieldManager: string;
  /** `force` (apply patches only): take fields other managers own. */
  readonly force: boolean;
}

/** kube's `FieldManagerMaxLength`. */
const FIELD_MANAGER_MAX_LENGTH = 128;

/** Printable as Go's `unicode.IsPrint`: no control characters and no separators but the ASCII space. */
const isPrintable = (char: string): boolean => /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(char);

/** kube's `ValidateFieldManager`. */
const fieldManagerCauses = (fieldManager: string): StatusCause[] => {
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_LENGTH) {
    return [{ reason: CAUSE_TYPES.FieldValueTooLong, message: `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`, field: 'fieldManager' }];
  }
  if (![...fieldManager].every(isPrintable)) {
    return [{ reason: CAUSE_TYPES.FieldValueInvalid, message: `Invalid value: ${JSON.stringify(fieldManager)}: invalid characters`, field: 'fieldManager' }];
  }
  return [];
};

/**
 * The manager a write is recorded for: `fieldManager`, else the User-Agent up to its
 * first `/`, printable characters only, at most 128 bytes (kube's `prefixFromUserAgent`).
 */
export const managerOf = (options: WriteOptions, userAgent: string | undefined): string => {
  if (options.fieldManager !== '') return options.fieldManager;
  const prefix = [...(userAgent ?? '').split('/')[0]!].filter(isPrintable).join('');
  return Buffer.from(prefix).subarray(0, FIELD_MANAGER_MAX_LENGTH).toString('utf8');
};

const FIELD_VALIDATIONS = ['Ignore', 'Strict', 'Warn'] as const;

/** Go's `%#v` of a []string, as kube's field errors print a bad slice value. */
const goStringSlice = (values: readonly string[]): string => `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;

const notSupported = (field: string, shown: string, supported: readonly string[]): StatusCause => ({
  reason: CAUSE_TYPES.FieldValueNotSupported,
  message: `Unsupported value: ${shown}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
  field,
});

/** The cause for dryRun values other than `All`, or undefined when they are all `All` (or none). */
export const dryRunCause = (values: readonly string[]): StatusCause | undefined =>
  values.every((v) => v === 'All') ? undefined : notSupported('dryRun', goStringSlice(values), ['All']);

/**
 * Reads `dryRun`, `fieldValidation`, `fieldManager` and `force` of a create, update or
 * patch; 422 `<kind>.meta.k8s.io` when invalid (kube's `ValidatePatchOptions`: `force`
 * only with apply patches, which must name their `fieldManager`).
 */
export const parseWriteOptions = (kind: Exclude<OptionsKind, 'DeleteOptions'>, query: URLSearchParams, patch?: { readonly apply: boolean }): WriteOptions => {
  const dryRun = query.getAll('dryRun');
  const fieldManager = query.get('fieldManager') ?? '';
  const forceText = query.get('force');
  // A repeated scalar parameter converts from its first value, as apimachinery's query conversion does.
  const fieldValidation = query.get('fieldValidation') ?? '';
  const causes: StatusCause[] = [];
  const dryRunProblem = dryRunCause(dryRun);
  if (dryRunProblem) causes.push(dryRunProblem);
  if (fieldValidation !== '' && !(FIELD_VALIDATIONS as readonly string[]).includes(fieldValidation)) {
    causes.push(notSupported('fieldValidation', JSON.stringify(fieldValidation), ['', ...FIELD_VALIDATIONS]));
  }
  if (patch && !patch.apply && forceText !== null) {
    causes.push({ reason: CAUSE_TYPES.FieldValueForbidden, message: 'Forbidden: may not be specified for non-apply patch', field: 'force' });
  }
  if (patch?.apply && fieldManager === '') {
    causes.push({ reason: CAUSE_TYPES.FieldValueRequired, message: 'Required value: is required for apply patch', field: 'fieldManager' });
  }
  causes.push(...fieldManagerCauses(fieldManager));
  if (causes.length > 0) throw apiErrors.invalidOptions(kind, causes);
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: fieldValidation === '' ? 'Warn' : (fieldValidation as FieldValidation),
    fieldManager,
    force: forceText === 'true' || forceText === '1',
  };
};

/**
 * What a dry-run create answers: the admitted object with the system fields the write
 * would have given it (kube's `FillObjectMetaSystemFields`: a uid, creationTimestamp; and
 * generation 1), without a resourceVersion, since nothing was stored.
 */
export const dryRunCreated = (object: KubeObject, now: Date = new Date()): KubeObject => {
  const created = structuredClone(object);
  created.metadata.uid = randomUUID();
  created.metadata.creationTimestamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  created.metadata.generation = 1;
  delete created.metadata.resourceVersion;
  return created;
};
