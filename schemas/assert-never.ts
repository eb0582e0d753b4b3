/**
 * Marks the branch a `switch` over a discriminated union can never reach.
 *
 * The compiler rejects the call when a case is missing (the value is then not `never`);
 * at runtime, where data from outside the type system can still arrive, it throws an
 * error that names the unexpected value.
 *
 * @param value - the value whose cases are exhausted
 * @param what - what the value is, for the error message (e.g. `'event type'`)
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${preview(value)}`);
}

function preview(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
