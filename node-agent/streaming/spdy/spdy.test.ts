import type { Duplex } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  createHeaderDeflater,
  createHeaderInflater,
  decodeHeaderBlock,
  encodeFrame,
  encodeHeaderBlock,
  HEADER_DICTIONARY,
  MAX_HEADER_BLOCK_BYTES,
  type OutgoingFrame,
  readFrame,
  RST_STATUS,
  type SpdyFrame,
} from './frames.ts';
import { createSpdyServerSession, type SpdyStream } from './session.ts';

const logger = pino({ level: 'silent' });

const roundTrip = (frame: OutgoingFrame): SpdyFrame => {
  const read = readFrame(encodeFrame(frame), 1 << 20);
  if (read.type !== 'frame') throw new Error(`not a frame: ${JSON.stringify(read)}`);
  return read.frame;
};

describe('SPDY/3.1 frames', () => {
  it('has the SPDY/3 header dictionary: 1,423 bytes, from "options" to "enq=0."', () => {
    expect(HEADER_DICTIONARY.length).toBe(1423);
    expect([...HEADER_DICTIONARY.subarray(0, 11)]).toEqual([0, 0, 0, 7, ...Buffer.from('options')]);
    expect(HEADER_DICTIONARY.subarray(-6).toString()).toBe('enq=0.');
  });

  it.each<OutgoingFrame>([
    { type: 'data', streamId: 5, fin: true, data: Buffer.from('payload') },
    { type: 'data', streamId: 0x7fffffff, fin: false, data: Buffer.alloc(0) },
    { type: 'synReply', streamId: 3, fin: false, headerBlock: Buffer.from([1, 2, 3]) },
    { type: 'rstStream', streamId: 7, status: RST_STATUS.cancel },
    { type: 'settings', entries: [{ flags: 1, id: 7, value: 65_536 }, { flags: 0, id: 4, value: 100 }] },
    { type: 'ping', id: 0xfffffffe },
    { type: 'goAway', lastGoodStreamId: 9, status: 2 },
    { type: 'windowUpdate', streamId: 0, delta: 32_768 },
  ])('encodes and reads back $type', (frame) => {
    const read = roundTrip(frame);
    const { data: expectedData, headerBlock: expectedBlock, ...rest } = frame as { data?: Uint8Array; headerBlock?: Buffer };
    expect(read).toMatchObject(rest);
    if (expectedData) expect([...(read as { data: Buffer }).data]).toEqual([...expectedData]);
    if (expectedBlock) expect([...(read as { headerBlock: Buffer }).headerBlock]).toEqual([...expectedBlock]);
  });

  it('reads a SYN_STREAM with its priority, FIN and unidirectional flags', () => {
    const frame = encodeFrame({ type: 'synStream', streamId: 1, fin: true, headerBlock: Buffer.from('hb') });
    frame[4] = 0x03;
    frame[16] = 0b1010_0000;
    const read = readFrame(frame, 1024);
    expect(read).toMatchObject({ type: 'frame', size: frame.length, frame: { type: 'synStream', streamId: 1, priority: 5, fin: true, unidirectional: true } });
  });

  it('waits for a whole frame, refuses one longer than the bound, another version and short control frames', () => {
    const frame = encodeFrame({ type: 'data', streamId: 1, fin: false, data: Buffer.alloc(100) });
    expect(readFrame(frame.subarray(0, 7), 1024)).toEqual({ type: 'incomplete' });
    expect(readFrame(frame.subarray(0, 50), 1024)).toEqual({ type: 'incomplete' });
    expect(readFrame(frame, 99)).toMatchObject({ type: 'error', message: expect.stringMatching(/larger than 99/) });
    const v2 = encodeFrame({ type: 'ping', id: 1 });
    v2.writeUInt16BE(0x8002, 0);
    expect(readFrame(v2, 1024)).toMatchObject({ type: 'error', message: 'unsupported SPDY version 2' });
    const shortRst = Buffer.from([0x80, 3, 0, 3, 0, 0, 0, 4, 0, 0, 0, 1]);
    expect(readFrame(shortRst, 1024)).toMatchObject({ type: 'error' });
    const badSettings = Buffer.from([0x80, 3, 0, 4, 0, 0, 0, 4, 0, 0, 0, 9]);
    expect(readFrame(badSettings, 1024)).toMatchObject({ type: 'error', message: expect.stringMatching(/does not hold 9 entries/) });
    expect(readFrame(Buffer.from([0x80, 3, 0, 0x42, 0, 0, 0, 0]), 1024)).toMatchObject({ type: 'frame', frame: { type: 'unknown', frameType: 0x42 } });
  });

  it('encodes header blocks with NUL-joined values and refuses malformed ones', () => {
    const headers = new Map([['streamtype', ['data']], ['port', ['8080']], ['x-multi', ['a', 'b']]]);
    expect(decodeHeaderBlock(encodeHeaderBlock(headers))).toEqual(headers);
    const pair = (name: string, value: string) => {
      const n = Buffer.from(name);
      const v = Buffer.from(value);
      const b = Buffer.alloc(8 + n.length + v.length);
      b.writeUInt32BE(n.length, 0);
      n.copy(b, 4);
      b.writeUInt32BE(v.length, 4 + n.length);
      v.copy(b, 8 + n.length);
      return b;
    };
    const block = (count: number, ...pairs: Buffer[]) => Buffer.concat([Buffer.from([0, 0, 0, count]), ...pairs]);
    expect(decodeHeaderBlock(block(2, pair('a', '1'), pair('a', '2')))).toMatch(/appears twice/);
    expect(decodeHeaderBlock(block(1, pair('Port', '1')))).toMatch(/not lowercase/);
    expect(decodeHeaderBlock(block(2, pair('a', '1')))).toMatch(/ends inside pair 2/);
    expect(decodeHeaderBlock(Buffer.concat([block(1, pair('a', '1')), Buffer.from([0])]))).toMatch(/bytes after/);
    expect((decodeHeaderBlock(block(1, pair('__proto__', 'x'))) as Map<string, string[]>).get('__proto__')).toEqual(['x']);
    expect(Object.prototype).not.toHaveProperty('x');
  });

  it('keeps one compression context per direction: later blocks refer to earlier ones, and inflate in order', async () => {
    const deflater = createHeaderDeflater();
    const inflater = createHeaderInflater();
    const blocks = [0, 1, 2].map((i) => encodeHeaderBlock(new Map([['streamtype', ['data']], ['port', ['8080']], ['requestid', [String(i)]]])));
    const compressed = await Promise.all(blocks.map((b) => deflater.process(b)));
    // The dictionary and the shared context make a repeated block small.
    expect(compressed[2]!.length).toBeLessThan(compressed[0]!.length);
    expect(compressed[0]!.readUInt16BE(0) % 31).toBe(0);
    for (const [i, c] of compressed.entries()) expect(await inflater.process(c)).toEqual(blocks[i]);
    // A block inflated alone, without the context before it, is not understood.
    await expect(createHeaderInflater().process(compressed[1]!)).rejects.toThrow();
    deflater.close();
    inflater.close();
  });

  it('bounds what one header block may inflate to', async () => {
    const deflater = createHeaderDeflater();
    const bomb = await deflater.process(Buffer.alloc(MAX_HEADER_BLOCK_BYTES + 1));
    expect(bomb.length).toBeLessThan(1024);
    await expect(createHeaderInflater().process(bomb)).rejects.toThrow(/more than 65536 bytes/);
  });
});

/** A client end talking to a server session through an in-memory transport. */
const harness = (options: { maxStreams?: number; maxFrameBytes?: number } = {}) => {
  const received: SpdyFrame[] = [];
  const streams: SpdyStream[] = [];
  let input = Buffer.alloc(0);
  let closed = false;
  let paused = false;
  const session = createSpdyServerSession({
    transport: {
      write: (chunk) => {
        input = Buffer.concat([input, chunk]);
        for (let read = readFrame(input, 1 << 24); read.type === 'frame'; read = readFrame(input, 1 << 24)) {
          received.push(read.frame);
          input = input.subarray(read.size);
        }
        return true;
      },
      onDrain: (callback) => callback(),
      pause: () => (paused = true),
      resume: () => (paused = false),
      close: () => (closed = true),
    },
    onStream: (stream) => streams.push(stream),
    logger,
    ...options,
  });
  const deflater = createHeaderDeflater();
  const inflater = createHeaderInflater();
  const open = async (streamId: number, headers: Record<string, string>, fin = false) =>
    session.receive(encodeFrame({ type: 'synStream', streamId, fin, headerBlock: await deflater.process(encodeHeaderBlock(new Map(Object.entries(headers).map(([k, v]) => [k, [v]])))) }));
  // Header blocks go through zlib on the thread pool, so progress is bounded by time, not by event-loop turns.
  const until = async (check: () => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
    expect(check()).toBe(true);
  };
  return { session, received, streams, open, until, inflater, isClosed: () => closed, isPaused: () => paused };
};

describe('SPDY server session', () => {
  it('replies to a new stream, hands it over with its headers, and carries data both ways with FIN half-closes', async () => {
    const h = harness();
    await h.open(1, { streamtype: 'data', port: '8080', requestid: '0' });
    await h.until(() => h.streams.length === 1);
    const stream = h.streams[0]!;
    expect(stream.streamId).toBe(1);
    expect(stream.headers.get('port')).toEqual(['8080']);
    const reply = h.received.find((f) => f.type === 'synReply');
    expect(reply).toMatchObject({ streamId: 1, fin: false });
    expect(decodeHeaderBlock(await h.inflater.process((reply as { headerBlock: Buffer }).headerBlock))).toEqual(new Map());
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    let ended = false;
    stream.on('end', () => (ended = true));
    h.session.receive(encodeFrame({ type: 'data', streamId: 1, fin: false, data: Buffer.from('hello ') }));
    h.session.receive(encodeFrame({ type: 'data', streamId: 1, fin: true, data: Buffer.from('world') }));
    await h.until(() => ended);
    expect(Buffer.concat(chunks).toString()).toBe('hello world');
    stream.end('answer');
    await h.until(() => h.received.some((f) => f.type === 'data' && f.fin));
    const data = h.received.filter((f): f is Extract<SpdyFrame, { type: 'data' }> => f.type === 'data');
    expect(Buffer.concat(data.map((f) => f.data)).toString()).toBe('answer');
    expect(data.at(-1)).toMatchObject({ streamId: 1, fin: true });
  });

  it('echoes client pings, replenishes receive windows, resets a stream it does not know', async () => {
    const h = harness();
    h.session.receive(encodeFrame({ type: 'ping', id: 7 }));
    await h.until(() => h.received.some((f) => f.type === 'ping'));
    expect(h.received.find((f) => f.type === 'ping')).toEqual({ type: 'ping', id: 7 });
    await h.open(1, { streamtype: 'data' });
    await h.until(() => h.streams.length === 1);
    h.streams[0]!.resume();
    for (let i = 0; i < 3; i++) h.session.receive(encodeFrame({ type: 'data', streamId: 1, fin: false, data: Buffer.alloc(16_384) }));
    await h.until(() => h.received.filter((f) => f.type === 'windowUpdate').length === 2);
    expect(h.received.filter((f) => f.type === 'windowUpdate')).toEqual([
      { type: 'windowUpdate', streamId: 1, delta: 32_768 },
      { type: 'windowUpdate', streamId: 0, delta: 32_768 },
    ]);
    h.session.receive(encodeFrame({ type: 'data', streamId: 9, fin: false, data: Buffer.from('x') }));
    await h.until(() => h.received.some((f) => f.type === 'rstStream'));
    expect(h.received.find((f) => f.type === 'rstStream')).toEqual({ type: 'rstStream', streamId: 9, status: RST_STATUS.invalidStream });
  });

  it('destroys a stream the client resets, and resets one the server destroys', async () => {
    const h = harness();
    await h.open(1, { streamtype: 'data' });
    await h.open(3, { streamtype: 'error' });
    await h.until(() => h.streams.length === 2);
    let closed = false;
    h.streams[0]!.on('close', () => (closed = true));
    h.session.receive(encodeFrame({ type: 'rstStream', streamId: 1, status: RST_STATUS.cancel }));
    await h.until(() => closed);
    h.streams[1]!.destroy();
    await h.until(() => h.received.some((f) => f.type === 'rstStream' && f.streamId === 3));
  });

  it('refuses streams past the bound, and ends the connection on an oversized frame or a reused stream id', async () => {
    const bounded = harness({ maxStreams: 1 });
    await bounded.open(1, { streamtype: 'data' });
    await bounded.open(3, { streamtype: 'data' });
    await bounded.until(() => bounded.received.some((f) => f.type === 'rstStream'));
    expect(bounded.received.find((f) => f.type === 'rstStream')).toEqual({ type: 'rstStream', streamId: 3, status: RST_STATUS.refusedStream });

    const small = harness({ maxFrameBytes: 1000 });
    small.session.receive(encodeFrame({ type: 'data', streamId: 1, fin: false, data: Buffer.alloc(1001) }));
    expect(small.received).toEqual([{ type: 'goAway', lastGoodStreamId: 0, status: 1 }]);
    expect(small.isClosed()).toBe(true);

    const reused = harness();
    await reused.open(3, { streamtype: 'data' });
    await reused.open(1, { streamtype: 'data' });
    await reused.until(() => reused.isClosed());
    expect(reused.received.at(-1)).toEqual({ type: 'goAway', lastGoodStreamId: 3, status: 1 });
  });

  it('pauses the transport while a stream\'s reader is full, and resumes when it reads', async () => {
    const h = harness();
    await h.open(1, { streamtype: 'data' });
    await h.until(() => h.streams.length === 1);
    const stream: Duplex = h.streams[0]!;
    for (let i = 0; i < 4; i++) h.session.receive(encodeFrame({ type: 'data', streamId: 1, fin: false, data: Buffer.alloc(16_384) }));
    await h.until(() => h.isPaused());
    stream.resume();
    await h.until(() => !h.isPaused());
  });
});
