import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidQuantityError, type QuantityErrorReason } from './errors.ts';
import {
  canonicalQuantity,
  compareQuantities,
  type DecimalValue,
  parseQuantity,
  parseQuantityString,
  QuantityFormat,
  quantityMilliValue,
  quantityValue,
} from './quantity.ts';

const { BinarySI, DecimalExponent, DecimalSI } = QuantityFormat;
const MAX_INT64 = (1n << 63n) - 1n;

/** kube's test helper `decQuantity(i, exponent, format)`: the value i × 10^exponent. */
function dec(mantissa: bigint | number, exponent: number): DecimalValue {
  return { mantissa: BigInt(mantissa), exponent };
}

function negated(value: DecimalValue): DecimalValue {
  return { mantissa: -value.mantissa, exponent: value.exponent };
}

function expectSameValue(actual: DecimalValue, expected: DecimalValue): void {
  expect(compareQuantities(actual, expected), `${actual.mantissa}e${actual.exponent} vs ${expected.mantissa}e${expected.exponent}`).toBe(0);
}

function reasonOf(run: () => unknown): QuantityErrorReason | 'none' {
  try {
    run();
    return 'none';
  } catch (error) {
    if (error instanceof InvalidQuantityError) return error.reason;
    throw error;
  }
}

// quantity_test.go TestQuantityParse: input → value and format, also with "-" and "+" in front.
const PARSE_TABLE: readonly (readonly [string, DecimalValue, QuantityFormat])[] = [
  ['0', dec(0, 0), DecimalSI],
  ['0n', dec(0, 0), DecimalSI],
  ['0u', dec(0, 0), DecimalSI],
  ['0m', dec(0, 0), DecimalSI],
  ['0Ki', dec(0, 0), BinarySI],
  ['0k', dec(0, 0), DecimalSI],
  ['0Mi', dec(0, 0), BinarySI],
  ['0M', dec(0, 0), DecimalSI],
  ['0Gi', dec(0, 0), BinarySI],
  ['0G', dec(0, 0), DecimalSI],
  ['0Ti', dec(0, 0), BinarySI],
  ['0T', dec(0, 0), DecimalSI],
  ['1', dec(1, 0), DecimalSI],
  ['1Ki', dec(1024, 0), BinarySI],
  ['8Ki', dec(8 * 1024, 0), BinarySI],
  ['7Mi', dec(7 * 1024 * 1024, 0), BinarySI],
  ['6Gi', dec(6 * 1024 ** 3, 0), BinarySI],
  ['5Ti', dec(5 * 1024 ** 4, 0), BinarySI],
  ['4Pi', dec(4n * 1024n ** 5n, 0), BinarySI],
  ['3Ei', dec(3n * 1024n ** 6n, 0), BinarySI],
  ['10Ti', dec(10 * 1024 ** 4, 0), BinarySI],
  ['100Ti', dec(100 * 1024 ** 4, 0), BinarySI],
  ['5n', dec(5, -9), DecimalSI],
  ['4u', dec(4, -6), DecimalSI],
  ['3m', dec(3, -3), DecimalSI],
  ['9', dec(9, 0), DecimalSI],
  ['8k', dec(8, 3), DecimalSI],
  ['50k', dec(5, 4), DecimalSI],
  ['7M', dec(7, 6), DecimalSI],
  ['6G', dec(6, 9), DecimalSI],
  ['5T', dec(5, 12), DecimalSI],
  ['40T', dec(4, 13), DecimalSI],
  ['300T', dec(3, 14), DecimalSI],
  ['2P', dec(2, 15), DecimalSI],
  ['1E', dec(1, 18), DecimalSI],
  ['1E-3', dec(1, -3), DecimalExponent],
  ['1e3', dec(1, 3), DecimalExponent],
  ['1E6', dec(1, 6), DecimalExponent],
  ['1e9', dec(1, 9), DecimalExponent],
  ['1E12', dec(1, 12), DecimalExponent],
  ['1e15', dec(1, 15), DecimalExponent],
  ['1E18', dec(1, 18), DecimalExponent],
  ['1e14', dec(1, 14), DecimalExponent],
  ['1e13', dec(1, 13), DecimalExponent],
  ['100.035k', dec(100035, 0), DecimalSI],
  ['0.001', dec(1, -3), DecimalSI],
  ['0.0005k', dec(5, -1), DecimalSI],
  ['0.005', dec(5, -3), DecimalSI],
  ['0.05', dec(5, -2), DecimalSI],
  ['0.5', dec(5, -1), DecimalSI],
  ['0.00050k', dec(5, -1), DecimalSI],
  ['0.00500', dec(5, -3), DecimalSI],
  ['0.05000', dec(5, -2), DecimalSI],
  ['0.50000', dec(5, -1), DecimalSI],
  ['0.5e0', dec(5, -1), DecimalExponent],
  ['0.5e-1', dec(5, -2), DecimalExponent],
  ['0.5e-2', dec(5, -3), DecimalExponent],
  ['10.035M', dec(10035, 3), DecimalSI],
  ['1.2e3', dec(12, 2), DecimalExponent],
  ['1.3E+6', dec(13, 5), DecimalExponent],
  ['1.40e9', dec(14, 8), DecimalExponent],
  ['1.53E12', dec(153, 10), DecimalExponent],
  ['1.6e15', dec(16, 14), DecimalExponent],
  ['1.7E18', dec(17, 17), DecimalExponent],
  ['9.01', dec(901, -2), DecimalSI],
  ['8.1k', dec(81, 2), DecimalSI],
  ['7.123456M', dec(7123456, 0), DecimalSI],
  ['6.987654321G', dec(6987654321, 0), DecimalSI],
  ['5.444T', dec(5444, 9), DecimalSI],
  ['40.1T', dec(401, 11), DecimalSI],
  ['300.2T', dec(3002, 11), DecimalSI],
  ['2.5P', dec(25, 14), DecimalSI],
  ['1.01E', dec(101, 16), DecimalSI],
  // Things that saturate/round.
  ['3.001n', dec(4, -9), DecimalSI],
  ['1.1E-9', dec(2, -9), DecimalExponent],
  ['0.0000000001', dec(1, -9), DecimalSI],
  ['0.0000000005', dec(1, -9), DecimalSI],
  ['0.00000000050', dec(1, -9), DecimalSI],
  ['0.5e-9', dec(1, -9), DecimalExponent],
  ['0.9n', dec(1, -9), DecimalSI],
  ['0.00000012345', dec(124, -9), DecimalSI],
  ['0.00000012354', dec(124, -9), DecimalSI],
  ['9Ei', dec(MAX_INT64, 0), BinarySI],
  ['9223372036854775807Ki', dec(MAX_INT64, 0), BinarySI],
  ['12E', dec(12, 18), DecimalSI],
  // Fractional binary.
  ['100.035Ki', dec(10243584, -2), BinarySI],
  ['0.5Mi', dec(0.5 * 1024 * 1024, 0), BinarySI],
  ['0.05Gi', dec(536870912, -1), BinarySI],
  ['0.025Ti', dec(274877906944, -1), BinarySI],
  // Things written by trolls.
  ['0.000000000001Ki', dec(2, -9), DecimalSI],
  ['.001', dec(1, -3), DecimalSI],
  ['.0001k', dec(100, -3), DecimalSI],
  ['1.', dec(1, 0), DecimalSI],
  ['1.G', dec(1, 9), DecimalSI],
];

describe('parseQuantity: kube TestQuantityParse', () => {
  it.each(PARSE_TABLE)('%s', (input, value, format) => {
    const parsed = parseQuantityString(input);
    expectSameValue(parsed, value);
    expect(parsed.format).toBe(format);
  });

  it.each(PARSE_TABLE)('-%s is the negated value, same format', (input, value, format) => {
    const parsed = parseQuantityString(`-${input}`);
    expectSameValue(parsed, negated(value));
    expect(parsed.format).toBe(format);
  });

  it.each(PARSE_TABLE)('+%s is the same value and format', (input, value, format) => {
    const parsed = parseQuantityString(`+${input}`);
    expectSameValue(parsed, value);
    expect(parsed.format).toBe(format);
  });

  it('normalizes the value so that equal values have equal fields', () => {
    expect(parseQuantity('1000m')).toMatchObject({ mantissa: 1n, exponent: 0 });
    expect(parseQuantity('0.00500')).toMatchObject({ mantissa: 5n, exponent: -3 });
    expect(parseQuantity('0Ki')).toMatchObject({ mantissa: 0n, exponent: 0 });
  });
});

// quantity_test.go TestQuantityParseEmit.
const EMIT_TABLE = [
  ['1Ki', '1Ki'],
  ['1Mi', '1Mi'],
  ['1Gi', '1Gi'],
  ['1024Mi', '1Gi'],
  ['1000M', '1G'],
  ['.001Ki', '1024m'],
  ['.000001Ki', '1024u'],
  ['.000000001Ki', '1024n'],
  ['.000000000001Ki', '2n'],
] as const;

// quantity_test.go TestQuantityString, the rows a parse can reach in 1.32: the canonical string
// and an alternate spelling of the same quantity that serializes to it ('' when none).
const STRING_TABLE = [
  ['1Gi', '1024Mi'],
  ['300Mi', '307200Ki'],
  ['6Ki', ''],
  ['1001Gi', '1025024Mi'],
  ['1Ti', '1024Gi'],
  ['5', '5000m'],
  ['500m', '0.5'],
  ['1G', '1000M'],
  ['1G', '0.001T'],
  ['1m', '1000u'],
  ['80m', ''],
  ['1080m', '1.08'],
  ['1080m', '1080000000n'],
  ['300M', ''],
  ['1T', ''],
  ['1E', ''],
  ['1e21', ''],
  ['5e21', ''],
  ['1e24', ''],
  ['10e69', ''],
  ['20e69', ''],
  ['1e72', ''],
  ['1234567M', ''],
  ['1234567m', ''],
  ['3k', ''],
  ['1025', ''],
  ['0', '00'],
  ['1e9', '.001e12'],
  ['1e-3', '0.001e0'],
  ['1e-9', '1000e-12'],
  ['80e-3', ''],
  ['300e6', ''],
  ['1e12', ''],
  ['1e3', ''],
  ['3e3', ''],
  ['1n', ''],
  ['80n', ''],
  ['1080n', ''],
  ['1u', ''],
  ['80u', ''],
  ['1080u', ''],
] as const;

// quantity_test.go TestParseQuantity: big numbers either side of int64 and their serialization.
const BIG_TABLE = [
  ['-999999999999999999', '-999999999999999999'],
  ['999999999999999999', '999999999999999999'],
  ['-999999999999999999.0', '-999999999999999999'],
  ['999999999999999999.0', '999999999999999999'],
  ['-999999999999999999.1', '-999999999999999999100m'],
  ['999999999999999999.1', '999999999999999999100m'],
  ['-9999999999999999999', '-9999999999999999999'],
  ['9999999999999999999', '9999999999999999999'],
  ['-1E', '-1E'],
  ['1E', '1E'],
  ['-1000000000000000000', '-1E'],
  ['1000000000000000000', '1E'],
  ['-9999999999999999999.0', '-9999999999999999999'],
  ['9999999999999999999.0', '9999999999999999999'],
  ['-1.0E', '-1E'],
  ['1.0E', '1E'],
  ['-1000000000000000000.0', '-1E'],
  ['1000000000000000000.0', '1E'],
  ['-9999999999999999999000m', '-9999999999999999999'],
  ['9999999999999999999000m', '9999999999999999999'],
  ['-9999999999999999999.1', '-9999999999999999999100m'],
  ['9999999999999999999.1', '9999999999999999999100m'],
  ['-1.0000000000000000001E', '-1000000000000000000100m'],
  ['1.0000000000000000001E', '1000000000000000000100m'],
  ['-1000000000000000000.1', '-1000000000000000000100m'],
  ['1000000000000000000.1', '1000000000000000000100m'],
  ['-1.000000000000000001E', '-1000000000000000001'],
  ['1.000000000000000001E', '1000000000000000001'],
  ['-1000000000000000001', '-1000000000000000001'],
  ['1000000000000000001', '1000000000000000001'],
  ['-10E', '-10E'],
  ['10E', '10E'],
  ['-10000000000000000000', '-10E'],
  ['10000000000000000000', '10E'],
  ['-10.0E', '-10E'],
  ['10.0E', '10E'],
  ['-10000000000000000000.0', '-10E'],
  ['10000000000000000000.0', '10E'],
  ['-10000000000000000000000m', '-10E'],
  ['10000000000000000000000m', '10E'],
  ['-10.0000000000000000001E', '-10000000000000000000100m'],
  ['10.0000000000000000001E', '10000000000000000000100m'],
  ['-10000000000000000000.1', '-10000000000000000000100m'],
  ['10000000000000000000.1', '10000000000000000000100m'],
  ['-10.000000000000000001E', '-10000000000000000001'],
  ['10.000000000000000001E', '10000000000000000001'],
  ['-10000000000000000001', '-10000000000000000001'],
  ['10000000000000000001', '10000000000000000001'],
  ['-9223372036854775809', '-9223372036854775809'],
  ['9223372036854775806', '9223372036854775806'],
  ['-9223372036854775809.0', '-9223372036854775809'],
  ['9223372036854775806.0', '9223372036854775806'],
  ['-9223372036854775809000m', '-9223372036854775809'],
  ['9223372036854775806000m', '9223372036854775806'],
  ['-9223372036854775809.1', '-9223372036854775809100m'],
  ['9223372036854775806.1', '9223372036854775806100m'],
  ['-9223372036854775808', '-9223372036854775808'],
  ['9223372036854775807', '9223372036854775807'],
  ['-9223372036854775808.0', '-9223372036854775808'],
  ['9223372036854775807.0', '9223372036854775807'],
  ['-9223372036854775808000m', '-9223372036854775808'],
  ['9223372036854775807000m', '9223372036854775807'],
  ['-9223372036854775808.1', '-9223372036854775808100m'],
  ['9223372036854775807.1', '9223372036854775807100m'],
  ['-9223372036854775807', '-9223372036854775807'],
  ['9223372036854775808', '9223372036854775808'],
  ['-9223372036854775807.0', '-9223372036854775807'],
  ['9223372036854775808.0', '9223372036854775808'],
  ['-9223372036854775807000m', '-9223372036854775807'],
  ['9223372036854775808000m', '9223372036854775808'],
  ['-9223372036854775807.1', '-9223372036854775807100m'],
  ['9223372036854775808.1', '9223372036854775808100m'],
] as const;

describe('canonicalQuantity: kube serialization vectors', () => {
  it.each(EMIT_TABLE)('TestQuantityParseEmit %s → %s', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
    expect(canonicalQuantity(`-${input}`)).toBe(`-${expected}`);
  });

  it.each(STRING_TABLE)('TestQuantityString %s (alternate %s)', (expected, alternate) => {
    expect(canonicalQuantity(expected)).toBe(expected);
    if (expected !== '0') expect(canonicalQuantity(`-${expected}`)).toBe(`-${expected}`);
    if (alternate === '') return;
    expect(canonicalQuantity(alternate)).toBe(expected);
    if (expected !== '0') expect(canonicalQuantity(`-${alternate}`)).toBe(`-${expected}`);
  });

  it.each(BIG_TABLE)('TestParseQuantity %s → %s', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
  });

  it.each([
    ['9Ei', '9223372036854775807'],
    ['9223372036854775807Ki', '9223372036854775807'],
    ['-9Ei', '-9223372036854775807'],
    ['0.000000000001Ki', '2n'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    ['100.035Ki', '102435840m'],
    ['0.0000000001', '1n'],
    ['12E', '12E'],
    ['0.5e-9', '1e-9'],
  ])('caps, rounds and changes format as ParseQuantity does: %s → %s', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
  });
});

describe('JSON input (Quantity.UnmarshalJSON)', () => {
  // quantity_test.go TestJSONWhitespace: a JSON string is trimmed, a JSON number read as written.
  it.each([
    [' 1', '1'],
    ['1 ', '1'],
    [1, '1'],
    [10, '10'],
    [-1, '-1'],
    ['\t\n 1Gi\u00a0\u0085', '1Gi'],
  ] as const)('%j → %s', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
  });

  it.each([
    [0.5, '500m'],
    [1.5, '1500m'],
    [1000, '1k'],
    [1024, '1024'],
    [-0, '0'],
    [1e21, '1e+21'],
    [1e-7, '100e-9'],
    [1e-10, '1e-9'],
    [0.125, '125m'],
    // Three fraction digits and no leading zero: the fast path keeps the text.
    [123456789.123, '123456789.123'],
  ] as const)('the JSON number %d is read from its shortest decimal string: %s', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
  });

  it('does not trim a byte order mark, which Go does not count as space', () => {
    expect(() => canonicalQuantity('\ufeff1')).toThrow(InvalidQuantityError);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('rejects the number %d', (input) => {
    expect(reasonOf(() => canonicalQuantity(input))).toBe('format');
  });
});

describe('invalid quantities', () => {
  // quantity_test.go TestQuantityParse's invalid list, with the error ParseQuantity gives.
  it.each([
    ['', 'format'],
    ['1.1.M', 'format'],
    ['1+1.0M', 'format'],
    ['0.1mi', 'suffix'],
    ['0.1am', 'format'],
    ['aoeu', 'format'],
    ['.5i', 'suffix'],
    ['1i', 'suffix'],
    ['-3.01i', 'suffix'],
    ['-3.01e-', 'suffix'],
    [' 1', 'format'],
    ['1 ', 'format'],
    ['Non-Numeric', 'format'],
    ['invalid', 'format'],
    ['1e', 'suffix'],
    ['1ki', 'suffix'],
    ['1KiB', 'format'],
    ['1Mi3', 'suffix'],
    ['1e9223372036854775808', 'suffix'],
    ['1e1.5', 'format'],
    ['1,5', 'format'],
    ['１', 'format'],
  ] as const)('parseQuantityString(%j) fails: %s', (input, reason) => {
    expect(reasonOf(() => parseQuantityString(input))).toBe(reason);
  });

  it('throws an error naming the input and carrying kube’s message', () => {
    expect(() => canonicalQuantity('1.1.M')).toThrow(
      `invalid quantity "1.1.M": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
    expect(() => canonicalQuantity('1i')).toThrowError(expect.objectContaining({
      name: 'InvalidQuantityError',
      input: '1i',
      reason: 'suffix',
      detail: "unable to parse quantity's suffix",
      retriable: false,
    }));
  });

  it('rejects a string that is only space, once trimmed', () => {
    expect(reasonOf(() => canonicalQuantity('  '))).toBe('format');
  });
});

describe('Kubernetes 1.32 quirks, read from quantity.go and suffix.go', () => {
  it.each([
    // The fast path keeps the input text when it looks canonical: sign, leading zeros, a
    // fraction that is a multiple of 3 digits and "E" for "e" all survive.
    ['+1', '+1'],
    ['01', '01'],
    ['1.500', '1.500'],
    ['1.', '1.'],
    ['1.G', '1.G'],
    ['1e0', '1e0'],
    ['1E3', '1E3'],
    ['1e+3', '1e+3'],
    ['+3Ki', '+3Ki'],
    ['03Ti', '03Ti'],
    // ...but not when the value needed the exact path or the text is not that short form.
    ['+3Pi', '3Pi'],
    ['+8Ki', '8Ki'],
    ['1.0', '1'],
    ['1.50', '1500m'],
    ['1e4', '10e3'],
    ['+0.5', '500m'],
    ['-0', '0'],
    // The scanner takes an empty number as zero.
    ['.', '0'],
    ['-', '0'],
    ['+', '0'],
    ['Ki', '0'],
    ['-k', '0'],
    ['e5', '0'],
    // No DecimalSI suffix past E: 1.32 writes the mantissa alone (fixed in later releases).
    ['1000E', '1'],
    ['5000E', '5'],
    ['1000000E', '1'],
    ['1000000000000000000000', '1'],
    ['1234567E', '1234567E'],
    // The exponent is checked against int64 and then narrowed to int32.
    ['1e4294967297', '10'],
    ['1e2147483647', '10e2147483646'],
  ])('%s → %s', (input, expected) => {
    expect(canonicalQuantity(input)).toBe(expected);
  });

  it('fails with the numeric error when the exact path gets a number without digits', () => {
    expect(reasonOf(() => parseQuantityString('.e-20'))).toBe('numeric');
    expect(reasonOf(() => parseQuantityString('-e-10'))).toBe('numeric');
    expect(reasonOf(() => parseQuantityString('.e-9'))).toBe('none');
  });

  it('rounds a value far below nano up to 1n without building the power of ten', () => {
    expect(canonicalQuantity('-.484785E-7466')).toBe('-1e-9');
    expect(canonicalQuantity('-.484785n')).toBe('-1n');
    expect(canonicalQuantity('123456789012345678901e-2147483647')).toBe('1e-9');
  });
});

describe('compareQuantities (kube TestQuantityCmp)', () => {
  it.each([
    ['0', '0', 0],
    ['100m', '50m', 1],
    ['50m', '100m', -1],
    ['10000T', '100Gi', 1],
    ['1Gi', '1024Mi', 0],
    ['1k', '1e3', 0],
    ['-1', '1m', -1],
    ['-2', '-1', -1],
    ['1e2147483647', '9Ei', 1],
    ['-1e2147483647', '-1', -1],
    ['1n', '0', 1],
  ] as const)('%s vs %s → %d', (a, b, expected) => {
    expect(compareQuantities(parseQuantity(a), parseQuantity(b))).toBe(expected);
    expect(compareQuantities(parseQuantity(b), parseQuantity(a))).toBe(-expected || 0);
  });
});

describe('quantityValue and quantityMilliValue round up away from zero', () => {
  // quantity_test.go TestNegativeValueRoundsAwayFromZero: Value() and MilliValue().
  it.each([
    ['-.484785E-7466', -1n, -1n],
    ['.484785E-7466', 1n, 1n],
    ['-.484785E-1', -1n, -49n],
    ['.484785E-1', 1n, 49n],
    ['-0.0005', -1n, -1n],
    ['0.0005', 1n, 1n],
    ['-1500m', -2n, -1500n],
    ['1500m', 2n, 1500n],
    ['-9.5000000001Gi', -10200547329n, -10200547328108n],
    ['9.5000000001Gi', 10200547329n, 10200547328108n],
    ['-1', -1n, -1000n],
    ['1', 1n, 1000n],
    ['0', 0n, 0n],
    ['1Ki', 1024n, 1024000n],
    ['100m', 1n, 100n],
    ['9Ei', MAX_INT64, MAX_INT64 * 1000n],
    ['12E', 12n * 10n ** 18n, 12n * 10n ** 21n],
  ] as const)('%s → %d, %dm', (input, value, milli) => {
    const parsed = parseQuantity(input);
    expect(quantityValue(parsed)).toBe(value);
    expect(quantityMilliValue(parsed)).toBe(milli);
  });

  it('refuses to build an integer of absurd length', () => {
    expect(() => quantityValue(parseQuantity('1e2147483647'))).toThrow(RangeError);
  });
});

/** An ASCII quantity string in kube's grammar, with its parts kept for the oracle. */
interface Spelled {
  readonly text: string;
  readonly negative: boolean;
  readonly digits: string;
  readonly fractionDigits: number;
  readonly base: 2n | 10n;
  readonly power: number;
}

const SI_SUFFIXES: readonly (readonly [string, 2n | 10n, number])[] = [
  ['', 10n, 0], ['n', 10n, -9], ['u', 10n, -6], ['m', 10n, -3], ['k', 10n, 3], ['M', 10n, 6], ['G', 10n, 9],
  ['T', 10n, 12], ['P', 10n, 15], ['E', 10n, 18],
  ['Ki', 2n, 10], ['Mi', 2n, 20], ['Gi', 2n, 30], ['Ti', 2n, 40], ['Pi', 2n, 50], ['Ei', 2n, 60],
];

const suffixArbitrary = fc.oneof(
  fc.constantFrom(...SI_SUFFIXES),
  fc
    .tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 30 }), fc.boolean())
    .map(([letter, sign, exponent, padded]): readonly [string, 2n | 10n, number] => [
      `${letter}${sign}${padded ? '0' : ''}${exponent}`,
      10n,
      sign === '-' ? -exponent : exponent,
    ]),
);

const spelledArbitrary: fc.Arbitrary<Spelled> = fc
  .record({
    sign: fc.constantFrom('', '-', '+'),
    integer: fc.stringMatching(/^[0-9]{0,22}$/),
    fraction: fc.option(fc.stringMatching(/^[0-9]{0,14}$/), { nil: undefined }),
    suffix: suffixArbitrary,
  })
  .filter(({ integer, fraction }) => /[0-9]/.test(integer + (fraction ?? '')))
  .map(({ sign, integer, fraction, suffix: [suffix, base, power] }) => ({
    text: `${sign}${integer}${fraction === undefined ? '' : `.${fraction}`}${suffix}`,
    negative: sign === '-',
    digits: integer + (fraction ?? ''),
    fractionDigits: fraction?.length ?? 0,
    base,
    power,
  }));

/**
 * The oracle: the spelled number in nano units, rounded up away from zero, BinarySI capped at
 * 2^63-1 units, computed straight from the grammar without the module's fast/exact paths.
 */
function expectedNanos(spelled: Spelled): bigint {
  const digits = BigInt(spelled.digits);
  const decimalPower = 9 - spelled.fractionDigits + (spelled.base === 10n ? spelled.power : 0);
  const scaled = spelled.base === 2n ? digits << BigInt(spelled.power) : digits;
  const nanos =
    decimalPower >= 0 ? scaled * 10n ** BigInt(decimalPower) : (scaled + 10n ** BigInt(-decimalPower) - 1n) / 10n ** BigInt(-decimalPower);
  const capped = spelled.base === 2n && nanos > MAX_INT64 * 10n ** 9n ? MAX_INT64 * 10n ** 9n : nanos;
  return spelled.negative ? -capped : capped;
}

function nanos(value: DecimalValue): bigint {
  expect(value.exponent).toBeGreaterThanOrEqual(-9);
  return value.mantissa * 10n ** BigInt(value.exponent + 9);
}

/** 1.32 has no DecimalSI suffix for a canonical exponent of 21 or more and drops it. */
function losesMagnitudeIn132(value: DecimalValue, format: QuantityFormat): boolean {
  return format === DecimalSI && value.mantissa !== 0n && value.exponent >= 21;
}

describe('properties', () => {
  it('parses to the spelled value rounded up to nano (BinarySI capped at 2^63-1)', () => {
    fc.assert(
      fc.property(spelledArbitrary, (spelled) => {
        expect(nanos(parseQuantityString(spelled.text))).toBe(expectedNanos(spelled));
      }),
      { numRuns: 2000 },
    );
  });

  it('canonicalQuantity reaches its fixed point in at most two steps, as 1.32 does', () => {
    // Not idempotent in one step, like kube: a BinarySI integer that no power of 1024 divides is
    // written without a suffix ("62.5Ki" -> "64000"), and that text reads back as DecimalSI ("64k").
    expect(canonicalQuantity('62.5Ki')).toBe('64000');
    expect(canonicalQuantity('64000')).toBe('64k');
    fc.assert(
      fc.property(spelledArbitrary, (spelled) => {
        const twice = canonicalQuantity(canonicalQuantity(spelled.text));
        expect(canonicalQuantity(twice)).toBe(twice);
      }),
      { numRuns: 2000 },
    );
  });

  it('the canonical string denotes the parsed value (unless 1.32 drops the suffix past E)', () => {
    fc.assert(
      fc.property(spelledArbitrary, (spelled) => {
        const parsed = parseQuantity(spelled.text);
        fc.pre(!losesMagnitudeIn132(parsed, parsed.format));
        expect(nanos(parseQuantity(parsed.serialized))).toBe(nanos(parsed));
      }),
      { numRuns: 2000 },
    );
  });

  it('a JSON number means what its shortest decimal string means', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e30, max: 1e30 }), (number) => {
        expect(canonicalQuantity(number)).toBe(canonicalQuantity(String(number)));
      }),
    );
    fc.assert(
      fc.property(fc.maxSafeInteger(), (integer) => {
        expect(quantityValue(parseQuantity(integer))).toBe(BigInt(integer));
      }),
    );
  });
});
