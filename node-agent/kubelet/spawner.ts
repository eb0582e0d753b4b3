/**
 * Starts container processes from a small helper process (a shim, as containerd's).
 *
 * `child_process.spawn` blocks the calling thread until the child has exec'd (libuv forks
 * and waits on a close-on-exec pipe), and a fork costs in proportion to the forking
 * process's memory: ~14 ms per container from the agent's process (which also hosts the
 * apiserver and the projection in `logplane up`) on a loaded 2-core machine, against ~3 ms
 * from a bare `node`. A burst of 100 pods held the event loop, and with it every status
 * report, for over a second. The helper (spawner-process.mjs) forks the containers, opens
 * their log files, reaps them and reports their exit codes over its IPC channel; signals
 * still go from the agent to each container's process group. Containers lead their own
 * sessions: they outlive the helper and the agent, and the next agent run adopts them.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface SpawnRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Opened for appending as the child's stdout and stderr. */
  readonly logFile: string;
  /** Created first (recursively). */
  readonly mkdirs: readonly string[];
  /**
   * The user and group the process runs as (supplementary groups dropped), when not the
   * helper's own. The helper changes to `cwd` before it drops to them, so `cwd` may lie
   * below directories the user cannot enter.
   */
  readonly user?: { readonly uid: number; readonly gid: number };
  /**
   * Created after `mkdirs` with `mode` (0700 if not given) and owned by `owner` (if given):
   * the directory of the pod's processes.
   */
  readonly ownedDir?: { readonly path: string; readonly owner?: { readonly uid: number; readonly gid: number }; readonly mode?: number };
}

/** What happens to one spawned process. */
export interface SpawnHandlers {
  /** The child has exec'd; `procStart` is -1 if it was already gone. */
  spawned(pid: number, procStart: number): void;
  /** It never started (`message` says why). Nothing else follows. */
  failed(message: string): void;
  /** An error of the running child (e.g. a failed signal). */
  error(message: string): void;
  /** It exited and was reaped; its process group has been SIGKILLed. */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface ContainerSpawner {
  spawn(request: SpawnRequest, handlers: SpawnHandlers): void;
  /**
   * Starts the helpers ahead of the first container; resolves once each has started (a
   * helper takes ~40 ms of CPU to start, which a container asked for meanwhile waits for).
   */
  warm(): Promise<void>;
}

type HelperMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'spawned'; readonly id: number; readonly pid: number; readonly procStart: number }
  | { readonly type: 'failed'; readonly id: number; readonly message: string }
  | { readonly type: 'error'; readonly id: number; readonly message: string }
  | { readonly type: 'exit'; readonly id: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };

const helperFile = fileURLToPath(new URL('./spawner-process.mjs', import.meta.url));

/**
 * How many helpers a spawner forks from: a burst's forks and execs run on as many cores
 * (a fork of the helper still costs ~2.5 ms, so 100 containers took ~250 ms from one).
 * Four helpers on this 2-core machine made the spawn phase of a 100-pod burst shorter only
 * under load from other processes (load 5-7: 880 → 643 ms), by taking a larger share of the
 * CPU; on a quieter machine (load 2-3) the burst p99 was the same and its p50 worse (the
 * agent's own process, which reports the statuses, got less of the CPU): 4 runs each, p99
 * median 525 (2) / 561 (3) / 531 (4) ms, p50 359 / 445 / 525 ms.
 */
export const SPAWNER_HELPERS = 2;

/** A spawner over `helpers` helper processes; the process runtimes of one process share {@link sharedSpawner}. */
export function createSpawner(helpers = SPAWNER_HELPERS): ContainerSpawner {
  if (!Number.isInteger(helpers) || helpers < 1) throw new RangeError(`a spawner needs at least one helper, not ${helpers}`);
  const slots: { helper: ChildProcess | undefined; starting: number; ready: Promise<void> }[] = Array.from({ length: helpers }, () => ({
    helper: undefined,
    starting: 0,
    ready: Promise.resolve(),
  }));
  let nextId = 0;
  /** Each process with its helper's slot; `pid` is undefined until it has exec'd. */
  const processes = new Map<number, { handlers: SpawnHandlers; pid: number | undefined; slot: number }>();

  function onMessage(message: Exclude<HelperMessage, { type: 'ready' }>): void {
    const entry = processes.get(message.id);
    if (entry === undefined) return;
    switch (message.type) {
      case 'spawned':
        entry.pid = message.pid;
        (slots[entry.slot] as (typeof slots)[number]).starting -= 1;
        entry.handlers.spawned(message.pid, message.procStart);
        break;
      case 'failed':
        processes.delete(message.id);
        (slots[entry.slot] as (typeof slots)[number]).starting -= 1;
        entry.handlers.failed(message.message);
        break;
      case 'error':
        entry.handlers.error(message.message);
        break;
      case 'exit':
        processes.delete(message.id);
        entry.handlers.exited(message.code, message.signal);
        break;
      default:
        message satisfies never;
    }
  }

  /** A helper died (it should not): nothing reports its children's exits any more, so they are killed and reported. */
  function onHelperGone(slot: number, reason: string): void {
    const state = slots[slot] as (typeof slots)[number];
    state.helper = undefined;
    state.starting = 0;
    const lost = [...processes].filter(([, entry]) => entry.slot === slot);
    for (const [id] of lost) processes.delete(id);
    for (const [, entry] of lost) {
      if (entry.pid === undefined) {
        entry.handlers.failed(`the container spawner stopped: ${reason}`);
        continue;
      }
      try {
        process.kill(-entry.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      entry.handlers.exited(null, 'SIGKILL');
    }
  }

  function ensureHelper(slot: number): ChildProcess {
    const state = slots[slot] as (typeof slots)[number];
    if (state.helper !== undefined) return state.helper;
    // No loader (tsx, a test runner's): the helper is plain JavaScript. Its own process group,
    // so a Ctrl-C meant for the agent does not take the containers' exit reports with it.
    const created = fork(helperFile, [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'], detached: true, serialization: 'advanced' });
    let readied = () => {};
    // Settles when the helper says it is listening, or when it is gone (it will not be).
    state.ready = new Promise<void>((resolve) => (readied = resolve));
    created.on('message', (message) => {
      if ((message as HelperMessage).type === 'ready') readied();
      else onMessage(message as Exclude<HelperMessage, { type: 'ready' }>);
    });
    created.once('exit', () => readied());
    created.once('error', () => readied());
    created.on('error', (err) => {
      if (state.helper === created) onHelperGone(slot, err.message);
    });
    created.on('exit', (code, signal) => {
      if (state.helper === created) onHelperGone(slot, `exit code ${code}, signal ${signal}`);
    });
    // Running containers must not keep the agent's process alive (they outlive it by design).
    created.unref();
    created.channel?.unref();
    state.helper = created;
    return created;
  }

  /** The helper with the fewest spawns under way (the first of equals). */
  function leastBusy(): number {
    let best = 0;
    for (let slot = 1; slot < slots.length; slot += 1) {
      if ((slots[slot] as (typeof slots)[number]).starting < (slots[best] as (typeof slots)[number]).starting) best = slot;
    }
    return best;
  }

  return {
    spawn(request, handlers) {
      const id = nextId++;
      const slot = leastBusy();
      const helper = ensureHelper(slot);
      processes.set(id, { handlers, pid: undefined, slot });
      (slots[slot] as (typeof slots)[number]).starting += 1;
      helper.send({ id, ...request });
    },
    async warm() {
      for (let slot = 0; slot < slots.length; slot += 1) ensureHelper(slot);
      await Promise.all(slots.map((slot) => slot.ready));
    },
  };
}

let shared: ContainerSpawner | undefined;

/** The spawner of this process (its helper starts with the first process runtime). */
export function sharedSpawner(): ContainerSpawner {
  shared ??= createSpawner();
  return shared;
}
