/**
 * Service-account tokens as kube-apiserver issues and checks them: RS256 JWTs (`jose`)
 * signed with the cluster's service-account key, with kube's claims — `iss`, `sub`
 * (`system:serviceaccount:<ns>:<name>`), `aud`, `exp`/`iat`/`nbf`, `jti`, and the private
 * `kubernetes.io` claim naming the namespace, the service account (name and uid) and the
 * object the token is bound to (a Pod, Secret or Node) — and the key id kube derives from
 * the public key (base64url of the SHA-256 of its DER SubjectPublicKeyInfo).
 *
 * Tokens are not stored anywhere, as in kube: a token is valid while its signature,
 * issuer, audience and lifetime hold and the objects it names still exist with the same
 * uids (`authenticate.ts`), so deleting the service account (or the bound pod) revokes it.
 */
import { createHash, createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { exportJWK, jwtVerify, SignJWT, type JWK } from 'jose';

/** kube-apiserver's usual `--service-account-issuer` (kubeadm's, kind's). */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** The object a token is bound to (TokenRequest `spec.boundObjectRef`). */
export interface BoundObject {
  readonly kind: 'Pod' | 'Secret' | 'Node';
  readonly name: string;
  readonly uid: string;
}

/** What a valid token says: whose it is and what it is bound to. */
export interface ServiceAccountClaims {
  readonly namespace: string;
  readonly serviceAccount: { readonly name: string; readonly uid: string };
  readonly bound?: BoundObject;
  /** The token's `jti`, kube's credential id. */
  readonly id: string;
}

export interface TokenIssuerOptions {
  /** The PEM private key tokens are signed with (`--service-account-signing-key-file`). */
  readonly signingKey: string;
  /** `--service-account-issuer` (default {@link DEFAULT_SERVICE_ACCOUNT_ISSUER}). */
  readonly issuer?: string;
  /** `--api-audiences`: a token must name one of them (default: the issuer). */
  readonly audiences?: readonly string[];
}

export interface TokenIssuer {
  readonly issuer: string;
  readonly audiences: readonly string[];
  readonly keyId: string;
  /** Signs a token for `claims`, valid from `now` (ms) for `expirationSeconds`, for `audiences`. */
  sign(claims: Omit<ServiceAccountClaims, 'id'>, options: { readonly audiences: readonly string[]; readonly expirationSeconds: number; readonly now: number }): Promise<string>;
  /** The claims of a token this issuer signed that is valid now for one of its audiences; undefined for anything else. */
  verify(token: string): Promise<ServiceAccountClaims | undefined>;
  /** The JSON Web Key Set of the public key (`/openid/v1/jwks`). */
  jwks(): Promise<{ keys: JWK[] }>;
}

const keyIdOf = (publicKey: KeyObject): string => createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The `kubernetes.io` claim of a verified payload, or undefined when it is not a service-account token. */
const claimsOf = (payload: Record<string, unknown>): ServiceAccountClaims | undefined => {
  const kube = payload['kubernetes.io'];
  if (!isRecord(kube) || !isRecord(kube.serviceaccount)) return undefined;
  const namespace = text(kube.namespace);
  const name = text(kube.serviceaccount.name);
  const uid = text(kube.serviceaccount.uid);
  const id = text(payload.jti) ?? '';
  if (!namespace || !name || !uid || payload.sub !== `system:serviceaccount:${namespace}:${name}`) return undefined;
  for (const kind of ['pod', 'secret', 'node'] as const) {
    const bound = kube[kind];
    if (bound === undefined) continue;
    if (!isRecord(bound) || !text(bound.name) || !text(bound.uid)) return undefined;
    const boundKind = kind === 'pod' ? 'Pod' : kind === 'secret' ? 'Secret' : 'Node';
    return { namespace, serviceAccount: { name, uid }, bound: { kind: boundKind, name: bound.name as string, uid: bound.uid as string }, id };
  }
  return { namespace, serviceAccount: { name, uid }, id };
};

export const createTokenIssuer = (options: TokenIssuerOptions): TokenIssuer => {
  const privateKey = createPrivateKey(options.signingKey);
  const publicKey = createPublicKey(privateKey);
  const issuer = options.issuer ?? DEFAULT_SERVICE_ACCOUNT_ISSUER;
  const audiences = options.audiences && options.audiences.length > 0 ? [...options.audiences] : [issuer];
  const keyId = keyIdOf(publicKey);
  return {
    issuer,
    audiences,
    keyId,
    sign: (claims, { audiences: tokenAudiences, expirationSeconds, now }) => {
      const seconds = Math.floor(now / 1000);
      const kube: Record<string, unknown> = {
        namespace: claims.namespace,
        serviceaccount: { name: claims.serviceAccount.name, uid: claims.serviceAccount.uid },
      };
      if (claims.bound) kube[claims.bound.kind.toLowerCase()] = { name: claims.bound.name, uid: claims.bound.uid };
      return new SignJWT({ 'kubernetes.io': kube })
        .setProtectedHeader({ alg: 'RS256', kid: keyId })
        .setIssuer(issuer)
        .setSubject(`system:serviceaccount:${claims.namespace}:${claims.serviceAccount.name}`)
        .setAudience([...tokenAudiences])
        .setIssuedAt(seconds)
        .setNotBefore(seconds)
        .setExpirationTime(seconds + expirationSeconds)
        .setJti(randomUUID())
        .sign(privateKey);
    },
    verify: async (token) => {
      try {
        const { payload } = await jwtVerify(token, publicKey, { issuer, audience: audiences, algorithms: ['RS256'] });
        return claimsOf(payload as Record<string, unknown>);
      } catch {
        // A bad signature, another issuer or audience, an expired or malformed token: not ours to accept.
        return undefined;
      }
    },
    jwks: async () => ({ keys: [{ ...(await exportJWK(publicKey)), use: 'sig', kid: keyId, alg: 'RS256' }] }),
  };
};
