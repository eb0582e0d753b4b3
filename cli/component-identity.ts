/**
 * Each distributed component's own identity towards the apiserver, as kubeadm issues them:
 * `logplane controllers` is `system:kube-controller-manager` (kubeadm's
 * controller-manager.conf), an agent is `system:node:<node>` in `system:nodes` for each of
 * its nodes (kubelet.conf, what kubelet's TLS bootstrap ends with). The credential is a
 * client certificate the cluster CA of the shared PKI directory signs when the component
 * first calls the apiserver, written with the apiserver's address and CA (the PKI
 * directory's cluster-info) as the component's kubeconfig in its data directory. RBAC's
 * bootstrap bindings and the Node authorizer then give each only what its calls need.
 * `--kubeconfig` replaces it with credentials of the user's choosing.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createClient, type Client, type RequestOptions } from './client.ts';
import { renderKubeconfig, resolveConnection } from './kubeconfig.ts';
import { issueClientCertificate, readClusterInfo } from './pki.ts';
import type { TlsMaterial } from '../apiserver/index.ts';

/** Who a component is towards the apiserver. */
export type ComponentIdentity = { readonly type: 'controller-manager' } | { readonly type: 'node'; readonly node: string };

/** The user and groups of an identity, and its kubeconfig's file name in the component's data directory. */
export const identityUser = (identity: ComponentIdentity): { readonly name: string; readonly groups: readonly string[]; readonly file: string } => {
  switch (identity.type) {
    case 'controller-manager':
      return { name: 'system:kube-controller-manager', groups: [], file: 'controller-manager.kubeconfig' };
    case 'node':
      return { name: `system:node:${identity.node}`, groups: ['system:nodes'], file: `kubelet-${identity.node}.kubeconfig` };
    default:
      return identity satisfies never;
  }
};

/** The apiserver calls of a component, made with its credentials. */
export interface ComponentClient extends Pick<Client, 'request'> {
  /** Who the calls are made as, for the component's start line. */
  readonly describe: string;
}

/**
 * The client of `identity`: at each call the apiserver is the one `pkiDir`'s cluster-info
 * names (so a restarted apiserver elsewhere is found); the kubeconfig
 * `<dataDir>/<identity's file>` is written again whenever that changes, with a certificate
 * issued once per process. A call before any apiserver has published cluster-info fails
 * saying so.
 */
export const componentClient = (options: { readonly pkiDir: string; readonly dataDir: string; readonly identity: ComponentIdentity }): ComponentClient => {
  const user = identityUser(options.identity);
  const kubeconfig = join(resolve(options.dataDir), user.file);
  let certificate: TlsMaterial | undefined;
  let connected: { readonly server: string; readonly certificateAuthority: string; readonly client: Client } | undefined;

  // Synchronous from the file read to the client: calls made at once never see a half-written kubeconfig.
  const connect = (): Client => {
    const info = readClusterInfo(options.pkiDir);
    if (info === undefined) {
      throw new Error(
        `no apiserver has published its address in ${join(options.pkiDir, 'cluster-info.kubeconfig')} yet (an apiserver serving HTTPS with --pki ${options.pkiDir} does at start): start one, or pass --kubeconfig`,
      );
    }
    if (connected?.server === info.server && connected.certificateAuthority === info.certificateAuthority) return connected.client;
    certificate ??= issueClientCertificate(options.pkiDir, user);
    mkdirSync(dirname(kubeconfig), { recursive: true, mode: 0o700 });
    writeFileSync(kubeconfig, renderKubeconfig({ ...info, cluster: 'logplane', user: user.name, clientCertificate: certificate }), { mode: 0o600 });
    chmodSync(kubeconfig, 0o600);
    connected = { ...info, client: createClient({ ...info, clientCertificate: certificate }) };
    return connected.client;
  };

  return {
    describe: `${user.name} (${kubeconfig})`,
    request: async <T>(method: string, path: string, requestOptions?: RequestOptions): Promise<T> => connect().request<T>(method, path, requestOptions),
  };
};

/** The client of a kubeconfig given with `--kubeconfig`, read now so a bad file fails the start. */
export const kubeconfigClient = (kubeconfig: string): ComponentClient => {
  const client = createClient(resolveConnection({ kubeconfig }));
  return { describe: `the user of ${kubeconfig}`, request: (method, path, requestOptions) => client.request(method, path, requestOptions) };
};
