import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expandSubPathExpr, mountPropagation, subPathOnHost } from './mount-paths.ts';

const names = { mount: 'work', container: 'app' };

describe('subPathOnHost (kubelet makeMounts and subpather)', () => {
  let root: string;
  let volume: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'subpath-'));
    volume = join(root, 'volume');
    mkdirSync(volume);
    chmodSync(volume, 0o777);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates a missing subPath as directories with the mode of the volume root, inside the volume', () => {
    expect(subPathOnHost(volume, 'a/b', names)).toEqual({ type: 'ok', value: join(volume, 'a/b') });
    expect(statSync(join(volume, 'a/b')).mode & 0o7777).toBe(0o777);
  });

  it('keeps the path below the volume for a link that stays inside (a configMap key -> ..data/key)', () => {
    mkdirSync(join(volume, '..data'));
    writeFileSync(join(volume, '..data', 'key'), 'v');
    symlinkSync('..data/key', join(volume, 'key'));
    expect(subPathOnHost(volume, 'key', names)).toEqual({ type: 'ok', value: join(volume, 'key') });
  });

  it.each([
    ['a symlink to a host directory', 'escape', () => symlinkSync(root, join(volume, 'escape'))],
    ['a path through such a symlink (nothing is created outside)', 'escape/made', () => symlinkSync(root, join(volume, 'escape'))],
    ['a dangling symlink', 'dangling', () => symlinkSync('/nonexistent-target', join(volume, 'dangling'))],
  ])('refuses %s', (_what, subPath, prepare) => {
    prepare();
    expect(subPathOnHost(volume, subPath, names)).toEqual({ type: 'error', message: 'failed to prepare subPath for volumeMount "work" of container "app"' });
    expect(() => statSync(join(root, 'made'))).toThrow();
  });

  it.each([
    ['/etc', 'error SubPath `/etc` must not be an absolute path'],
    ['a/../../x', "unable to provision SubPath `a/../../x`: must not contain '..'"],
  ])('refuses %s', (subPath, message) => {
    expect(subPathOnHost(volume, subPath, names)).toEqual({ type: 'error', message });
  });
});

describe('expandSubPathExpr (ExpandContainerVolumeMounts)', () => {
  it.each([
    ['$(POD_NAME)/logs', new Map([['POD_NAME', 'web-1']]), { type: 'ok', value: 'web-1/logs' }],
    ['$(A)-$(B)', new Map([['A', ''], ['C', 'c']]), { type: 'error', message: 'missing value for A, B' }],
    ['plain', new Map(), { type: 'ok', value: 'plain' }],
  ])('%s', (expression, env, expected) => {
    expect(expandSubPathExpr(expression, env)).toEqual(expected);
  });
});

describe('mountPropagation (translateMountPropagation)', () => {
  it.each([
    [undefined, { type: 'ok', value: 'None' }],
    ['HostToContainer', { type: 'ok', value: 'HostToContainer' }],
    ['Bidirectional', { type: 'ok', value: 'Bidirectional' }],
    ['Sideways', { type: 'error', message: 'invalid MountPropagation mode: "Sideways"' }],
  ])('%s', (mode, expected) => {
    expect(mountPropagation(mode)).toEqual(expected);
  });
});
