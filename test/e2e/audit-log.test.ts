/**
 * The audit log of `logplane up` (DATA/audit/audit.log, every request at Metadata), with
 * the real kubectl: an allowed request, a request refused by RBAC made while impersonating
 * (both users recorded, the decision `forbid`), and a request with an unknown token.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pollUntil } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

interface AuditEvent {
  readonly auditID: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { username?: string; groups?: string[] };
  readonly impersonatedUser?: { username: string };
  readonly objectRef?: { resource: string; namespace?: string };
  readonly responseStatus: { code: number; reason?: string };
  readonly annotations?: Record<string, string>;
  readonly userAgent?: string;
}

describe('the audit log of logplane up', () => {
  const harness = useKubectlCluster('embedded', 'e2e-audit-log');
  const events = (): AuditEvent[] =>
    readFileSync(join(harness.dir, 'audit', 'audit.log'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AuditEvent);
  const eventually = (what: string, find: (all: AuditEvent[]) => AuditEvent | undefined) => pollUntil(what, async () => find(events()), { timeoutMs: 10_000 });

  it('records an allowed request with its user, verb, object and code', async () => {
    await harness.ok('get', 'configmaps', '-n', 'kube-system');
    const listed = await eventually('the list of configmaps', (all) => all.find((e) => e.verb === 'list' && e.objectRef?.resource === 'configmaps' && e.objectRef.namespace === 'kube-system'));
    expect(listed.user.username).toBe('admin');
    expect(listed.responseStatus.code).toBe(200);
    expect(listed.annotations?.['authorization.k8s.io/decision']).toBe('allow');
    expect(listed.userAgent).toMatch(/^kubectl\//);
  });

  it('records a refusal with the real and the impersonated user and the decision', async () => {
    const refused = await harness.kubectl('get', 'secrets', '--as', 'mallory');
    expect(refused.code).not.toBe(0);
    const denial = await eventually('the refused list of secrets', (all) => all.find((e) => e.impersonatedUser?.username === 'mallory' && e.objectRef?.resource === 'secrets'));
    expect(denial).toMatchObject({
      verb: 'list',
      user: { username: 'admin' },
      responseStatus: { code: 403, reason: 'Forbidden' },
      annotations: { 'authorization.k8s.io/decision': 'forbid' },
    });
  });

  it('records a request with an unknown token as 401, with no user', async () => {
    const rejected = await harness.kubectl('get', 'pods', '--token', 'not-a-token');
    expect(rejected.stderr).toContain('Unauthorized');
    const event = await eventually('the unauthorized request', (all) => all.find((e) => e.responseStatus.code === 401 && e.requestURI.startsWith('/api/v1/namespaces/default/pods')));
    expect(event.user).toEqual({});
    expect(event.annotations).toBeUndefined();
  });
});
