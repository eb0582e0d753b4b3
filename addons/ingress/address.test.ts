/** The `--ingress` address: accepted forms and the refusals that name the flag. */
import { describe, expect, it } from 'vitest';
import { parseIngressAddress } from './address.ts';
import { IngressConfigError } from './errors.ts';

describe('parseIngressAddress', () => {
  it.each([
    ['127.0.0.1', { host: '127.0.0.1', httpPort: 0, httpsPort: 0 }],
    ['127.0.0.1:8080', { host: '127.0.0.1', httpPort: 8080, httpsPort: 0 }],
    ['127.0.0.1:8080,8443', { host: '127.0.0.1', httpPort: 8080, httpsPort: 8443 }],
    ['127.0.0.1:8080,none', { host: '127.0.0.1', httpPort: 8080 }],
    ['127.0.0.1:0,0', { host: '127.0.0.1', httpPort: 0, httpsPort: 0 }],
    ['[::1]:8080,8443', { host: '::1', httpPort: 8080, httpsPort: 8443 }],
    ['0.0.0.0:80,443', { host: '0.0.0.0', httpPort: 80, httpsPort: 443 }],
  ])('%s', (text, expected) => {
    expect(parseIngressAddress(text)).toEqual(expected);
  });

  it.each(['localhost:8080', '127.0.0.1:99999', '127.0.0.1:80,70000', '127.0.0.1:80,', '127.0.0.1:x', '', '::1:80', '127.0.0.1:80,443,8443'])('refuses %j', (text) => {
    expect(() => parseIngressAddress(text)).toThrow(IngressConfigError);
    expect(() => parseIngressAddress(text)).toThrow(`--ingress "${text}"`);
  });
});
