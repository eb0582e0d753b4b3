/** Errors of the reconcilers package: retriable ones are retried with backoff, terminal ones recorded and dropped. */

export interface ReconcileErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `reconcilers/`. */
export class ReconcileError extends Error {
  override readonly name: string = 'ReconcileError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: ReconcileErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
