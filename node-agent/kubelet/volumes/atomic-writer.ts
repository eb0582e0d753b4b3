/**
 * kubelet's `AtomicWriter` (`pkg/volume/util/atomic_writer.go`): the files of a configMap,
 * secret, downwardAPI or projected volume are replaced all at once, so a reader never sees
 * half of an update:
 *
 * ```
 * <dir>/..2026_12_05_13_20_01.123456789/<paths>   the payload of one version
 * <dir>/..data -> ..2026_12_05_13_20_01.123456789  swapped by renaming a new symlink over it
 * <dir>/<first path segment> -> ..data/<first path segment>   what users open
 * ```
 *
 * A write whose payload equals the current one changes nothing. User-visible links of paths
 * no longer in the payload, and the previous version's directory, are removed after the swap.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { KubeletError } from '../errors.ts';

/** One file of a payload: its content and mode. */
export interface PayloadFile {
  readonly data: Buffer;
  readonly mode: number;
}

/** Relative path → file. */
export type Payload = ReadonlyMap<string, PayloadFile>;

/** The symlink naming the current version. */
export const DATA_DIR_NAME = '..data';

/** Rejects absolute paths, `..` segments and paths starting with `..` (reserved), as kubelet's `validatePath`. */
export function validatePayloadPath(path: string): string | undefined {
  if (path === '') return 'invalid path: must not be empty';
  if (path.startsWith('/')) return `invalid path: must be relative path: ${path}`;
  if (path.length > 4096) return 'invalid path: must be less than or equal to 4096 characters';
  if (path.split('/').some((segment) => segment === '..')) return `invalid path: must not contain '..': ${path}`;
  if (path.startsWith('..')) return `invalid path: must not start with '..': ${path}`;
  return undefined;
}

const timestampDirName = (now: Date): string => {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `..${now.getUTCFullYear()}_${pad(now.getUTCMonth() + 1)}_${pad(now.getUTCDate())}_${pad(now.getUTCHours())}_${pad(now.getUTCMinutes())}_${pad(now.getUTCSeconds())}.`;
};

/** Whether the version `versionDir` holds exactly `payload`. */
function samePayload(versionDir: string, payload: Payload): boolean {
  const present = new Set<string>();
  const walk = (dir: string, prefix: string): boolean => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!walk(join(dir, entry.name), rel)) return false;
        continue;
      }
      const wanted = payload.get(rel);
      if (wanted === undefined) return false;
      const file = join(dir, entry.name);
      if ((statSync(file).mode & 0o7777) !== wanted.mode || !readFileSync(file).equals(wanted.data)) return false;
      present.add(rel);
    }
    return true;
  };
  return walk(versionDir, '') && present.size === payload.size;
}

/** First path segment of each payload path: the user-visible names. */
const visibleNames = (payload: Payload): Set<string> => new Set([...payload.keys()].map((path) => path.split('/')[0] as string));

/**
 * Writes `payload` into `dir` as kubelet's atomic writer does (see the module comment).
 * Returns whether anything changed.
 */
export function writeAtomically(dir: string, payload: Payload, options: { readonly now?: Date } = {}): boolean {
  for (const path of payload.keys()) {
    const problem = validatePayloadPath(path);
    if (problem !== undefined) throw new KubeletError(problem, false, { path });
  }
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const dataLink = join(dir, DATA_DIR_NAME);
  const previous = existsSync(dataLink) ? readlinkSync(dataLink) : undefined;
  if (previous !== undefined && samePayload(join(dir, previous), payload)) {
    for (const name of visibleNames(payload)) if (!existsSync(join(dir, name))) symlinkSync(join(DATA_DIR_NAME, name), join(dir, name));
    return false;
  }
  const versionDir = mkdtempSync(join(dir, timestampDirName(options.now ?? new Date())));
  chmodSync(versionDir, 0o755);
  for (const [path, file] of payload) {
    const target = join(versionDir, normalize(path));
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    writeFileSync(target, file.data, { mode: file.mode });
    chmodSync(target, file.mode);
  }
  const versionName = versionDir.slice(versionDir.lastIndexOf(sep) + 1);
  const tmpLink = join(dir, `${DATA_DIR_NAME}_tmp`);
  rmSync(tmpLink, { force: true });
  symlinkSync(versionName, tmpLink);
  renameSync(tmpLink, dataLink);
  const names = visibleNames(payload);
  for (const name of names) {
    const link = join(dir, name);
    if (!isSymlink(link)) symlinkSync(join(DATA_DIR_NAME, name), link);
  }
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('..')) continue;
    if (!names.has(entry)) rmSync(join(dir, entry), { recursive: true, force: true });
  }
  if (previous !== undefined && previous !== versionName) rmSync(join(dir, previous), { recursive: true, force: true });
  return true;
}

const isSymlink = (path: string): boolean => {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
};
