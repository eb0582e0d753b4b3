/**
 * `status.nodeInfo` as kubelet fills it (pkg/kubelet/nodestatus MachineInfo and
 * VersionInfo): the machine's ids (`/etc/machine-id`, the DMI product UUID, the kernel's
 * boot id), kernel version, OS image (PRETTY_NAME of /etc/os-release), the container
 * runtime as `<name>://<version>`, and Go's names for the OS and architecture (`amd64`,
 * not Node's `x64`). A file that cannot be read leaves its field empty, as kubelet's
 * cadvisor does.
 */
import { readFileSync } from 'node:fs';
import { arch, release } from 'node:os';
import type { NodeSystemInfo } from '../schemas/index.ts';

/** Node's `process.arch` → Go's GOARCH, which kube reports. */
const GOARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64' };

/** Go's name for this machine's architecture. */
export const goArch = (nodeArch: string = arch()): string => GOARCH[nodeArch] ?? nodeArch;

const firstLine = (path: string): string => {
  try {
    return (readFileSync(path, 'utf8').split('\n')[0] ?? '').trim();
  } catch {
    return '';
  }
};

/** PRETTY_NAME of an os-release file's text (kube: `Debian GNU/Linux 12 (bookworm)`). */
export const prettyName = (osRelease: string): string => {
  const line = osRelease.split('\n').find((entry) => entry.startsWith('PRETTY_NAME='));
  if (line === undefined) return 'Linux';
  const value = line.slice('PRETTY_NAME='.length).trim();
  return value.replace(/^(["'])(.*)\1$/, '$2');
};

const osImage = (): string => {
  for (const path of ['/etc/os-release', '/usr/lib/os-release']) {
    try {
      return prettyName(readFileSync(path, 'utf8'));
    } catch {
      // try the next one, as systemd's os-release(5) says
    }
  }
  return 'Linux';
};

/** The nodeInfo of a node run by this agent on this machine, with the container runtime's `name://version`. */
export const hostNodeInfo = (containerRuntimeVersion: string): NodeSystemInfo => ({
  machineID: firstLine('/etc/machine-id'),
  systemUUID: firstLine('/sys/class/dmi/id/product_uuid').toLowerCase(),
  bootID: firstLine('/proc/sys/kernel/random/boot_id'),
  kernelVersion: release(),
  osImage: osImage(),
  containerRuntimeVersion,
  kubeletVersion: 'v1.32.0-logplane',
  kubeProxyVersion: '',
  operatingSystem: 'linux',
  architecture: goArch(),
});
