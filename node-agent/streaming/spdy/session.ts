/**
 * The server side of a SPDY/3.1 connection (what kubelet's `httpstream/spdy` server does with
 * spdystream): the client opens streams (odd ids) with SYN_STREAM, each is replied to and
 * handed to `onStream` as a Node Duplex; DATA flows both ways with FIN half-closes, RST_STREAM
 * ends a stream, PINGs are echoed, GOAWAY ends the connection.
 *
 * Bounds: a frame longer than `maxFrameBytes` ends the connection (GOAWAY protocol error);
 * at most `maxStreams` streams are open (more are refused with RST_STREAM); the transport
 * is paused while a stream's reader holds more than its high-water mark or while frames
 * wait for their header block to inflate.
 *
 * Flow control: the receive windows (per stream and, as 3.1 adds, per connection) are
 * replenished with WINDOW_UPDATE as data is handed on. Sending is not held back by the
 * peer's windows: kubectl's spdystream neither sends nor reads WINDOW_UPDATE, and a sender
 * that waited for one would stall after 64 KiB; the transport's own backpressure bounds it.
 */
import { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import {
  createHeaderDeflater,
  createHeaderInflater,
  decodeHeaderBlock,
  DEFAULT_WINDOW,
  encodeFrame,
  encodeHeaderBlock,
  type OutgoingFrame,
  readFrame,
  RST_STATUS,
  type SpdyFrame,
  type SpdyHeaders,
} from './frames.ts';

/** Where a session's bytes go and come from: a socket, or a WebSocket carrying the tunnel. */
export interface SpdyTransport {
  /** Writes bytes; false when the caller should wait for `onDrain`. */
  write(chunk: Buffer): boolean;
  onDrain(callback: () => void): void;
  pause(): void;
  resume(): void;
  /** Ends the transport (no more bytes either way). */
  close(): void;
}

/** One stream the client opened: its headers, and its data as a Duplex. */
export interface SpdyStream extends Duplex {
  readonly streamId: number;
  readonly headers: SpdyHeaders;
}

export interface SpdySessionOptions {
  readonly transport: SpdyTransport;
  readonly onStream: (stream: SpdyStream) => void;
  readonly logger: Logger;
  readonly maxFrameBytes?: number;
  readonly maxStreams?: number;
}

export interface SpdySession {
  /** Bytes from the transport. */
  receive(chunk: Buffer): void;
  /** The transport ended: every stream is destroyed. */
  transportClosed(): void;
  /** Sends GOAWAY and closes the transport. */
  close(): void;
}

/** The largest frame a client may send (kubectl writes data in 32 KiB frames). */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;
export const DEFAULT_MAX_STREAMS = 1000;
/** Frames that may wait for header inflation before the transport is paused. */
const MAX_QUEUED_FRAMES = 64;

interface StreamState {
  readonly stream: Duplex;
  remoteFinished: boolean;
  localFinished: boolean;
  /** Bytes received since the last WINDOW_UPDATE of this stream. */
  unacknowledged: number;
  /** The transport is paused until this stream's reader wants more. */
  blocked: boolean;
}

/** Starts the server side of a SPDY connection over `transport`. */
export const createSpdyServerSession = (options: SpdySessionOptions): SpdySession => {
  const { transport, logger } = options;
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const maxStreams = options.maxStreams ?? DEFAULT_MAX_STREAMS;
  const deflater = createHeaderDeflater();
  const inflater = createHeaderInflater();
  const streams = new Map<number, StreamState>();
  let input: Buffer = Buffer.alloc(0);
  let lastStreamId = 0;
  let closed = false;
  let connectionUnacknowledged = 0;
  /** Frames in order; header-bearing ones wait for their inflated block. */
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  let paused = 0;
  const pause = (): void => {
    if (paused++ === 0) transport.pause();
  };
  const resume = (): void => {
    if (paused > 0 && --paused === 0) transport.resume();
  };
  /** Outgoing frames in order (SYN_REPLY waits for its compressed block). */
  let writes: Promise<unknown> = Promise.resolve();
  const send = (frame: OutgoingFrame): boolean => (closed ? true : transport.write(encodeFrame(frame)));
  const sendOrdered = (make: () => Promise<OutgoingFrame> | OutgoingFrame): Promise<boolean> => {
    const written = writes.then(async () => send(await make()));
    writes = written.catch(() => undefined);
    return written;
  };

  const fail = (message: string): void => {
    if (closed) return;
    logger.debug({ reason: message }, 'SPDY protocol error: closing the connection');
    send({ type: 'goAway', lastGoodStreamId: lastStreamId, status: 1 });
    shutDown();
  };
  const shutDown = (): void => {
    if (closed) return;
    closed = true;
    for (const state of streams.values()) state.stream.destroy();
    streams.clear();
    deflater.close();
    inflater.close();
    transport.close();
  };
  const forget = (streamId: number, state: StreamState): void => {
    if (state.remoteFinished && state.localFinished && streams.get(streamId) === state) {
      if (state.blocked) resume();
      streams.delete(streamId);
    }
  };

  const openStream = (streamId: number, headers: SpdyHeaders, fin: boolean): void => {
    let state: StreamState;
    const stream = new Duplex({
      allowHalfOpen: true,
      read() {
        if (!state.blocked) return;
        state.blocked = false;
        resume();
      },
      write(chunk: Buffer, _encoding, callback) {
        if (state.localFinished) return callback(new Error(`stream ${streamId} is closed for writing`));
        void sendOrdered(() => ({ type: 'data', streamId, fin: false, data: chunk })).then(
          (flushed) => (flushed ? callback() : transport.onDrain(() => callback())),
          callback,
        );
      },
      final(callback) {
        state.localFinished = true;
        void sendOrdered(() => ({ type: 'data', streamId, fin: true, data: Buffer.alloc(0) })).then(() => callback(), callback);
        forget(streamId, state);
      },
      destroy(error, callback) {
        if (!(state.localFinished && state.remoteFinished) && streams.get(streamId) === state) {
          state.localFinished = state.remoteFinished = true;
          void sendOrdered(() => ({ type: 'rstStream', streamId, status: RST_STATUS.cancel }));
          forget(streamId, state);
        }
        callback(error);
      },
    }) as SpdyStream;
    Object.defineProperties(stream, { streamId: { value: streamId }, headers: { value: headers } });
    state = { stream, remoteFinished: fin, localFinished: false, unacknowledged: 0, blocked: false };
    streams.set(streamId, state);
    if (fin) stream.push(null);
    void sendOrdered(async () => ({ type: 'synReply', streamId, fin: false, headerBlock: await deflater.process(encodeHeaderBlock(new Map())) })).then(
      () => options.onStream(stream),
      (error: unknown) => fail(`cannot compress a reply: ${String(error)}`),
    );
  };

  const onData = (frame: Extract<SpdyFrame, { type: 'data' }>): void => {
    const state = streams.get(frame.streamId);
    if (state === undefined || state.remoteFinished) {
      if (frame.streamId > 0 && frame.streamId <= lastStreamId) return;
      send({ type: 'rstStream', streamId: frame.streamId, status: RST_STATUS.invalidStream });
      return;
    }
    if (frame.data.length > 0) {
      if (!state.stream.push(frame.data) && !state.blocked) {
        state.blocked = true;
        pause();
      }
      state.unacknowledged += frame.data.length;
      connectionUnacknowledged += frame.data.length;
      if (state.unacknowledged >= DEFAULT_WINDOW / 2) {
        send({ type: 'windowUpdate', streamId: frame.streamId, delta: state.unacknowledged });
        state.unacknowledged = 0;
      }
      if (connectionUnacknowledged >= DEFAULT_WINDOW / 2) {
        send({ type: 'windowUpdate', streamId: 0, delta: connectionUnacknowledged });
        connectionUnacknowledged = 0;
      }
    }
    if (frame.fin) {
      state.remoteFinished = true;
      state.stream.push(null);
      forget(frame.streamId, state);
    }
  };

  const handle = async (frame: SpdyFrame): Promise<void> => {
    switch (frame.type) {
      case 'synStream': {
        const block = await inflater.process(frame.headerBlock).catch((error: unknown) => error as Error);
        if (block instanceof Error) return fail(`cannot inflate a header block: ${block.message}`);
        if (frame.streamId % 2 !== 1 || frame.streamId <= lastStreamId) return fail(`stream id ${frame.streamId} is not a new client stream`);
        lastStreamId = frame.streamId;
        const headers = decodeHeaderBlock(block);
        if (typeof headers === 'string') {
          send({ type: 'rstStream', streamId: frame.streamId, status: RST_STATUS.protocolError });
          return;
        }
        if (streams.size >= maxStreams) {
          send({ type: 'rstStream', streamId: frame.streamId, status: RST_STATUS.refusedStream });
          return;
        }
        openStream(frame.streamId, headers, frame.fin);
        return;
      }
      case 'headers':
      case 'synReply': {
        // Kept in step with the peer's compression context; their headers are not used.
        const block = await inflater.process(frame.headerBlock).catch((error: unknown) => error as Error);
        if (block instanceof Error) return fail(`cannot inflate a header block: ${block.message}`);
        const state = streams.get(frame.streamId);
        if (frame.fin && state) onData({ type: 'data', streamId: frame.streamId, fin: true, data: Buffer.alloc(0) });
        return;
      }
      case 'data':
        return onData(frame);
      case 'rstStream': {
        const state = streams.get(frame.streamId);
        if (!state) return;
        state.remoteFinished = state.localFinished = true;
        forget(frame.streamId, state);
        state.stream.destroy();
        return;
      }
      case 'ping':
        // Client pings are odd; echo them. An even id would be our own (we send none).
        if (frame.id % 2 === 1) send({ type: 'ping', id: frame.id });
        return;
      case 'goAway':
        shutDown();
        return;
      case 'settings':
      case 'windowUpdate':
      case 'unknown':
        return;
      default:
        return frame satisfies never;
    }
  };

  return {
    receive(chunk) {
      if (closed) return;
      input = input.length === 0 ? chunk : Buffer.concat([input, chunk]);
      for (;;) {
        const read = readFrame(input, maxFrameBytes);
        if (read.type === 'incomplete') return;
        if (read.type === 'error') return fail(read.message);
        input = input.subarray(read.size);
        const { frame } = read;
        queued += 1;
        if (queued === MAX_QUEUED_FRAMES) pause();
        chain = chain
          .then(() => (closed ? undefined : handle(frame)))
          .catch((error: unknown) => fail(`frame handling failed: ${String(error)}`))
          .finally(() => {
            if (queued-- === MAX_QUEUED_FRAMES) resume();
          });
      }
    },
    transportClosed: () => {
      if (closed) return;
      closed = true;
      for (const state of streams.values()) state.stream.destroy();
      streams.clear();
      deflater.close();
      inflater.close();
    },
    close: () => {
      if (closed) return;
      send({ type: 'goAway', lastGoodStreamId: lastStreamId, status: 0 });
      shutDown();
    },
  };
};
