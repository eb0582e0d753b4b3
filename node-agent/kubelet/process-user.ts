/**
 * Whom the process runtime runs one container as, from the pod's and the container's
 * `securityContext` (security-context.ts), and how a process is started as that user.
 *
 * - `runAsUser`/`runAsGroup` (the container's over the pod's) replace the pod user
 *   (pod-user.ts); a `runAsUser` without `runAsGroup` gets the uid's primary group from
 *   /etc/passwd, or the uid itself (runc would take the image's /etc/passwd, and gid 0 for
 *   an unknown uid: on the host, group 0 opens root's group-readable files, so not here).
 * - `fsGroup` and `supplementalGroups` become the process's supplementary groups, in
 *   kubelet's order; `allowPrivilegeEscalation: false` sets no_new_privs (kubelet's rule).
 * - Only an agent running as root can start processes as another user, or with groups:
 *   a container asking for that from another agent does not start
 *   (`CreateContainerConfigError`), rather than running as the agent.
 * - `runAsNonRoot` is kubelet's check against the effective uid (the pod user standing in for
 *   the image's user); a privileged container on a node that does not allow them blocks its
 *   pod, as kubelet does. Such a node also refuses `runAsUser: 0`: a root process of the
 *   process runtime has every capability in the host's namespaces, which is what a
 *   privileged container is.
 * - Everything else in a security context (capabilities, readOnlyRootFilesystem, seccomp,
 *   AppArmor, SELinux, procMount) needs namespaces or a container runtime, which the process
 *   runtime does not have: it is not applied (README, "Security").
 */
import { existsSync } from 'node:fs';
import type { Container, Pod } from '../../schemas/index.ts';
import { type PodUser, primaryGroupOf } from './pod-user.ts';
import { SECURITY_REASONS, effectiveSecurityContext, noNewPrivileges, podSupplementalGroups, privilegedRefusal, verifyRunAsNonRoot } from './security-context.ts';

/** The identity one container process runs with. */
export interface ProcessUser extends PodUser {
  /** Supplementary groups (fsGroup, then supplementalGroups); empty: none. */
  readonly groups: readonly number[];
  /** Start it with no_new_privs (`allowPrivilegeEscalation: false`). */
  readonly noNewPrivs: boolean;
}

/** A container's user, or why it cannot start. */
export type ProcessUserDecision =
  | { readonly type: 'run'; readonly user: ProcessUser }
  | { readonly type: 'refused'; readonly reason: string; readonly message: string };

/** What the decision depends on besides the pod. */
export interface ProcessUserContext {
  /** Whom pods run as when they ask for nothing (pod-user.ts). */
  readonly podUser: PodUser;
  /** The agent's own user. */
  readonly agent: PodUser;
  /** Whether this node runs privileged containers (`--allow-privileged`). */
  readonly allowPrivileged: boolean;
  /** The passwd file primary groups come from; default /etc/passwd. */
  readonly passwd?: string;
}

const describeUser = (user: ProcessUser): string =>
  `uid ${user.uid}, gid ${user.gid}${user.groups.length === 0 ? '' : `, supplementary groups ${user.groups.join(',')}`}`;

/** Decides whom `container` of `pod` runs as (see the module comment). */
export function processUserFor(pod: Pod, container: Container, context: ProcessUserContext): ProcessUserDecision {
  const { podUser, agent, allowPrivileged } = context;
  const privileged = privilegedRefusal(pod, allowPrivileged);
  if (privileged !== undefined) return { type: 'refused', reason: SECURITY_REASONS.blocked, message: privileged };
  const nonRoot = verifyRunAsNonRoot(pod, container, { uid: podUser.uid });
  if (nonRoot !== undefined) return { type: 'refused', reason: SECURITY_REASONS.config, message: nonRoot };
  const effective = effectiveSecurityContext(pod, container);
  const runAsUser = effective.runAsUser ?? undefined;
  const uid = runAsUser ?? podUser.uid;
  const gid = effective.runAsGroup ?? (runAsUser === undefined ? podUser.gid : (primaryGroupOf(runAsUser, context.passwd) ?? runAsUser));
  const user: ProcessUser = { uid, gid, groups: [...new Set(podSupplementalGroups(pod))], noNewPrivs: noNewPrivileges(effective) };
  if (uid === 0 && !allowPrivileged) {
    return {
      type: 'refused',
      reason: SECURITY_REASONS.config,
      message: `container "${container.name}" asks to run as root (runAsUser 0); the process runtime cannot confine a root process (it would have every capability on the host), and this node does not allow privileged containers (--allow-privileged=false)`,
    };
  }
  const switching = uid !== agent.uid || gid !== agent.gid || user.groups.length > 0;
  if (switching && agent.uid !== 0) {
    return {
      type: 'refused',
      reason: SECURITY_REASONS.config,
      message: `container "${container.name}" asks to run as ${describeUser(user)}, but the node agent runs as uid ${agent.uid}, gid ${agent.gid} and only an agent running as root can start processes as another user or with supplementary groups: run the agent as root, or leave runAsUser, runAsGroup, fsGroup and supplementalGroups unset`,
    };
  }
  return { type: 'run', user };
}

/** How to start a process as a {@link ProcessUser}: the file and arguments to spawn, and the uid/gid for `spawn` (none: the caller's). */
export interface Launch {
  readonly file: string;
  readonly args: readonly string[];
  readonly ids: { readonly uid: number; readonly gid: number } | undefined;
}

/** util-linux's `setpriv`, by absolute path (a pod's PATH must not choose what runs as root). */
export const SETPRIV: string | null = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].find((path) => existsSync(path)) ?? null;

/**
 * How to start `file args` as `user` from a process running as `agent`. `spawn`'s uid/gid
 * drops every supplementary group, so a user with groups (or no_new_privs) is started
 * through `setpriv`, which sets them and then execs the command (same pid). Returns a
 * message instead when that is needed and there is no setpriv.
 */
export function launchAs(user: ProcessUser | undefined, agent: PodUser, file: string, args: readonly string[], setpriv: string | null = SETPRIV): Launch | string {
  if (user === undefined) return { file, args, ids: undefined };
  const switching = user.uid !== agent.uid || user.gid !== agent.gid || user.groups.length > 0;
  if (user.groups.length === 0 && !user.noNewPrivs) return { file, args, ids: switching ? { uid: user.uid, gid: user.gid } : undefined };
  if (setpriv === null) return 'supplementary groups and no_new_privs need util-linux setpriv, which is not installed on this node';
  const identity = switching ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, user.groups.length > 0 ? `--groups=${user.groups.join(',')}` : '--clear-groups'] : [];
  return { file: setpriv, args: [...identity, ...(user.noNewPrivs ? ['--no-new-privs'] : []), '--', file, ...args], ids: undefined };
}
