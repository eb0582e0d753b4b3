/**
 * Delegated authentication and authorization, as kube's components do it for their own
 * secure ports (k8s.io/apiserver's DelegatingAuthenticator/Authorizer): a bearer token is
 * checked with a TokenReview and the user's request with a SubjectAccessReview, both sent
 * to the apiserver with the component's own credentials (its kubeconfig). Verdicts are
 * cached for 10 s (kube's default `--authentication-token-webhook-cache-ttl` and
 * authorization cache TTLs are 10 s for a denial; one TTL here for both), in a bounded cache.
 */
import { createHash } from 'node:crypto';
import type { Client } from './client.ts';

/** The user a TokenReview returned. */
export interface ReviewedUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What a SubjectAccessReview asks about: a resource (`get nodes/metrics`) or a non-resource path (`get /metrics`). */
export type AccessAttributes =
  | { readonly verb: string; readonly resource: string; readonly subresource?: string; readonly name?: string; readonly namespace?: string; readonly group?: string }
  | { readonly verb: string; readonly path: string };

/** The verdict on one token for one request. */
export type DelegatedVerdict =
  | { readonly type: 'allowed'; readonly user: string }
  | { readonly type: 'unauthenticated' }
  | { readonly type: 'forbidden'; readonly user: string };

export interface DelegatedAuth {
  /** Authenticates `token` (TokenReview), then authorizes its user for `attributes` (SubjectAccessReview). */
  check(token: string, attributes: AccessAttributes): Promise<DelegatedVerdict>;
}

export interface DelegatedAuthOptions {
  /** A client of the apiserver, with credentials allowed to create tokenreviews and subjectaccessreviews. */
  readonly client: Pick<Client, 'request'>;
  /** How long a verdict is reused (ms, default 10 s). */
  readonly ttlMs?: number;
  /** Most verdicts cached (default 1,024); the oldest goes first. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

interface TokenReviewReply {
  readonly status?: { readonly authenticated?: boolean; readonly user?: ReviewedUser };
}

interface SubjectAccessReviewReply {
  readonly status?: { readonly allowed?: boolean; readonly denied?: boolean };
}

/** Creates the delegated checks. */
export const createDelegatedAuth = (options: DelegatedAuthOptions): DelegatedAuth => {
  const { client } = options;
  const ttlMs = options.ttlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 1024;
  const now = options.now ?? Date.now;
  const verdicts = new Map<string, { readonly verdict: DelegatedVerdict; readonly until: number }>();

  const authenticate = async (token: string): Promise<ReviewedUser | undefined> => {
    const reply = await client.request<TokenReviewReply>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    return reply.status?.authenticated === true && reply.status.user?.username ? reply.status.user : undefined;
  };

  const authorize = async (user: ReviewedUser, attributes: AccessAttributes): Promise<boolean> => {
    const spec = {
      user: user.username,
      ...(user.uid !== undefined ? { uid: user.uid } : {}),
      ...(user.groups !== undefined ? { groups: user.groups } : {}),
      ...(user.extra !== undefined ? { extra: user.extra } : {}),
      ...('path' in attributes
        ? { nonResourceAttributes: { path: attributes.path, verb: attributes.verb } }
        : {
            resourceAttributes: {
              verb: attributes.verb,
              resource: attributes.resource,
              ...(attributes.subresource !== undefined ? { subresource: attributes.subresource } : {}),
              ...(attributes.name !== undefined ? { name: attributes.name } : {}),
              ...(attributes.namespace !== undefined ? { namespace: attributes.namespace } : {}),
              ...(attributes.group !== undefined ? { group: attributes.group } : {}),
            },
          }),
    };
    const reply = await client.request<SubjectAccessReviewReply>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    });
    return reply.status?.allowed === true;
  };

  return {
    check: async (token, attributes) => {
      // Keyed by the token's hash: the cache holds no credential.
      const cacheKey = createHash('sha256').update(token).update('\u0000').update(JSON.stringify(attributes)).digest('base64');
      const cached = verdicts.get(cacheKey);
      if (cached && cached.until > now()) return cached.verdict;
      verdicts.delete(cacheKey);
      const user = await authenticate(token);
      const verdict: DelegatedVerdict =
        user === undefined ? { type: 'unauthenticated' } : (await authorize(user, attributes)) ? { type: 'allowed', user: user.username } : { type: 'forbidden', user: user.username };
      verdicts.set(cacheKey, { verdict, until: now() + ttlMs });
      while (verdicts.size > maxEntries) verdicts.delete(verdicts.keys().next().value as string);
      return verdict;
    },
  };
};
