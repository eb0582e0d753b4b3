import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate } from './tls.ts';

describe('generateSelfSignedCertificate', () => {
  it('makes a valid self-signed CA certificate for the given hosts', () => {
    const { cert, key } = generateSelfSignedCertificate({ hosts: ['localhost', '127.0.0.1', '::1', 'logplane.example'], validDays: 30 });
    const x509 = new X509Certificate(cert);
    expect(x509.ca).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x509.checkHost('logplane.example')).toBe('logplane.example');
    expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x509.checkIP('::1')).toBe('::1');
    expect(x509.keyUsage).toContain('1.3.6.1.5.5.7.3.1');
    const days = (Date.parse(x509.validTo) - Date.parse(x509.validFrom)) / 86_400_000;
    expect(Math.round(days)).toBe(30);
  });

  it('makes certificates OpenSSL accepts every time (the random serial is a minimal DER integer)', () => {
    // Before, 1 certificate in 256 had a serial starting 0x00 0x00–0x7f: "asn1 encoding routines::illegal padding".
    for (let i = 0; i < 2_000; i++) {
      const { cert } = generateSelfSignedCertificate({ hosts: ['localhost'] });
      const x509 = new X509Certificate(cert);
      expect(x509.verify(x509.publicKey)).toBe(true);
    }
  });
});
