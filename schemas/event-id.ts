/**
 * Event ids: UUIDv7 (RFC 9562) carrying the event's own time: a 48-bit Unix millisecond
 * timestamp (the event's `time`), then a 12-bit counter that keeps the ids one process makes
 * within one millisecond in increasing order (RFC 9562 §6.2, method 1), then 62 random bits.
 *
 * Why not `crypto.randomUUID()` (v4): the projection indexes events by id. Random keys land
 * on random pages of a B-tree, so each put dirtied a page of its own (1M puts into one tree:
 * 7.75 µs each for random ids, 1.53 µs for ids in order, on this project's machine). And an
 * id that carries its event's time needs no index entry at all: the projection finds it
 * through its time index (see `eventIdTime` and the store's `events`).
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let poolAt = pool.length;
let lastMs = -1;
let counter = 0;

const randomAt = (bytes: number): number => {
  if (poolAt + bytes > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += bytes;
  return at;
};

/** A new event id for an event stamped `time` (ms since the epoch; default now), which the id carries. */
export const newEventId = (time: number = Date.now()): string => {
  const ms = Math.floor(time);
  if (ms === lastMs && counter < 0xfff) counter++;
  else {
    // A new millisecond (or a full counter): a random start in the lower half leaves room to count up.
    counter = pool.readUInt16BE(randomAt(2)) & 0x7ff;
    lastMs = ms;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  pool.copy(bytes, 8, randomAt(8));
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The time (ms) a UUIDv7 carries; undefined for any other id. */
export const eventIdTime = (id: string): number | undefined =>
  V7.test(id) ? parseInt(id.slice(0, 8) + id.slice(9, 13), 16) : undefined;
