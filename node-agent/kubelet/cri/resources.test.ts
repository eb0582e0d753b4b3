import { describe, expect, it } from 'vitest';
import { KubeletConfigError } from '../errors.ts';
import { linuxResources, parseQuantity } from './resources.ts';
import { criLogText } from './runtime.ts';

describe('CRI resources', () => {
  it.each([
    ['128Mi', 128 * 2 ** 20],
    ['1Gi', 2 ** 30],
    ['500M', 5e8],
    ['250m', 0.25],
    ['1.5', 1.5],
    ['2', 2],
    ['1e3', 1000],
    ['64Ki', 65536],
  ])('parseQuantity(%s) = %d', (quantity, value) => {
    expect(parseQuantity(quantity)).toBeCloseTo(value, 9);
  });

  it.each(['', 'Mi', '12XB', '1..2'])('rejects %j', (quantity) => {
    expect(() => parseQuantity(quantity)).toThrow(KubeletConfigError);
  });

  it.each([
    [undefined, {}],
    [{ limits: { memory: '64Mi' } }, { memoryLimitInBytes: 64 * 2 ** 20 }],
    // A request left out is the limit (as the apiserver defaults it); shares 1024 per CPU, quota per 100 ms.
    [{ limits: { cpu: '500m' } }, { cpuShares: 512, cpuPeriod: 100_000, cpuQuota: 50_000 }],
    [{ requests: { cpu: '1m' } }, { cpuShares: 2 }],
    [{ requests: { cpu: '2', memory: '1Gi' }, limits: { memory: '2Gi' } }, { memoryLimitInBytes: 2 ** 31, cpuShares: 2048 }],
  ])('linuxResources(%j) = %j', (resources, expected) => {
    expect(linuxResources(resources)).toEqual(expected);
  });
});

describe('CRI log lines', () => {
  async function* chunks(...parts: string[]): AsyncGenerator<string> {
    yield* parts;
  }
  async function text(source: AsyncIterable<string>): Promise<string> {
    let out = '';
    for await (const chunk of source) out += chunk;
    return out;
  }

  it('drops the prefixes, joins partial lines and lines split across chunks', async () => {
    const log = [
      '2025-01-01T00:00:00.000000001Z stdout F hello',
      '2025-01-01T00:00:00.000000002Z stderr P long ',
      '2025-01-01T00:00:00.000000003Z stderr F line',
      '2025-01-01T00:00:00.000000004Z stdout F ',
      '2025-01-01T00:00:00.000000005Z stdout F bye',
      '',
    ].join('\n');
    expect(await text(criLogText(chunks(log.slice(0, 40), log.slice(40, 97), log.slice(97))))).toBe('hello\nlong line\n\nbye\n');
  });
});
