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

/**
 * Whether a failed reconcile should be retried with backoff: an error that carries a
 * `retriable` flag (a `ReconcileError`, the log's `LogError`) says so itself; any other
 * error (a bug in a decision, an unexpected throw) is retried, as controller-runtime retries
 * every error that is not a terminal one.
 */
export const isRetriable = (error: unknown): boolean => {
  if (typeof error === 'object' && error !== null && 'retriable' in error) {
    const { retriable } = error as { retriable: unknown };
    if (typeof retriable === 'boolean') return retriable;
  }
  return true;
};

/** The fold rejected a key's commands on every one of its allowed retries: the key is dropped until a change wakes it. */
export class CommandsRejectedError extends ReconcileError {
  override readonly name = 'CommandsRejectedError';
  constructor(key: string, attempts: number) {
    super(`the commands for ${key} were rejected ${attempts} times in a row; dropping the key until a change wakes it`, false, { key, attempts });
  }
}

/** A controller option that cannot work (a TTL of zero, a negative period): says which and what it must be. */
export class InvalidControllerOptionError extends ReconcileError {
  override readonly name = 'InvalidControllerOptionError';
  constructor(option: string, value: unknown, expected: string) {
    super(`${option} must be ${expected}, got ${String(value)}`, false, { option, value: String(value) });
  }
}

/**
 * A scheduler configuration (`--scheduler-config`, kube's KubeSchedulerConfiguration) that
 * cannot be used: names the field as kube's validation does (`profiles[1].schedulerName`).
 */
export class SchedulerConfigError extends ReconcileError {
  override readonly name = 'SchedulerConfigError';
  constructor(
    /** The field's path, e.g. `profiles[0].pluginConfig[1].args.scoringStrategy.type`. */
    readonly field: string,
    /** What is wrong with it. */
    readonly detail: string,
  ) {
    super(`invalid scheduler configuration: ${field}: ${detail}`, false, { field });
  }
}
