/**
 * The audit policy (kube's rule matching and its file format) and the audit log's file:
 * one audit.k8s.io/v1 Event per recorded request, rotated at its size with a bounded number
 * of old files.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Attributes } from '../authorization/attributes.ts';
import { createAuditLog, type AuditedRequest } from './log.ts';
import { auditLevelOf, parseAuditPolicy } from './policy.ts';

const POLICY = parseAuditPolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["secrets", "pods/log"]
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: Request
  namespaces: ["kube-system"]
- level: Metadata
  userGroups: ["system:authenticated"]
`);

const user = (name: string, groups: string[] = ['system:authenticated']) => ({ name, groups });
const resource = (verb: string, apiGroup: string, resourceName: string, subresource = '', namespace = 'default', who = user('jane')): Attributes => ({
  type: 'resource',
  user: who,
  verb,
  apiGroup,
  apiVersion: 'v1',
  resource: resourceName,
  subresource,
  namespace,
  name: 'x',
});

describe('audit policy', () => {
  it.each([
    ['kube-proxy watching is not recorded', resource('watch', '', 'endpoints', '', 'default', user('system:kube-proxy')), 'None'],
    ['a secret is recorded with its bodies', resource('get', '', 'secrets'), 'RequestResponse'],
    ['a pod log (a subresource named in the rule)', resource('get', '', 'pods', 'log'), 'RequestResponse'],
    ['a pod itself falls through to the namespace and group rules', resource('get', '', 'pods'), 'Metadata'],
    ['anything in kube-system', resource('delete', 'apps', 'deployments', '', 'kube-system'), 'Request'],
    ['a non-resource URL by prefix', { type: 'nonResource', user: user('jane'), verb: 'get', path: '/healthz/ping' } as Attributes, 'None'],
    ['a user of no matching group', resource('get', '', 'pods', '', 'default', user('anon', ['system:unauthenticated'])), 'None'],
  ])('%s', (_, attributes, level) => {
    expect(auditLevelOf(POLICY, attributes)).toBe(level);
  });

  it.each([
    ['not a Policy', 'apiVersion: v1\nkind: ConfigMap\n', 'expected kind Policy of apiVersion audit.k8s.io/v1'],
    ['no rules', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n', 'rules: at least one rule is required'],
    ['a bad level', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n', 'rules[0].level: must be one of None, Metadata, Request, RequestResponse'],
    ['resources and URLs in one rule', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  resources: [{group: ""}]\n  nonResourceURLs: ["/x"]\n', 'rules[0]: rules may not apply to both resources and nonResourceURLs'],
    ['users not a list', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  users: bob\n', 'rules[0].users: expected a list of strings'],
  ])('refuses a policy with %s, naming it', (_, text, message) => {
    expect(() => parseAuditPolicy(text)).toThrow(message);
  });
});

describe('audit log file', () => {
  const request = (n: number): AuditedRequest => ({
    auditID: `id-${n}`,
    received: new Date(Date.UTC(2026, 11, 5, 12, 0, 0, 123)),
    requestURI: `/api/v1/namespaces/default/secrets/s${n}`,
    sourceIP: '127.0.0.1',
    userAgent: 'kubectl/v1.32.0',
    user: { name: 'jane', uid: '', groups: ['system:authenticated'], impersonatedBy: { name: 'admin', uid: 'admin', groups: ['system:masters'] } },
    attributes: resource('get', '', 'secrets'),
    code: 403,
    status: { status: 'Failure', reason: 'Forbidden', message: 'secrets "x" is forbidden' },
    denial: { reason: '' },
  });

  it('writes one Event per recorded request, with the real and the impersonated user and the decision', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    try {
      const log = createAuditLog({ path: join(dir, 'audit', 'audit.log'), policy: POLICY, logger: pino({ level: 'silent' }) });
      log.record(request(1));
      log.record({ ...request(2), attributes: { type: 'nonResource', user: user('jane'), verb: 'get', path: '/version' } });
      await log.close();
      const lines = readFileSync(join(dir, 'audit', 'audit.log'), 'utf8').trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toEqual({
        kind: 'Event',
        apiVersion: 'audit.k8s.io/v1',
        level: 'RequestResponse',
        auditID: 'id-1',
        stage: 'ResponseComplete',
        requestURI: '/api/v1/namespaces/default/secrets/s1',
        verb: 'get',
        user: { username: 'admin', uid: 'admin', groups: ['system:masters'] },
        impersonatedUser: { username: 'jane', groups: ['system:authenticated'] },
        sourceIPs: ['127.0.0.1'],
        userAgent: 'kubectl/v1.32.0',
        objectRef: { resource: 'secrets', namespace: 'default', name: 'x', apiVersion: 'v1' },
        responseStatus: { metadata: {}, status: 'Failure', reason: 'Forbidden', message: 'secrets "x" is forbidden', code: 403 },
        requestReceivedTimestamp: '2026-12-05T12:00:00.123000Z',
        stageTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
        annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': '' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rotates at its size and keeps only the newest old files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    try {
      const log = createAuditLog({ path: join(dir, 'audit.log'), policy: POLICY, maxSizeMB: 1, maxBackups: 2, logger: pino({ level: 'silent' }) });
      // About 800 bytes an Event: 4,000 of them are over 3 MB, three rotations' worth.
      for (let n = 0; n < 4000; n++) log.record(request(n));
      await log.close();
      const files = readdirSync(dir).filter((file) => /^audit\.log(\.\d+)?$/.test(file));
      expect(files).toContain('audit.log');
      expect(files.length).toBeLessThanOrEqual(3);
      const total = files.reduce((sum, file) => sum + readFileSync(join(dir, file)).length, 0);
      expect(total).toBeLessThan(3.5 * 1024 * 1024);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
