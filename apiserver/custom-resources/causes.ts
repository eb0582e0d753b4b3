/**
 * The field errors of `k8s.io/apimachinery/pkg/util/validation/field` that custom-resource
 * validation needs beyond `fieldErrors` (errors.ts), with apimachinery 1.32's wording.
 */
import { CAUSE_TYPES, type CauseType, type StatusCause } from '../status.ts';

/**
 * kube's `field.TypeInvalid`: `Invalid value: "string": spec.replicas in body must be of type integer: "string"`
 * (the value is printed, unlike `fieldErrors.typeInvalid`).
 */
export const typeInvalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: CAUSE_TYPES.FieldValueTypeInvalid,
  message: `Invalid value: ${printValue(value)}: ${detail}`,
  field,
});

/** kube's `field.Invalid` with a value printed as apimachinery prints it (null as "null"). */
export const invalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: CAUSE_TYPES.FieldValueInvalid,
  message: `Invalid value: ${printValue(value)}: ${detail}`,
  field,
});

/** kube's `field.TooLong` (1.32): `Too long: may not be more than 5 bytes` (the value is not printed). */
export const tooLong = (field: string, max: number): StatusCause => ({
  reason: CAUSE_TYPES.FieldValueTooLong,
  message: `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`,
  field,
});

/**
 * kube's `field.TooMany`: `Too many: 4: must have at most 3 items`. Its cause reason is kube's
 * `FieldValueTooMany`, which status.ts's CauseType does not list yet (the cast keeps the wire
 * value kube sends).
 */
export const tooMany = (field: string, actual: number, max: number): StatusCause => ({
  reason: 'FieldValueTooMany' as CauseType,
  message: `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
  field,
});

/** How apimachinery prints a bad value: strings quoted, null as "null", numbers and booleans bare, the rest as JSON. */
export const printValue = (value: unknown): string => {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value) ?? '""';
  } catch {
    return '""';
  }
};
