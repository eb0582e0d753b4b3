/**
 * A served version of a kind whose objects are stored as another (kube's conversion
 * between an API version and the storage version): events.k8s.io/v1 Event is served from
 * core/v1 Event's records, autoscaling/v1 HorizontalPodAutoscaler from autoscaling/v2's.
 * Conversions work on the JSON of objects: the served shape is what clients send and get,
 * the stored shape what the log holds and the fold, validation and printers read.
 */
export type JsonObject = Record<string, unknown>;

export interface Conversion {
  /** The served group, version and kind, and its definition in the vendored API document. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly definition: string;
  /** A served object (a request body) as the stored kind; unknown top-level fields are dropped first. */
  toStored(served: JsonObject): JsonObject;
  /** A stored object as the served version shows it. */
  fromStored(stored: JsonObject): JsonObject;
  /**
   * Whether objects stored at the served version itself go through `fromStored` too (a custom
   * resource: every read is pruned and defaulted by the version's current schema, as kube's).
   */
  readonly everyRead?: boolean;
}

export const isJsonObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{ ...fields }` without the entries whose value is undefined (so absent stays absent). */
export const defined = (fields: JsonObject): JsonObject => {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
};

export const objectAt = (value: unknown): JsonObject | undefined => (isJsonObject(value) ? value : undefined);
export const arrayAt = (value: unknown): unknown[] | undefined => (Array.isArray(value) ? value : undefined);
