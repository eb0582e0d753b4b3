/**
 * Container log files, laid out as kubelet's `/var/log/pods`:
 * `<dataDir>/logs/<namespace>_<name>_<uid>/<container>/<restartCount>.log`, each holding
 * the stdout and stderr of one instance. The current and the previous instance are kept.
 */
import { mkdirSync, readdirSync, rmSync, statSync, watch } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** `kubectl logs` options the runtime serves. */
export interface LogOptions {
  /** The previous (terminated) instance instead of the current one. */
  readonly previous?: boolean;
  /** Only the last N lines (then, with `follow`, what comes next). */
  readonly tailLines?: number;
  /** Keep streaming until the instance exits (or `signal` aborts, or the runtime closes). */
  readonly follow?: boolean;
  /** Ends a followed stream early (e.g. the HTTP client went away). */
  readonly signal?: AbortSignal;
}

const CHUNK_BYTES = 64 * 1024;

/** Directory of a pod's logs. Namespace and name are DNS labels, so `_` separates them unambiguously. */
export function podLogDir(dataDir: string, namespace: string, name: string, uid: string): string {
  return join(dataDir, 'logs', `${namespace}_${name}_${uid}`);
}

/**
 * The working directory (and HOME) of a pod's containers, `<pod log dir>/_work` (no
 * container can be named so: names are DNS labels). It belongs to the pod's user; the log
 * directory above it and the log files stay the agent's, so a pod cannot swap its own log
 * file for a symlink that the agent would then write or read.
 */
export function podWorkDir(podDir: string): string {
  return join(podDir, '_work');
}

/** Log file of one container instance. */
export function containerLogFile(podDir: string, container: string, restartCount: number): string {
  return join(podDir, container, `${restartCount}.log`);
}

/** Creates the directory of a container's logs and deletes instances older than `restartCount - 1`. */
export function prepareLogFile(podDir: string, container: string, restartCount: number): string {
  const dir = join(podDir, container);
  mkdirSync(dir, { recursive: true });
  // Instances older than the previous one exist only from the third instance on.
  if (restartCount >= 2) {
    for (const instance of logInstances(podDir, container)) {
      if (instance < restartCount - 1) rmSync(containerLogFile(podDir, container, instance), { force: true });
    }
  }
  return containerLogFile(podDir, container, restartCount);
}

/** Restart counts that have a log file, ascending. */
export function logInstances(podDir: string, container: string): number[] {
  let names: string[];
  try {
    names = readdirSync(join(podDir, container));
  } catch {
    return [];
  }
  return names
    .map((name) => /^(\d+)\.log$/.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * The log directories of pods named `namespace/name` (any uid), most recently written first.
 * Used when the pod is no longer (or not yet) known to the runtime.
 */
export function findPodLogDirs(dataDir: string, namespace: string, name: string): string[] {
  const root = join(dataDir, 'logs');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names
    .filter((entry) => entry.startsWith(`${namespace}_${name}_`))
    .map((entry) => join(root, entry))
    .map((dir) => ({ dir, mtime: statSync(dir).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime)
    .map((entry) => entry.dir);
}

/** kubelet's bounds on a termination message taken from the logs (`MaxContainerTerminationMessageLogLines`, `…LogLength`). */
export const FALLBACK_MESSAGE_LINES = 80;
export const FALLBACK_MESSAGE_BYTES = 2048;

/**
 * The termination message of a container whose `terminationMessagePolicy` is
 * FallbackToLogsOnError and that failed, as kubelet's `readLastStringFromContainerLogs` takes
 * it: the last 80 lines of its log, of which the last 2,048 bytes; '' when the file cannot be
 * read (no log, no message).
 */
export async function messageFromLog(file: string): Promise<string> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = await fh.stat();
    const start = Math.max(await tailOffset(fh, FALLBACK_MESSAGE_LINES), size - FALLBACK_MESSAGE_BYTES);
    const buffer = Buffer.alloc(size - start);
    const { bytesRead } = await fh.read(buffer, 0, buffer.length, start);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** Byte offset where the last `lines` lines of the file start (a final newline ends the last line). */
async function tailOffset(fh: FileHandle, lines: number): Promise<number> {
  const { size } = await fh.stat();
  if (lines <= 0) return size;
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let newlines = 0;
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - CHUNK_BYTES);
    const { bytesRead } = await fh.read(buffer, 0, end - start, start);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buffer[i] !== 0x0a || start + i === size - 1) continue;
      if (++newlines === lines) return start + i + 1;
    }
    end = start;
  }
  return 0;
}

/**
 * Streams a log file as text: from the start (or the last `tailLines` lines), then, when
 * `ended` is given, follows appended output (inotify via `fs.watch`) until `ended`
 * resolves or `signal` aborts, reading once more at the end so nothing written before the
 * exit is lost.
 */
export async function* readLogFile(file: string, options: { tailLines?: number; ended?: Promise<void>; signal?: AbortSignal }): AsyncGenerator<string> {
  const fh = await open(file, 'r');
  try {
    let offset = options.tailLines === undefined ? 0 : await tailOffset(fh, options.tailLines);
    const decoder = new StringDecoder('utf8');
    const buffer = Buffer.alloc(CHUNK_BYTES);
    const readAvailable = async function* (): AsyncGenerator<string> {
      for (;;) {
        const { bytesRead } = await fh.read(buffer, 0, CHUNK_BYTES, offset);
        if (bytesRead === 0) return;
        offset += bytesRead;
        const text = decoder.write(buffer.subarray(0, bytesRead));
        if (text !== '') yield text;
      }
    };
    if (options.ended === undefined) {
      yield* readAvailable();
    } else {
      let finished = false;
      let wake = () => {};
      const finish = () => {
        finished = true;
        wake();
      };
      void options.ended.then(finish);
      options.signal?.addEventListener('abort', finish, { once: true });
      if (options.signal?.aborted === true) finished = true;
      const watcher = watch(file, () => wake());
      try {
        while (!finished) {
          const changed = new Promise<void>((resolve) => (wake = resolve));
          yield* readAvailable();
          if (!finished) await changed;
        }
        if (options.signal?.aborted !== true) yield* readAvailable();
      } finally {
        watcher.close();
        options.signal?.removeEventListener('abort', finish);
      }
    }
    const rest = decoder.end();
    if (rest !== '') yield rest;
  } finally {
    await fh.close();
  }
}
