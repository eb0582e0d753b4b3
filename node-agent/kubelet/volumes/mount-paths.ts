/**
 * What kubelet's `makeMounts` (`pkg/kubelet/kubelet_pods.go`) computes for one volumeMount
 * besides the volume's own path: the `subPath` (or `subPathExpr`, expanded with the
 * container's environment) on the host, and the mount's propagation.
 *
 * A subPath is resolved as kubelet's subpather does (CVE-2017-1002101): every component
 * that exists must resolve, symlinks followed, inside the volume (a container may have put a
 * symlink to `/` in a shared volume); a missing one is created as a directory with the mode
 * of the volume's root (`SafeMakeDir`), inside the volume. The path handed on is the one
 * below the volume, not the resolved one: a configMap key stays a link to `..data/<key>`.
 * Kubelet also bind-mounts the checked path to a private place so that a symlink swapped in
 * afterwards cannot redirect it; here a swap between the check and the runtime's mount is
 * not caught.
 */
import { chmodSync, lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { type Resolved, expand } from '../env.ts';

/** How mounts below a volume propagate (`mountPropagation`; unset is `None`). */
export type MountPropagation = 'None' | 'HostToContainer' | 'Bidirectional';

const ok = <T>(value: T): Resolved<T> => ({ type: 'ok', value });
const error = <T>(message: string): Resolved<T> => ({ type: 'error', message });

/** `translateMountPropagation`: unset is `None`; another value is kubelet's error. */
export function mountPropagation(mode: string | undefined): Resolved<MountPropagation> {
  switch (mode ?? 'None') {
    case 'None':
      return ok('None');
    case 'HostToContainer':
      return ok('HostToContainer');
    case 'Bidirectional':
      return ok('Bidirectional');
    default:
      return error(`invalid MountPropagation mode: "${mode}"`);
  }
}

/** `ExpandContainerVolumeMounts`: `$(VAR)` of a subPathExpr from the container's variables; an unknown or empty one is an error. */
export function expandSubPathExpr(expression: string, env: ReadonlyMap<string, string>): Resolved<string> {
  const missing = new Set<string>();
  const expanded = expand(expression, (name) => {
    const value = env.get(name);
    if (value === undefined || value === '') missing.add(name);
    return value ?? '';
  });
  return missing.size > 0 ? error(`missing value for ${[...missing].sort().join(', ')}`) : ok(expanded);
}

const lstatOrUndefined = (path: string) => {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
};

/**
 * The host path of `subPath` below the volume at `volumePath` (see the module comment), or
 * kubelet's message (it names the mount, not the host path, so it tells a user nothing of
 * the host).
 */
export function subPathOnHost(volumePath: string, subPath: string, names: { readonly mount: string; readonly container: string }): Resolved<string> {
  if (isAbsolute(subPath)) return error(`error SubPath \`${subPath}\` must not be an absolute path`);
  const clean = normalize(subPath);
  if (clean === '..' || clean.startsWith(`..${sep}`) || clean.split(sep).includes('..')) return error(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
  const root = realpathSync(volumePath);
  const inside = (path: string) => path === root || path.startsWith(`${root}${sep}`);
  const mode = statSync(root).mode & 0o7777;
  let current = root;
  for (const segment of clean.split(sep).filter((s) => s !== '' && s !== '.')) {
    const next = join(current, segment);
    if (lstatOrUndefined(next) === undefined) {
      try {
        mkdirSync(next, { mode });
        chmodSync(next, mode);
      } catch {
        return error(`failed to create subPath directory for volumeMount "${names.mount}" of container "${names.container}"`);
      }
      current = next;
      continue;
    }
    let real: string;
    try {
      real = realpathSync(next);
    } catch {
      real = '';
    }
    if (!inside(real)) return error(`failed to prepare subPath for volumeMount "${names.mount}" of container "${names.container}"`);
    current = real;
  }
  return ok(join(volumePath, clean));
}
