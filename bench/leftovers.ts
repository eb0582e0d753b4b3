/**
 * What a killed benchmark leaves behind, found and removed at the next run's start.
 *
 * Process-runtime pods run detached (sessions of their own) so that an agent restart adopts
 * them; `stopRunningClusters` stops them on a timeout or Ctrl-C, but a SIGKILLed or crashed
 * bench leaves them running for good (100 sleepers of a killed run lived 1 h 47 min and
 * skewed later measurements), and its `logplane-bench-*` directory stays in the temporary
 * directory.
 *
 * Each directory `withTempDir` makes holds {@link OWNER_FILE}: the pid and `/proc` start time
 * of the process that made it (proc.ts's process identity, so a recycled pid is not taken for
 * the owner). {@link sweepLeftovers} takes a directory as left over when
 * - its owner is no longer alive, or
 * - it has no readable owner file (made before owners were recorded, or the write failed)
 *   and the directory itself was last changed more than {@link UNOWNED_AFTER_MS} ago: a
 *   unit in its own process is stopped after 30 min at most, and its top-level entries are
 *   made at its start.
 * A directory whose owner is alive (a concurrent bench run) is left alone.
 *
 * For a left-over directory, every process a pod record under it names (pod-records.ts, as
 * each agent's process runtime wrote it) whose identity still matches a live process, as
 * the runtime checks before adopting one, gets its process group SIGKILLed (the agent that
 * would stop it is gone); a pid that now names another process is left alone. Once they are
 * gone, the directory is removed. (Between the identity check and the signal the process
 * could exit and its pid be reused: a window of microseconds, as in the runtime itself.)
 */
import { type Dirent, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPodRecords, podRecordsFile } from '../node-agent/kubelet/pod-records.ts';
import { type ProcessIdentity, isAlive, readProcStart, signalProcessGroup } from '../node-agent/kubelet/proc.ts';

/** The prefix of every directory `withTempDir` makes in the temporary directory. */
export const BENCH_DIR_PREFIX = 'logplane-bench-';

/** The file in each such directory naming the process that made it. */
export const OWNER_FILE = '.owner.json';

/** A directory without an owner file is left over once unchanged this long. */
export const UNOWNED_AFTER_MS = 60 * 60_000;

/** How long a sweep waits for the processes it SIGKILLed to be gone. */
const GONE_WITHIN_MS = 5_000;

/** Directories under a bench directory not searched for pod records (one directory per pod, LMDB files). */
const NOT_SEARCHED: ReadonlySet<string> = new Set(['logs', 'log', 'projection']);

/** Records this process as the owner of `dir`. */
export const writeOwner = (dir: string): void => {
  const procStart = readProcStart(process.pid);
  if (procStart === null) throw new Error(`cannot read /proc/${process.pid}/stat to record the owner of ${dir}`);
  const owner: ProcessIdentity = { pid: process.pid, procStart };
  writeFileSync(join(dir, OWNER_FILE), `${JSON.stringify(owner)}\n`);
};

/** The owner recorded in `dir`, or null when there is no readable owner file. */
const readOwner = (dir: string): ProcessIdentity | null => {
  try {
    const owner = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Partial<ProcessIdentity>;
    return Number.isInteger(owner.pid) && Number.isInteger(owner.procStart) ? { pid: owner.pid!, procStart: owner.procStart! } : null;
  } catch {
    return null;
  }
};

/** The data directories under `dir` (to `depth` levels) holding a process runtime's pod records. */
const podRecordDirs = (dir: string, depth = 5): string[] => {
  const found = existsSync(podRecordsFile(dir)) ? [dir] : [];
  if (depth === 0) return found;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.isDirectory() && !NOT_SEARCHED.has(entry.name)) found.push(...podRecordDirs(join(dir, entry.name), depth - 1));
  }
  return found;
};

/** The processes the pod records under `dir` name (`processes` of each record, as process-runtime.ts writes it). */
export const recordedProcesses = (dir: string): ProcessIdentity[] => {
  const identities: ProcessIdentity[] = [];
  for (const dataDir of podRecordDirs(dir)) {
    for (const record of readPodRecords(dataDir).values()) {
      const processes = (record as { processes?: Record<string, Partial<ProcessIdentity>> } | null)?.processes;
      for (const recorded of Object.values(processes ?? {})) {
        if (Number.isInteger(recorded.pid) && recorded.pid! > 0 && Number.isInteger(recorded.procStart)) {
          identities.push({ pid: recorded.pid!, procStart: recorded.procStart! });
        }
      }
    }
  }
  return identities;
};

const waitUntilGone = async (identities: readonly ProcessIdentity[]): Promise<ProcessIdentity[]> => {
  const deadline = performance.now() + GONE_WITHIN_MS;
  let alive = identities.filter(isAlive);
  while (alive.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    alive = alive.filter(isAlive);
  }
  return alive;
};

/** What one sweep did. */
export interface SweepSummary {
  /** Left-over directories removed. */
  readonly directories: number;
  /** Recorded container processes (with their process groups) killed. */
  readonly processes: number;
  /** Left-over directories kept, and why (a process that could not be killed: the next sweep tries again). */
  readonly kept: readonly { readonly dir: string; readonly reason: string }[];
}

export interface SweepOptions {
  /** Where to look for `logplane-bench-*` directories; the temporary directory by default. */
  readonly root?: string;
  /** The current time, in ms since the epoch (for the age of directories without an owner). */
  readonly now?: number;
}

/** Kills the recorded processes of every left-over bench directory in `root` and removes the directory. */
export const sweepLeftovers = async (options: SweepOptions = {}): Promise<SweepSummary> => {
  const root = options.root ?? tmpdir();
  const now = options.now ?? Date.now();
  let directories = 0;
  let processes = 0;
  const kept: { dir: string; reason: string }[] = [];
  let names: string[];
  try {
    names = readdirSync(root).filter((name) => name.startsWith(BENCH_DIR_PREFIX));
  } catch {
    return { directories, processes, kept };
  }
  for (const name of names) {
    const dir = join(root, name);
    let changedAt: number;
    try {
      const stat = statSync(dir);
      if (!stat.isDirectory()) continue;
      changedAt = stat.mtimeMs;
    } catch {
      continue; // removed meanwhile (by its owner, or a concurrent sweep)
    }
    const owner = readOwner(dir);
    if (owner === null ? now - changedAt <= UNOWNED_AFTER_MS : isAlive(owner)) continue;

    const killed: ProcessIdentity[] = [];
    let failure: string | undefined;
    for (const identity of recordedProcesses(dir)) {
      if (!isAlive(identity)) continue;
      try {
        if (signalProcessGroup(identity.pid, 'SIGKILL')) killed.push(identity);
      } catch (error) {
        failure = `cannot kill process ${identity.pid}: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    const survivors = await waitUntilGone(killed);
    processes += killed.length - survivors.length;
    if (survivors.length > 0) failure ??= `processes ${survivors.map((p) => p.pid).join(', ')} still alive ${GONE_WITHIN_MS} ms after SIGKILL`;
    if (failure !== undefined) {
      kept.push({ dir, reason: failure });
      continue;
    }
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    directories += 1;
  }
  return { directories, processes, kept };
};

/** One line saying what a sweep did, or null when it found nothing. */
export const describeSweep = (summary: SweepSummary): string | null => {
  const lines: string[] = [];
  if (summary.directories > 0) {
    const dirs = `${summary.directories} ${summary.directories === 1 ? 'directory' : 'directories'}`;
    lines.push(`swept ${dirs} of killed bench runs: ${summary.processes} container ${summary.processes === 1 ? 'process' : 'processes'} stopped`);
  }
  for (const { dir, reason } of summary.kept) lines.push(`could not sweep ${dir}: ${reason}`);
  return lines.length > 0 ? lines.join('\n') : null;
};
