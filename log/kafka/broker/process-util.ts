/**
 * Small process helpers shared by the launcher modules.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Result of running a command to completion. */
export interface RunResult {
  /** Exit code, or null when killed by a signal; -1 when it could not be spawned. */
  readonly code: number | null;
  /** stdout and stderr, interleaved in arrival order. */
  readonly output: string;
  /** The spawn error (e.g. ENOENT) when the command could not be started. */
  readonly spawnError?: NodeJS.ErrnoException;
}

/** Runs `command args` without a shell and collects its output. Never rejects. */
export function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    let output = '';
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (err: NodeJS.ErrnoException) => resolvePromise({ code: -1, output, spawnError: err }));
    child.on('close', (code) => resolvePromise({ code, output }));
  });
}

/** True if a process with this pid exists (signal 0 probe). */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The command line of a process (via /proc, else `ps`), or undefined if unknown/gone. */
export function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    const ps = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
    const out = ps.status === 0 ? ps.stdout.trim() : '';
    return out === '' ? undefined : out;
  }
}
