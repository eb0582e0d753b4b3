/**
 * Kubeconfig files for clients of a logplane apiserver (kubectl, client-go): one cluster,
 * one user with a bearer token, one current context.
 */
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** The apiserver URL, e.g. `http://127.0.0.1:6443`. */
  readonly server: string;
  readonly token: string;
  readonly cluster?: string;
  readonly user?: string;
  readonly namespace?: string;
  /** PEM of the CA (for a self-signed apiserver: its certificate), for https servers. */
  readonly certificateAuthority?: string;
}

/** The kubeconfig document as YAML text. */
export const kubeconfigYaml = (options: KubeconfigOptions): string => {
  const cluster = options.cluster ?? 'logplane';
  const user = options.user ?? 'admin';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: cluster,
        cluster: {
          server: options.server,
          ...(options.certificateAuthority
            ? { 'certificate-authority-data': Buffer.from(options.certificateAuthority).toString('base64') }
            : {}),
        },
      },
    ],
    users: [{ name: user, user: { token: options.token } }],
    contexts: [{ name: cluster, context: { cluster, user, ...(options.namespace ? { namespace: options.namespace } : {}) } }],
    'current-context': cluster,
    preferences: {},
  });
};

/** Writes a kubeconfig (mode 0600: it holds a token). */
export const writeKubeconfig = (path: string, options: KubeconfigOptions): void => {
  writeFileSync(path, kubeconfigYaml(options), { mode: 0o600 });
};
