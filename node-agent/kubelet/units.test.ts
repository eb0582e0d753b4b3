import { describe, expect, it } from 'vitest';
import { containerCommand, containerEnv, expandVariables } from './container-command.ts';
import { KubeletConfigError, PodIPExhaustedError } from './errors.ts';
import { resolveImage } from './images.ts';
import { allocatePodIP, parsePodCidr } from './pod-cidr.ts';
import { createTimerQueue } from './timer-queue.ts';

const identity = { namespace: 'ns', name: 'web-1', uid: 'u1', podIP: '127.100.3.4', hostIP: '127.0.0.1', node: 'node-a' };

describe('pod CIDR', () => {
  it.each(['127.100.0.0/16', '127.100.7.0/24', '127.0.0.0/8', '127.1.2.3/30'])('accepts %s', (cidr) => {
    expect(parsePodCidr(cidr).text).toBe(cidr);
  });

  it.each(['10.0.0.0/16', '127.100.0.0/31', '127.100.0.0', '127.300.0.0/16', 'x/16'])('rejects %s', (cidr) => {
    expect(() => parsePodCidr(cidr)).toThrow(KubeletConfigError);
  });

  it('allocates deterministically from the uid, skips taken addresses and the network/broadcast ones', () => {
    const cidr = parsePodCidr('127.100.0.0/16');
    const ip = allocatePodIP(cidr, 'uid-1', new Set());
    expect(allocatePodIP(cidr, 'uid-1', new Set())).toBe(ip);
    expect(allocatePodIP(cidr, 'uid-1', new Set([ip]))).not.toBe(ip);
    const tiny = parsePodCidr('127.5.5.4/30');
    const both = new Set<string>();
    both.add(allocatePodIP(tiny, 'a', both));
    both.add(allocatePodIP(tiny, 'b', both));
    expect([...both].sort()).toEqual(['127.5.5.5', '127.5.5.6']);
    expect(() => allocatePodIP(tiny, 'c', both)).toThrow(PodIPExhaustedError);
  });
});

describe('container command and environment', () => {
  it.each([
    ['$(A)-$(B)', 'x-$(B)'],
    ['$$(A)', '$(A)'],
    ['cost $$5', 'cost $5'],
    ['plain', 'plain'],
  ])('expands %s to %s', (text, expected) => {
    expect(expandVariables(text, { A: 'x' })).toBe(expected);
  });

  it('gives the pod identity, then spec env expanded against what precedes it', () => {
    const env = containerEnv({ name: 'c', env: [{ name: 'URL', value: 'http://$(POD_IP):$(PORT)' }, { name: 'PORT', value: '9000' }] }, identity, { PATH: '/bin', SECRET: 'no' });
    expect(env).toMatchObject({ PATH: '/bin', POD_NAME: 'web-1', POD_NAMESPACE: 'ns', POD_IP: '127.100.3.4', NODE_NAME: 'node-a', HOSTNAME: 'web-1', URL: 'http://127.100.3.4:$(PORT)', PORT: '9000' });
    expect(env.SECRET).toBeUndefined();
  });

  it.each([
    { container: { name: 'c', image: 'logplane/echo' }, file: process.execPath, args: [resolveImageFile('logplane/echo')] },
    { container: { name: 'c', image: 'docker.io/logplane/crasher:1.0', args: ['--exit-code', '$(CODE)'] }, file: process.execPath, args: [resolveImageFile('logplane/crasher'), '--exit-code', '4'] },
    { container: { name: 'c', image: 'logplane/sleeper:1' }, file: '/bin/sh', args: [resolveImageFile('logplane/sleeper')] },
    { container: { name: 'c', image: 'busybox', command: ['sh', '-c'], args: ['echo $(CODE)'] }, file: 'sh', args: ['-c', 'echo 4'] },
  ])('runs $container.image', ({ container, file, args }) => {
    expect(containerCommand(container, { CODE: '4' })).toMatchObject({ type: 'run', file, args });
  });

  it.each([
    { container: { name: 'c', image: 'nginx' }, reason: 'ErrImageNeverPull', message: /^image nginx is not a built-in logplane image and the container has no command/ },
    { container: { name: 'c' }, reason: 'InvalidImageName', message: /neither an image nor a command/ },
  ])('refuses $container.image', ({ container, reason, message }) => {
    const command = containerCommand(container, {});
    expect(command).toMatchObject({ type: 'refused', reason });
    expect(command.type === 'refused' && command.message).toMatch(message);
  });
});

function resolveImageFile(image: string): string {
  const resolved = resolveImage(image);
  if (resolved.type !== 'builtin') throw new Error(`${image} is not built in`);
  return resolved.file;
}

describe('timer queue', () => {
  it('fires callbacks in deadline order behind one timer, and not cancelled ones', async () => {
    const queue = createTimerQueue();
    const fired: string[] = [];
    const done = new Promise<void>((resolve) => queue.schedule(60, () => resolve()));
    queue.schedule(30, () => fired.push('30'));
    const cancel = queue.schedule(20, () => fired.push('20'));
    queue.schedule(10, () => fired.push('10'));
    queue.schedule(30, () => fired.push('30b'));
    cancel();
    expect(queue.size).toBe(4);
    await done;
    expect(fired).toEqual(['10', '30', '30b']);
    expect(queue.size).toBe(0);
  });
});
