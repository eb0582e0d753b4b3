/**
 * Errors thrown by `schemas/`. None is retriable: encoding or decoding the same bytes or
 * value fails the same way every time, so callers record and drop rather than back off.
 */

/** Base of every error thrown by `schemas/`. */
export class SchemaError extends Error {
  /** Always false: retrying the same input cannot succeed. */
  readonly retriable = false as const;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A buffer starts with the single-object marker but names a writer schema that is not
 * among the versions under `schemas/avro/`.
 */
export class UnknownFingerprintError extends SchemaError {
  /** The CRC-64-AVRO fingerprint from the buffer, as 16 hex digits. */
  readonly fingerprint: string;
  /** The fingerprints of the known versions, e.g. `['v1 0123…', 'v2 4567…']`. */
  readonly known: readonly string[];

  constructor(fingerprint: string, known: readonly string[]) {
    super(
      `no event schema with CRC-64-AVRO fingerprint ${fingerprint} is registered ` +
        `(known: ${known.join(', ')}). The event was written by a newer or foreign writer: ` +
        `upgrade this process so that schemas/avro/ contains the writer's version, ` +
        `or check that the bytes really are a logplane event.`,
    );
    this.fingerprint = fingerprint;
    this.known = known;
  }
}

/** A buffer does not start with the Avro single-object encoding header (0xC3 0x01 + 8 bytes). */
export class NotSingleObjectEncodingError extends SchemaError {
  /** The buffer's length in bytes. */
  readonly length: number;
  /** The first (up to 10) bytes of the buffer, in hex. */
  readonly head: string;

  constructor(length: number, head: string) {
    super(
      `not an Avro single-object encoded event: expected the header c3 01 followed by an ` +
        `8-byte schema fingerprint, got ${length} byte(s) starting ${head || '(empty)'}`,
    );
    this.length = length;
    this.head = head;
  }
}

/** A value does not fit the writer schema; `path` names the first offending field. */
export class EncodeError extends SchemaError {
  /** The first offending field, e.g. `body.object.spec.containers[0].ports[0].containerPort`. */
  readonly path: string;
  /** What is wrong with it, e.g. `expected int, got "80"`. */
  readonly detail: string;

  constructor(path: string, detail: string) {
    super(`cannot encode event: ${path || '(root)'}: ${detail}`);
    this.path = path;
    this.detail = detail;
  }
}

/** The body after a known fingerprint is not a valid encoding under that writer schema. */
export class DecodeError extends SchemaError {
  /** The writer schema version named by the fingerprint, e.g. `v1`. */
  readonly version: string;

  constructor(version: string, reason: string, options?: ErrorOptions) {
    super(`corrupt event written with schema ${version}: ${reason}`, options);
    this.version = version;
  }
}

/** A string is not an object key (`Kind/namespace/name`, or `Kind//name` for cluster-scoped kinds). */
export class InvalidObjectKeyError extends SchemaError {
  /** The rejected key, or the key that would have been built. */
  readonly key: string;

  constructor(key: string, reason: string) {
    super(`invalid object key ${JSON.stringify(key)}: ${reason}`);
    this.key = key;
  }
}

/**
 * How `resource.ParseQuantity` (k8s.io/apimachinery) tells a bad quantity apart, with the exact
 * message it returns for each, which kube-apiserver repeats in its 400 response.
 */
export const QUANTITY_ERROR_DETAILS = {
  /** Not a number followed by a suffix (ErrFormatWrong); also the empty string. */
  format: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  /** The number part has no digit where the exact decimal path needs one (ErrNumeric). */
  numeric: 'unable to parse numeric part of quantity',
  /** The suffix is none of n u m k M G T P E Ki Mi Gi Ti Pi Ei nor an int64 exponent (ErrSuffix). */
  suffix: "unable to parse quantity's suffix",
} as const;
export type QuantityErrorReason = keyof typeof QUANTITY_ERROR_DETAILS;

/** A string (or JSON number) is not a Kubernetes resource quantity. */
export class InvalidQuantityError extends SchemaError {
  /** The rejected input, verbatim (a JSON number as its shortest decimal string). */
  readonly input: string;
  /** Which of ParseQuantity's three errors it is. */
  readonly reason: QuantityErrorReason;
  /** ParseQuantity's own message for `reason`, e.g. `unable to parse quantity's suffix`. */
  readonly detail: string;

  constructor(input: string, reason: QuantityErrorReason) {
    const detail = QUANTITY_ERROR_DETAILS[reason];
    super(`invalid quantity ${JSON.stringify(input)}: ${detail}`);
    this.input = input;
    this.reason = reason;
    this.detail = detail;
  }
}
