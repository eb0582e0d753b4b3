/** The JSON value types the patch formats share. */
/** Plain JSON data as the patch code handles it. */
export type Json = unknown;
export type JsonObject = Record<string, Json>;

/** True for a JSON object (not an array, not null). */
export const isObject = (value: Json): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
