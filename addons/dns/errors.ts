/** Errors of the cluster DNS add-on. Every error says whether retrying can help. */

/** Extra fields that say which address, option or name an error is about. */
export interface DnsErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `addons/dns/`: `retriable` tells callers whether a retry with backoff may succeed. */
export class DnsError extends Error {
  override readonly name: string = 'DnsError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: DnsErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options that can never work as given (a bad zone, port or upstream address). Retrying cannot help. */
export class DnsConfigError extends DnsError {
  override readonly name = 'DnsConfigError';
  constructor(message: string, context: DnsErrorContext = {}) {
    super(message, false, context);
  }
}

/**
 * The server could not listen (the address is in use, port 53 without root). An address in
 * use may free up; a permission error will not go away by itself.
 */
export class DnsListenError extends DnsError {
  override readonly name = 'DnsListenError';
}

/** Exhaustiveness check for `switch` over a discriminated union: unreachable when every case is handled. */
export function assertNever(value: never, what = 'value'): never {
  throw new DnsError(`unexpected ${what}: ${JSON.stringify(value)}`, false);
}
