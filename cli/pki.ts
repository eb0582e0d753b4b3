/**
 * The cluster's PKI directory (`--pki`, kubeadm's /etc/kubernetes/pki): the cluster CA
 * (`ca/ca.crt`, `ca/ca.key`), the client certificate the apiserver presents to node agents
 * (`apiserver-kubelet-client.crt`, CN `kubelet-client`, as kubeadm names it), each
 * agent's serving certificate for its log endpoint (`agent-<node>.crt`, CN
 * `system:node:<node>`, the node name as a DNS SAN) and where the apiserver is
 * (`cluster-info.kubeconfig`: its address and the CA to trust, kubeadm's `cluster-info`).
 * Files are made on first use and kept; a certificate no longer signed by the CA, or close
 * to expiry, is issued again.
 */
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import YAML from 'yaml';
import { generateCertificateAuthority, issueCertificate, type IssueOptions, type TlsMaterial } from '../apiserver/index.ts';
import { KUBELET_CLIENT_NAME, type LogServerTls } from '../node-agent/log-server.ts';
import { contextSettings, readKubeconfig, type Kubeconfig } from './kubeconfig.ts';

/** A certificate and key signed by the cluster CA, with the CA certificate to verify the peer. */
export interface ClusterCredentials extends TlsMaterial {
  readonly ca: string;
}

const RENEW_BEFORE_MS = 7 * 86_400_000;

const preparePkiDir = (pkiDir: string): void => {
  mkdirSync(pkiDir, { recursive: true, mode: 0o700 });
  chmodSync(pkiDir, 0o700);
};

/** Writes `text` to a fresh file renamed over `file`, so a reader sees the old content or the new, never part of it. */
const replaceFile = (file: string, text: string, mode: number): void => {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, file);
};

const writeMaterial = (certFile: string, keyFile: string, material: TlsMaterial): void => {
  replaceFile(keyFile, material.key, 0o600);
  replaceFile(certFile, material.cert, 0o644);
};

/**
 * The cluster CA of `pkiDir` (`ca/ca.crt`, `ca/ca.key`), created when the directory has
 * none, by whichever component starts first: both files are written to a directory that is
 * then renamed to `ca/` in one step, so processes starting at once agree on one CA.
 */
export const ensureClusterCA = (pkiDir: string): TlsMaterial => {
  preparePkiDir(pkiDir);
  const caDir = join(pkiDir, 'ca');
  if (!existsSync(caDir)) {
    const staging = mkdtempSync(join(pkiDir, '.ca-'));
    writeMaterial(join(staging, 'ca.crt'), join(staging, 'ca.key'), generateCertificateAuthority({ commonName: 'logplane-ca' }));
    try {
      renameSync(staging, caDir);
    } catch (error) {
      // Another process renamed its CA into place first: use that one.
      if (!['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { cert: readFileSync(join(caDir, 'ca.crt'), 'utf8'), key: readFileSync(join(caDir, 'ca.key'), 'utf8') };
};

const stillGood = (certPem: string, caPem: string, hosts: readonly string[]): boolean => {
  const cert = new X509Certificate(certPem);
  const ca = new X509Certificate(caPem);
  return (
    cert.checkIssued(ca) &&
    cert.verify(ca.publicKey) &&
    Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS &&
    hosts.every((host) => (isIP(host) ? cert.checkIP(host) : cert.checkHost(host, { wildcards: false })) !== undefined)
  );
};

/**
 * The certificate `name` of `pkiDir` if the CA signed it for the same hosts and it is not
 * about to expire; else issued now with the CA's key and written for the next start.
 */
const issuedOnce = (pkiDir: string, name: string, ca: TlsMaterial, options: IssueOptions): TlsMaterial => {
  const certFile = join(pkiDir, `${name}.crt`);
  const keyFile = join(pkiDir, `${name}.key`);
  if (existsSync(certFile) && existsSync(keyFile)) {
    const existing = { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
    if (stillGood(existing.cert, ca.cert, options.hosts ?? [])) return existing;
  }
  const material = issueCertificate(ca, options);
  writeMaterial(certFile, keyFile, material);
  return material;
};

/** The apiserver's identity towards node agents (CN {@link KUBELET_CLIENT_NAME}), creating the cluster CA if needed. */
export const kubeletClientCredentials = (pkiDir: string): ClusterCredentials => {
  const ca = ensureClusterCA(pkiDir);
  const client = issuedOnce(pkiDir, 'apiserver-kubelet-client', ca, {
    commonName: KUBELET_CLIENT_NAME,
    organizations: ['system:masters'],
    usages: ['client'],
  });
  return { ...client, ca: ca.cert };
};

/**
 * The serving certificate of an agent running `nodes` (CN `system:node:<first node>`, each
 * node name a DNS SAN, with the addresses it is reached at) and the CA its clients' certificates
 * must chain to, creating the cluster CA if the agent starts before the apiserver.
 */
export const agentServingCredentials = (pkiDir: string, nodes: readonly string[], addresses: readonly string[]): LogServerTls => {
  const ca = ensureClusterCA(pkiDir);
  const serving = issuedOnce(pkiDir, `agent-${nodes.join('-')}`, ca, {
    commonName: `system:node:${nodes[0] ?? ''}`,
    organizations: ['system:nodes'],
    usages: ['server'],
    hosts: [...nodes, ...addresses],
  });
  return { ...serving, clientCA: ca.cert };
};

/**
 * The service-account signing key of a cluster (`sa.key` in `dir`, as kubeadm keeps it in
 * its PKI directory): an RSA 2048 private key in PKCS#8 PEM, made on first use. Every
 * apiserver of a cluster signs and checks tokens with it, so it is created exclusively
 * (`wx`): two apiservers starting at once both end up reading the one that was written.
 */
export const serviceAccountSigningKey = (dir: string): string => {
  preparePkiDir(dir);
  const file = join(dir, 'sa.key');
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    try {
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return readFileSync(file, 'utf8');
};

/** Where the components find the apiserver: its address and the CA its serving certificate chains to. */
export interface ClusterInfo {
  readonly server: string;
  readonly certificateAuthority: string;
}

const clusterInfoFile = (pkiDir: string): string => join(pkiDir, 'cluster-info.kubeconfig');

/**
 * Publishes where the apiserver is to the components sharing `pkiDir`, as kubeadm's
 * `cluster-info` (a kubeconfig with a cluster and no user): the last apiserver to start is
 * the one named. Replaced in one step, so a reader never sees half of it.
 */
export const publishClusterInfo = (pkiDir: string, info: ClusterInfo): void => {
  preparePkiDir(pkiDir);
  const config: Kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'logplane', cluster: { server: info.server, 'certificate-authority-data': Buffer.from(info.certificateAuthority).toString('base64') } }],
    contexts: [{ name: 'logplane', context: { cluster: 'logplane', user: '' } }],
    'current-context': 'logplane',
  };
  replaceFile(clusterInfoFile(pkiDir), YAML.stringify(config, { indentSeq: false }), 0o644);
};

/** The apiserver `pkiDir`'s cluster-info names, or undefined while no apiserver serving HTTPS has published one. */
export const readClusterInfo = (pkiDir: string): ClusterInfo | undefined => {
  const file = clusterInfoFile(pkiDir);
  if (!existsSync(file)) return undefined;
  const { server, certificateAuthority } = contextSettings(readKubeconfig(file), undefined, file);
  if (server === undefined || certificateAuthority === undefined) throw new Error(`${file} names no server or no certificate authority; delete it and restart the apiserver`);
  return { server, certificateAuthority };
};

/** A component's client certificate (CN the user, O its groups), issued now by the cluster CA of `pkiDir`, which is made if missing. */
export const issueClientCertificate = (pkiDir: string, user: { readonly name: string; readonly groups: readonly string[] }): TlsMaterial =>
  issueCertificate(ensureClusterCA(pkiDir), { commonName: user.name, organizations: user.groups, usages: ['client'] });
