import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServingCredentials, ensureClusterCA, kubeletClientCredentials } from './pki.ts';

const made: string[] = [];
const pkiDir = (): string => {
  const dir = join(mkdtempSync(join(tmpdir(), 'logplane-pki-')), 'pki');
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(join(dir, '..'), { recursive: true, force: true });
});

describe('the cluster PKI directory', () => {
  it('makes the CA once, keeps keys 0600 in a 0700 directory, and issues both identities from it', () => {
    const dir = pkiDir();
    const ca = ensureClusterCA(dir);
    expect(ensureClusterCA(dir)).toEqual(ca);
    const client = kubeletClientCredentials(dir);
    const serving = agentServingCredentials(dir, ['node-1'], ['127.0.0.1', 'localhost']);
    const caCert = new X509Certificate(ca.cert);
    expect(client.ca).toBe(ca.cert);
    expect(serving.clientCA).toBe(ca.cert);
    expect(new X509Certificate(client.cert).subject).toBe('O=system:masters\nCN=kubelet-client');
    const servingCert = new X509Certificate(serving.cert);
    expect(servingCert.subject).toBe('O=system:nodes\nCN=system:node:node-1');
    expect(servingCert.subjectAltName).toBe('DNS:node-1, IP Address:127.0.0.1, DNS:localhost');
    expect(servingCert.verify(caCert.publicKey)).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const key of ['ca/ca.key', 'apiserver-kubelet-client.key', 'agent-node-1.key']) expect(statSync(join(dir, key)).mode & 0o777, key).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(['agent-node-1.crt', 'agent-node-1.key', 'apiserver-kubelet-client.crt', 'apiserver-kubelet-client.key', 'ca']);
  });

  it('keeps a certificate across starts, and issues it again for other hosts or a new CA', () => {
    const dir = pkiDir();
    const first = agentServingCredentials(dir, ['node-1'], ['127.0.0.1']);
    expect(agentServingCredentials(dir, ['node-1'], ['127.0.0.1'])).toEqual(first);
    const moved = agentServingCredentials(dir, ['node-1'], ['127.0.0.2']);
    expect(moved.cert).not.toBe(first.cert);
    expect(new X509Certificate(moved.cert).checkIP('127.0.0.2')).toBe('127.0.0.2');
    const client = kubeletClientCredentials(dir);
    rmSync(join(dir, 'ca'), { recursive: true });
    const renewed = kubeletClientCredentials(dir);
    expect(renewed.ca).not.toBe(client.ca);
    expect(new X509Certificate(renewed.cert).verify(new X509Certificate(renewed.ca).publicKey)).toBe(true);
  });
});
