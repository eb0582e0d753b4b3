/** Errors of the projections package; `retriable` says whether a retry may help. */

export interface ProjectionErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `projections/`. */
export class ProjectionError extends Error {
  override readonly name: string = 'ProjectionError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: ProjectionErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Waiting for the projection to reach a position took longer than allowed. */
export class ProjectionTimeoutError extends ProjectionError {
  override readonly name = 'ProjectionTimeoutError';
  constructor(message: string, context: ProjectionErrorContext = {}) {
    super(message, true, context);
  }
}

/** A record of the projection's store cannot be read: the directory is damaged (remove it to refold it from the log). */
export class DamagedStoreError extends ProjectionError {
  override readonly name = 'DamagedStoreError';
  constructor(message: string, context: ProjectionErrorContext = {}) {
    super(message, false, context);
  }
}
