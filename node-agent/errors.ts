/** Errors of the node agent itself (its kubelet and proxy parts have their own). Every error says whether retrying can help. */

/** Extra fields that say which option or endpoint an error is about. */
export interface NodeAgentErrorContext {
  readonly [field: string]: string | number | boolean | undefined;
}

/** Base error of `node-agent/`: `retriable` tells callers whether a retry with backoff may succeed. */
export class NodeAgentError extends Error {
  override readonly name: string = 'NodeAgentError';
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly context: NodeAgentErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of the log endpoint can never work as given (no certificate, no client CA, no allowed client). */
export class LogServerConfigError extends NodeAgentError {
  override readonly name = 'LogServerConfigError';
  constructor(message: string, context: NodeAgentErrorContext = {}, options?: { cause?: unknown }) {
    super(message, false, context, options);
  }
}
