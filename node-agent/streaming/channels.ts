/**
 * The channel protocol of `kubectl exec` and `attach` over WebSocket (apimachinery's
 * `wsstream`, kubelet's `remotecommand`): every binary message starts with one byte naming
 * its channel (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize). `v5.channel.k8s.io` adds
 * channel 255, the close signal: `[255, n]` says the client will send no more on channel
 * `n` (kubectl's stdin reached EOF). The error channel carries one JSON Status when the
 * command ends: Success, or Failure with reason `NonZeroExitCode` and the exit code as the
 * cause `ExitCode` (kubectl exits with that code).
 *
 * Pure: encoding, decoding and Status building, no I/O.
 */

/** The subprotocols served, best first (kube's negotiation: the first the client offers that the server has). */
export const CHANNEL_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

/** Port-forward tunnelled through a WebSocket: SPDY/3.1 frames inside binary messages (kubectl ≥ 1.31). */
export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** The largest message a client may send (a stdin chunk or a resize); larger ones end the session. */
export const MAX_CLIENT_MESSAGE_BYTES = 1024 * 1024;

/** One message from the client, decoded. */
export type ClientMessage =
  | { readonly type: 'stdin'; readonly data: Buffer }
  | { readonly type: 'resize'; readonly width: number; readonly height: number }
  /** v5: the client sends no more on `channel` (stdin: end of input). */
  | { readonly type: 'close'; readonly channel: number }
  | { readonly type: 'ignored'; readonly reason: string };

/** Decodes a binary message from the client. Never throws: what is not understood is `ignored`, as wsstream does. */
export const decodeClientMessage = (message: Buffer, protocol: ChannelProtocol): ClientMessage => {
  if (message.length === 0) return { type: 'ignored', reason: 'empty message' };
  const channel = message[0]!;
  const data = message.subarray(1);
  switch (channel) {
    case CHANNEL.stdin:
      return { type: 'stdin', data };
    case CHANNEL.resize: {
      const size = parseResize(data);
      return size === undefined ? { type: 'ignored', reason: 'malformed resize message' } : { type: 'resize', ...size };
    }
    case CHANNEL.close:
      if (protocol !== 'v5.channel.k8s.io') return { type: 'ignored', reason: 'close signal before v5' };
      return data.length === 1 ? { type: 'close', channel: data[0]! } : { type: 'ignored', reason: 'malformed close signal' };
    default:
      return { type: 'ignored', reason: `channel ${channel} is not written by clients` };
  }
};

/** kubelet's TerminalSize JSON `{"Width": w, "Height": h}` (uint16 each); undefined when malformed. */
export const parseResize = (data: Buffer): { width: number; height: number } | undefined => {
  if (data.length > 256) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { Width: width, Height: height } = parsed as { Width?: unknown; Height?: unknown };
  const valid = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffff;
  return valid(width) && valid(height) ? { width, height } : undefined;
};

/** A message on `channel` carrying `data`. */
export const encodeChannelMessage = (channel: number, data: Uint8Array = new Uint8Array(0)): Buffer => {
  const message = Buffer.allocUnsafe(data.length + 1);
  message[0] = channel;
  message.set(data, 1);
  return message;
};

/** How an exec'd or attached command ended, as the error channel reports it. */
export type CommandOutcome =
  | { readonly type: 'exited'; readonly exitCode: number }
  | { readonly type: 'failed'; readonly message: string };

/** The Status kubelet writes on the error channel (`metav1.Status`, as remotecommand's `v4` error writer encodes it). */
export const outcomeStatus = (outcome: CommandOutcome, command: readonly string[]): Record<string, unknown> => {
  if (outcome.type === 'failed') return { metadata: {}, status: 'Failure', message: outcome.message };
  if (outcome.exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${outcome.exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(outcome.exitCode) }] },
  };
};

/** Picks the first offered subprotocol the server has; undefined when none (the upgrade is refused with 400). */
export const negotiate = <P extends string>(offered: Iterable<string>, served: readonly P[]): P | undefined => {
  for (const protocol of offered) if ((served as readonly string[]).includes(protocol)) return protocol as P;
  return undefined;
};
