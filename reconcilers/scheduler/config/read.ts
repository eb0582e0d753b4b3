/**
 * Strict readers of decoded YAML/JSON, as kube's strict decoding: each names the field it
 * reads in the {@link SchedulerConfigError} it throws (wrong type, unknown field).
 */
import { SchedulerConfigError } from '../../errors.ts';

/** A plain object of the document: its own keys only, checked against the keys it may have. */
export type Fields = Readonly<Record<string, unknown>>;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const typeName = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** `value` as an object whose keys are all in `known` (unknown fields are errors, as kube's strict decoding). */
export function readObject(value: unknown, field: string, known: readonly string[]): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SchedulerConfigError(field, `must be an object, got ${typeName(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) throw new SchedulerConfigError(join(field, key), 'forbidden field name');
    if (!known.includes(key)) throw new SchedulerConfigError(join(field, key), `unknown field (known: ${known.join(', ')})`);
  }
  return value as Fields;
}

/** `value` as a list (absent or null: empty). */
export function readList(value: unknown, field: string): readonly unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new SchedulerConfigError(field, `must be a list, got ${typeName(value)}`);
  return value;
}

/** `value` as a string, or undefined when absent. */
export function readString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new SchedulerConfigError(field, `must be a string, got ${typeName(value)}`);
  return value;
}

/** `value` as an integer (kube's int32/int64 fields), or undefined when absent. */
export function readInteger(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new SchedulerConfigError(field, `must be an integer, got ${JSON.stringify(value)}`);
  return value;
}

/** `value` as a boolean, or undefined when absent. */
export function readBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new SchedulerConfigError(field, `must be a boolean, got ${typeName(value)}`);
  return value;
}

/** The path of `key` in the object at `field` (`profiles[0]` + `plugins` → `profiles[0].plugins`). */
export const join = (field: string, key: string): string => (field === '' ? key : `${field}.${key}`);

/** The path of item `index` of the list at `field`. */
export const at = (field: string, index: number): string => `${field}[${index}]`;
