import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTokenIssuer, DEFAULT_SERVICE_ACCOUNT_ISSUER } from './issuer.ts';

const pem = (): string => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const key = pem();
const issuer = createTokenIssuer({ signingKey: key });
const account = { namespace: 'shop', serviceAccount: { name: 'builder', uid: 'uid-1' } };
const now = Date.now();

describe('service-account token issuer', () => {
  it("signs kube's claims with RS256 and the key id of the public key, verifiable from its JWKS", async () => {
    const token = await issuer.sign({ ...account, bound: { kind: 'Pod', name: 'web-0', uid: 'pod-uid' } }, { audiences: issuer.audiences, expirationSeconds: 3600, now });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: issuer.keyId });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: DEFAULT_SERVICE_ACCOUNT_ISSUER,
      sub: 'system:serviceaccount:shop:builder',
      aud: [DEFAULT_SERVICE_ACCOUNT_ISSUER],
      'kubernetes.io': { namespace: 'shop', serviceaccount: { name: 'builder', uid: 'uid-1' }, pod: { name: 'web-0', uid: 'pod-uid' } },
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    // Verified independently of the issuer, with the published key set.
    await expect(jwtVerify(token, createLocalJWKSet(await issuer.jwks()), { issuer: DEFAULT_SERVICE_ACCOUNT_ISSUER })).resolves.toBeDefined();
    expect(await issuer.verify(token)).toMatchObject({ ...account, bound: { kind: 'Pod', name: 'web-0', uid: 'pod-uid' } });
  });

  it('refuses tokens for other audiences, expired ones, other keys, other issuers, tampered ones and non-service-account JWTs', async () => {
    const sign = (options: Partial<{ audiences: string[]; expirationSeconds: number; now: number }> = {}) =>
      issuer.sign(account, { audiences: issuer.audiences, expirationSeconds: 3600, now, ...options });
    expect(await issuer.verify(await sign({ audiences: ['vault'] }))).toBeUndefined();
    expect(await issuer.verify(await sign({ now: now - 7200_000 }))).toBeUndefined();
    expect(await createTokenIssuer({ signingKey: pem() }).verify(await sign())).toBeUndefined();
    expect(await createTokenIssuer({ signingKey: key, issuer: 'https://elsewhere' }).verify(await sign())).toBeUndefined();
    const [header, payload, signature] = (await sign()).split('.');
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(`${header}.${payload}.${signature}`), sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
    expect(await issuer.verify(`${header}.${forged}.${signature}`)).toBeUndefined();
    const plain = await new SignJWT({ sub: 'someone' }).setProtectedHeader({ alg: 'RS256' }).setIssuer(issuer.issuer).setAudience(issuer.audiences[0]!).setExpirationTime('1h').sign(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    expect(await issuer.verify(plain)).toBeUndefined();
    expect(await issuer.verify('not.a.token')).toBeUndefined();
  });

  it('accepts a token for any of its audiences (--api-audiences)', async () => {
    const several = createTokenIssuer({ signingKey: key, audiences: ['api', 'vault'] });
    const token = await several.sign(account, { audiences: ['vault'], expirationSeconds: 600, now });
    expect(await several.verify(token)).toMatchObject(account);
  });
});
