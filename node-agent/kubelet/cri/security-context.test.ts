import { describe, expect, it } from 'vitest';
import type { Container, Pod, PodSecurityContext, SecurityContext } from '../../../schemas/index.ts';
import { containerSecurityContext, imageUser, sandboxSecurityContext } from './security-context.ts';

const pod = (podSc: PodSecurityContext | undefined, containerSc: SecurityContext | undefined, more: Container[] = []): { pod: Pod; container: Container } => {
  const container: Container = { name: 'app', image: 'busybox', ...(containerSc === undefined ? {} : { securityContext: containerSc }) };
  return { pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { ...(podSc === undefined ? {} : { securityContext: podSc }), containers: [container, ...more] } }, container };
};
const options = { seccompRoot: '/data/seccomp' };

describe('CRI security context (kubelet determineEffectiveSecurityContext)', () => {
  it.each<[string, PodSecurityContext | undefined, SecurityContext | undefined, { uid?: number; username?: string }, Record<string, unknown>]>([
    ['nothing set: the image user, Unconfined seccomp, default masks', undefined, undefined, { uid: 0 }, { runAsUser: { value: 0 }, privileged: false, readonlyRootfs: false, noNewPrivs: false, seccomp: { profileType: 'Unconfined' }, maskedPaths: expect.arrayContaining(['/proc/kcore']), readonlyPaths: expect.arrayContaining(['/proc/sys']) }],
    ['an image user by name, no runAsUser', undefined, undefined, { username: 'app' }, { runAsUsername: 'app' }],
    ['runAsUser over the image user, no username', { runAsUser: 5 }, undefined, { username: 'app' }, { runAsUser: { value: 5 } }],
    ['the container runAsUser over the pod, the pod runAsGroup', { runAsUser: 5, runAsGroup: 6 }, { runAsUser: 7 }, { uid: 0 }, { runAsUser: { value: 7 }, runAsGroup: { value: 6 } }],
    ['fsGroup then supplementalGroups', { fsGroup: 10, supplementalGroups: [11, 12] }, undefined, { uid: 0 }, { supplementalGroups: [10, 11, 12] }],
    ['privileged, read-only root, capabilities, no_new_privs', undefined, { privileged: true, readOnlyRootFilesystem: true, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, allowPrivilegeEscalation: false }, { uid: 0 }, { privileged: true, readonlyRootfs: true, capabilities: { addCapabilities: ['NET_ADMIN'], dropCapabilities: ['ALL'] }, noNewPrivs: true }],
    ['procMount Unmasked: no masked or read-only paths', undefined, { procMount: 'Unmasked' }, { uid: 0 }, { maskedPaths: [], readonlyPaths: [] }],
    ['the pod seccomp profile, the container AppArmor profile', { seccompProfile: { type: 'RuntimeDefault' } }, { appArmorProfile: { type: 'Localhost', localhostProfile: 'tight' } }, { uid: 0 }, { seccomp: { profileType: 'RuntimeDefault' }, apparmor: { profileType: 'Localhost', localhostRef: 'tight' }, apparmorProfile: 'localhost/tight' }],
    ['the container seccomp profile over the pod, Localhost below the seccomp root', { seccompProfile: { type: 'RuntimeDefault' } }, { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } }, { uid: 0 }, { seccomp: { profileType: 'Localhost', localhostRef: '/data/seccomp/profiles/audit.json' } }],
  ])('%s', (_name, podSc, containerSc, image, expected) => {
    const made = pod(podSc, containerSc);
    const converted = containerSecurityContext(made.pod, made.container, image, options);
    expect(converted).toEqual({ type: 'ok', value: expect.objectContaining(expected) });
    if (image.username !== undefined && podSc?.runAsUser !== undefined) expect(converted.type === 'ok' && converted.value.runAsUsername).toBeUndefined();
  });

  it.each<[SecurityContext, RegExp]>([
    [{ seccompProfile: { type: 'Localhost' } }, /^localhostProfile must be set if seccompProfile type is Localhost\.$/],
    [{ seccompProfile: { type: 'Localhost', localhostProfile: '../../etc/shadow' } }, /must be a descending path/],
    [{ appArmorProfile: { type: 'Localhost' } }, /empty AppArmor localhost profile/],
  ])('refuses %j', (containerSc, message) => {
    const made = pod(undefined, containerSc);
    expect(containerSecurityContext(made.pod, made.container, { uid: 0 }, options)).toEqual({ type: 'error', message: expect.stringMatching(message) });
  });

  it('treats an image without a user as root, as kubelet getImageUser', () => {
    expect(imageUser(undefined)).toEqual({ uid: 0 });
    expect(imageUser({ username: '' })).toEqual({ uid: 0 });
    expect(imageUser({ uid: 1000, username: '' })).toEqual({ uid: 1000 });
    expect(imageUser({ username: 'app' })).toEqual({ username: 'app' });
  });

  it('makes the sandbox privileged when any container is, with the pod user and groups and RuntimeDefault seccomp', () => {
    const made = pod({ runAsUser: 5, runAsGroup: 6, fsGroup: 7, supplementalGroups: [8] }, undefined, [{ name: 'priv', securityContext: { privileged: true } }]);
    expect(sandboxSecurityContext(made.pod)).toEqual({
      namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
      privileged: true,
      seccomp: { profileType: 'RuntimeDefault' },
      runAsUser: { value: 5 },
      runAsGroup: { value: 6 },
      supplementalGroups: [7, 8],
    });
    // A group without a user is left out (containerd refuses it).
    expect(sandboxSecurityContext(pod({ runAsGroup: 6 }, undefined).pod)).toEqual({ namespaceOptions: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }, privileged: false, seccomp: { profileType: 'RuntimeDefault' } });
  });
});
