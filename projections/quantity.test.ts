import { describe, expect, it } from 'vitest';
import { formatQuantity, parseQuantity, QuantityParseError, QuantityScale, scaleForResource } from './quantity.ts';

describe('parseQuantity', () => {
  it.each([
    ['100m', QuantityScale.Milli, 100],
    ['0.5', QuantityScale.Milli, 500],
    ['.5', QuantityScale.Milli, 500],
    ['2', QuantityScale.Milli, 2000],
    ['2.', QuantityScale.Milli, 2000],
    ['1500m', QuantityScale.Milli, 1500],
    ['0.1m', QuantityScale.Milli, 1],
    ['250u', QuantityScale.Milli, 1],
    ['1e3', QuantityScale.Milli, 1_000_000],
    ['+1', QuantityScale.Milli, 1000],
    ['-1', QuantityScale.Milli, -1000],
    ['-0.0001', QuantityScale.Milli, -1],
    ['0', QuantityScale.Milli, 0],
    ['-0', QuantityScale.Milli, 0],
    ['128Mi', QuantityScale.Unit, 134_217_728],
    ['1Gi', QuantityScale.Unit, 1_073_741_824],
    ['0.1Gi', QuantityScale.Unit, 107_374_183],
    ['1.5Ki', QuantityScale.Unit, 1536],
    ['1G', QuantityScale.Unit, 1_000_000_000],
    ['1e3', QuantityScale.Unit, 1000],
    ['1E3', QuantityScale.Unit, 1000],
    ['1.5e2', QuantityScale.Unit, 150],
    ['12e-1', QuantityScale.Unit, 2],
    ['500k', QuantityScale.Unit, 500_000],
    ['2M', QuantityScale.Unit, 2_000_000],
    ['1T', QuantityScale.Unit, 1e12],
    ['1P', QuantityScale.Unit, 1e15],
    ['4Pi', QuantityScale.Unit, 4 * 2 ** 50],
    ['100m', QuantityScale.Unit, 1],
    ['1n', QuantityScale.Unit, 1],
    ['110', QuantityScale.Unit, 110],
    ['1e-400', QuantityScale.Unit, 1],
  ] as const)('%s in %s → %d', (input, scale, expected) => {
    expect(parseQuantity(input, scale)).toEqual({ type: 'ok', value: expected });
  });

  it.each([
    ['', 'invalid quantity ""'],
    ['abc', 'invalid quantity "abc"'],
    ['1K', 'invalid quantity "1K"'],
    ['1 Gi', 'invalid quantity "1 Gi"'],
    ['1Gb', 'invalid quantity "1Gb"'],
    ['1e', 'invalid quantity "1e"'],
    ['1.2.3', 'invalid quantity "1.2.3"'],
    ['--1', 'invalid quantity "--1"'],
    ['.', 'invalid quantity "."'],
    ['Mi', 'invalid quantity "Mi"'],
    ['8Ei', 'quantity "8Ei" is too large'],
    ['1e100', 'quantity "1e100" is too large'],
    ['10E', 'quantity "10E" is too large'],
  ])('rejects %j, naming it', (input, message) => {
    const result = parseQuantity(input, QuantityScale.Unit);
    expect(result.type).toBe('invalid');
    if (result.type !== 'invalid') return;
    expect(result.error).toBeInstanceOf(QuantityParseError);
    expect(result.error.input).toBe(input);
    expect(result.error.message).toContain(message);
    expect(result.error.retriable).toBe(false);
  });
});

describe('formatQuantity', () => {
  it.each([
    [100, QuantityScale.Milli, '100m'],
    [2000, QuantityScale.Milli, '2'],
    [0, QuantityScale.Milli, '0'],
    [-1500, QuantityScale.Milli, '-1500m'],
    [134_217_728, QuantityScale.Unit, '128Mi'],
    [1_073_741_824, QuantityScale.Unit, '1Gi'],
    [1_000_000_000, QuantityScale.Unit, '1G'],
    [1536, QuantityScale.Unit, '1536'],
    [1024, QuantityScale.Unit, '1Ki'],
    [2_048_000, QuantityScale.Unit, '2048k'],
    [1000, QuantityScale.Unit, '1k'],
    [107_374_183, QuantityScale.Unit, '107374183'],
    [110, QuantityScale.Unit, '110'],
    [0, QuantityScale.Unit, '0'],
    [-(2 ** 20), QuantityScale.Unit, '-1Mi'],
  ] as const)('%d in %s → %s', (value, scale, expected) => {
    expect(formatQuantity(value, scale)).toBe(expected);
  });

  it.each(['100m', '2', '250m', '128Mi', '1Gi', '1G', '500k', '110', '3Ti'])('round-trips %s', (text) => {
    const scale = text.endsWith('m') ? QuantityScale.Milli : QuantityScale.Unit;
    const parsed = parseQuantity(text, scale);
    if (parsed.type !== 'ok') throw parsed.error;
    expect(formatQuantity(parsed.value, scale)).toBe(text);
  });
});

describe('scaleForResource', () => {
  it.each([
    ['cpu', QuantityScale.Milli],
    ['memory', QuantityScale.Unit],
    ['pods', QuantityScale.Unit],
    ['ephemeral-storage', QuantityScale.Unit],
  ])('%s → %s', (resource, scale) => {
    expect(scaleForResource(resource)).toBe(scale);
  });
});
