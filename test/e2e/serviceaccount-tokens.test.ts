/**
 * Service-account tokens end to end with the real kubectl, on both logs (issue 19, part 2):
 * `kubectl create token` gives a token the apiserver accepts as that service account
 * (`kubectl auth whoami`), RBAC judges it (denied, then allowed through a RoleBinding),
 * TokenReview reviews it, the OIDC discovery documents publish the key that verifies it,
 * and it stops working when its service account — or the pod it is bound to — is deleted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { LOG_ADAPTERS, waitForView } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

describe.each(LOG_ADAPTERS)('service-account tokens with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-sa-tokens');
  const { kubectl, ok } = harness;
  beforeAll(async () => {
    await ok('create', 'namespace', 'team');
    await ok('create', 'serviceaccount', 'builder', '-n', 'team');
  }, 120_000);

  it('issues a token that authenticates as the service account, and RBAC judges it', async () => {
    const token = (await ok('create', 'token', 'builder', '-n', 'team')).trim();
    const whoami = JSON.parse(await ok('--token', token, 'auth', 'whoami', '-o', 'json'));
    expect(whoami.status.userInfo).toMatchObject({
      username: 'system:serviceaccount:team:builder',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
    });
    const denied = await kubectl('--token', token, 'get', 'pods', '-n', 'team');
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('User "system:serviceaccount:team:builder" cannot list resource "pods" in API group "" in the namespace "team"');
    await ok('create', 'rolebinding', 'builder-view', '--clusterrole=view', '--serviceaccount=team:builder', '-n', 'team');
    // The create answered once the binding was applied; the authorizer judges by it from then on.
    expect((await kubectl('--token', token, 'get', 'pods', '-n', 'team')).code).toBe(0);
    expect((await kubectl('--token', token, 'get', 'pods', '-n', 'default')).code).not.toBe(0);
  });

  it('refuses durations under 10 minutes and unknown service accounts as kube does', async () => {
    const short = await kubectl('create', 'token', 'builder', '-n', 'team', '--duration=5m');
    expect(short.stderr).toContain('TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes');
    const missing = await kubectl('create', 'token', 'nobody', '-n', 'team');
    expect(missing.stderr).toContain('serviceaccounts "nobody" not found');
  });

  it('publishes OIDC discovery whose key set verifies the token, and TokenReview reviews it', async () => {
    const token = (await ok('create', 'token', 'builder', '-n', 'team', '--audience', 'https://kubernetes.default.svc.cluster.local')).trim();
    const configuration = JSON.parse(await ok('get', '--raw', '/.well-known/openid-configuration'));
    expect(configuration).toMatchObject({ issuer: 'https://kubernetes.default.svc.cluster.local', jwks_uri: `${harness.cluster.url}/openid/v1/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
    const keys = JSON.parse(await ok('get', '--raw', '/openid/v1/jwks'));
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys), { issuer: configuration.issuer });
    expect(payload.sub).toBe('system:serviceaccount:team:builder');
    const body = join(harness.dir, 'review.json');
    writeFileSync(body, JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }));
    const review = JSON.parse(await ok('create', '--raw', '/apis/authentication.k8s.io/v1/tokenreviews', '-f', body));
    expect(review.status).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:team:builder' } });
  });

  it('stops accepting a token bound to a pod once the pod is deleted', async () => {
    await ok('run', 'holder', '--image=logplane/sleeper', '-n', 'team');
    await waitForView(harness.cluster.projection, 'the holder pod', (view) => view.get('Pod/team/holder'));
    const token = (await ok('create', 'token', 'builder', '-n', 'team', '--bound-object-kind', 'Pod', '--bound-object-name', 'holder')).trim();
    expect((await kubectl('--token', token, 'auth', 'whoami')).code).toBe(0);
    await ok('delete', 'pod', 'holder', '-n', 'team', '--force', '--grace-period=0');
    const refused = await kubectl('--token', token, 'auth', 'whoami');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Unauthorized');
  });

  it('stops accepting a token once its service account is deleted', async () => {
    await ok('create', 'serviceaccount', 'temporary', '-n', 'team');
    const token = (await ok('create', 'token', 'temporary', '-n', 'team')).trim();
    expect((await kubectl('--token', token, 'auth', 'whoami')).code).toBe(0);
    await ok('delete', 'serviceaccount', 'temporary', '-n', 'team');
    const refused = await kubectl('--token', token, 'auth', 'whoami');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Unauthorized');
  });
});
