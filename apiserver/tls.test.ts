import { X509Certificate, createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCertificateAuthority, generateSelfSignedCertificate, issueCertificate } from './tls.ts';

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

describe('issueCertificate', () => {
  const ca = generateCertificateAuthority({ commonName: 'test-ca' });

  it('makes a CA that may sign certificates and nothing else', () => {
    const x509 = new X509Certificate(ca.cert);
    expect(x509.ca).toBe(true);
    expect(x509.subject).toBe('CN=test-ca');
    expect(x509.verify(x509.publicKey)).toBe(true);
  });

  it('issues client and serving certificates signed by the CA, with the identity and hosts asked for', () => {
    const client = new X509Certificate(issueCertificate(ca, { commonName: 'kubelet-client', organizations: ['system:masters'], usages: ['client'] }).cert);
    expect(client.ca).toBe(false);
    expect(client.subject).toBe('O=system:masters\nCN=kubelet-client');
    expect(client.issuer).toBe('CN=test-ca');
    expect(client.checkIssued(new X509Certificate(ca.cert))).toBe(true);
    expect(client.verify(new X509Certificate(ca.cert).publicKey)).toBe(true);
    expect(client.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    const serving = issueCertificate(ca, { commonName: 'system:node:node-1', usages: ['server'], hosts: ['127.0.0.1', 'localhost'] });
    const x509 = new X509Certificate(serving.cert);
    expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x509.checkHost('localhost')).toBe('localhost');
    expect(x509.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(x509.checkPrivateKey(createPrivateKey(serving.key))).toBe(true);
    expect(x509.verify(new X509Certificate(generateCertificateAuthority().cert).publicKey)).toBe(false);
  });

  it('makes certificates that `openssl verify` accepts for their purpose against the CA alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-tls-'));
    try {
      writeFileSync(join(dir, 'ca.crt'), ca.cert);
      writeFileSync(join(dir, 'client.crt'), issueCertificate(ca, { commonName: 'kubelet-client', usages: ['client'] }).cert);
      writeFileSync(join(dir, 'server.crt'), issueCertificate(ca, { commonName: 'system:node:n', usages: ['server'], hosts: ['127.0.0.1'] }).cert);
      const verify = (file: string, purpose: string) =>
        execFileSync('openssl', ['verify', '-purpose', purpose, '-CAfile', join(dir, 'ca.crt'), join(dir, file)], { encoding: 'utf8', stdio: 'pipe' });
      expect(verify('client.crt', 'sslclient')).toContain('OK');
      expect(verify('server.crt', 'sslserver')).toContain('OK');
      expect(() => verify('client.crt', 'sslserver')).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
