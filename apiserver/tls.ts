/**
 * TLS for the apiserver. kubectl (client-go) sends bearer tokens only to `https://`
 * servers, so a server meant for kubectl needs a certificate; this module makes a
 * self-signed one without dependencies: an EC P-256 key and a DER-encoded X.509 v3
 * certificate (CA:true, serverAuth, SANs for the names and IPs it will be reached by),
 * usable both as the server certificate and as the kubeconfig's certificate-authority.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
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

/** Generates a self-signed certificate and key (PEM) for the apiserver. */
export const generateSelfSignedCertificate = (options: SelfSignedOptions = {}): TlsMaterial => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1'];
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(options.commonName ?? 'logplane-apiserver'))));
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  // A positive serial whose first byte is not zero: DER wants an INTEGER's minimal encoding,
  // and a first byte of 0x00 followed by one below 0x80 (1 certificate in 256 with the first
  // bit merely cleared) made OpenSSL reject the certificate.
  const serial = randomBytes(16);
  serial[0] = 0x40 | (serial[0]! & 0x3f);
  const now = Date.now();
  const altNames = Buffer.concat(
    hosts.map((host) => (isIP(host) ? der(0x87, ipBytes(host)) : der(0x82, Buffer.from(host, 'ascii')))),
  );
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(time(new Date(now - 60_000)), time(new Date(now + (options.validDays ?? 3650) * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      sequence(
        extension('2.5.29.19', true, sequence(boolean(true))),
        extension('2.5.29.15', true, bitString(Buffer.from([0x84]), 2)),
        extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))),
        extension('2.5.29.17', false, sequence(altNames)),
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = sequence(tbs, ecdsaWithSha256, bitString(signature));
  const pem = (label: string, body: Buffer): string =>
    `-----BEGIN ${label}-----\n${body.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;
  return {
    cert: pem('CERTIFICATE', certificate),
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
};
