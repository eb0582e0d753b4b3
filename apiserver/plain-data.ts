/**
 * The guard between what a client sends and the objects the apiserver builds from it.
 * Parsed request bodies are plain data; this checks, once per request and before anything
 * else reads the body, that no member name could walk into a JavaScript prototype when the
 * data is later copied or looked up (`__proto__`, `constructor`, `prototype`; DESIGN:
 * identities and authorization) and that nesting stays within the depth Go's JSON decoder,
 * and so kube-apiserver, accepts.
 */
import { apiErrors } from './errors.ts';

/** Member names that are never accepted as object keys from a client. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** True when `key` must not become an object key. */
export const isReservedKey = (key: string): boolean => RESERVED_KEYS.has(key);

/** The deepest nesting of objects and arrays accepted in a body (encoding/json's limit). */
export const MAX_NESTING_DEPTH = 10_000;

/** One node of the walk; `parent` links back so a path is built only for an error. */
interface Step {
  readonly value: unknown;
  readonly key: string | number | null;
  readonly parent: Step | null;
  readonly depth: number;
}

const fieldPath = (step: Step | null, limit = Infinity): string => {
  const parts: (string | number)[] = [];
  for (let at = step; at !== null && at.key !== null; at = at.parent) parts.unshift(at.key);
  return parts
    .slice(0, limit)
    .reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text === '' ? part : `${text}.${part}`), '');
};

/**
 * Throws a 400 naming the field when `value` holds a reserved member name anywhere or nests
 * deeper than {@link MAX_NESTING_DEPTH}. Iterative, so a deeply nested body cannot exhaust
 * the stack here.
 */
export const assertPlainData = (value: unknown, what = 'the request body'): void => {
  const stack: Step[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    const node = step.value;
    if (typeof node !== 'object' || node === null) continue;
    if (step.depth >= MAX_NESTING_DEPTH) {
      throw apiErrors.badRequest(`${what} nests objects and arrays deeper than ${MAX_NESTING_DEPTH} levels (at ${fieldPath(step, 6)}…)`);
    }
    const depth = step.depth + 1;
    if (Array.isArray(node)) {
      node.forEach((item, index) => stack.push({ value: item, key: index, parent: step, depth }));
      continue;
    }
    for (const key of Object.keys(node)) {
      if (isReservedKey(key)) {
        const field = fieldPath({ value: undefined, key, parent: step, depth });
        throw apiErrors.badRequest(
          `${field}: Invalid value: "${key}": ${what} has a member named "${key}"; logplane does not accept the member names ${[...RESERVED_KEYS].join(', ')} anywhere in a request`,
          [{ reason: 'FieldValueInvalid', message: `Invalid value: "${key}"`, field }],
        );
      }
      stack.push({ value: (node as Record<string, unknown>)[key], key, parent: step, depth });
    }
  }
};
