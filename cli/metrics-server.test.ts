import { describe, expect, it } from 'vitest';
import { parseListenAddress } from './metrics-server.ts';

describe('parseListenAddress (--metrics-address)', () => {
  it.each([
    ['127.0.0.1:10257', { host: '127.0.0.1', port: 10257 }],
    [':10257', { host: '0.0.0.0', port: 10257 }],
    ['[::1]:0', { host: '::1', port: 0 }],
    ['localhost:9000', { host: 'localhost', port: 9000 }],
  ])('reads %s', (text, expected) => {
    expect(parseListenAddress(text)).toEqual(expected);
  });

  it.each(['10257', '127.0.0.1', '127.0.0.1:65536', '127.0.0.1:-1', '::1:10257', '[::1]', 'host:port'])('refuses %s', (text) => {
    expect(() => parseListenAddress(text)).toThrow(/is not host:port/);
  });
});
