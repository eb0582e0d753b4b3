/** Errors of the Ingress controller add-on. Every error says whether retrying can help. */

/** Extra fields that say which address, option or object an error is about. */
export interface IngressErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `addons/ingress/`: `retriable` tells callers whether a retry with backoff may succeed. */
export class IngressError extends Error {
  override readonly name: string = 'IngressError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: IngressErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options that can never work as given (a bad address or port). Retrying cannot help. */
export class IngressConfigError extends IngressError {
  override readonly name = 'IngressConfigError';
  constructor(message: string, context: IngressErrorContext = {}) {
    super(message, false, context);
  }
}

/** The proxy could not listen (the address is in use, a low port without root). */
export class IngressListenError extends IngressError {
  override readonly name = 'IngressListenError';
}

/** Exhaustiveness check for `switch` over a discriminated union: unreachable when every case is handled. */
export function assertNever(value: never, what = 'value'): never {
  throw new IngressError(`unexpected ${what}: ${JSON.stringify(value)}`, false);
}
