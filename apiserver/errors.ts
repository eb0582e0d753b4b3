/**
 * Errors of the apiserver. Every failure a client can see is an `ApiError` carrying the
 * Kubernetes `Status` to send; `apiErrors` builds them with kube-apiserver's wording so
 * kubectl prints and reacts as it does against a real cluster.
 */
import type { RejectReason } from '../projections/index.ts';
import { assertNever } from '../schemas/index.ts';
import { qualifiedKind, qualifiedResource, type ResourceInfo } from './resources.ts';
import { CAUSE_TYPES, failureStatus, type Status, type StatusCause } from './status.ts';

/** A request failed; `status` is the reply. `retriable` says whether the same request may succeed later. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly retriable: boolean;
  constructor(
    readonly status: Status,
    options?: { cause?: unknown },
  ) {
    super(status.message ?? status.reason ?? 'request failed', options);
    this.retriable = status.code === 409 || status.code === 429 || status.code >= 500;
  }
  get code(): number {
    return this.status.code;
  }
}

/**
 * The ServiceAccount admission plugin's refusal of a pod whose service account does not exist
 * (kube's 403); a type of its own because the create path waits for a new namespace's `default`.
 */
export class ServiceAccountNotFoundError extends ApiError {
  constructor(
    pod: string,
    readonly namespace: string,
    readonly serviceAccount: string,
  ) {
    super(
      failureStatus('Forbidden', `pods "${pod}" is forbidden: error looking up service account ${namespace}/${serviceAccount}: serviceaccount "${serviceAccount}" not found`, {
        name: pod,
        group: '',
        kind: 'pods',
      }),
    );
  }
}

const resourceDetails = (resource: ResourceInfo, name: string, uid?: string) => ({
  name,
  group: resource.group,
  kind: resource.plural,
  ...(uid ? { uid } : {}),
});

const causesText = (causes: readonly StatusCause[]): string => {
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  return parts.length === 1 ? parts[0]! : `[${parts.join(', ')}]`;
};

/** Factories for the Status errors kube-apiserver sends. */
export const apiErrors = {
  badRequest: (message: string, causes?: readonly StatusCause[]): ApiError =>
    new ApiError(failureStatus('BadRequest', message, causes && causes.length > 0 ? { causes } : undefined)),
  unauthorized: (): ApiError => new ApiError(failureStatus('Unauthorized', 'Unauthorized')),
  notFound: (resource: ResourceInfo, name: string): ApiError =>
    new ApiError(failureStatus('NotFound', `${qualifiedResource(resource)} "${name}" not found`, resourceDetails(resource, name))),
  /**
   * 404 for a path that names no served resource, on every verb: kube's NotFound Status
   * (`NewGenericServerResponse(404, ...)`: this message, empty details).
   */
  pathNotFound: (): ApiError => new ApiError(failureStatus('NotFound', 'the server could not find the requested resource', {})),
  /** 409 after every generated name was taken (kube's `NewGenerateNameConflict`, retry after 1 s). */
  generateNameConflict: (resource: ResourceInfo, name: string): ApiError =>
    new ApiError(
      failureStatus('AlreadyExists', `${qualifiedResource(resource)} "${name}" already exists, the server was not able to generate a unique name for the object`, {
        ...resourceDetails(resource, name),
        retryAfterSeconds: 1,
      }),
    ),
  /**
   * 422 for invalid request options (`dryRun`, `fieldValidation`, `propagationPolicy`, `resourceVersionMatch`):
   * kube's `NewInvalid(meta.k8s.io/<kind>, "", errs)`, e.g. `CreateOptions.meta.k8s.io "" is invalid: ...`.
   */
  invalidOptions: (kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions' | 'ListOptions', causes: readonly StatusCause[]): ApiError =>
    new ApiError(failureStatus('Invalid', `${kind}.meta.k8s.io "" is invalid: ${causesText(causes)}`, { name: '', group: 'meta.k8s.io', kind, causes })),
  alreadyExists: (resource: ResourceInfo, name: string): ApiError =>
    new ApiError(failureStatus('AlreadyExists', `${qualifiedResource(resource)} "${name}" already exists`, resourceDetails(resource, name))),
  conflict: (resource: ResourceInfo, name: string, detail: string): ApiError =>
    new ApiError(failureStatus('Conflict', `Operation cannot be fulfilled on ${qualifiedResource(resource)} "${name}": ${detail}`, resourceDetails(resource, name))),
  invalid: (resource: ResourceInfo, name: string, causes: readonly StatusCause[]): ApiError =>
    new ApiError(
      failureStatus('Invalid', `${qualifiedKind(resource)} "${name}" is invalid: ${causesText(causes)}`, {
        name,
        group: resource.group,
        kind: resource.kind,
        causes,
      }),
    ),
  /** 422 for a patch that cannot be applied (a failed JSON patch `test`, a missing path). */
  unprocessablePatch: (message: string): ApiError => new ApiError(failureStatus('Invalid', message)),
  methodNotAllowed: (): ApiError =>
    new ApiError(failureStatus('MethodNotAllowed', 'the server does not allow this method on the requested resource')),
  notAcceptable: (accept: string): ApiError =>
    new ApiError(failureStatus('NotAcceptable', `only the following media types are accepted: application/json, application/yaml (asked for ${accept})`)),
  unsupportedMediaType: (message: string): ApiError => new ApiError(failureStatus('UnsupportedMediaType', message)),
  /** 413 with kube's wording for a limit other than the body size (e.g. JSON patch operations). */
  entityTooLarge: (message: string): ApiError => new ApiError(failureStatus('RequestEntityTooLarge', message)),
  tooLarge: (limit: number): ApiError =>
    new ApiError(failureStatus('RequestEntityTooLarge', `the request body is larger than ${limit} bytes`)),
  timeout: (message: string): ApiError => new ApiError(failureStatus('Timeout', message, { retryAfterSeconds: 1 })),
  internal: (message: string, cause?: unknown): ApiError =>
    new ApiError(failureStatus('InternalError', `Internal error occurred: ${message}`), { cause }),
  serviceUnavailable: (message: string): ApiError => new ApiError(failureStatus('ServiceUnavailable', message)),
};

/** Causes are built with these helpers so messages read like kube's field errors. */
export const fieldErrors = {
  /** kube's `field.NotFound`: the value names something that does not exist (`…name: Not found: "data"`). */
  notFound: (field: string, value: unknown): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueNotFound,
    message: `Not found: ${JSON.stringify(value)}`,
    field,
  }),
  required: (field: string, detail?: string): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueRequired,
    message: detail ? `Required value: ${detail}` : 'Required value',
    field,
  }),
  invalid: (field: string, value: unknown, detail: string): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueInvalid,
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
    field,
  }),
  notSupported: (field: string, value: unknown, supported: readonly string[]): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueNotSupported,
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
    field,
  }),
  duplicate: (field: string, value: unknown): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueDuplicate,
    message: `Duplicate value: ${JSON.stringify(value)}`,
    field,
  }),
  forbidden: (field: string, detail: string): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueForbidden,
    message: `Forbidden: ${detail}`,
    field,
  }),
  tooLong: (field: string, max: number): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueTooLong,
    message: `Too long: may not be more than ${max} bytes`,
    field,
  }),
  typeInvalid: (field: string, detail: string): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueTypeInvalid,
    message: `Invalid value: ${detail}`,
    field,
  }),
  unknown: (field: string): StatusCause => ({
    reason: CAUSE_TYPES.FieldValueUnknown,
    message: `unknown field "${field}"`,
    field,
  }),
};

/** Removes the fold's own "Operation cannot be fulfilled on X: " prefix from a rejection message. */
const conflictDetail = (message: string): string => {
  if (message.includes('the object has been modified')) {
    return 'the object has been modified; please apply your changes to the latest version and try again';
  }
  const marker = message.indexOf(': ');
  return message.startsWith('Operation cannot be fulfilled') && marker >= 0 ? message.slice(marker + 2) : message;
};

/** The field a fold rejection names ("spec.clusterIP: Invalid value: …"), if it starts with one. */
const leadingField = (message: string): string | undefined => /^([a-zA-Z][\w.[\]]*): /.exec(message)?.[1];

/**
 * The Status for a write the fold rejected: the fold is the judge (DESIGN invariant 1),
 * this only translates its verdict into what kube-apiserver would have answered.
 */
export const verdictError = (
  reason: RejectReason,
  message: string,
  resource: ResourceInfo,
  name: string,
): ApiError => {
  switch (reason) {
    case 'AlreadyExists':
      return apiErrors.alreadyExists(resource, name);
    case 'NotFound': {
      const namespace = /^namespace "([^"]+)" not found/.exec(message)?.[1];
      if (namespace !== undefined) {
        return new ApiError(failureStatus('NotFound', `namespaces "${namespace}" not found`, { name: namespace, group: '', kind: 'namespaces' }));
      }
      const node = /^node "([^"]+)" not found/.exec(message)?.[1];
      if (node !== undefined) {
        return new ApiError(failureStatus('NotFound', `nodes "${node}" not found`, { name: node, group: '', kind: 'nodes' }));
      }
      return apiErrors.notFound(resource, name);
    }
    case 'Conflict':
      return apiErrors.conflict(resource, name, conflictDetail(message));
    case 'Unschedulable':
      return apiErrors.conflict(resource, name, message);
    case 'Forbidden':
      return new ApiError(failureStatus('Forbidden', message, { name, group: resource.group, kind: resource.plural }));
    case 'Invalid': {
      const field = leadingField(message);
      const detail = field ? message.slice(field.length + 2) : message;
      return apiErrors.invalid(resource, name, [{ reason: CAUSE_TYPES.FieldValueInvalid, message: detail, ...(field ? { field } : {}) }]);
    }
    default:
      return assertNever(reason);
  }
};

/**
 * The apiserver was started with a configuration that contradicts the one recorded in the
 * cluster's log (e.g. another service CIDR). Not retriable: the same start fails again.
 */
export class ConfigurationMismatchError extends Error {
  override readonly name = 'ConfigurationMismatchError';
  readonly retriable = false;
  constructor(
    message: string,
    readonly context: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}
