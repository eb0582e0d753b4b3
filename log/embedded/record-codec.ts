/**
 * The stored form of one record: a small fixed header, the key, then the value bytes.
 *
 * ```
 * 0   timestamp         float64 LE  epoch ms as given (or append time)
 * 8   maxTimestamp      float64 LE  running max of timestamps in the partition up to here
 * 16  key length        uint32 LE
 * 20  key               UTF-8
 * ..  value             the rest
 * ```
 *
 * `maxTimestamp` is non-decreasing along a partition, so "first offset whose timestamp is
 * ≥ t" is a binary search over it (the first record whose running max reaches t is exactly
 * the first record whose own timestamp does), without clamping the timestamps callers gave.
 */
const HEADER_BYTES = 20;

/** The fields of a stored record (the position lives in the LMDB key). */
export interface StoredRecord {
  readonly timestamp: number;
  readonly maxTimestamp: number;
  readonly key: string;
  readonly value: Buffer;
}

/** Encodes one record for storage. */
export const encodeStoredRecord = (key: string, value: Buffer, timestamp: number, maxTimestamp: number): Buffer => {
  const keyBytes = Buffer.byteLength(key, 'utf8');
  const stored = Buffer.allocUnsafe(HEADER_BYTES + keyBytes + value.length);
  stored.writeDoubleLE(timestamp, 0);
  stored.writeDoubleLE(maxTimestamp, 8);
  stored.writeUInt32LE(keyBytes, 16);
  stored.write(key, HEADER_BYTES, keyBytes, 'utf8');
  value.copy(stored, HEADER_BYTES + keyBytes);
  return stored;
};

/**
 * Decodes a stored record. `stored` must be a buffer the caller owns (lmdb-js returns a
 * fresh copy per entry for `binary` values): the returned value is a view into it.
 */
export const decodeStoredRecord = (stored: Buffer): StoredRecord => {
  const keyBytes = stored.readUInt32LE(16);
  return {
    timestamp: stored.readDoubleLE(0),
    maxTimestamp: stored.readDoubleLE(8),
    key: stored.toString('utf8', HEADER_BYTES, HEADER_BYTES + keyBytes),
    value: stored.subarray(HEADER_BYTES + keyBytes),
  };
};

/** Reads only the running max timestamp of a stored record (for time lookups). */
export const storedMaxTimestamp = (stored: Buffer): number => stored.readDoubleLE(8);
