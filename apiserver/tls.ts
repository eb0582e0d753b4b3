/**
 * TLS for the apiserver. kubectl (client-go) sends bearer tokens only to `https://`
 * servers, so a server meant for kubectl needs a certificate; this module makes a
 * self-signed one without dependencies: an EC P-256 key and a DER-encoded X.509 v3
 * certificate (CA:true, serverAuth, SANs for the names and IPs it will be reached by),
 * usable both as the server certificate and as the kubeconfig's certificate-authority.
 * It also makes the cluster CA and the certificates that CA issues (the apiserver's
 * `kubelet-client` identity, each node agent's serving certificate).
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** A PEM certificate and its PEM private key. */
export interface TlsMaterial {
  readonly cert: string;
  readonly key: string;
}

const der = (tag: number, content: Buffer): Buffer => {
  const length = content.length;
  let header: Buffer;
  if (length < 0x80) header = Buffer.from([tag, length]);
  else {
    const bytes: number[] = [];
    for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
    header = Buffer.from([tag, 0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([header, content]);
};

const sequence = (...items: Buffer[]): Buffer => der(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => der(0x31, Buffer.concat(items));
const integer = (value: Buffer): Buffer => der(0x02, value[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
const octetString = (value: Buffer): Buffer => der(0x04, value);
const bitString = (value: Buffer, unusedBits = 0): Buffer => der(0x03, Buffer.concat([Buffer.from([unusedBits]), value]));
const utf8 = (text: string): Buffer => der(0x0c, Buffer.from(text, 'utf8'));
const boolean = (value: boolean): Buffer => der(0x01, Buffer.from([value ? 0xff : 0]));
const explicit = (tagNumber: number, content: Buffer): Buffer => der(0xa0 | tagNumber, content);

const oid = (dotted: string): Buffer => {
  const parts = dotted.split('.').map(Number);
  const bytes: number[] = [40 * parts[0]! + parts[1]!];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [part % 128];
    for (let n = Math.floor(part / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift(0x80 | (n % 128));
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
};

/** UTCTime before 2050, GeneralizedTime after, as RFC 5280 requires. */
const time = (date: Date): Buffer => {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`));
};

const ipBytes = (ip: string): Buffer => {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes('::') ? [...h, ...Array.from({ length: 8 - h.length - t.length }, () => '0'), ...t] : h;
  return Buffer.concat(all.map((g) => Buffer.from([parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff])));
};

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));

export interface SelfSignedOptions {
  readonly commonName?: string;
  /** Host names and IP addresses clients will use (default: localhost, 127.0.0.1, ::1). */
  readonly hosts?: readonly string[];
  readonly validDays?: number;
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extendedKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** What a certificate is for: serving TLS (serverAuth) or presenting a client identity (clientAuth). */
export type CertificateUsage = 'server' | 'client';

/** An X.501 name of organizations (kube reads them as groups) then the common name (the user). */
const distinguishedName = (commonName: string, organizations: readonly string[] = []): Buffer =>
  sequence(
    ...organizations.map((o) => set(sequence(oid(OID.organization), utf8(o)))),
    set(sequence(oid(OID.commonName), utf8(commonName))),
  );

/** One DER element at `offset`: its whole encoding and where the next one starts. */
const derElement = (buffer: Buffer, offset: number): { element: Buffer; content: Buffer; next: number } => {
  const first = buffer[offset + 1]!;
  const lengthBytes = first & 0x80 ? first & 0x7f : 0;
  let length = first & 0x80 ? 0 : first;
  for (let i = 0; i < lengthBytes; i++) length = length * 256 + buffer[offset + 2 + i]!;
  const start = offset + 2 + lengthBytes;
  return { element: buffer.subarray(offset, start + length), content: buffer.subarray(start, start + length), next: start + length };
};

/** The subject of a certificate as its DER bytes, to be the issuer of the ones it signs. */
const subjectOf = (certificatePem: string): Buffer => {
  const certificate = new X509Certificate(certificatePem).raw;
  const tbs = derElement(derElement(certificate, 0).content, 0).content;
  // tbsCertificate: [0] version, serialNumber, signature, issuer, validity, subject, …
  let offset = 0;
  for (let field = 0; field < 5; field++) offset = derElement(tbs, offset).next;
  return derElement(tbs, offset).element;
};

const pem = (label: string, body: Buffer): string =>
  `-----BEGIN ${label}-----\n${body.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;

/** Builds and signs one certificate for a new P-256 key. */
const buildCertificate = (options: {
  readonly subject: Buffer;
  /** The issuer's subject and key; absent for a self-signed certificate. */
  readonly issuer?: { readonly name: Buffer; readonly key: KeyObject };
  readonly validDays: number;
  readonly extensions: readonly Buffer[];
}): TlsMaterial => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ecdsaWithSha256 = sequence(oid(OID.ecdsaWithSha256));
  // A positive serial whose first byte is not zero: DER wants an INTEGER's minimal encoding,
  // and a first byte of 0x00 followed by one below 0x80 (1 certificate in 256 with the first
  // bit merely cleared) made OpenSSL reject the certificate.
  const serial = randomBytes(16);
  serial[0] = 0x40 | (serial[0]! & 0x3f);
  const now = Date.now();
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    options.issuer?.name ?? options.subject,
    sequence(time(new Date(now - 60_000)), time(new Date(now + options.validDays * 86_400_000))),
    options.subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...options.extensions)),
  );
  const signature = sign('sha256', tbs, options.issuer?.key ?? privateKey);
  return {
    cert: pem('CERTIFICATE', sequence(tbs, ecdsaWithSha256, bitString(signature))),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
};

const subjectAltNames = (hosts: readonly string[]): Buffer =>
  extension(
    OID.subjectAltName,
    false,
    sequence(...hosts.map((host) => (isIP(host) ? der(0x87, ipBytes(host)) : der(0x82, Buffer.from(host, 'ascii'))))),
  );

/** Generates a self-signed certificate and key (PEM) for the apiserver. */
export const generateSelfSignedCertificate = (options: SelfSignedOptions = {}): TlsMaterial =>
  buildCertificate({
    subject: distinguishedName(options.commonName ?? 'logplane-apiserver'),
    validDays: options.validDays ?? 3650,
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true))),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x84]), 2)),
      extension(OID.extendedKeyUsage, false, sequence(oid(OID.serverAuth))),
      subjectAltNames(options.hosts ?? ['localhost', '127.0.0.1', '::1']),
    ],
  });

/**
 * Generates a certificate authority (CA:true, may sign certificates only: keyCertSign and
 * cRLSign) whose key signs the certificates of {@link issueCertificate}.
 */
export const generateCertificateAuthority = (options: { readonly commonName?: string; readonly validDays?: number } = {}): TlsMaterial =>
  buildCertificate({
    subject: distinguishedName(options.commonName ?? 'logplane-ca'),
    validDays: options.validDays ?? 3650,
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true))),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x06]), 1)),
    ],
  });

export interface IssueOptions {
  /** The identity: a user name for a client certificate (kube reads CN as the user). */
  readonly commonName: string;
  /** Organizations (kube reads them as the user's groups). */
  readonly organizations?: readonly string[];
  /** serverAuth, clientAuth or both. */
  readonly usages: readonly [CertificateUsage, ...CertificateUsage[]];
  /** Host names and IP addresses a serving certificate is valid for. */
  readonly hosts?: readonly string[];
  readonly validDays?: number;
}

/**
 * Issues a leaf certificate (CA:false, digitalSignature) for a new key, signed by `ca`
 * (as made by {@link generateCertificateAuthority}), so that a peer trusting only the CA
 * accepts it.
 */
export const issueCertificate = (ca: TlsMaterial, options: IssueOptions): TlsMaterial =>
  buildCertificate({
    subject: distinguishedName(options.commonName, options.organizations),
    issuer: { name: subjectOf(ca.cert), key: createPrivateKey(ca.key) },
    validDays: options.validDays ?? 365,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)),
      extension(OID.extendedKeyUsage, false, sequence(...options.usages.map((usage) => oid(usage === 'server' ? OID.serverAuth : OID.clientAuth)))),
      ...(options.hosts && options.hosts.length > 0 ? [subjectAltNames(options.hosts)] : []),
    ],
  });
