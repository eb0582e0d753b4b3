/**
 * How node agents get the bound service-account tokens of projected volumes (kubelet's
 * `TokenRequest` call with the node's credentials):
 *
 * - `logplane up`: the agents share the apiserver's process, so the token is issued in-process
 *   with the cluster's signing key, under the TokenRequest API's rules (the service account
 *   must exist, the token is bound to the pod, which must exist with that uid);
 * - distributed mode (`logplane agent`): `POST …/serviceaccounts/NAME/token` to the
 *   apiserver as the pod's node, `system:node:<node>` (see `component-identity.ts`), which
 *   the Node authorizer allows for the service accounts of the pods bound to it and
 *   NodeRestriction only for a token bound to such a pod; or with the credentials of
 *   `--kubeconfig`.
 */
import type { View } from '../projections/index.ts';
import type { TokenIssuer } from '../apiserver/serviceaccount-tokens/issuer.ts';
import type { RequestServiceAccountToken } from '../node-agent/kubelet/index.ts';
import type { Client } from './client.ts';

/** A pod's token signed by `issuer` in this process, after the TokenRequest API's checks on `view()`. */
export const inProcessTokenRequests =
  (issuer: TokenIssuer, view: () => View): RequestServiceAccountToken =>
  async (request) => {
    const current = view();
    const account = current.get(`ServiceAccount/${request.namespace}/${request.serviceAccountName}`);
    if (!account) throw new Error(`serviceaccounts "${request.serviceAccountName}" not found`);
    const pod = current.get(`Pod/${request.namespace}/${request.pod.name}`);
    if (!pod) throw new Error(`cannot bind token for serviceaccount "${request.serviceAccountName}" to pod "${request.pod.name}": not found`);
    if (pod.metadata.uid !== request.pod.uid) {
      throw new Error(`the UID in the bound object reference (${request.pod.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    const now = Date.now();
    const token = await issuer.sign(
      { namespace: request.namespace, serviceAccount: { name: request.serviceAccountName, uid: account.metadata.uid ?? '' }, bound: { kind: 'Pod', name: request.pod.name, uid: request.pod.uid } },
      { audiences: request.audiences.length > 0 ? request.audiences : issuer.audiences, expirationSeconds: request.expirationSeconds, now },
    );
    return { token, expiresAt: now + request.expirationSeconds * 1000 };
  };

interface TokenRequestReply {
  readonly status?: { readonly token?: string; readonly expirationTimestamp?: string };
}

/** A pod's token asked of the apiserver `client` talks to (the TokenRequest API, with the client's credentials). */
export const remoteTokenRequests =
  (client: Pick<Client, 'request'>): RequestServiceAccountToken =>
  async (request) => {
    const path = `/api/v1/namespaces/${encodeURIComponent(request.namespace)}/serviceaccounts/${encodeURIComponent(request.serviceAccountName)}/token`;
    const reply = await client.request<TokenRequestReply>('POST', path, {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          ...(request.audiences.length > 0 ? { audiences: request.audiences } : {}),
          expirationSeconds: request.expirationSeconds,
          boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: request.pod.name, uid: request.pod.uid },
        },
      },
    });
    const token = reply?.status?.token;
    const expiresAt = Date.parse(reply?.status?.expirationTimestamp ?? '');
    if (!token || Number.isNaN(expiresAt)) throw new Error(`the TokenRequest for ${request.namespace}/${request.serviceAccountName} was answered without a token`);
    return { token, expiresAt };
  };
