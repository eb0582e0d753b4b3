/**
 * kubectl's `--as`, `--as-group` and `--as-uid` against `logplane up` (RBAC): the admin may
 * impersonate anyone, and the request is then authorized as the impersonated user; `kubectl
 * auth whoami` and `auth can-i` answer for that user.
 */
import { describe, expect, it } from 'vitest';
import { useKubectlCluster } from './kubectl-harness.ts';

describe('kubectl --as on logplane up', () => {
  const { kubectl, ok } = useKubectlCluster('embedded', 'e2e-impersonation');

  it('acts as the user and groups kubectl names', async () => {
    const who = JSON.parse(await ok('auth', 'whoami', '--as', 'jane', '--as-group', 'devs', '--as-group', 'ops', '--as-uid', 'u-1', '-o', 'json'));
    expect(who.status.userInfo).toEqual({ username: 'jane', uid: 'u-1', groups: ['devs', 'ops', 'system:authenticated'] });
    const account = JSON.parse(await ok('auth', 'whoami', '--as', 'system:serviceaccount:default:default', '-o', 'json'));
    expect(account.status.userInfo.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
  });

  it('authorizes as the impersonated user: refused until a binding allows it', async () => {
    const refused = await kubectl('get', 'pods', '--as', 'jane');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"');
    const cannot = await kubectl('auth', 'can-i', 'list', 'pods', '--as', 'jane');
    expect([cannot.code, cannot.stdout.trim()]).toEqual([1, 'no']);
    await ok('create', 'rolebinding', 'jane-view', '--clusterrole=view', '--user=jane');
    expect((await kubectl('get', 'pods', '--as', 'jane')).code).toBe(0);
    expect((await ok('auth', 'can-i', 'list', 'pods', '--as', 'jane')).trim()).toBe('yes');
    expect((await kubectl('auth', 'can-i', 'list', 'secrets', '--as', 'jane')).stdout.trim()).toBe('no');
  });
});
