/**
 * SPDY/3.1 framing (draft-mbelshe-httpbis-spdy-00 §2, with 3.1's connection-level
 * WINDOW_UPDATE): frame encoding and decoding, the header block layout, and the header
 * compression contexts (zlib with the SPDY/3 dictionary, one context per direction per
 * connection, each block ended with a sync flush).
 *
 * Written here because the npm SPDY packages are unmaintained since 2020; only what
 * kubectl's port-forward (spdystream) sends and reads is needed. Header blocks are kept
 * as raw (compressed) bytes by the decoder, so framing stays synchronous and pure; the
 * session inflates them in order.
 */
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

export const SPDY_VERSION = 3;

export const FRAME_TYPE = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8, windowUpdate: 9 } as const;
export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes. */
export const RST_STATUS = { protocolError: 1, invalidStream: 2, refusedStream: 3, cancel: 5, internalError: 6, flowControlError: 7, frameTooLarge: 11 } as const;
/** SETTINGS id of the initial stream window. */
export const SETTINGS_INITIAL_WINDOW_SIZE = 7;
/** The initial flow-control window of a stream and of the connection (64 KiB). */
export const DEFAULT_WINDOW = 65_536;

/** A frame as read: header blocks are still compressed (`headerBlock`). */
export type SpdyFrame =
  | { readonly type: 'data'; readonly streamId: number; readonly fin: boolean; readonly data: Buffer }
  | { readonly type: 'synStream'; readonly streamId: number; readonly associatedStreamId: number; readonly priority: number; readonly fin: boolean; readonly unidirectional: boolean; readonly headerBlock: Buffer }
  | { readonly type: 'synReply'; readonly streamId: number; readonly fin: boolean; readonly headerBlock: Buffer }
  | { readonly type: 'headers'; readonly streamId: number; readonly fin: boolean; readonly headerBlock: Buffer }
  | { readonly type: 'rstStream'; readonly streamId: number; readonly status: number }
  | { readonly type: 'settings'; readonly entries: readonly { readonly flags: number; readonly id: number; readonly value: number }[] }
  | { readonly type: 'ping'; readonly id: number }
  | { readonly type: 'goAway'; readonly lastGoodStreamId: number; readonly status: number }
  | { readonly type: 'windowUpdate'; readonly streamId: number; readonly delta: number }
  /** A control frame of a type this module does not know (SPDY says: ignore it). */
  | { readonly type: 'unknown'; readonly frameType: number };

/** The result of looking for one frame at the start of a buffer. */
export type FrameRead =
  | { readonly type: 'frame'; readonly frame: SpdyFrame; readonly size: number }
  | { readonly type: 'incomplete' }
  | { readonly type: 'error'; readonly message: string };

const STREAM_ID_MASK = 0x7fffffff;

/**
 * Reads the frame at the start of `buffer`. A frame longer than `maxLength` (the bound on
 * what one client may make the reader hold) or malformed is an error; never throws.
 */
export const readFrame = (buffer: Buffer, maxLength: number): FrameRead => {
  if (buffer.length < 8) return { type: 'incomplete' };
  const length = buffer.readUIntBE(5, 3);
  if (length > maxLength) return { type: 'error', message: `frame of ${length} bytes is larger than ${maxLength}` };
  if (buffer.length < 8 + length) return { type: 'incomplete' };
  const flags = buffer[4]!;
  const body = buffer.subarray(8, 8 + length);
  const size = 8 + length;
  const frame = (f: SpdyFrame): FrameRead => ({ type: 'frame', frame: f, size });
  const tooShort = (name: string, min: number): FrameRead | undefined => (length < min ? { type: 'error', message: `${name} frame of ${length} bytes is shorter than ${min}` } : undefined);
  if ((buffer[0]! & 0x80) === 0) {
    return frame({ type: 'data', streamId: buffer.readUInt32BE(0) & STREAM_ID_MASK, fin: (flags & FLAG_FIN) !== 0, data: Buffer.from(body) });
  }
  const version = buffer.readUInt16BE(0) & 0x7fff;
  if (version !== SPDY_VERSION) return { type: 'error', message: `unsupported SPDY version ${version}` };
  const frameType = buffer.readUInt16BE(2);
  const fin = (flags & FLAG_FIN) !== 0;
  switch (frameType) {
    case FRAME_TYPE.synStream:
      return (
        tooShort('SYN_STREAM', 10) ??
        frame({
          type: 'synStream',
          streamId: body.readUInt32BE(0) & STREAM_ID_MASK,
          associatedStreamId: body.readUInt32BE(4) & STREAM_ID_MASK,
          priority: body[8]! >> 5,
          fin,
          unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0,
          headerBlock: Buffer.from(body.subarray(10)),
        })
      );
    case FRAME_TYPE.synReply:
    case FRAME_TYPE.headers:
      return (
        tooShort(frameType === FRAME_TYPE.synReply ? 'SYN_REPLY' : 'HEADERS', 4) ??
        frame({ type: frameType === FRAME_TYPE.synReply ? 'synReply' : 'headers', streamId: body.readUInt32BE(0) & STREAM_ID_MASK, fin, headerBlock: Buffer.from(body.subarray(4)) })
      );
    case FRAME_TYPE.rstStream:
      return tooShort('RST_STREAM', 8) ?? frame({ type: 'rstStream', streamId: body.readUInt32BE(0) & STREAM_ID_MASK, status: body.readUInt32BE(4) });
    case FRAME_TYPE.settings: {
      const short = tooShort('SETTINGS', 4);
      if (short) return short;
      const count = body.readUInt32BE(0);
      if (length !== 4 + 8 * count) return { type: 'error', message: `SETTINGS frame of ${length} bytes does not hold ${count} entries` };
      const entries = Array.from({ length: count }, (_, i) => ({ flags: body[4 + 8 * i]!, id: body.readUIntBE(5 + 8 * i, 3), value: body.readUInt32BE(8 + 8 * i) }));
      return frame({ type: 'settings', entries });
    }
    case FRAME_TYPE.ping:
      return tooShort('PING', 4) ?? frame({ type: 'ping', id: body.readUInt32BE(0) });
    case FRAME_TYPE.goAway:
      return tooShort('GOAWAY', 8) ?? frame({ type: 'goAway', lastGoodStreamId: body.readUInt32BE(0) & STREAM_ID_MASK, status: body.readUInt32BE(4) });
    case FRAME_TYPE.windowUpdate:
      return tooShort('WINDOW_UPDATE', 8) ?? frame({ type: 'windowUpdate', streamId: body.readUInt32BE(0) & STREAM_ID_MASK, delta: body.readUInt32BE(4) & STREAM_ID_MASK });
    default:
      return frame({ type: 'unknown', frameType });
  }
};

const controlFrame = (frameType: number, flags: number, body: Buffer): Buffer => {
  if (body.length > 0xffffff) throw new RangeError(`SPDY frame body of ${body.length} bytes is too long`);
  const header = Buffer.alloc(8);
  header.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  header.writeUInt16BE(frameType, 2);
  header[4] = flags;
  header.writeUIntBE(body.length, 5, 3);
  return Buffer.concat([header, body]);
};

const uint32s = (...values: number[]): Buffer => {
  const buffer = Buffer.alloc(4 * values.length);
  values.forEach((value, i) => buffer.writeUInt32BE(value >>> 0, 4 * i));
  return buffer;
};

/** A frame to write; header blocks already compressed. */
export type OutgoingFrame =
  | { readonly type: 'data'; readonly streamId: number; readonly fin: boolean; readonly data: Uint8Array }
  | { readonly type: 'synStream'; readonly streamId: number; readonly fin: boolean; readonly headerBlock: Buffer }
  | { readonly type: 'synReply'; readonly streamId: number; readonly fin: boolean; readonly headerBlock: Buffer }
  | { readonly type: 'rstStream'; readonly streamId: number; readonly status: number }
  | { readonly type: 'settings'; readonly entries: readonly { readonly flags: number; readonly id: number; readonly value: number }[] }
  | { readonly type: 'ping'; readonly id: number }
  | { readonly type: 'goAway'; readonly lastGoodStreamId: number; readonly status: number }
  | { readonly type: 'windowUpdate'; readonly streamId: number; readonly delta: number };

/** Encodes a frame. */
export const encodeFrame = (frame: OutgoingFrame): Buffer => {
  switch (frame.type) {
    case 'data': {
      if (frame.data.length > 0xffffff) throw new RangeError(`SPDY data frame of ${frame.data.length} bytes is too long`);
      const header = Buffer.alloc(8);
      header.writeUInt32BE(frame.streamId & STREAM_ID_MASK, 0);
      header[4] = frame.fin ? FLAG_FIN : 0;
      header.writeUIntBE(frame.data.length, 5, 3);
      return Buffer.concat([header, frame.data]);
    }
    case 'synStream':
      return controlFrame(FRAME_TYPE.synStream, frame.fin ? FLAG_FIN : 0, Buffer.concat([uint32s(frame.streamId, 0), Buffer.from([0, 0]), frame.headerBlock]));
    case 'synReply':
      return controlFrame(FRAME_TYPE.synReply, frame.fin ? FLAG_FIN : 0, Buffer.concat([uint32s(frame.streamId), frame.headerBlock]));
    case 'rstStream':
      return controlFrame(FRAME_TYPE.rstStream, 0, uint32s(frame.streamId, frame.status));
    case 'settings': {
      const body = Buffer.alloc(4 + 8 * frame.entries.length);
      body.writeUInt32BE(frame.entries.length, 0);
      frame.entries.forEach((entry, i) => {
        body[4 + 8 * i] = entry.flags;
        body.writeUIntBE(entry.id, 5 + 8 * i, 3);
        body.writeUInt32BE(entry.value, 8 + 8 * i);
      });
      return controlFrame(FRAME_TYPE.settings, 0, body);
    }
    case 'ping':
      return controlFrame(FRAME_TYPE.ping, 0, uint32s(frame.id));
    case 'goAway':
      return controlFrame(FRAME_TYPE.goAway, 0, uint32s(frame.lastGoodStreamId, frame.status));
    case 'windowUpdate':
      return controlFrame(FRAME_TYPE.windowUpdate, 0, uint32s(frame.streamId, frame.delta));
    default:
      return frame satisfies never;
  }
};

/** Header names and values; names lowercase. A Map, so no header name reaches a prototype. */
export type SpdyHeaders = ReadonlyMap<string, readonly string[]>;

/** The uncompressed header block: pair count, then length-prefixed names and NUL-joined values. */
export const encodeHeaderBlock = (headers: SpdyHeaders): Buffer => {
  const parts: Buffer[] = [uint32s(headers.size)];
  for (const [name, values] of headers) {
    const nameBytes = Buffer.from(name.toLowerCase(), 'utf8');
    const valueBytes = Buffer.from(values.join('\0'), 'utf8');
    parts.push(uint32s(nameBytes.length), nameBytes, uint32s(valueBytes.length), valueBytes);
  }
  return Buffer.concat(parts);
};

/** Decodes an uncompressed header block; a string saying what is wrong when malformed. */
export const decodeHeaderBlock = (block: Buffer): SpdyHeaders | string => {
  if (block.length < 4) return 'header block shorter than its pair count';
  const count = block.readUInt32BE(0);
  const headers = new Map<string, string[]>();
  let offset = 4;
  const take = (): string | undefined => {
    if (offset + 4 > block.length) return undefined;
    const length = block.readUInt32BE(offset);
    if (offset + 4 + length > block.length) return undefined;
    const text = block.toString('utf8', offset + 4, offset + 4 + length);
    offset += 4 + length;
    return text;
  };
  for (let i = 0; i < count; i++) {
    const name = take();
    const value = take();
    if (name === undefined || value === undefined) return `header block ends inside pair ${i + 1} of ${count}`;
    if (name === '' || name !== name.toLowerCase()) return `header name "${name.slice(0, 64)}" is empty or not lowercase`;
    if (headers.has(name)) return `header "${name.slice(0, 64)}" appears twice`;
    headers.set(name, value.split('\0'));
  }
  return offset === block.length ? headers : 'header block has bytes after its last pair';
};

/** The SPDY/3 header compression dictionary (§2.6.10.1): 1,423 bytes, length-prefixed words then a text tail. */
export const HEADER_DICTIONARY: Buffer = (() => {
  const words = [
    'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language', 'accept-ranges',
    'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding', 'content-language', 'content-length',
    'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag', 'expect', 'expires', 'from', 'host', 'if-match',
    'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'pragma',
    'proxy-authenticate', 'proxy-authorization', 'range', 'referer', 'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade',
    'user-agent', 'vary', 'via', 'warning', 'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public',
    'set-cookie', 'keep-alive', 'origin',
  ];
  const tail =
    '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
    '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden404 Not Found' +
    '500 Internal Server Error501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 ' +
    'Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,' +
    'text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';
  return Buffer.concat([...words.flatMap((word) => [uint32s(word.length), Buffer.from(word, 'latin1')]), Buffer.from(tail, 'latin1')]);
})();

/** The most bytes one header block may inflate to (a port-forward stream's headers are some 60). */
export const MAX_HEADER_BLOCK_BYTES = 64 * 1024;

/** One direction's compression context: blocks go through in order, each ended with a sync flush. */
export interface HeaderCodec {
  /** Compresses (deflater) or inflates (inflater) one header block, after every block given before. */
  process(block: Buffer): Promise<Buffer>;
  close(): void;
}

const zlibCodec = (stream: Deflate | Inflate, maxOutput: number): HeaderCodec => {
  let chain: Promise<unknown> = Promise.resolve();
  let chunks: Buffer[] = [];
  let size = 0;
  let failure: Error | undefined;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxOutput) failure ??= new RangeError(`a header block inflates to more than ${maxOutput} bytes`);
    else chunks.push(chunk);
  });
  stream.on('error', (error: Error) => (failure ??= error));
  const once = (block: Buffer): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      const onError = (error: Error): void => reject(error);
      stream.once('error', onError);
      stream.write(block);
      stream.flush(constants.Z_SYNC_FLUSH, () => {
        stream.off('error', onError);
        const out = Buffer.concat(chunks);
        chunks = [];
        size = 0;
        if (failure) reject(failure);
        else resolve(out);
      });
    });
  return {
    process: (block) => {
      const result = chain.then(() => once(block));
      chain = result.catch(() => undefined);
      return result;
    },
    close: () => stream.destroy(),
  };
};

/** The compressing context of one connection's outgoing header blocks. */
export const createHeaderDeflater = (): HeaderCodec => zlibCodec(createDeflate({ dictionary: HEADER_DICTIONARY }), Number.POSITIVE_INFINITY);

/** The inflating context of one connection's incoming header blocks, each bounded by {@link MAX_HEADER_BLOCK_BYTES}. */
export const createHeaderInflater = (): HeaderCodec => zlibCodec(createInflate({ dictionary: HEADER_DICTIONARY }), MAX_HEADER_BLOCK_BYTES);
