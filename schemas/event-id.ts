/**
 * Event ids: UUIDv7 (RFC 9562), a 48-bit Unix millisecond timestamp, then a 12-bit counter
 * that keeps the ids of one process in increasing order within a millisecond (RFC 9562
 * §6.2, method 1), then 62 random bits.
 *
 * Why not `crypto.randomUUID()` (v4): the projection indexes every event by its id
 * (`eventIds`, an LMDB B-tree). Random keys land on random pages of that tree, so each put
 * dirties a page of its own; ids that grow with time are appended at its end. A put of a
 * random id into a 1M-entry tree cost 7.75 µs against 1.53 µs for ids in order (1M puts in
 * transactions of 10,000, this machine).
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let poolAt = pool.length;
let lastMs = -1;
let counter = 0;

/** A new event id; `now` (ms) is for tests. */
export const newEventId = (now: number = Date.now()): string => {
  let ms = Math.floor(now);
  if (ms <= lastMs) {
    // Same millisecond (or the clock went back): count on from the last id.
    ms = lastMs;
    counter++;
    if (counter > 0xfff) {
      ms++;
      counter = 0;
    }
  } else {
    if (poolAt + 10 > pool.length) {
      randomFillSync(pool);
      poolAt = 0;
    }
    // A random start in the lower half leaves room to count up within the millisecond.
    counter = pool.readUInt16BE(poolAt) & 0x7ff;
    poolAt += 2;
  }
  lastMs = ms;
  if (poolAt + 8 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  pool.copy(bytes, 8, poolAt, poolAt + 8);
  poolAt += 8;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
