/**
 * Kubernetes `Status` objects: the body of every error reply (and of a few successes, such
 * as an immediate delete or a binding). kubectl shows `message` and keys its behaviour on
 * `reason` (NotFound, AlreadyExists, Conflict, Invalid with `details.causes[].field`).
 */

/** `metav1.StatusReason` values logplane answers with, and their HTTP codes. */
export const STATUS_REASONS = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  AlreadyExists: 409,
  Conflict: 409,
  Gone: 410,
  Expired: 410,
  RequestEntityTooLarge: 413,
  UnsupportedMediaType: 415,
  Invalid: 422,
  TooManyRequests: 429,
  InternalError: 500,
  ServiceUnavailable: 503,
  Timeout: 504,
} as const;
export type StatusReason = keyof typeof STATUS_REASONS;

/** `metav1.CauseType` values used in `details.causes[].reason`. */
export const CAUSE_TYPES = {
  FieldValueNotFound: 'FieldValueNotFound',
  FieldValueRequired: 'FieldValueRequired',
  FieldValueInvalid: 'FieldValueInvalid',
  FieldValueNotSupported: 'FieldValueNotSupported',
  FieldValueDuplicate: 'FieldValueDuplicate',
  FieldValueForbidden: 'FieldValueForbidden',
  FieldValueTooLong: 'FieldValueTooLong',
  FieldValueTypeInvalid: 'FieldValueTypeInvalid',
  FieldValueUnknown: 'FieldValueUnknown',
  FieldManagerConflict: 'FieldManagerConflict',
  /** policy/v1's `DisruptionBudgetCause`: an eviction the pod's disruption budget refused. */
  DisruptionBudget: 'DisruptionBudget',
} as const;
export type CauseType = (typeof CAUSE_TYPES)[keyof typeof CAUSE_TYPES];

/** One reason a request failed, usually tied to a field path such as `spec.containers[0].image`. */
export interface StatusCause {
  readonly reason: CauseType;
  readonly message: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  /** The resource (plural, e.g. `pods`) for NotFound/AlreadyExists/Conflict, the kind for Invalid. */
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

/** A `meta/v1 Status`. */
export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Success' | 'Failure';
  readonly message?: string;
  readonly reason?: StatusReason;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** A failure Status with the HTTP code of its reason. */
export const failureStatus = (reason: StatusReason, message: string, details?: StatusDetails): Status => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  ...(details ? { details } : {}),
  code: STATUS_REASONS[reason],
});

/** A success Status, e.g. the reply to a delete that removed the object at once. */
export const successStatus = (code: number, details?: StatusDetails): Status => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Success',
  ...(details ? { details } : {}),
  code,
});
