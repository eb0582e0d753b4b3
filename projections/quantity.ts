/**
 * Kubernetes resource quantities ("100m", "0.5", "128Mi", "1G", "1e3") as exact integers.
 *
 * CPU is counted in millicores and everything else (memory, pods, storage) in base units,
 * like `Quantity.MilliValue()` and `Quantity.Value()`: a fraction that does not land on a
 * whole unit is rounded up, away from zero ("0.1m" of cpu is 1 millicore, "100m" of memory
 * is 1 byte). Parsing is exact (BigInt), so "0.1Gi" is 107374183 bytes, not a float guess.
 */
import { assertNever } from '../schemas/index.ts';
import { ProjectionError } from './errors.ts';

/** The integer unit a quantity is parsed into: thousandths (cpu) or whole units. */
export const QuantityScale = {
  /** Thousandths of the unit: cpu millicores. */
  Milli: 'milli',
  /** Whole units: bytes of memory or storage, pod counts. */
  Unit: 'unit',
} as const;
export type QuantityScale = (typeof QuantityScale)[keyof typeof QuantityScale];

/** A quantity string that is not a Kubernetes quantity, or does not fit a safe integer (never retriable). */
export class QuantityParseError extends ProjectionError {
  override readonly name = 'QuantityParseError';
  constructor(
    message: string,
    /** The string that was rejected, verbatim. */
    readonly input: string,
  ) {
    super(message, false, { input });
  }
}

/** The outcome of {@link parseQuantity}: an integer in the requested scale, or why not. */
export type QuantityParseResult =
  | { readonly type: 'ok'; readonly value: number }
  | { readonly type: 'invalid'; readonly error: QuantityParseError };

const QUANTITY_PATTERN =
  /^([+-]?)(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?\d+))?$/;

const BINARY_SUFFIX_POWER = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n } as const;
type BinarySuffix = keyof typeof BINARY_SUFFIX_POWER;

const DECIMAL_SUFFIX_EXPONENT = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 } as const;
type DecimalSuffix = keyof typeof DECIMAL_SUFFIX_EXPONENT;

/** Exponents beyond this cannot produce a safe integer from a non-zero mantissa. */
const MAX_DECIMAL_EXPONENT = 40;

const SCALE_EXPONENT = { [QuantityScale.Milli]: 3, [QuantityScale.Unit]: 0 } as const;

const SUFFIX_HELP = 'a number with an optional suffix (n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei) or exponent (e3)';

/**
 * Parses a quantity string into an integer count of `scale` units, rounding a remainder
 * up (away from zero). Returns `invalid` with an error naming the string when it is not
 * a quantity or its value is beyond `Number.MAX_SAFE_INTEGER`.
 */
export function parseQuantity(input: string, scale: QuantityScale): QuantityParseResult {
  const match = QUANTITY_PATTERN.exec(input);
  if (match === null) {
    return invalid(input, `invalid quantity "${input}": expected ${SUFFIX_HELP}`);
  }
  const [, sign, integerDigits, fractionDigits, bareFractionDigits, binarySuffix, decimalSuffix, exponentDigits] =
    match;
  const fraction = fractionDigits ?? bareFractionDigits ?? '';
  const mantissa = BigInt(`${integerDigits ?? ''}${fraction}` || '0');
  let decimalExponent = SCALE_EXPONENT[scale] - fraction.length;
  if (decimalSuffix !== undefined) decimalExponent += DECIMAL_SUFFIX_EXPONENT[decimalSuffix as DecimalSuffix];
  if (exponentDigits !== undefined) decimalExponent += Number(exponentDigits);
  const binaryPower = binarySuffix === undefined ? 0n : BINARY_SUFFIX_POWER[binarySuffix as BinarySuffix];

  const magnitude = scaleUp(mantissa << binaryPower, decimalExponent);
  if (magnitude === undefined || magnitude > BigInt(Number.MAX_SAFE_INTEGER)) {
    return invalid(input, `quantity "${input}" is too large`);
  }
  const value = Number(magnitude);
  return { type: 'ok', value: sign === '-' && value !== 0 ? -value : value };
}

/** `value × 10^exponent`, rounded up when the exponent is negative; undefined when absurdly large. */
function scaleUp(value: bigint, exponent: number): bigint | undefined {
  if (value === 0n) return 0n;
  if (exponent >= 0) return exponent > MAX_DECIMAL_EXPONENT ? undefined : value * 10n ** BigInt(exponent);
  const divisorDigits = -exponent;
  if (divisorDigits > value.toString().length) return 1n;
  const divisor = 10n ** BigInt(divisorDigits);
  const quotient = value / divisor;
  return value % divisor === 0n ? quotient : quotient + 1n;
}

function invalid(input: string, message: string): QuantityParseResult {
  return { type: 'invalid', error: new QuantityParseError(message, input) };
}

/** The scale Kubernetes reports a resource in: millicores for `cpu`, whole units for the rest. */
export function scaleForResource(resourceName: string): QuantityScale {
  return resourceName === 'cpu' ? QuantityScale.Milli : QuantityScale.Unit;
}

const BINARY_FORMATS = [
  ['Pi', 2 ** 50],
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
] as const;

const DECIMAL_FORMATS = [
  ['P', 1e15],
  ['T', 1e12],
  ['G', 1e9],
  ['M', 1e6],
  ['k', 1e3],
] as const;

/**
 * Formats an integer from {@link parseQuantity} back into a short exact quantity string:
 * millicores as "250m" or "2"; whole units with the largest suffix that divides them
 * exactly ("128Mi", "1G", "1500"), preferring the binary suffix when both are as short.
 */
export function formatQuantity(value: number, scale: QuantityScale): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`formatQuantity needs a safe integer, got ${value}`);
  switch (scale) {
    case QuantityScale.Milli:
      return value % 1000 === 0 ? String(value / 1000) : `${value}m`;
    case QuantityScale.Unit:
      return formatUnits(value);
    default:
      return assertNever(scale);
  }
}

function formatUnits(value: number): string {
  if (value === 0) return '0';
  const sign = value < 0 ? '-' : '';
  const magnitude = Math.abs(value);
  const binary = largestExactSuffix(magnitude, BINARY_FORMATS);
  const decimal = largestExactSuffix(magnitude, DECIMAL_FORMATS);
  const shortest = decimal.length < binary.length ? decimal : binary;
  return `${sign}${shortest}`;
}

function largestExactSuffix(magnitude: number, formats: readonly (readonly [string, number])[]): string {
  for (const [suffix, factor] of formats) {
    if (magnitude % factor === 0) return `${magnitude / factor}${suffix}`;
  }
  return String(magnitude);
}
