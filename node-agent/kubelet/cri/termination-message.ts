/**
 * Termination messages as kubelet's kuberuntime makes them (`makeMounts`,
 * `getTerminationMessage`, `readLastStringFromContainerLogs`): each container instance gets
 * an empty file (0666, so any user of the container may write it) bind-mounted at its
 * `terminationMessagePath`; when the instance exits, its message is the file's last 4096
 * bytes, or, with `terminationMessagePolicy: FallbackToLogsOnError`, a failure (exit code not
 * 0) and an empty file, the last 80 lines (at most 2048 bytes) of its log. kube's API defaults
 * (`/dev/termination-log`, `File`) apply when the pod leaves them out. The file of an instance
 * is `<podDir>/containers/<container>/<restartCount>`: found again by an agent that adopted
 * the instance after a restart.
 */
import { chmodSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Container } from '../../../schemas/index.ts';
import type { CriMount } from './client.ts';

/** kube's default `terminationMessagePath`. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
/** `MaxContainerTerminationMessageLength`. */
const MAX_MESSAGE_BYTES = 4096;
/** `MaxContainerTerminationMessageLogLines` and `MaxContainerTerminationMessageLogLength`. */
export const FALLBACK_LOG_LINES = 80;
const MAX_LOG_MESSAGE_BYTES = 2048;

const messageFile = (podDir: string, container: string, restartCount: number): string => join(podDir, 'containers', container, String(restartCount));

/** Makes the instance's empty message file and returns its mount. */
export function terminationMessageMount(podDir: string, spec: Container, restartCount: number): CriMount {
  const file = messageFile(podDir, spec.name, restartCount);
  mkdirSync(join(podDir, 'containers', spec.name), { recursive: true, mode: 0o755 });
  writeFileSync(file, '');
  chmodSync(file, 0o666);
  return { containerPath: spec.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH, hostPath: file, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE' };
}

/** `tail.ReadAtMost`: the last `max` bytes of a file. */
function readLast(file: string, max: number): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, max);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * The message of an exited instance: the file's, or (FallbackToLogsOnError, a failure, no
 * file content) the last lines of its log, read by `lastLogLines` (the text of at most
 * {@link FALLBACK_LOG_LINES} lines); '' when there is none.
 */
export async function terminationMessage(input: {
  readonly podDir: string;
  readonly spec: Container;
  readonly restartCount: number;
  readonly exitCode: number;
  readonly lastLogLines: () => Promise<string>;
}): Promise<string> {
  const file = messageFile(input.podDir, input.spec.name, input.restartCount);
  let text = '';
  if (existsSync(file)) {
    try {
      text = readLast(file, MAX_MESSAGE_BYTES);
    } catch (err) {
      return `Error on reading termination log ${file}: ${(err as Error).message}`;
    }
  }
  if (text !== '' || input.spec.terminationMessagePolicy !== 'FallbackToLogsOnError' || input.exitCode === 0) return text;
  const logs = Buffer.from(await input.lastLogLines().catch(() => ''), 'utf8');
  return logs.subarray(Math.max(0, logs.length - MAX_LOG_MESSAGE_BYTES)).toString('utf8');
}
