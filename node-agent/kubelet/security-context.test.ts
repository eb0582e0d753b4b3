import { describe, expect, it } from 'vitest';
import type { Container, Pod, PodSecurityContext, SecurityContext } from '../../schemas/index.ts';
import { type ProcessUser, type ProcessUserContext, launchAs, processUserFor } from './process-user.ts';
import { effectiveSecurityContext, noNewPrivileges, podSupplementalGroups, privilegedRefusal, verifyRunAsNonRoot } from './security-context.ts';

const UID = '6f2a9c1e-0000-4000-8000-000000000001';
const podWith = (podSc: PodSecurityContext | undefined, containerSc: SecurityContext | undefined, extra: Partial<Pod['spec']> = {}): { pod: Pod; container: Container } => {
  const container: Container = { name: 'app', image: 'busybox', ...(containerSc === undefined ? {} : { securityContext: containerSc }) };
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop', uid: UID },
    spec: { ...(podSc === undefined ? {} : { securityContext: podSc }), ...extra, containers: [container, ...(extra.containers ?? [])] },
  };
  return { pod, container };
};

describe('effective security context (kubelet DetermineEffectiveSecurityContext)', () => {
  it.each<[string, PodSecurityContext | undefined, SecurityContext | undefined, SecurityContext]>([
    ['neither set', undefined, undefined, {}],
    ['pod only: its runAsUser, runAsGroup, runAsNonRoot, seLinuxOptions', { runAsUser: 1000, runAsGroup: 2000, runAsNonRoot: true, seLinuxOptions: { level: 's0' } }, undefined, { runAsUser: 1000, runAsGroup: 2000, runAsNonRoot: true, seLinuxOptions: { level: 's0' } }],
    ['pod only: fsGroup, supplementalGroups and seccompProfile are not container fields', { fsGroup: 3000, supplementalGroups: [4000], seccompProfile: { type: 'RuntimeDefault' } }, undefined, {}],
    ['container only', undefined, { runAsUser: 5, privileged: true, readOnlyRootFilesystem: true }, { runAsUser: 5, privileged: true, readOnlyRootFilesystem: true }],
    ['the container overrides field by field', { runAsUser: 1000, runAsGroup: 2000, runAsNonRoot: true }, { runAsUser: 0, runAsNonRoot: false }, { runAsUser: 0, runAsGroup: 2000, runAsNonRoot: false }],
    ['a container field set to null does not override', { runAsUser: 1000 }, { runAsUser: null as unknown as number, allowPrivilegeEscalation: false }, { runAsUser: 1000, allowPrivilegeEscalation: false }],
    ['container-only fields', {}, { capabilities: { drop: ['ALL'] }, allowPrivilegeEscalation: false, procMount: 'Default' }, { capabilities: { drop: ['ALL'] }, allowPrivilegeEscalation: false, procMount: 'Default' }],
  ])('%s', (_name, podSc, containerSc, expected) => {
    const { pod, container } = podWith(podSc, containerSc);
    expect(effectiveSecurityContext(pod, container)).toEqual(expected);
  });
});

describe('verifyRunAsNonRoot (kubelet 1.32 messages)', () => {
  const where = `(pod: "web_shop(${UID})", container: app)`;
  it.each<[string, PodSecurityContext | undefined, SecurityContext | undefined, { uid?: number; username?: string }, string | undefined]>([
    ['no security context, image root', undefined, undefined, { uid: 0 }, undefined],
    ['runAsNonRoot unset, runAsUser 0', undefined, { runAsUser: 0 }, { uid: 0 }, undefined],
    ['runAsNonRoot false, image root', undefined, { runAsNonRoot: false }, { uid: 0 }, undefined],
    ['runAsNonRoot and runAsUser 0', undefined, { runAsNonRoot: true, runAsUser: 0 }, { uid: 1000 }, `container's runAsUser breaks non-root policy ${where}`],
    ['pod runAsNonRoot, container runAsUser 0', { runAsNonRoot: true }, { runAsUser: 0 }, { uid: 1000 }, `container's runAsUser breaks non-root policy ${where}`],
    ['runAsNonRoot and image root', undefined, { runAsNonRoot: true }, { uid: 0 }, `container has runAsNonRoot and image will run as root ${where}`],
    ['runAsNonRoot, image root, a non-root runAsUser', { runAsNonRoot: true, runAsUser: 1000 }, undefined, { uid: 0 }, undefined],
    ['runAsNonRoot and a non-numeric image user', undefined, { runAsNonRoot: true }, { username: 'app' }, `container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root ${where}`],
    ['runAsNonRoot, a non-numeric image user, a runAsUser', undefined, { runAsNonRoot: true, runAsUser: 7 }, { username: 'app' }, undefined],
    ['runAsNonRoot and a non-root image', undefined, { runAsNonRoot: true }, { uid: 65534 }, undefined],
    ['runAsNonRoot and no image user at all', undefined, { runAsNonRoot: true }, {}, undefined],
    [
      'runAsNonRoot and an image uid beyond int32',
      undefined,
      { runAsNonRoot: true },
      { uid: 2 ** 31 },
      `container has runAsNonRoot and image has an invalid user id (2147483648). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive ${where}`,
    ],
    ['container runAsNonRoot false overrides the pod', { runAsNonRoot: true }, { runAsNonRoot: false }, { uid: 0 }, undefined],
  ])('%s', (_name, podSc, containerSc, image, expected) => {
    const { pod, container } = podWith(podSc, containerSc);
    expect(verifyRunAsNonRoot(pod, container, image)).toBe(expected);
  });
});

describe('privileged pods (kubelet canRunPod)', () => {
  it('refuses a privileged container or init container only when the node does not allow them', () => {
    const { pod } = podWith(undefined, { privileged: true });
    expect(privilegedRefusal(pod, true)).toBeUndefined();
    expect(privilegedRefusal(pod, false)).toBe(`pod with UID "${UID}" specified privileged container, but is disallowed`);
    const init = podWith(undefined, { privileged: false }, { initContainers: [{ name: 'init', securityContext: { privileged: true } }] }).pod;
    expect(privilegedRefusal(init, false)).toBe(`pod with UID "${UID}" specified privileged init container, but is disallowed`);
    expect(privilegedRefusal(podWith(undefined, { privileged: false }).pod, false)).toBeUndefined();
  });
});

describe('groups and no_new_privs', () => {
  it('puts fsGroup before supplementalGroups, as kubelet', () => {
    expect(podSupplementalGroups(podWith({ supplementalGroups: [5, 6], fsGroup: 4 }, undefined).pod)).toEqual([4, 5, 6]);
    expect(podSupplementalGroups(podWith(undefined, undefined).pod)).toEqual([]);
  });

  it.each<[boolean | undefined, boolean]>([
    [undefined, false],
    [true, false],
    [false, true],
  ])('allowPrivilegeEscalation %s → no_new_privs %s', (allow, expected) => {
    expect(noNewPrivileges(allow === undefined ? {} : { allowPrivilegeEscalation: allow })).toBe(expected);
  });
});

describe('process runtime user', () => {
  const passwd = '/dev/null';
  const root: ProcessUserContext = { podUser: { uid: 65534, gid: 65534 }, agent: { uid: 0, gid: 0 }, allowPrivileged: true, passwd };
  const user = (uid: number, gid: number, groups: number[] = [], noNewPrivs = false): ProcessUser => ({ uid, gid, groups, noNewPrivs });

  it.each<[string, ProcessUserContext, PodSecurityContext | undefined, SecurityContext | undefined, ReturnType<typeof processUserFor>]>([
    ['nothing asked: the pod user', root, undefined, undefined, { type: 'run', user: user(65534, 65534) }],
    ['pod runAsUser, no group: the uid as gid (not in passwd)', root, { runAsUser: 65532 }, undefined, { type: 'run', user: user(65532, 65532) }],
    ['container runAsUser and runAsGroup over the pod', root, { runAsUser: 1000, runAsGroup: 1000 }, { runAsUser: 2000, runAsGroup: 3000 }, { type: 'run', user: user(2000, 3000) }],
    ['runAsGroup alone keeps the pod user', root, { runAsGroup: 4000 }, undefined, { type: 'run', user: user(65534, 4000) }],
    ['fsGroup and supplementalGroups, deduplicated', root, { fsGroup: 5, supplementalGroups: [6, 5] }, undefined, { type: 'run', user: user(65534, 65534, [5, 6]) }],
    ['allowPrivilegeEscalation false', root, undefined, { allowPrivilegeEscalation: false }, { type: 'run', user: user(65534, 65534, [], true) }],
    ['runAsUser 0 where privileged containers may run', root, undefined, { runAsUser: 0 }, { type: 'run', user: user(0, 0) }],
    [
      'runAsNonRoot with runAsUser 0',
      root,
      { runAsNonRoot: true },
      { runAsUser: 0 },
      { type: 'refused', reason: 'CreateContainerConfigError', message: `container's runAsUser breaks non-root policy (pod: "web_shop(${UID})", container: app)` },
    ],
    [
      'runAsNonRoot with a root pod user',
      { ...root, podUser: { uid: 0, gid: 0 } },
      { runAsNonRoot: true },
      undefined,
      { type: 'refused', reason: 'CreateContainerConfigError', message: `container has runAsNonRoot and image will run as root (pod: "web_shop(${UID})", container: app)` },
    ],
    ['a non-root agent running its own uid', { ...root, podUser: { uid: 1000, gid: 1000 }, agent: { uid: 1000, gid: 1000 } }, { runAsUser: 1000 }, undefined, { type: 'run', user: user(1000, 1000) }],
  ])('%s', (_name, context, podSc, containerSc, expected) => {
    const { pod, container } = podWith(podSc, containerSc);
    expect(processUserFor(pod, container, context)).toEqual(expected);
  });

  it.each<[string, PodSecurityContext]>([
    ['another uid', { runAsUser: 65532 }],
    ['another gid', { runAsGroup: 5 }],
    ['supplementary groups', { supplementalGroups: [1000] }],
  ])('a non-root agent refuses %s instead of running the container as itself', (_name, podSc) => {
    const { pod, container } = podWith(podSc, undefined);
    const decided = processUserFor(pod, container, { ...root, podUser: { uid: 1000, gid: 1000 }, agent: { uid: 1000, gid: 1000 } });
    expect(decided).toMatchObject({ type: 'refused', reason: 'CreateContainerConfigError', message: expect.stringMatching(/^container "app" asks to run as uid \d+, gid \d+.* but the node agent runs as uid 1000, gid 1000 and only an agent running as root can/) });
  });

  it('blocks every container of a privileged pod, and refuses runAsUser 0, where privileged containers may not run', () => {
    const privileged = podWith(undefined, undefined, { containers: [{ name: 'priv', securityContext: { privileged: true } }] });
    expect(processUserFor(privileged.pod, privileged.container, { ...root, allowPrivileged: false })).toEqual({
      type: 'refused',
      reason: 'Blocked',
      message: `pod with UID "${UID}" specified privileged container, but is disallowed`,
    });
    expect(processUserFor(privileged.pod, privileged.container, root)).toEqual({ type: 'run', user: user(65534, 65534) });
    const asRoot = podWith(undefined, { runAsUser: 0 });
    expect(processUserFor(asRoot.pod, asRoot.container, { ...root, allowPrivileged: false })).toMatchObject({ type: 'refused', reason: 'CreateContainerConfigError', message: expect.stringMatching(/asks to run as root \(runAsUser 0\).*--allow-privileged=false/) });
  });

  it('launches through spawn ids when it can, through setpriv (absolute path) for groups and no_new_privs', () => {
    const agent = { uid: 0, gid: 0 };
    expect(launchAs(undefined, agent, 'sh', ['-c', 'x'], '/usr/bin/setpriv')).toEqual({ file: 'sh', args: ['-c', 'x'], ids: undefined });
    expect(launchAs(user(0, 0), agent, 'sh', [], '/usr/bin/setpriv')).toEqual({ file: 'sh', args: [], ids: undefined });
    expect(launchAs(user(7, 8), agent, 'sh', [], '/usr/bin/setpriv')).toEqual({ file: 'sh', args: [], ids: { uid: 7, gid: 8 } });
    expect(launchAs(user(7, 8, [9, 10], true), agent, 'sh', ['-c', 'id'], '/usr/bin/setpriv')).toEqual({
      file: '/usr/bin/setpriv',
      args: ['--reuid=7', '--regid=8', '--groups=9,10', '--no-new-privs', '--', 'sh', '-c', 'id'],
      ids: undefined,
    });
    expect(launchAs(user(7, 8, [], true), agent, 'sh', [], '/usr/bin/setpriv')).toEqual({ file: '/usr/bin/setpriv', args: ['--reuid=7', '--regid=8', '--clear-groups', '--no-new-privs', '--', 'sh'], ids: undefined });
    // A non-root agent's own user: only no_new_privs, no identity change.
    expect(launchAs(user(1000, 1000, [], true), { uid: 1000, gid: 1000 }, 'sh', [], '/usr/bin/setpriv')).toEqual({ file: '/usr/bin/setpriv', args: ['--no-new-privs', '--', 'sh'], ids: undefined });
    expect(launchAs(user(7, 8, [9]), agent, 'sh', [], null)).toMatch(/need util-linux setpriv/);
  });
});
