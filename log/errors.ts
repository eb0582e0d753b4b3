/** Errors of the log package. Every error says whether retrying can help. */

export interface LogErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `log/`: `retriable` tells callers whether a retry with backoff may succeed. */
export class LogError extends Error {
  override readonly name: string = 'LogError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: LogErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The broker (or the embedded store) cannot be reached or opened. */
export class LogUnavailableError extends LogError {
  override readonly name = 'LogUnavailableError';
  constructor(message: string, context: LogErrorContext = {}, options?: { cause?: unknown }) {
    super(message, true, context, options);
  }
}

/** The caller asked for something the log cannot do (bad partition, offset out of range, closed log). */
export class LogUsageError extends LogError {
  override readonly name = 'LogUsageError';
  constructor(message: string, context: LogErrorContext = {}) {
    super(message, false, context);
  }
}
