import { describe, expect, it } from 'vitest';
import { parseHostPort } from './address.ts';
import { DnsConfigError } from './errors.ts';
import { canonicalAddress, parseClusterName, podLabelAddress, reverseAddress } from './names.ts';
import { parseUpstream } from './upstream.ts';

describe('cluster names', () => {
  it.each([
    [[], { type: 'apex' }],
    [['svc'], { type: 'apex' }],
    [['pod'], { type: 'apex' }],
    [['default', 'svc'], { type: 'namespace', namespace: 'default' }],
    [['echo', 'default', 'svc'], { type: 'service', namespace: 'default', service: 'echo' }],
    [['web-0', 'web', 'default', 'svc'], { type: 'service', namespace: 'default', service: 'web', endpoint: 'web-0' }],
    [['_http', '_tcp', 'echo', 'default', 'svc'], { type: 'service', namespace: 'default', service: 'echo', port: 'http', protocol: 'tcp' }],
    [['a', 'b', 'c', 'echo', 'default', 'svc'], { type: 'invalid' }],
    [['echo', 'default', 'other'], { type: 'invalid' }],
    [['10-0-0-1', 'default', 'pod'], { type: 'pod', namespace: 'default', pod: '10-0-0-1' }],
  ] as const)('%j parses as %j', (labels, parsed) => {
    expect(parseClusterName(labels)).toEqual(parsed);
  });

  it.each([
    ['10-0-0-1', '10.0.0.1'],
    ['fd00--1', 'fd00::1'],
    ['1-2-3', '1:2:3'],
  ])('pod label %s names %s', (label, ip) => {
    expect(podLabelAddress(label)).toBe(ip);
  });

  it.each([
    [['1', '0', '96', '127'], 'in-addr.arpa', '127.96.0.1'],
    [['0', '96', '127'], 'in-addr.arpa', undefined],
    [['256', '0', '96', '127'], 'in-addr.arpa', undefined],
    [['01', '0', '96', '127'], 'in-addr.arpa', undefined],
    [[...'20010db8000000000000000000000001'].reverse(), 'ip6.arpa', '2001:db8::1'],
    [[...'20010db8000000000000000000000001'].reverse().slice(1), 'ip6.arpa', undefined],
    [[...'0000000000000000000000000000000g'].reverse(), 'ip6.arpa', undefined],
  ] as const)('reverse name %j under %s is %s', (labels, zone, ip) => {
    expect(reverseAddress(labels, zone)).toBe(ip);
  });

  it.each([
    ['fd00:0:0:0:0:0:0:5', 'fd00::5'],
    ['FD00::0005', 'fd00::5'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::1', '::1'],
    ['10.0.0.1', '10.0.0.1'],
  ])('%s is written canonically as %s', (ip, canonical) => {
    expect(canonicalAddress(ip)).toBe(canonical);
  });
});

describe('addresses of the options', () => {
  it.each([
    ['127.0.0.1', { host: '127.0.0.1', port: 53 }],
    ['127.0.0.1:10053', { host: '127.0.0.1', port: 10053 }],
    ['[::1]:10053', { host: '::1', port: 10053 }],
    ['2606:4700::1111', { host: '2606:4700::1111', port: 53 }],
  ])('upstream %s is %j', (text, parsed) => {
    expect(parseUpstream(text)).toEqual(parsed);
  });

  it.each(['dns.google', '127.0.0.1:0', '127.0.0.1:70000', '127.0.0.1:x', ''])('upstream %j is refused with a message saying what to write', (text) => {
    expect(() => parseUpstream(text)).toThrow(DnsConfigError);
    expect(() => parseUpstream(text)).toThrow(/IP address with an optional port/);
  });

  it('a listen address may ask for any free port', () => {
    expect(parseHostPort('127.0.0.1:0', '--dns', { defaultPort: 0, allowAnyPort: true })).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseHostPort('127.0.0.1', '--dns', { defaultPort: 0, allowAnyPort: true })).toEqual({ host: '127.0.0.1', port: 0 });
  });
});
