/**
 * Errors of the CRI client and the containerd launcher. They extend the kubelet
 * package's {@link KubeletError}, so the agent's retry rules (`retriable`) apply to them
 * unchanged.
 */
import { type KubeletErrorContext, KubeletError } from '../errors.ts';

/** The gRPC status codes, by the names gRPC gives them. */
export const GRPC_CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;
export type GrpcCode = (typeof GRPC_CODES)[number];

/**
 * Codes after which the same call may succeed later: the runtime is not reachable or is
 * overloaded (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED), or it failed
 * for a reason of its own (UNKNOWN: containerd reports mount, CNI and task failures so,
 * and they are often transient, so kubelet retries them with backoff too). NOT_FOUND,
 * INVALID_ARGUMENT, ALREADY_EXISTS, FAILED_PRECONDITION, UNIMPLEMENTED … are terminal:
 * the same request gets the same answer.
 */
const RETRIABLE: ReadonlySet<GrpcCode> = new Set(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED', 'ABORTED', 'UNKNOWN']);

/** Whether a CRI call that failed with `code` may succeed if retried with backoff. */
export function isRetriableCode(code: GrpcCode): boolean {
  return RETRIABLE.has(code);
}

/** A CRI call failed: the gRPC `code`, the RPC (`method`) and the runtime's message. */
export class CriError extends KubeletError {
  override readonly name = 'CriError';
  constructor(
    readonly code: GrpcCode,
    readonly method: string,
    details: string,
    context: KubeletErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(`CRI ${method} failed: ${code}: ${details}`, isRetriableCode(code), { code, method, ...context }, options);
  }
}

/** containerd could not be started or did not answer in time. Retriable: a port or a lock may free up. */
export class ContainerdStartError extends KubeletError {
  override readonly name = 'ContainerdStartError';
  constructor(message: string, context: KubeletErrorContext = {}, options?: { cause?: unknown }) {
    super(message, true, context, options);
  }
}

/** The tar, ctr or ip command a local image or the launcher needs failed. Terminal: the same input fails again. */
export class CriToolError extends KubeletError {
  override readonly name = 'CriToolError';
  constructor(message: string, context: KubeletErrorContext = {}, options?: { cause?: unknown }) {
    super(message, false, context, options);
  }
}
