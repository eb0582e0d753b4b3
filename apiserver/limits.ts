/**
 * What one apiserver lets clients hold: how long receiving a request may take, how many
 * connections may be open, and how many requests may be in flight at once (kube-apiserver's
 * `--max-requests-inflight` / `--max-mutating-requests-inflight`, the filter in
 * `k8s.io/apiserver/pkg/server/filters/maxinflight.go`).
 */
import { failureStatus } from './status.ts';
import { ApiError } from './errors.ts';

/** The serving limits of an apiserver; every field has kube's default. */
export interface ServingLimits {
  /**
   * How long a client may take to send a request's headers (Node's `headersTimeout`; kube
   * serves with `ReadHeaderTimeout: 32s`); then 408 and the connection is closed.
   */
  readonly requestHeaderTimeoutMs: number;
  /**
   * How long a client may take to send a whole request, headers and body (Node's
   * `requestTimeout`, kube's `--request-timeout` of 1m). It ends when the request has been
   * received: a watch or a followed log may then stream for as long as it lasts.
   */
  readonly requestTimeoutMs: number;
  /** Open connections at most; further ones are closed at once and logged (0: no limit). */
  readonly maxConnections: number;
  /** Read-only requests (GET, HEAD) in flight at most, long-running ones excluded (0: no limit). */
  readonly maxRequestsInflight: number;
  /** Mutating requests (POST, PUT, PATCH, DELETE) in flight at most (0: no limit). */
  readonly maxMutatingRequestsInflight: number;
}

/** kube-apiserver's defaults (ReadHeaderTimeout 32 s, --request-timeout 1m, 400 and 200 in flight). */
export const DEFAULT_SERVING_LIMITS: ServingLimits = {
  requestHeaderTimeoutMs: 32_000,
  requestTimeoutMs: 60_000,
  maxConnections: 10_000,
  maxRequestsInflight: 400,
  maxMutatingRequestsInflight: 200,
};

/** The limits with defaults filled in; throws for a negative or non-integer value. */
export const servingLimits = (given: Partial<ServingLimits> = {}): ServingLimits => {
  const limits = { ...DEFAULT_SERVING_LIMITS, ...given };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${value}`);
  }
  if (limits.requestTimeoutMs > 0 && limits.requestHeaderTimeoutMs > limits.requestTimeoutMs) {
    // Receiving the headers is part of receiving the request.
    return { ...limits, requestHeaderTimeoutMs: limits.requestTimeoutMs };
  }
  return limits;
};

/** The kind of a request for the in-flight limits. */
export type RequestKind = 'readOnly' | 'mutating' | 'longRunning';

/** HTTP methods that do not change anything (kube's non-mutating verbs get, list, watch). */
const READ_ONLY_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Classifies a request: watches and pod logs are long-running (kube's
 * `BasicLongRunningRequestCheck`: verb watch, subresource log) and hold no slot.
 */
export const requestKind = (method: string, longRunning: boolean): RequestKind => {
  if (longRunning) return 'longRunning';
  return READ_ONLY_METHODS.has(method) ? 'readOnly' : 'mutating';
};

/** Counts requests in flight per kind. */
export interface InflightLimiter {
  /** Takes a slot for a request of `kind`: the release function, or undefined when the limit is reached. */
  acquire(kind: RequestKind): (() => void) | undefined;
  /** Requests in flight now, per limited kind. */
  readonly inflight: { readonly readOnly: number; readonly mutating: number };
}

/** An in-flight limiter for `limits` (a limit of 0 is no limit, as in kube). */
export const createInflightLimiter = (limits: Pick<ServingLimits, 'maxRequestsInflight' | 'maxMutatingRequestsInflight'>): InflightLimiter => {
  const inflight = { readOnly: 0, mutating: 0 };
  const maximum = { readOnly: limits.maxRequestsInflight, mutating: limits.maxMutatingRequestsInflight };
  const noop = (): void => undefined;
  return {
    acquire: (kind) => {
      if (kind === 'longRunning') return noop;
      if (maximum[kind] > 0 && inflight[kind] >= maximum[kind]) return undefined;
      inflight[kind]++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inflight[kind]--;
      };
    },
    inflight,
  };
};

/** The group whose members no in-flight limit applies to (kube's `user.SystemPrivilegedGroup`). */
export const PRIVILEGED_GROUP = 'system:masters';

/** 429 Too Many Requests, retry after 1 s: kube's answer when the in-flight limit is reached. */
export const tooManyRequests = (): ApiError =>
  new ApiError(failureStatus('TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 }));
