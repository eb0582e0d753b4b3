import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { runtimeSettings, withRuntimeOptions, type RuntimeFlags } from './runtime-flags.ts';

/** The settings `logplane up`/`agent` would hand the agent for `args`. */
const settingsOf = (...args: string[]) => {
  const command = withRuntimeOptions(new Command('up').exitOverride().configureOutput({ writeErr: () => {} }));
  command.parse(args, { from: 'user' });
  return runtimeSettings(command.opts<RuntimeFlags>());
};

describe('the runtime flags', () => {
  it.each<[string[], ReturnType<typeof runtimeSettings>]>([
    [[], { runtime: 'process' }],
    [['--pod-user', '1234:5678'], { runtime: 'process', podUser: { uid: 1234, gid: 5678 } }],
    [['--runtime', 'sim'], { runtime: 'sim' }],
    [['--runtime', 'cri'], { runtime: 'cri', cri: { endpoint: 'unix:///run/containerd/containerd.sock' } }],
    [['--runtime', 'cri', '--cri-endpoint', '/tmp/x/containerd.sock', '--cri-cgroup-parent', '/pods'], { runtime: 'cri', cri: { endpoint: '/tmp/x/containerd.sock', cgroupParent: '/pods' } }],
    [['--cri-endpoint', '/tmp/x/containerd.sock'], { runtime: 'process' }],
    [['--allow-privileged', 'true'], { runtime: 'process' }],
    [['--allow-privileged=false'], { runtime: 'process', allowPrivileged: false }],
    [['--runtime', 'cri', '--allow-privileged', 'false'], { runtime: 'cri', cri: { endpoint: 'unix:///run/containerd/containerd.sock' }, allowPrivileged: false }],
  ])('%j', (args, settings) => {
    expect(settingsOf(...args)).toEqual(settings);
  });

  it.each([
    [['--runtime', 'docker'], /argument 'docker' is invalid/],
    [['--pod-user', 'no-such-user'], /pod user "no-such-user" is not in \/etc\/passwd/],
    [['--pod-user', '1:2:3'], /is not UID, UID:GID, NAME or NAME:GROUP/],
    [['--runtime', 'cri', '--pod-user', '1234'], /--pod-user applies to the process runtime only/],
    [['--allow-privileged', 'no'], /"no" is not true or false/],
  ])('refuses %j', (args, message) => {
    expect(() => settingsOf(...args)).toThrow(message);
  });
});
