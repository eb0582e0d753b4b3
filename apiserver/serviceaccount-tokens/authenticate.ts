/**
 * Authenticates a service-account token as kube's service-account authenticator does: a
 * token the issuer verifies (signature, issuer, audience, lifetime) stands for
 * `system:serviceaccount:<ns>:<name>` in the groups `system:serviceaccounts` and
 * `system:serviceaccounts:<ns>`, as long as the service account — and the pod, secret or
 * node it is bound to — still exists with the uid the token names and is not being
 * deleted. Deleting either revokes every token that names it.
 */
import type { Logger } from 'pino';
import type { View } from '../../projections/index.ts';
import { AUTHENTICATED_GROUP, type UserInfo } from '../auth.ts';
import type { ServiceAccountClaims, TokenIssuer } from './issuer.ts';

export const SERVICE_ACCOUNTS_GROUP = 'system:serviceaccounts';

const looksLikeJwt = (token: string): boolean => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);

/** Why the objects a token names no longer let it through, or undefined when they do. */
const revocation = (view: View, claims: ServiceAccountClaims): string | undefined => {
  const { namespace, serviceAccount, bound } = claims;
  const account = view.get(`ServiceAccount/${namespace}/${serviceAccount.name}`);
  if (!account || account.metadata.deletionTimestamp) return `service account ${namespace}/${serviceAccount.name} has been deleted`;
  if (account.metadata.uid !== serviceAccount.uid) return `service account uid (${serviceAccount.uid}) does not match the current one (${account.metadata.uid ?? ''})`;
  if (!bound) return undefined;
  const key = bound.kind === 'Node' ? `Node//${bound.name}` : `${bound.kind}/${namespace}/${bound.name}`;
  const object = view.get(key);
  if (!object || object.metadata.deletionTimestamp) return `${bound.kind.toLowerCase()} ${bound.name} the token is bound to has been deleted`;
  if (object.metadata.uid !== bound.uid) return `${bound.kind.toLowerCase()} ${bound.name} uid (${bound.uid}) does not match the current one (${object.metadata.uid ?? ''})`;
  return undefined;
};

/** The user a service-account token stands for, or undefined (not a JWT, not ours, or revoked). */
export const authenticateServiceAccountToken = async (issuer: TokenIssuer, view: () => View, token: string, logger?: Logger): Promise<UserInfo | undefined> => {
  if (!looksLikeJwt(token)) return undefined;
  const claims = await issuer.verify(token);
  if (!claims) return undefined;
  const revoked = revocation(view(), claims);
  if (revoked) {
    logger?.debug({ serviceAccount: `${claims.namespace}/${claims.serviceAccount.name}`, reason: revoked }, 'service-account token refused');
    return undefined;
  }
  return {
    name: `system:serviceaccount:${claims.namespace}:${claims.serviceAccount.name}`,
    uid: claims.serviceAccount.uid,
    groups: [SERVICE_ACCOUNTS_GROUP, `${SERVICE_ACCOUNTS_GROUP}:${claims.namespace}`, AUTHENTICATED_GROUP],
  };
};
