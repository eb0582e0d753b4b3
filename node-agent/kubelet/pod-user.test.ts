import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KubeletConfigError } from './errors.ts';
import { type PodUser, defaultPodUser, parsePodUser, resolvePodUser } from './pod-user.ts';
import { tempDir } from './testing.ts';

const dir = tempDir();
const files = { passwd: join(dir, 'passwd'), group: join(dir, 'group') };
writeFileSync(files.passwd, 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\napp:x:1001:2001::/home/app:/bin/sh\n');
writeFileSync(files.group, 'root:x:0:\napps:x:3001:\nnogroup:x:65534:\n');

describe('pod user', () => {
  it.each<[string, PodUser]>([
    ['1234', { uid: 1234, gid: 1234 }],
    ['1001', { uid: 1001, gid: 2001 }],
    ['1234:5678', { uid: 1234, gid: 5678 }],
    ['app', { uid: 1001, gid: 2001 }],
    ['app:apps', { uid: 1001, gid: 3001 }],
    ['nobody:nogroup', { uid: 65534, gid: 65534 }],
    ['0', { uid: 0, gid: 0 }],
  ])('parses --pod-user %s', (text, user) => {
    expect(parsePodUser(text, files)).toEqual(user);
  });

  it.each(['', ':1', '1:', '1:2:3', 'ghost', 'app:ghosts', '4294967295'])('refuses --pod-user "%s"', (text) => {
    expect(() => parsePodUser(text, files)).toThrow(KubeletConfigError);
  });

  it('defaults to nobody for a root agent and to the agent itself otherwise', () => {
    expect(defaultPodUser({ uid: 0, gid: 0 }, files.passwd)).toEqual({ uid: 65534, gid: 65534 });
    expect(defaultPodUser({ uid: 0, gid: 0 }, join(dir, 'missing'))).toEqual({ uid: 65534, gid: 65534 });
    expect(defaultPodUser({ uid: 1001, gid: 2001 }, files.passwd)).toEqual({ uid: 1001, gid: 2001 });
  });

  it.each<[string, PodUser | undefined, PodUser, PodUser | 'refused']>([
    ['root agent, no user: nobody', undefined, { uid: 0, gid: 0 }, { uid: 65534, gid: 65534 }],
    ['root agent, any user', { uid: 1234, gid: 99 }, { uid: 0, gid: 0 }, { uid: 1234, gid: 99 }],
    ['root agent, root asked for', { uid: 0, gid: 0 }, { uid: 0, gid: 0 }, { uid: 0, gid: 0 }],
    ['non-root agent, no user: itself', undefined, { uid: 1001, gid: 2001 }, { uid: 1001, gid: 2001 }],
    ['non-root agent, itself', { uid: 1001, gid: 2001 }, { uid: 1001, gid: 2001 }, { uid: 1001, gid: 2001 }],
    ['non-root agent, another user', { uid: 1002, gid: 2001 }, { uid: 1001, gid: 2001 }, 'refused'],
    ['non-root agent, another group', { uid: 1001, gid: 0 }, { uid: 1001, gid: 2001 }, 'refused'],
    ['a negative uid', { uid: -1, gid: 0 }, { uid: 0, gid: 0 }, 'refused'],
  ])('resolves: %s', (_, configured, agent, expected) => {
    if (expected === 'refused') expect(() => resolvePodUser(configured, agent)).toThrow(KubeletConfigError);
    else expect(resolvePodUser(configured, agent)).toEqual(expected);
  });
});
