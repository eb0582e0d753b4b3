/**
 * Kubernetes resource quantities ("100m", "1.5Gi", "1e3"), parsed and serialized exactly as
 * k8s.io/apimachinery/pkg/api/resource does in Kubernetes 1.32 (quantity.go, suffix.go,
 * amount.go, scale_int.go), with BigInt arithmetic and never a float for the value.
 *
 * What kube does, and so what this module does:
 * - A quantity remembers its format (DecimalSI "1.5k", BinarySI "1Ki", DecimalExponent "1e3")
 *   and is written back in it, with the largest suffix or exponent (a multiple of 3) that keeps
 *   the value an integer: "1.5" → "1500m", "1536Mi" stays, "1024Mi" → "1Gi".
 * - A non-zero value is rounded up (away from zero) to a multiple of 10^-9: "0.1n" → "1n".
 *   BinarySI magnitudes are capped at 2^63-1, and a BinarySI value below 1024 in magnitude, or
 *   not an integer, is written as DecimalSI ("0.5Ki" → "512").
 * - When the input is already short and exact, kube keeps the input text itself as the
 *   serialization (its fast path), sign and leading zeros included: "+1" stays "+1", "1e0"
 *   stays "1e0", "1.500" stays "1.500", "3Ki" stays "3Ki", while "1.5" becomes "1500m".
 * - 1.32 quirks kept on purpose: a DecimalSI value that is a multiple of 10^21 loses its
 *   magnitude ("1000E" → "1": there is no suffix past "E" and 1.32 emits none), and a decimal
 *   exponent is narrowed to int32 after an int64 range check ("1e4294967297" → "10").
 */
import { assertNever } from './assert-never.ts';
import { InvalidQuantityError } from './errors.ts';

/** The three ways kube writes a quantity, named as `resource.Format` names them. */
export const QuantityFormat = {
  /** An "e" exponent, a multiple of 3: "12e6", "1e-3". */
  DecimalExponent: 'DecimalExponent',
  /** A power-of-two suffix: "12Mi" (12 × 2^20). */
  BinarySI: 'BinarySI',
  /** A power-of-ten suffix, or none: "12M" (12 × 10^6), "500m", "7". */
  DecimalSI: 'DecimalSI',
} as const;
export type QuantityFormat = (typeof QuantityFormat)[keyof typeof QuantityFormat];

/** An exact decimal number: `mantissa × 10^exponent`. */
export interface DecimalValue {
  readonly mantissa: bigint;
  readonly exponent: number;
}

/** A parsed quantity: its exact value, its format and the string kube writes for it. */
export interface Quantity extends DecimalValue {
  /** No trailing zero digits (zero is `0n × 10^0`), so equal values have equal fields. */
  readonly mantissa: bigint;
  readonly format: QuantityFormat;
  /** What kube-apiserver stores and returns for this quantity (`Quantity.String()`). */
  readonly serialized: string;
}

/**
 * Parses a quantity as kube-apiserver decodes one from JSON (`Quantity.UnmarshalJSON`): a
 * string has surrounding whitespace (Go's `unicode.IsSpace`) trimmed, a number is read from its
 * shortest decimal string (`String(n)`, so `1e21` is "1e+21"). Throws
 * {@link InvalidQuantityError} carrying kube's own message when the input is not a quantity.
 */
export function parseQuantity(input: string | number): Quantity {
  return parseQuantityString(typeof input === 'number' ? String(input) : trimGoSpace(input));
}

/**
 * The string kube-apiserver stores and returns for a quantity sent in JSON as `input` (a
 * string or a number), e.g. "0.5" → "500m", `1.5` → "1500m", "1024Mi" → "1Gi", "1e3" → "1e3".
 * Throws {@link InvalidQuantityError} when `input` is not a quantity.
 */
export function canonicalQuantity(input: string | number): string {
  return parseQuantity(input).serialized;
}

/**
 * Parses `text` exactly as `resource.ParseQuantity` does: no whitespace is allowed anywhere.
 * Throws {@link InvalidQuantityError} when `text` is not a quantity.
 */
export function parseQuantityString(text: string): Quantity {
  if (text === '0') return quantity({ mantissa: 0n, exponent: 0 }, QuantityFormat.DecimalSI, text);
  const scanned = scanQuantity(text);
  if (text === '' || scanned === undefined) throw new InvalidQuantityError(text, 'format');
  const suffix = interpretSuffix(scanned.suffix);
  if (suffix === undefined) throw new InvalidQuantityError(text, 'suffix');
  return parseFast(text, scanned, suffix) ?? parseExact(text, scanned, suffix);
}

/**
 * The quantity's value rounded up, away from zero, to a whole unit (`Quantity.Value()`, as an
 * exact bigint rather than an int64): "1500m" → 2n, "-1500m" → -2n, "1Ki" → 1024n.
 */
export function quantityValue(value: DecimalValue): bigint {
  return scaledValue(value, 0);
}

/**
 * The quantity's value in thousandths, rounded up away from zero (`Quantity.MilliValue()`, as
 * an exact bigint): "0.1" → 100n, "1" → 1000n, "0.5m" → 1n. Cpu requests are counted in these.
 */
export function quantityMilliValue(value: DecimalValue): bigint {
  return scaledValue(value, -3);
}

/** Orders two quantities by value (`Quantity.Cmp`): -1, 0 or 1; formats are not compared. */
export function compareQuantities(a: DecimalValue, b: DecimalValue): -1 | 0 | 1 {
  const signA = sign(a.mantissa);
  const signB = sign(b.mantissa);
  if (signA !== signB || signA === 0) return signA < signB ? -1 : signA > signB ? 1 : 0;
  const order = compareMagnitudes(a, b);
  return signA < 0 ? negateOrder(order) : order;
}

/**
 * `a + b` as `Quantity.Add` does: exact, in `a`'s format (in `b`'s when `a` is zero), written
 * back as `Quantity.String()` writes a computed value. Quota usage is summed with it.
 */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  return quantity(addValues(a, b), a.mantissa === 0n ? b.format : a.format, undefined);
}

/** `a - b` as `Quantity.Sub` does (format as {@link addQuantities}); may be negative. */
export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  return quantity(addValues(a, { mantissa: -b.mantissa, exponent: b.exponent }), a.mantissa === 0n ? b.format : a.format, undefined);
}

/** `value × factor` (an integer), in `value`'s format, as a computed value. */
export function multiplyQuantity(value: Quantity, factor: bigint): Quantity {
  return quantity({ mantissa: value.mantissa * factor, exponent: value.exponent }, value.format, undefined);
}

/** The zero quantity ("0", DecimalSI). */
export const ZERO_QUANTITY: Quantity = { mantissa: 0n, exponent: 0, format: QuantityFormat.DecimalSI, serialized: '0' };

function addValues(a: DecimalValue, b: DecimalValue): DecimalValue {
  const exponent = Math.min(a.exponent, b.exponent);
  return {
    mantissa: a.mantissa * 10n ** BigInt(a.exponent - exponent) + b.mantissa * 10n ** BigInt(b.exponent - exponent),
    exponent,
  };
}

/** Largest magnitude of a BinarySI quantity (kube's `maxAllowed`, 2^63-1); larger ones are capped. */
const MAX_INT64 = (1n << 63n) - 1n;
/** Most digits the int64 fast path reads (`maxInt64Factors`); longer numbers take the exact path. */
const MAX_INT64_FACTORS = 18;
/** Every non-zero value is rounded up to a multiple of 10^NANO. */
const NANO = -9;
const ONE: DecimalValue = { mantissa: 1n, exponent: 0 };
/** `quantityValue` and friends refuse to build an integer longer than this many digits. */
const MAX_VALUE_DIGITS = 10_000;

const DECIMAL_SUFFIX_EXPONENTS: ReadonlyMap<string, number> = new Map([
  ['n', -9], ['u', -6], ['m', -3], ['', 0], ['k', 3], ['M', 6], ['G', 9], ['T', 12], ['P', 15], ['E', 18],
]);
const BINARY_SUFFIX_EXPONENTS: ReadonlyMap<string, number> = new Map([
  ['Ki', 10], ['Mi', 20], ['Gi', 30], ['Ti', 40], ['Pi', 50], ['Ei', 60],
]);
const DECIMAL_SUFFIXES = invert(DECIMAL_SUFFIX_EXPONENTS);
const BINARY_SUFFIXES = invert(BINARY_SUFFIX_EXPONENTS);

/** Letters kube's scanner takes into a suffix (`eEinumkKMGTP`). */
const SUFFIX_LETTERS = new Set('eEinumkKMGTP');

/** Go's `unicode.IsSpace` set, which `strings.TrimSpace` trims (unlike JS `trim`, no U+FEFF). */
const GO_SPACE = '\\t\\n\\v\\f\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const GO_SPACE_AROUND = new RegExp(`^[${GO_SPACE}]+|[${GO_SPACE}]+$`, 'g');

/** A quantity string cut into its parts the way `parseQuantityString` in quantity.go does. */
interface ScannedQuantity {
  readonly positive: boolean;
  /** The sign and number, without the suffix: what the exact path reads as a decimal. */
  readonly number: string;
  /** Integer digits without leading zeros ("0" when there are none). */
  readonly integer: string;
  /** Fraction digits, possibly empty. */
  readonly fraction: string;
  readonly suffix: string;
}

/** What a suffix means: value = number × base^exponent, written back in `format`. */
interface Suffix {
  readonly base: 2 | 10;
  readonly exponent: number;
  readonly format: QuantityFormat;
}

function trimGoSpace(text: string): string {
  return text.replace(GO_SPACE_AROUND, '');
}

/**
 * Cuts `text` into sign, integer, fraction and suffix, or undefined when it is not shaped like
 * a quantity. Follows quantity.go's scanner, permissive parts included: "1.", ".", "-" and "+"
 * are numbers (the last three zero), and a string of zeros ends the scan.
 */
function scanQuantity(text: string): ScannedQuantity | undefined {
  const positive = text[0] !== '-';
  let pos = text[0] === '-' || text[0] === '+' ? 1 : 0;
  while (text[pos] === '0') pos++;
  if (pos === text.length) return { positive, number: '0', integer: '0', fraction: '', suffix: '' };

  const integerEnd = skipDigits(text, pos);
  const integer = text.slice(pos, integerEnd) || '0';
  if (integerEnd === text.length) return { positive, number: text, integer, fraction: '', suffix: '' };

  pos = integerEnd;
  let fraction = '';
  if (text[pos] === '.') {
    const fractionEnd = skipDigits(text, pos + 1);
    fraction = text.slice(pos + 1, fractionEnd);
    if (fractionEnd === text.length) return { positive, number: text, integer, fraction, suffix: '' };
    pos = fractionEnd;
  }
  const suffixStart = pos;
  while (pos < text.length && SUFFIX_LETTERS.has(text[pos] ?? '')) pos++;
  if (text[pos] === '-' || text[pos] === '+') pos++;
  pos = skipDigits(text, pos);
  if (pos !== text.length) return undefined;
  return { positive, number: text.slice(0, suffixStart), integer, fraction, suffix: text.slice(suffixStart) };
}

function skipDigits(text: string, from: number): number {
  let pos = from;
  while (isDigit(text[pos])) pos++;
  return pos;
}

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}

/**
 * Reads a suffix as suffix.go does: a decimal or binary SI suffix, else "e"/"E" and an int64,
 * which 1.32 then narrows to int32 (wrapping). Undefined when it is none of these.
 */
function interpretSuffix(suffix: string): Suffix | undefined {
  const decimal = DECIMAL_SUFFIX_EXPONENTS.get(suffix);
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: QuantityFormat.DecimalSI };
  const binary = BINARY_SUFFIX_EXPONENTS.get(suffix);
  if (binary !== undefined) return { base: 2, exponent: binary, format: QuantityFormat.BinarySI };
  if (suffix.length < 2 || (suffix[0] !== 'e' && suffix[0] !== 'E')) return undefined;
  const exponent = parseInt64(suffix.slice(1));
  if (exponent === undefined) return undefined;
  return { base: 10, exponent: Number(BigInt.asIntN(32, exponent)), format: QuantityFormat.DecimalExponent };
}

/** Go's `strconv.ParseInt(text, 10, 64)`: an optional sign and ASCII digits, in int64 range. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return BigInt.asIntN(64, value) === value ? value : undefined;
}

/**
 * ParseQuantity's int64 fast path: taken when the digits fit an int64 and the scale is at least
 * nano. Undefined when the exact path must decide instead; both give the same value, but only
 * this one keeps the input text as the serialization.
 */
function parseFast(text: string, scanned: ScannedQuantity, suffix: Suffix): Quantity | undefined {
  const { integer, fraction } = scanned;
  const binary = suffix.format === QuantityFormat.BinarySI;
  if (binary && fraction !== '') return undefined;
  const precision = binary
    ? 15 - integer.length - Math.trunc((suffix.exponent * 3) / 10) - 1
    : MAX_INT64_FACTORS - (integer.length + fraction.length);
  if (precision < 0) return undefined;
  const scale = binary ? 0 : int32(suffix.exponent - fraction.length);
  if (scale < NANO) return undefined;

  const digits = integer + fraction;
  const unscaled = BigInt(digits);
  const magnitude = binary ? unscaled << BigInt(suffix.exponent) : unscaled;
  if (magnitude > MAX_INT64) return undefined;
  const value = { mantissa: scanned.positive ? magnitude : -magnitude, exponent: scale };
  const verbatim = binary
    ? (unscaled & 7n) !== 0n
    : scale % 3 === 0 && !digits.endsWith('000') && digits[0] !== '0';
  return quantity(value, suffix.format, verbatim ? text : undefined);
}

/**
 * ParseQuantity's exact (inf.Dec) path: the number times the suffix, rounded up to nano; a
 * BinarySI magnitude is then capped at 2^63-1, and a BinarySI value in (0, 1) becomes DecimalSI.
 */
function parseExact(text: string, scanned: ScannedQuantity, suffix: Suffix): Quantity {
  const number = readDecimal(scanned.number);
  if (number === undefined) throw new InvalidQuantityError(text, 'numeric');
  const magnitude =
    suffix.base === 10
      ? { mantissa: abs(number.mantissa), exponent: 0 - int32(-number.exponent + int32(-suffix.exponent)) }
      : { mantissa: abs(number.mantissa) << BigInt(suffix.exponent), exponent: number.exponent };
  let rounded = roundUpToNano(magnitude);
  let format = suffix.format;
  if (format === QuantityFormat.BinarySI && compareMagnitudes(rounded, { mantissa: MAX_INT64, exponent: 0 }) > 0) {
    rounded = { mantissa: MAX_INT64, exponent: 0 };
  }
  if (format === QuantityFormat.BinarySI && rounded.mantissa !== 0n && compareMagnitudes(rounded, ONE) < 0) {
    format = QuantityFormat.DecimalSI;
  }
  const mantissa = number.mantissa < 0n ? -rounded.mantissa : rounded.mantissa;
  return quantity({ mantissa, exponent: rounded.exponent }, format, undefined);
}

/**
 * Reads "[+-]digits[.digits]" as inf.Dec's SetString does; undefined when there is no digit
 * (".e-20" reaches the exact path with the number "." and fails there).
 */
function readDecimal(number: string): DecimalValue | undefined {
  const unsigned = number.replace(/^[+-]/, '');
  const [integer = '', fraction = ''] = unsigned.split('.');
  if (integer === '' && fraction === '') return undefined;
  const magnitude = BigInt(integer + fraction);
  return { mantissa: number.startsWith('-') ? -magnitude : magnitude, exponent: 0 - fraction.length };
}

/** A non-negative value rounded up to a multiple of 10^-9 (inf.Round with RoundUp). */
function roundUpToNano(value: DecimalValue): DecimalValue {
  if (value.mantissa === 0n || value.exponent >= NANO) return value;
  const shift = NANO - value.exponent;
  if (shift > value.mantissa.toString().length) return { mantissa: 1n, exponent: NANO };
  const divisor = 10n ** BigInt(shift);
  const quotient = value.mantissa / divisor;
  return { mantissa: value.mantissa % divisor === 0n ? quotient : quotient + 1n, exponent: NANO };
}

function quantity(value: DecimalValue, format: QuantityFormat, verbatim: string | undefined): Quantity {
  const normalized = normalize(value);
  return { ...normalized, format, serialized: verbatim ?? serialize(normalized, format) };
}

/**
 * `Quantity.String()` for a value kube has not kept the input text for (CanonicalizeBytes):
 * BinarySI when the value is an integer of magnitude at least 1024, else decimal.
 */
function serialize(value: DecimalValue, format: QuantityFormat): string {
  if (value.mantissa === 0n) return '0';
  switch (format) {
    case QuantityFormat.BinarySI:
      return serializeBinary(value) ?? serializeDecimal(value, QuantityFormat.DecimalSI);
    case QuantityFormat.DecimalSI:
    case QuantityFormat.DecimalExponent:
      return serializeDecimal(value, format);
    default:
      return assertNever(format, 'quantity format');
  }
}

/** The integer over the largest power of 1024 dividing it, and its suffix; undefined when BinarySI cannot be used. */
function serializeBinary(value: DecimalValue): string | undefined {
  if (value.exponent < 0 || compareMagnitudes(value, { mantissa: 1024n, exponent: 0 }) < 0) return undefined;
  let mantissa = value.mantissa * 10n ** BigInt(value.exponent);
  let power = 0;
  while (mantissa % 1024n === 0n) {
    mantissa /= 1024n;
    power += 10;
  }
  return `${mantissa}${BINARY_SUFFIXES.get(power) ?? ''}`;
}

/**
 * The mantissa with the exponent lowered to a multiple of 3, then the SI suffix or "e"
 * exponent for it. 1.32 writes no suffix when DecimalSI has none for the exponent (past "E").
 */
function serializeDecimal(value: DecimalValue, format: typeof QuantityFormat.DecimalSI | typeof QuantityFormat.DecimalExponent): string {
  const lowering = ((value.exponent % 3) + 3) % 3;
  const mantissa = value.mantissa * 10n ** BigInt(lowering);
  const exponent = value.exponent - lowering;
  const suffix =
    format === QuantityFormat.DecimalSI ? (DECIMAL_SUFFIXES.get(exponent) ?? '') : exponent === 0 ? '' : `e${exponent}`;
  return `${mantissa}${suffix}`;
}

/** The same value with the mantissa's trailing zero digits moved into the exponent. */
function normalize(value: DecimalValue): DecimalValue {
  if (value.mantissa === 0n) return { mantissa: 0n, exponent: 0 };
  const digits = value.mantissa.toString();
  const zeros = digits.length - digits.replace(/0+$/, '').length;
  if (zeros === 0) return value;
  return { mantissa: BigInt(digits.slice(0, -zeros)), exponent: value.exponent + zeros };
}

/** Compares |a| and |b| without building 10^exponent for far-apart exponents. */
function compareMagnitudes(a: DecimalValue, b: DecimalValue): -1 | 0 | 1 {
  const magnitudeA = abs(a.mantissa);
  const magnitudeB = abs(b.mantissa);
  if (magnitudeA === 0n || magnitudeB === 0n) return compareBigints(magnitudeA, magnitudeB);
  const orderA = magnitudeA.toString().length + a.exponent;
  const orderB = magnitudeB.toString().length + b.exponent;
  if (orderA !== orderB) return orderA < orderB ? -1 : 1;
  const common = Math.min(a.exponent, b.exponent);
  return compareBigints(magnitudeA * 10n ** BigInt(a.exponent - common), magnitudeB * 10n ** BigInt(b.exponent - common));
}

/** `value / 10^scale` rounded up away from zero, refusing results of absurd length. */
function scaledValue(value: DecimalValue, scale: number): bigint {
  const { mantissa, exponent } = normalize(value);
  const shift = exponent - scale;
  if (mantissa === 0n) return 0n;
  if (shift >= 0) {
    if (mantissa.toString().length + shift > MAX_VALUE_DIGITS) {
      throw new RangeError(`quantity ${mantissa}e${exponent} has more than ${MAX_VALUE_DIGITS} digits at scale 10^${scale}`);
    }
    return mantissa * 10n ** BigInt(shift);
  }
  const magnitude = abs(mantissa);
  const rounded = -shift > magnitude.toString().length ? 1n : ceilDivide(magnitude, 10n ** BigInt(-shift));
  return mantissa < 0n ? -rounded : rounded;
}

function ceilDivide(dividend: bigint, divisor: bigint): bigint {
  const quotient = dividend / divisor;
  return dividend % divisor === 0n ? quotient : quotient + 1n;
}

function compareBigints(a: bigint, b: bigint): -1 | 0 | 1 {
  return a < b ? -1 : a > b ? 1 : 0;
}

function negateOrder(order: -1 | 0 | 1): -1 | 0 | 1 {
  return order === 0 ? 0 : order === 1 ? -1 : 1;
}

function sign(value: bigint): -1 | 0 | 1 {
  return compareBigints(value, 0n);
}

/** Go's int32 arithmetic: kube 1.32 keeps scales in an int32 and lets them wrap. */
function int32(value: number): number {
  return value | 0;
}

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

function invert(exponents: ReadonlyMap<string, number>): ReadonlyMap<number, string> {
  return new Map([...exponents].map(([suffix, exponent]) => [exponent, suffix]));
}
