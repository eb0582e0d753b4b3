/**
 * x509 client-certificate authentication on `logplane up`, with the real kubectl: a
 * kubeconfig holding a client certificate the cluster CA (DATA/pki/ca) signed, as kubeadm's
 * and kind's kubeconfigs do, authenticates its CommonName in the groups of its Organizations;
 * RBAC then judges that user. A certificate of another CA, or one for servers only,
 * authenticates nobody.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { generateCertificateAuthority, issueCertificate, type TlsMaterial } from '../../apiserver/index.ts';
import { createKubectl, useKubectlCluster } from './kubectl-harness.ts';

describe('client certificates on logplane up', () => {
  const harness = useKubectlCluster('embedded', 'e2e-client-certs');

  /** kubectl with a kubeconfig of the cluster's address and CA, authenticating with `client` (no token). */
  const kubectlAs = (name: string, client: TlsMaterial) => {
    const admin = readFileSync(harness.cluster.kubeconfig, 'utf8');
    const server = /server: (\S+)/.exec(admin)?.[1] ?? '';
    const caData = /certificate-authority-data: (\S+)/.exec(admin)?.[1] ?? '';
    const path = join(harness.dir, `${name}.kubeconfig`);
    writeFileSync(
      path,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'logplane', cluster: { server, 'certificate-authority-data': caData } }],
        users: [{ name, user: { 'client-certificate-data': Buffer.from(client.cert).toString('base64'), 'client-key-data': Buffer.from(client.key).toString('base64') } }],
        contexts: [{ name, context: { cluster: 'logplane', user: name } }],
        'current-context': name,
      }),
      { mode: 0o600 },
    );
    return createKubectl({ kubeconfig: () => path, dir: () => harness.dir });
  };
  const clusterCA = (): TlsMaterial => ({
    cert: readFileSync(join(harness.dir, 'pki', 'ca', 'ca.crt'), 'utf8'),
    key: readFileSync(join(harness.dir, 'pki', 'ca', 'ca.key'), 'utf8'),
  });

  it('authenticates the CommonName in the groups of the Organizations, and RBAC judges that user', async () => {
    const jane = kubectlAs('jane', issueCertificate(clusterCA(), { commonName: 'jane', organizations: ['devs', 'ops'], usages: ['client'] }));
    const who = JSON.parse(await jane.ok('auth', 'whoami', '-o', 'json'));
    expect(who.status.userInfo).toEqual({ username: 'jane', groups: ['devs', 'ops', 'system:authenticated'] });
    const refused = await jane.kubectl('get', 'pods');
    expect(refused.stderr).toContain('pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"');
    await harness.ok('create', 'rolebinding', 'devs-view', '--clusterrole=view', '--group=devs');
    expect((await jane.kubectl('get', 'pods')).code).toBe(0);
  });

  it('authenticates nobody with a certificate of another CA or one for servers only', async () => {
    const stranger = kubectlAs('stranger', issueCertificate(generateCertificateAuthority({ commonName: 'other-ca' }), { commonName: 'root', organizations: ['system:masters'], usages: ['client'] }));
    const denied = await stranger.kubectl('get', 'pods');
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('Unauthorized');
    const serving = kubectlAs('serving', issueCertificate(clusterCA(), { commonName: 'root', organizations: ['system:masters'], usages: ['server'] }));
    expect((await serving.kubectl('get', 'pods')).stderr).toContain('Unauthorized');
  });
});
