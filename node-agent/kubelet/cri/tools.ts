/**
 * Running the host tools the launcher and the local image builder need (tar, ctr, ip,
 * umount), with their output collected and a failure turned into a {@link CriToolError}.
 */
import { execFile } from 'node:child_process';
import { CriToolError } from './errors.ts';

/** Runs `command args…` and resolves with its stdout; rejects with a {@link CriToolError} carrying stderr. */
export function runTool(command: string, args: readonly string[], opts: { timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, timeout: opts.timeoutMs ?? 60_000 }, (err, stdout, stderr) => {
      if (err === null) resolve(stdout);
      else reject(new CriToolError(`${command} ${args.join(' ')} failed: ${stderr.trim() || err.message}`, { command, exitCode: typeof err.code === 'number' ? err.code : undefined }, { cause: err }));
    });
  });
}
