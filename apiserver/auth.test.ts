import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { actorOf, authenticate, formatTokenFile, parseTokenFile } from './auth.ts';
import { ApiError } from './errors.ts';

const request = (authorization?: string) => ({ headers: authorization ? { authorization } : {} }) as IncomingMessage;

describe('token file', () => {
  it('parses kube-apiserver token files with quoted group lists and comments', () => {
    const tokens = parseTokenFile('# tokens\nt1,alice,1001,"admins,devs"\n\nt2,bob,1002\nt3,carol\n');
    expect(tokens.users.get('t1')).toEqual({ name: 'alice', uid: '1001', groups: ['admins', 'devs'] });
    expect(tokens.users.get('t2')).toEqual({ name: 'bob', uid: '1002', groups: [] });
    expect(tokens.users.get('t3')).toEqual({ name: 'carol', uid: 'carol', groups: [] });
  });

  it('names the bad line', () => {
    expect(() => parseTokenFile('ok,alice\nonly-token\n')).toThrow(/line 2/);
  });

  it('round-trips through formatTokenFile', () => {
    const user = { name: 'alice', uid: '7', groups: ['a', 'b'] };
    expect(parseTokenFile(formatTokenFile([{ token: 'tok', user }])).users.get('tok')).toEqual(user);
  });
});

describe('authenticate', () => {
  const tokens = parseTokenFile('secret,alice,1,"g"');
  it('accepts a known bearer token', () => {
    expect(authenticate(tokens, request('Bearer secret')).name).toBe('alice');
  });
  it.each([undefined, 'Bearer wrong', 'Basic c2VjcmV0', 'Bearer'])('401s %s', (header) => {
    try {
      authenticate(tokens, request(header));
      expect.unreachable();
    } catch (error) {
      expect((error as ApiError).status).toMatchObject({ code: 401, reason: 'Unauthorized' });
    }
  });
});

describe('actorOf', () => {
  it.each([
    ['alice', { type: 'user', name: 'alice' }],
    ['system:controller:replicaset-controller', { type: 'controller', name: 'replicaset-controller' }],
    ['system:node:node-1', { type: 'node', name: 'node-1' }],
    ['system:serviceaccount:kube-system:x', { type: 'user', name: 'system:serviceaccount:kube-system:x' }],
  ])('%s', (name, actor) => {
    expect(actorOf({ name, uid: '1', groups: [] })).toEqual(actor);
  });
});
