/**
 * Errors of the local Kafka broker launcher.
 *
 * Every error says whether retrying the same call can help (`retriable`) and carries the
 * context a person needs to fix it (paths, ports, the tail of a log), so a CLI or a test
 * setup can print it as is.
 */

/** What went wrong, as a stable code callers can switch on. */
export type LocalKafkaErrorCode =
  | 'JAVA_MISSING'
  | 'JAVA_TOO_OLD'
  | 'MAVEN_MISSING'
  | 'MAVEN_FAILED'
  | 'FORMAT_FAILED'
  | 'PORT_IN_USE'
  | 'BROKER_EXITED'
  | 'BROKER_NOT_READY'
  | 'CLUSTER_MISMATCH'
  | 'NO_BROKER';

/** Base error of the launcher: a code, whether a retry may help, and context fields. */
export class LocalKafkaError extends Error {
  override readonly name = 'LocalKafkaError';
  readonly code: LocalKafkaErrorCode;
  readonly retriable: boolean;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(
    code: LocalKafkaErrorCode,
    message: string,
    options: { retriable?: boolean; context?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.context = options.context ?? {};
  }
}

/** Last `lines` lines of a text, for error messages. */
export function tail(text: string, lines = 40): string {
  const all = text.trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}
