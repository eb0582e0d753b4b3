import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { readKubeconfig, resolveConnection, writeKubeconfig } from './kubeconfig.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'logplane-kubeconfig-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const entry = { server: 'http://127.0.0.1:6443', token: 'secret', user: 'admin', cluster: 'logplane' };

describe('writeKubeconfig', () => {
  it('writes a standard kubeconfig, owner-only, that reads back', async () => {
    const path = join(dir, 'nested', 'kubeconfig');
    const text = await writeKubeconfig(path, entry);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(YAML.parse(text)).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'logplane', cluster: { server: 'http://127.0.0.1:6443' } }],
      users: [{ name: 'admin', user: { token: 'secret' } }],
      contexts: [{ name: 'admin@logplane', context: { cluster: 'logplane', user: 'admin' } }],
      'current-context': 'admin@logplane',
    });
    expect(readKubeconfig(path)['current-context']).toBe('admin@logplane');
  });
});

describe('resolveConnection', () => {
  it('uses ./.logplane/kubeconfig when nothing else is given', async () => {
    await writeKubeconfig(join(dir, '.logplane', 'kubeconfig'), { ...entry, namespace: 'shop' });
    expect(resolveConnection({}, {}, dir)).toEqual({ server: entry.server, token: 'secret', namespace: 'shop', kubeconfigPath: join(dir, '.logplane', 'kubeconfig') });
  });

  it('prefers --kubeconfig over $KUBECONFIG over the default, and flags over the file', async () => {
    await writeKubeconfig(join(dir, '.logplane', 'kubeconfig'), entry);
    await writeKubeconfig(join(dir, 'env'), { ...entry, server: 'http://env:1' });
    await writeKubeconfig(join(dir, 'flag'), { ...entry, server: 'http://flag:1' });
    const env = { KUBECONFIG: `${join(dir, 'missing')}:${join(dir, 'env')}` };
    expect(resolveConnection({}, env, dir).server).toBe('http://env:1');
    expect(resolveConnection({ kubeconfig: 'flag' }, env, dir).server).toBe('http://flag:1');
    expect(resolveConnection({ kubeconfig: 'flag', server: 'http://s:2', token: 'other' }, env, dir)).toMatchObject({ server: 'http://s:2', token: 'other' });
  });

  it('carries the CA of an https server, but not to an overriding --server', async () => {
    const path = join(dir, 'tls');
    await writeKubeconfig(path, { ...entry, server: 'https://127.0.0.1:6443', certificateAuthority: 'PEM TEXT' });
    expect(YAML.parse(readFileSync(path, 'utf8')).clusters[0].cluster['certificate-authority-data']).toBe(Buffer.from('PEM TEXT').toString('base64'));
    expect(resolveConnection({ kubeconfig: path }, {}, dir)).toMatchObject({ server: 'https://127.0.0.1:6443', certificateAuthority: 'PEM TEXT' });
    expect(resolveConnection({ kubeconfig: path, server: 'https://elsewhere:1' }, {}, dir).certificateAuthority).toBeUndefined();
  });

  it('carries a client certificate, inline or in files next to the kubeconfig, but not to an overriding --server', async () => {
    const inline = join(dir, 'cert');
    await writeKubeconfig(inline, { server: 'https://127.0.0.1:6443', user: 'system:node:n1', cluster: 'logplane', clientCertificate: { cert: 'CERT PEM', key: 'KEY PEM' } });
    expect(YAML.parse(readFileSync(inline, 'utf8')).users[0]).toEqual({
      name: 'system:node:n1',
      user: { 'client-certificate-data': Buffer.from('CERT PEM').toString('base64'), 'client-key-data': Buffer.from('KEY PEM').toString('base64') },
    });
    expect(resolveConnection({ kubeconfig: inline }, {}, dir)).toMatchObject({ clientCertificate: { cert: 'CERT PEM', key: 'KEY PEM' } });
    expect(resolveConnection({ kubeconfig: inline, server: 'https://elsewhere:1' }, {}, dir).clientCertificate).toBeUndefined();
    writeFileSync(join(dir, 'n1.crt'), 'FILE CERT');
    writeFileSync(join(dir, 'n1.key'), 'FILE KEY');
    const files = join(dir, 'files');
    const config = (user: Record<string, string>) => ({
      clusters: [{ name: 'c', cluster: { server: 'https://a' } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
    writeFileSync(files, YAML.stringify(config({ 'client-certificate': 'n1.crt', 'client-key': 'n1.key' })));
    expect(resolveConnection({ kubeconfig: files }, {}, dir).clientCertificate).toEqual({ cert: 'FILE CERT', key: 'FILE KEY' });
    writeFileSync(files, YAML.stringify(config({ 'client-certificate': 'n1.crt' })));
    expect(() => resolveConnection({ kubeconfig: files }, {}, dir)).toThrow(/user "u" has a client certificate without its key/);
  });

  it('selects a context with --context', () => {
    const path = join(dir, 'multi');
    writeFileSync(
      path,
      YAML.stringify({
        clusters: [
          { name: 'a', cluster: { server: 'http://a' } },
          { name: 'b', cluster: { server: 'http://b' } },
        ],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [
          { name: 'ca', context: { cluster: 'a', user: 'u' } },
          { name: 'cb', context: { cluster: 'b', user: 'u', namespace: 'nb' } },
        ],
        'current-context': 'ca',
      }),
    );
    expect(resolveConnection({ kubeconfig: path }, {}, dir).server).toBe('http://a');
    expect(resolveConnection({ kubeconfig: path, context: 'cb' }, {}, dir)).toMatchObject({ server: 'http://b', namespace: 'nb' });
    expect(() => resolveConnection({ kubeconfig: path, context: 'nope' }, {}, dir)).toThrow(/context "nope" does not exist/);
  });

  it('says how to get a cluster when there is no kubeconfig', () => {
    expect(() => resolveConnection({}, {}, dir)).toThrow(/no kubeconfig found .*logplane up/);
    expect(() => resolveConnection({ kubeconfig: 'missing' }, {}, dir)).toThrow(/kubeconfig missing does not exist/);
    expect(resolveConnection({ server: 'http://x:1' }, {}, dir)).toEqual({ server: 'http://x:1' });
  });
});
