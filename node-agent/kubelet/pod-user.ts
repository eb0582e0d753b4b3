/**
 * Which user the process runtime runs pod processes as.
 *
 * kubelet + runc run a container as the image's user (often root inside its own user-less
 * view of the host: its own namespaces, no capabilities beyond the default set). The process
 * runtime has no namespaces to confine root with, so it never runs a pod as root unless told
 * to: an agent running as root starts pods as an unprivileged user (`nobody` by default, or
 * `--pod-user`); an agent running as another user can only start them as itself.
 */
import { readFileSync } from 'node:fs';
import { KubeletConfigError } from './errors.ts';

/** A numeric user and primary group. Supplementary groups are always dropped. */
export interface PodUser {
  readonly uid: number;
  readonly gid: number;
}

/** The uid Debian and most distributions give `nobody` (and `nogroup`), used when /etc/passwd has no `nobody`. */
export const NOBODY_ID = 65534;

/** The agent's own user (`process.getuid`/`getgid`; 0 where they do not exist). */
export function agentUser(): PodUser {
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/** Entries of a passwd- or group-format file: name → [id, primary gid (passwd only)]. */
function readIdFile(file: string): Map<string, readonly [number, number]> {
  const entries = new Map<string, readonly [number, number]>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return entries;
  }
  for (const line of text.split('\n')) {
    const [name, , id, gid] = line.split(':');
    if (name === undefined || name === '' || id === undefined || !/^\d+$/.test(id)) continue;
    entries.set(name, [Number(id), gid !== undefined && /^\d+$/.test(gid) ? Number(gid) : Number(id)]);
  }
  return entries;
}

const isId = (n: number) => Number.isInteger(n) && n >= 0 && n < 2 ** 32 - 1;

/** The primary group of `uid` in `passwd`, or undefined when no entry has that uid. */
export function primaryGroupOf(uid: number, passwd = '/etc/passwd'): number | undefined {
  return [...readIdFile(passwd).values()].find(([id]) => id === uid)?.[1];
}

/**
 * Parses `--pod-user`: `UID`, `UID:GID`, `NAME` or `NAME:GROUP` (names from /etc/passwd and
 * /etc/group). Without a group the user's primary group from /etc/passwd, or the uid.
 * Throws a {@link KubeletConfigError} naming what it could not resolve.
 */
export function parsePodUser(text: string, files: { passwd: string; group: string } = { passwd: '/etc/passwd', group: '/etc/group' }): PodUser {
  const [userPart = '', groupPart, ...rest] = text.split(':');
  if (userPart === '' || groupPart === '' || rest.length > 0) throw new KubeletConfigError(`pod user "${text}" is not UID, UID:GID, NAME or NAME:GROUP`, { podUser: text });
  let uid: number;
  let primaryGid: number;
  if (/^\d+$/.test(userPart)) {
    uid = Number(userPart);
    primaryGid = primaryGroupOf(uid, files.passwd) ?? uid;
  } else {
    const entry = readIdFile(files.passwd).get(userPart);
    if (entry === undefined) throw new KubeletConfigError(`pod user "${userPart}" is not in ${files.passwd}`, { podUser: text });
    [uid, primaryGid] = entry;
  }
  let gid = primaryGid;
  if (groupPart !== undefined) {
    if (/^\d+$/.test(groupPart)) gid = Number(groupPart);
    else {
      const group = readIdFile(files.group).get(groupPart);
      if (group === undefined) throw new KubeletConfigError(`pod group "${groupPart}" is not in ${files.group}`, { podUser: text });
      gid = group[0];
    }
  }
  if (!isId(uid) || !isId(gid)) throw new KubeletConfigError(`pod user "${text}" is out of range`, { podUser: text });
  return { uid, gid };
}

/**
 * The user pods run as when none is configured: `nobody` (its uid and primary group from
 * /etc/passwd, else 65534:65534) for an agent running as root, the agent's own user otherwise.
 */
export function defaultPodUser(agent: PodUser = agentUser(), passwd = '/etc/passwd'): PodUser {
  if (agent.uid !== 0) return agent;
  const nobody = readIdFile(passwd).get('nobody');
  return nobody === undefined ? { uid: NOBODY_ID, gid: NOBODY_ID } : { uid: nobody[0], gid: nobody[1] };
}

/**
 * The configured pod user checked against the agent's: only root can start processes as
 * another user, so a non-root agent given another user fails at once (not at the first pod).
 */
export function resolvePodUser(configured: PodUser | undefined, agent: PodUser = agentUser()): PodUser {
  if (configured === undefined) return defaultPodUser(agent);
  if (!isId(configured.uid) || !isId(configured.gid)) throw new KubeletConfigError('podUser needs a uid and gid in 0..2^32-2', { uid: configured.uid, gid: configured.gid });
  if (agent.uid !== 0 && (configured.uid !== agent.uid || configured.gid !== agent.gid)) {
    throw new KubeletConfigError(
      `the agent runs as ${agent.uid}:${agent.gid} and cannot start pods as ${configured.uid}:${configured.gid} (only an agent running as root can); leave the pod user unset to run them as the agent's user`,
      { uid: configured.uid, gid: configured.gid, agentUid: agent.uid },
    );
  }
  return configured;
}
