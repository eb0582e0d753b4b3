import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import { describe, expect, it } from 'vitest';
import { goArch, hostNodeInfo, prettyName } from './node-info.ts';

describe('nodeInfo as kubelet fills it', () => {
  it('reads this machine', () => {
    const info = hostNodeInfo('containerd://1.6.20');
    expect(info.machineID).toBe(readFileSync('/etc/machine-id', 'utf8').trim());
    expect(info.bootID).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(info.bootID).toMatch(/^[0-9a-f-]{36}$/);
    expect(info.kernelVersion).toBe(release());
    expect(info.osImage).toBe(prettyName(readFileSync('/etc/os-release', 'utf8')));
    expect(info.osImage).not.toMatch(/^"|PRETTY_NAME/);
    expect(info).toMatchObject({ containerRuntimeVersion: 'containerd://1.6.20', operatingSystem: 'linux', kubeletVersion: 'v1.32.0-logplane' });
    expect(info.architecture).toBe(goArch());
  });

  it.each([
    ['x64', 'amd64'],
    ['arm64', 'arm64'],
    ['ia32', '386'],
    ['mips', 'mips'],
  ])("names Node's %s as Go does: %s", (node, go) => {
    expect(goArch(node)).toBe(go);
  });

  it.each([
    ['PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"', 'Debian GNU/Linux 12 (bookworm)'],
    ["NAME=x\nPRETTY_NAME='Ubuntu 24.04 LTS'", 'Ubuntu 24.04 LTS'],
    ['PRETTY_NAME=Alpine', 'Alpine'],
    ['NAME=none', 'Linux'],
  ])('reads PRETTY_NAME of %j', (text, name) => {
    expect(prettyName(text)).toBe(name);
  });
});
