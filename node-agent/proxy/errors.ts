/** Errors of the node-agent proxy. Every error says whether retrying can help. */

/** Extra fields that say which rule, address or command an error is about. */
export interface ProxyErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `node-agent/proxy/`: `retriable` tells callers whether a retry with backoff may succeed. */
export class ProxyError extends Error {
  override readonly name: string = 'ProxyError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: ProxyErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Options or a forwarding table that can never be applied as given (bad address, port out
 * of range, two rules claiming the same frontend). Retrying the same input cannot help.
 */
export class ProxyConfigError extends ProxyError {
  override readonly name = 'ProxyConfigError';
  constructor(message: string, context: ProxyErrorContext = {}) {
    super(message, false, context);
  }
}

/**
 * Programming the forwarding failed (a listener could not bind, `nft` rejected the
 * ruleset). `retriable` is decided per cause: an address in use may free up, a missing
 * `nft` binary will not appear by itself.
 */
export class ProxyApplyError extends ProxyError {
  override readonly name = 'ProxyApplyError';
}

/** The proxy was used after `close()`. */
export class ProxyClosedError extends ProxyError {
  override readonly name = 'ProxyClosedError';
  constructor(message: string, context: ProxyErrorContext = {}) {
    super(message, false, context);
  }
}

/** Exhaustiveness check for `switch` over a discriminated union: unreachable when every case is handled. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}
