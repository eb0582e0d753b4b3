/**
 * `kubectl exec` in the process runtime: the command runs as a real OS process with the
 * container's environment, working directory and user (the same a container process gets),
 * its stdin, stdout and stderr carried on the WebSocket channels of channels.ts.
 *
 * With `tty`, the command runs on a pseudo-terminal made by util-linux `script(1)` (no
 * native module needed): stdout carries the terminal's output (stderr merged, as on any
 * terminal), the terminal echoes input and handles ^C, and resize messages set the
 * terminal's size with `stty -F /dev/pts/N` once `script` has opened it (the kernel then
 * sends the command SIGWINCH). `script` must be installed for `-t`.
 *
 * The exec'd process leads its own process group; it is killed (SIGKILL to the group) when
 * the client goes away before it ends, as containerd ends an exec whose stream is gone.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { StreamTarget } from '../kubelet/index.ts';
import { signalNumber } from '../kubelet/proc.ts';
import { agentUser } from '../kubelet/pod-user.ts';
import { launchAs } from '../kubelet/process-user.ts';
import { CHANNEL, type ChannelProtocol, type CommandOutcome, decodeClientMessage, encodeChannelMessage, outcomeStatus } from './channels.ts';
import type { StreamOptions } from './request.ts';

/** Output bytes a session may hold unsent to a slow client before it stops reading the command's output. */
export const MAX_UNSENT_BYTES = 1024 * 1024;

/** Whether `program` is a file in one of the `PATH` directories (a spawn as another user reports a missing one as EACCES). */
const onPath = (program: string, path: string | undefined): boolean => (path ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, program)));

/** One argument quoted for `sh -c` (script(1) runs its command through the shell). */
export const shellQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** The terminal device of the child `script` started (its controlling terminal), once it exists. */
const terminalOf = (scriptPid: number): string | undefined => {
  try {
    const children = readFileSync(`/proc/${scriptPid}/task/${scriptPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    for (const child of children) {
      const device = readlinkSync(`/proc/${child}/fd/0`);
      if (device.startsWith('/dev/pts/')) return device;
    }
  } catch {
    return undefined;
  }
  return undefined;
};

export interface ExecSessionOptions {
  readonly ws: WebSocket;
  readonly protocol: ChannelProtocol;
  readonly target: StreamTarget;
  readonly command: readonly string[];
  readonly options: StreamOptions;
  readonly logger: Logger;
}

/** Runs one exec session until the command ends or the client goes away. */
export const runProcessExec = ({ ws, protocol, target, command, options, logger }: ExecSessionOptions): void => {
  const [file, args] = options.tty ? ['script', ['-q', '-f', '-e', '-c', command.map(shellQuote).join(' '), '/dev/null']] : [command[0]!, command.slice(1)];
  const env = options.tty ? { TERM: 'xterm', ...target.env, SHELL: '/bin/sh' } : { ...target.env };
  const launch = launchAs(target.user, agentUser(), file, args);
  let child: ChildProcess;
  try {
    if (typeof launch === 'string') throw new Error(launch);
    child = spawn(launch.file, launch.args, { cwd: target.cwd, env, detached: true, stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], ...(launch.ids ?? {}) });
  } catch (error) {
    finish({ type: 'failed', message: `failed to exec in container: ${error instanceof Error ? error.message : String(error)}` });
    return;
  }
  let ended = false;
  let outputOpen = 2;
  let exit: CommandOutcome | undefined;
  const paused = new Set<Readable>();

  function finish(outcome: CommandOutcome): void {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(encodeChannelMessage(CHANNEL.error, Buffer.from(JSON.stringify(outcomeStatus(outcome, command)))));
    ws.close(1000);
  }

  const send = (channel: number, source: Readable, chunk: Buffer): void => {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(encodeChannelMessage(channel, chunk), () => {
      if (ws.bufferedAmount > MAX_UNSENT_BYTES / 2) return;
      for (const stream of paused) stream.resume();
      paused.clear();
    });
    if (ws.bufferedAmount > MAX_UNSENT_BYTES) {
      source.pause();
      paused.add(source);
    }
  };
  const outputEnded = (): void => {
    outputOpen -= 1;
    if (outputOpen === 0 && exit !== undefined) end(exit);
  };
  const end = (outcome: CommandOutcome): void => {
    if (ended) return;
    ended = true;
    finish(outcome);
  };

  // As kubelet: an empty message on the lowest writable channel tells the client the streams are open.
  ws.send(encodeChannelMessage(options.stdout ? CHANNEL.stdout : options.stderr ? CHANNEL.stderr : CHANNEL.error));
  child.stdout!.on('data', (chunk: Buffer) => (options.stdout ? send(CHANNEL.stdout, child.stdout!, chunk) : undefined)).on('end', outputEnded);
  child.stderr!.on('data', (chunk: Buffer) => (options.stderr || options.tty ? send(options.tty ? CHANNEL.stdout : CHANNEL.stderr, child.stderr!, chunk) : undefined)).on('end', outputEnded);
  child.stdin?.on('error', () => undefined);
  child.stdin?.on('drain', () => ws.resume());
  child.on('error', (error: NodeJS.ErrnoException) => {
    const program = options.tty ? 'script' : command[0]!;
    const missing = error.code === 'ENOENT' || (error.code === 'EACCES' && !program.includes('/') && !onPath(program, target.env.PATH));
    const message =
      missing
        ? `failed to exec in container: exec: "${program}": executable file not found in $PATH`
        : `failed to exec in container: ${error.message}`;
    end({ type: 'failed', message });
  });
  child.on('exit', (code, signal) => {
    exit = { type: 'exited', exitCode: code ?? 128 + (signal === null ? 0 : signalNumber(signal)) };
    if (outputOpen === 0) end(exit);
  });

  let size: { width: number; height: number } | undefined;
  let sizing = false;
  /** Applies the latest terminal size once `script` has made the terminal (a few tries while it starts). */
  const applySize = (attempt = 0): void => {
    if (size === undefined || child.pid === undefined || ended || sizing) return;
    const device = terminalOf(child.pid);
    if (device === undefined) {
      if (attempt < 50) setTimeout(() => applySize(attempt + 1), 20).unref();
      return;
    }
    sizing = true;
    const wanted = size;
    execFile('stty', ['-F', device, 'rows', String(wanted.height), 'cols', String(wanted.width)], (error) => {
      sizing = false;
      if (error) logger.debug({ err: error.message, device }, 'cannot resize the exec terminal');
      if (size !== wanted) applySize();
    });
  };

  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) return;
    const message = decodeClientMessage(data, protocol);
    switch (message.type) {
      case 'stdin':
        if (child.stdin && !child.stdin.writableEnded && !child.stdin.write(message.data)) ws.pause();
        return;
      case 'close':
        if (message.channel === CHANNEL.stdin) child.stdin?.end();
        return;
      case 'resize':
        if (!options.tty) return;
        size = { width: message.width, height: message.height };
        applySize();
        return;
      case 'ignored':
        logger.debug({ reason: message.reason }, 'exec message ignored');
        return;
      default:
        return message satisfies never;
    }
  });
  ws.on('close', () => {
    ended = true;
    if (exit === undefined && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
};
