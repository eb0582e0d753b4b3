/** Errors of the kubelet package. Every error says whether retrying can help. */

export interface KubeletErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `node-agent/kubelet/`: `retriable` tells callers whether a retry with backoff may succeed. */
export class KubeletError extends Error {
  override readonly name: string = 'KubeletError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: KubeletErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options given to `createPodRuntime` are invalid (bad CIDR, negative delays …). */
export class KubeletConfigError extends KubeletError {
  override readonly name = 'KubeletConfigError';
  constructor(message: string, context: KubeletErrorContext = {}) {
    super(message, false, context);
  }
}

/** The pod, container or log asked for does not exist (maps to HTTP 404 in `kubectl logs`). */
export class KubeletNotFoundError extends KubeletError {
  override readonly name = 'KubeletNotFoundError';
  constructor(message: string, context: KubeletErrorContext = {}) {
    super(message, false, context);
  }
}

/** The runtime was used after `close()`. */
export class KubeletClosedError extends KubeletError {
  override readonly name = 'KubeletClosedError';
  constructor(message = 'the pod runtime is closed') {
    super(message, false);
  }
}

/** No free address is left in the pod CIDR. Retriable: pods that stop free addresses. */
export class PodIPExhaustedError extends KubeletError {
  override readonly name = 'PodIPExhaustedError';
  constructor(cidr: string, context: KubeletErrorContext = {}) {
    super(`no free pod IP left in ${cidr}`, true, { cidr, ...context });
  }
}
