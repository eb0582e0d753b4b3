/**
 * Process identity and process-group signalling (Linux).
 *
 * A pid alone does not name a process across time: pids are recycled. A process is
 * identified by its pid and its start time (`/proc/<pid>/stat` field 22, clock ticks since
 * boot), which no other process with the same pid can share.
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { StopSignal } from './lifecycle.ts';

/** A process as the runtime recorded it. */
export interface ProcessIdentity {
  readonly pid: number;
  /** `/proc/<pid>/stat` starttime. */
  readonly procStart: number;
}

/**
 * The start time of a live process, or null when there is none with this pid or it is a
 * zombie (exited, not yet reaped).
 */
export function readProcStart(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may contain spaces: parse after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const startTime = Number(fields[19]);
  if (state === 'Z' || state === 'X' || !Number.isFinite(startTime)) return null;
  return startTime;
}

/** True when the process recorded as `identity` is still alive (not a recycled pid). */
export function isAlive(identity: ProcessIdentity): boolean {
  return readProcStart(identity.pid) === identity.procStart;
}

/** Signal number of a signal name, for `exitCode = 128 + n`. */
export function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}

/**
 * Sends `signal` to the process group led by `pid` (the container was spawned detached,
 * so it leads its own group and the whole tree gets the signal); falls back to the pid
 * alone if the group is gone. Returns false when nothing was signalled.
 */
export function signalProcessGroup(pid: number, signal: StopSignal): boolean {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
  return false;
}
