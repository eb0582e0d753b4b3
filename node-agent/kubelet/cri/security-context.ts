/**
 * A pod's security context in CRI's terms, as kubelet 1.32's kuberuntime builds it:
 * `determineEffectiveSecurityContext` (a container's `LinuxContainerSecurityContext`),
 * `generatePodSandboxLinuxConfig` (the sandbox's `LinuxSandboxSecurityContext`), and the
 * seccomp and AppArmor profiles (`getSeccompProfile`, `getAppArmorProfile`; kubelet's
 * `seccompDefault` off, so an unset seccomp profile is Unconfined). Pure. Not done:
 * `supplementalGroupsPolicy` (alpha), kubelet's extra groups of volumes, user namespaces.
 */
import { join, normalize } from 'node:path';
import type { AppArmorProfile, Container, Pod, SeccompProfile } from '../../../schemas/index.ts';
import { effectiveSecurityContext, isPrivileged, noNewPrivileges, podSupplementalGroups } from '../security-context.ts';
import type { LinuxContainerSecurityContext, LinuxSandboxSecurityContext, NamespaceOption, SecurityProfile } from './client.ts';

/** The namespaces of every pod's sandbox and containers (host namespaces are not supported). */
export const POD_NAMESPACES: NamespaceOption = { network: 'POD', pid: 'CONTAINER', ipc: 'POD' };

/** kubelet's default masked paths (`pkg/securitycontext`, kept in sync with moby). */
const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
/** kubelet's default read-only paths. */
const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** The user an image runs as, from CRI ImageStatus; kubelet's `getImageUser` treats an image without one as root. */
export const imageUser = (image: { readonly uid?: number; readonly username?: string } | undefined): { readonly uid?: number; readonly username?: string } =>
  image?.uid !== undefined ? { uid: image.uid } : image?.username !== undefined && image.username !== '' ? { username: image.username } : { uid: 0 };

/** A conversion's value, or kubelet's error (the container waits `CreateContainerConfigError`). */
export type Converted<T> = { readonly type: 'ok'; readonly value: T } | { readonly type: 'error'; readonly message: string };

/** kubelet's `fieldSeccompProfile`; a Localhost profile lies below `seccompRoot` (kubelet's `<root-dir>/seccomp`). */
function seccompProfile(profile: SeccompProfile | undefined, seccompRoot: string): Converted<SecurityProfile> {
  switch (profile?.type) {
    case undefined:
    case 'Unconfined':
      return { type: 'ok', value: { profileType: 'Unconfined' } };
    case 'RuntimeDefault':
      return { type: 'ok', value: { profileType: 'RuntimeDefault' } };
    case 'Localhost': {
      const local = profile.localhostProfile ?? '';
      if (local === '') return { type: 'error', message: 'localhostProfile must be set if seccompProfile type is Localhost.' };
      const relative = normalize(local);
      if (relative.startsWith('/') || relative.split('/').includes('..')) return { type: 'error', message: `localhostProfile "${local}" must be a descending path below the node's seccomp profile directory` };
      return { type: 'ok', value: { profileType: 'Localhost', localhostRef: join(seccompRoot, relative) } };
    }
    default:
      return { type: 'ok', value: { profileType: 'Unconfined' } };
  }
}

/** kubelet's `getAppArmorProfile`: the profile and its deprecated string form; none when neither the container nor the pod sets one. */
function appArmorProfile(profile: AppArmorProfile | undefined): Converted<{ apparmor: SecurityProfile; apparmorProfile: string } | undefined> {
  switch (profile?.type) {
    case undefined:
      return { type: 'ok', value: undefined };
    case 'RuntimeDefault':
      return { type: 'ok', value: { apparmor: { profileType: 'RuntimeDefault' }, apparmorProfile: 'runtime/default' } };
    case 'Unconfined':
      return { type: 'ok', value: { apparmor: { profileType: 'Unconfined' }, apparmorProfile: 'unconfined' } };
    case 'Localhost': {
      const name = profile.localhostProfile ?? '';
      if (name === '') return { type: 'error', message: 'invalid empty AppArmor localhost profile name' };
      return { type: 'ok', value: { apparmor: { profileType: 'Localhost', localhostRef: name }, apparmorProfile: `localhost/${name}` } };
    }
    default:
      return { type: 'error', message: `unknown AppArmor profile type "${profile?.type ?? ""}"` };
  }
}

/**
 * kubelet's `determineEffectiveSecurityContext`: the effective context (the container's
 * fields over the pod's) in CRI's shape; without a runAsUser the image's user (`image`, see
 * {@link imageUser}) by uid or name; the pod's fsGroup and supplementalGroups; no_new_privs
 * from allowPrivilegeEscalation; the default masked and read-only paths (none with
 * procMount Unmasked); seccomp and AppArmor.
 */
export function containerSecurityContext(
  pod: Pod,
  container: Container,
  image: { readonly uid?: number; readonly username?: string },
  options: { readonly seccompRoot: string },
): Converted<LinuxContainerSecurityContext> {
  const effective = effectiveSecurityContext(pod, container);
  const seccomp = seccompProfile(container.securityContext?.seccompProfile ?? pod.spec.securityContext?.seccompProfile ?? undefined, options.seccompRoot);
  if (seccomp.type === 'error') return seccomp;
  const apparmor = appArmorProfile(container.securityContext?.appArmorProfile ?? pod.spec.securityContext?.appArmorProfile ?? undefined);
  if (apparmor.type === 'error') return apparmor;
  const capabilities = effective.capabilities;
  const seLinux = effective.seLinuxOptions;
  const runAsUser = effective.runAsUser ?? image.uid;
  const groups = podSupplementalGroups(pod);
  const unmasked = effective.procMount === 'Unmasked';
  return {
    type: 'ok',
    value: {
      ...(capabilities == null ? {} : { capabilities: { addCapabilities: capabilities.add ?? [], dropCapabilities: capabilities.drop ?? [] } }),
      ...(seLinux == null ? {} : { selinuxOptions: { user: seLinux.user ?? '', role: seLinux.role ?? '', type: seLinux.type ?? '', level: seLinux.level ?? '' } }),
      ...(runAsUser === undefined ? {} : { runAsUser: { value: runAsUser } }),
      ...(effective.runAsUser == null && image.username !== undefined ? { runAsUsername: image.username } : {}),
      ...(effective.runAsGroup == null ? {} : { runAsGroup: { value: effective.runAsGroup } }),
      privileged: effective.privileged === true,
      readonlyRootfs: effective.readOnlyRootFilesystem === true,
      namespaceOptions: POD_NAMESPACES,
      ...(groups.length === 0 ? {} : { supplementalGroups: groups }),
      noNewPrivs: noNewPrivileges(effective),
      maskedPaths: unmasked ? [] : DEFAULT_MASKED_PATHS,
      readonlyPaths: unmasked ? [] : DEFAULT_READONLY_PATHS,
      seccomp: seccomp.value,
      ...(apparmor.value ?? {}),
    },
  };
}

/**
 * kubelet's sandbox security context: privileged when any container of the pod is (containerd
 * refuses a privileged container in an unprivileged sandbox), the pod's runAsUser,
 * runAsGroup (with a runAsUser only), fsGroup and supplementalGroups and SELinux options, seccomp RuntimeDefault for
 * the sandbox itself (kubelet forces it, so pods may use strict profiles).
 */
export function sandboxSecurityContext(pod: Pod): LinuxSandboxSecurityContext {
  const podSc = pod.spec.securityContext;
  const groups = podSupplementalGroups(pod);
  const seLinux = podSc?.seLinuxOptions;
  return {
    namespaceOptions: POD_NAMESPACES,
    privileged: [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].some(isPrivileged),
    seccomp: { profileType: 'RuntimeDefault' },
    ...(podSc?.runAsUser == null ? {} : { runAsUser: { value: podSc.runAsUser } }),
    // Only with a user: CRI says a runtime must refuse a group without one (containerd does).
    ...(podSc?.runAsGroup == null || podSc.runAsUser == null ? {} : { runAsGroup: { value: podSc.runAsGroup } }),
    ...(groups.length === 0 ? {} : { supplementalGroups: groups }),
    ...(seLinux == null ? {} : { selinuxOptions: { user: seLinux.user ?? '', role: seLinux.role ?? '', type: seLinux.type ?? '', level: seLinux.level ?? '' } }),
  };
}
