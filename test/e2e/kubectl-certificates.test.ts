/**
 * kubectl certificate approve and deny, on both logs: the `approval` subresource of
 * CertificateSigningRequests (kube's approval strategy: only conditions change, Approved
 * and Denied exclude each other).
 */
import { describe, expect, it } from 'vitest';
import { LOG_ADAPTERS } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

describe.each(LOG_ADAPTERS)('kubectl certificate approve and deny on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-kubectl-csr');
  const { kubectl, file } = harness;
  const csr = (name: string): string => {
    const request = Buffer.from(`-----BEGIN CERTIFICATE REQUEST-----\n${'A'.repeat(64)}\n-----END CERTIFICATE REQUEST-----\n`).toString('base64');
    return file(`${name}.yaml`, `apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: ${name}\nspec:\n  request: ${request}\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n`);
  };
  const conditions = (name: string) => (harness.cluster.projection.view().get(`CertificateSigningRequest.certificates.k8s.io//${name}`) as { status?: { conditions?: { type: string; status: string; reason?: string }[] } } | undefined)?.status?.conditions;

  it('approves a request with kubectl certificate approve, recording the condition kubectl sends', async () => {
    expect((await kubectl('create', '-f', csr('alice'))).code).toBe(0);
    const approved = await kubectl('certificate', 'approve', 'alice');
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toContain('certificatesigningrequest.certificates.k8s.io/alice approved');
    expect(conditions('alice')).toEqual([expect.objectContaining({ type: 'Approved', status: 'True', reason: 'KubectlApprove' })]);
    const listed = await kubectl('get', 'csr', 'alice');
    expect(listed.stdout).toMatch(/alice\s+\S+\s+kubernetes.io\/kube-apiserver-client\s+\S+\s+<none>\s+Approved/);
  });

  it('refuses to deny an approved request (Approved and Denied exclude each other) and changes nothing', async () => {
    // kubectl itself refuses (even with --force); a client that sends both conditions gets kube's 422.
    expect((await kubectl('certificate', 'deny', 'alice', '--force')).stderr).toContain('certificate signing request "alice" is already Approved');
    const current = JSON.parse((await kubectl('get', 'csr', 'alice', '-o', 'json')).stdout);
    current.status.conditions.push({ type: 'Denied', status: 'True', reason: 'Mine' });
    const body = file('both.json', JSON.stringify(current));
    const denied = await kubectl('replace', '--raw', '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval', '-f', body);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('Approved and Denied conditions are mutually exclusive');
    expect(conditions('alice')?.map((c) => c.type)).toEqual(['Approved']);
  });

  it('denies another request', async () => {
    expect((await kubectl('create', '-f', csr('bob'))).code).toBe(0);
    expect((await kubectl('certificate', 'deny', 'bob')).stdout).toContain('certificatesigningrequest.certificates.k8s.io/bob denied');
    expect(conditions('bob')).toEqual([expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' })]);
  });
});
