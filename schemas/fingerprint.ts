import type avro from 'avsc';

/** The CRC-64-AVRO fingerprint of the empty string, and the polynomial's seed (Avro spec). */
const EMPTY = 0xc15d213aa4d7a795n;

const TABLE: readonly bigint[] = Array.from({ length: 256 }, (_, byte) => {
  let fp = BigInt(byte);
  for (let bit = 0; bit < 8; bit++) {
    fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n));
  }
  return fp;
});

/**
 * The Rabin CRC-64-AVRO fingerprint of some bytes, as an unsigned 64-bit value.
 * (avsc's `Type#fingerprint` offers only hash algorithms such as MD5 and SHA-256.)
 */
export function crc64Avro(bytes: Uint8Array): bigint {
  let fp = EMPTY;
  for (const byte of bytes) {
    fp = (fp >> 8n) ^ (TABLE[Number((fp ^ BigInt(byte)) & 0xffn)] as bigint);
  }
  return fp;
}

/**
 * The Parsing Canonical Form of a type (full names, only the attributes that affect
 * parsing, no whitespace); avsc's `schema()` without options produces exactly that.
 */
export function canonicalForm(type: avro.Type): string {
  return JSON.stringify(type.schema());
}

/** The CRC-64-AVRO fingerprint of a type's Parsing Canonical Form. */
export function schemaFingerprint(type: avro.Type): bigint {
  return crc64Avro(Buffer.from(canonicalForm(type), 'utf8'));
}

/** A 64-bit fingerprint as 16 lower-case hex digits (most significant first). */
export function fingerprintHex(fingerprint: bigint): string {
  return fingerprint.toString(16).padStart(16, '0');
}
