import { describe, expect, it } from 'vitest';
import { cpuQuantity, memoryQuantity } from './metrics-api.ts';

describe('metrics quantities (as metrics-server prints them)', () => {
  it.each([
    [0, '0n'],
    [998_123_456, '998123456n'],
    [1.6, '2n'],
    [-5, '0n'],
  ])('%d nanocores is %s', (nanoCores, text) => expect(cpuQuantity(nanoCores)).toBe(text));

  it.each([
    [0, '0'],
    [1000, '1000'],
    [1024, '1Ki'],
    [157_286_400, '150Mi'],
    [157_290_496, '153604Ki'],
    [2 * 1024 ** 3, '2Gi'],
    [1024 ** 5, '1024Ti'],
  ])('%d bytes is %s', (bytes, text) => expect(memoryQuantity(bytes)).toBe(text));
});
