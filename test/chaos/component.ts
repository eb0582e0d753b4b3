/**
 * One logplane component of the chaos cluster as a real OS process (`node bin/logplane.mjs
 * apiserver|controllers|agent ...` in its own process group): start, SIGKILL, SIGSTOP /
 * SIGCONT, restart on the same data directory (and port), stop with SIGINT.
 */
import { join } from 'node:path';
import { startLogplane, type Daemon } from '../e2e/process.ts';

export type ComponentKind = 'apiserver' | 'controllers' | 'agent';

export interface ChaosComponent {
  readonly name: string;
  readonly kind: ComponentKind;
  readonly dataDir: string;
  /** The current process (a restart replaces it). */
  daemon(): Daemon;
  /** Whether the process runs, has said it is ready, and is not stopped by SIGSTOP. */
  up(): boolean;
  /** SIGKILLs the process group and waits for the exit. */
  kill(): Promise<void>;
  /** SIGSTOP / SIGCONT of the whole process group. */
  pause(): void;
  resume(): void;
  paused(): boolean;
  /** Starts the process again on the same arguments; resolves once it says it is ready. */
  start(): Promise<void>;
  /** SIGINT (as Ctrl-C), waits for a clean exit. */
  stop(): Promise<{ code: number | null }>;
}

export const createComponent = (options: {
  name: string;
  kind: ComponentKind;
  dataDir: string;
  args: readonly string[];
  /** What its stdout says once it serves. */
  ready: RegExp;
  readyTimeoutMs?: number;
}): ChaosComponent => {
  let current: Daemon | undefined;
  let isPaused = false;
  /** Set once the current process said it serves; cleared by a kill. */
  let isReady = false;
  const signalGroup = (signal: NodeJS.Signals): void => {
    if (current && current.running()) process.kill(-current.pid, signal);
  };
  const self: ChaosComponent = {
    name: options.name,
    kind: options.kind,
    dataDir: options.dataDir,
    daemon: () => {
      if (!current) throw new Error(`${options.name} was never started`);
      return current;
    },
    up: () => current !== undefined && current.running() && isReady && !isPaused,
    kill: async () => {
      if (!current || !current.running()) return;
      if (isPaused) signalGroup('SIGCONT');
      isPaused = false;
      isReady = false;
      current.kill();
      await current.exited;
    },
    pause: () => {
      signalGroup('SIGSTOP');
      isPaused = true;
    },
    resume: () => {
      signalGroup('SIGCONT');
      isPaused = false;
    },
    paused: () => isPaused,
    start: async () => {
      if (current?.running()) throw new Error(`${options.name} is running already`);
      // Every start appends to one log per component in its data directory (kept with --keep).
      current = startLogplane(options.name, options.args, { dataDir: options.dataDir, logFile: join(options.dataDir, `${options.name}.log`) });
      isPaused = false;
      isReady = false;
      await current.waitForOutput(options.ready, options.readyTimeoutMs ?? 180_000);
      isReady = true;
    },
    stop: async () => {
      if (!current || !current.running()) return { code: null };
      if (isPaused) self.resume();
      const { code } = await current.stop({ timeoutMs: 60_000 });
      return { code };
    },
  };
  return self;
};
