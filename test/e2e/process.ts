/**
 * Child-process helpers for the end-to-end tests that drive the real `logplane` command
 * (and `kubectl`) the way a user would: one-shot commands with their exit code and
 * output, long-running components (`up`, `apiserver`, `controllers`, `agent`) in their own
 * process groups, the pod processes a cluster runs (found by their working directory,
 * which lies in the cluster's data directory), free ports, polling with deadlines, and a
 * cleanup that leaves no process behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { createClient, type Client } from '../../cli/client.ts';
import { resolveConnection } from '../../cli/kubeconfig.ts';
import { mountsBelow } from '../../node-agent/kubelet/volumes/manager.ts';
import type { Pod } from '../../schemas/index.ts';

/** The repository root. */
export const REPO_ROOT: string = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** The `logplane` command as users run it. */
export const LOGPLANE_BIN: string = join(REPO_ROOT, 'bin', 'logplane.mjs');

/** What a finished command did. */
export interface RunResult {
  readonly command: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Kills the command's process group after this long (default 150 s, a guard against hangs); the result then has `signal`. */
  readonly timeoutMs?: number;
}

/** Every child process group started here and not yet known to be gone. */
const groups = new Set<ChildProcess>();

/** Data directories whose pod processes {@link cleanup} kills. */
const dataDirs = new Set<string>();

/** Temporary directories {@link cleanup} removes. */
const tempDirs = new Set<string>();

const killGroup = (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void => {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
};

// A worker that dies without running afterAll must not leave clusters behind either.
process.once('exit', () => {
  for (const child of groups) killGroup(child);
  for (const dir of dataDirs) for (const pod of podProcesses(dir)) killPid(pod.pid);
});

/** The environment of a child: ours without KUBECONFIG (each command names its cluster), plus `env`. */
const childEnv = (env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base['KUBECONFIG'];
  return { ...base, ...env };
};

const describeCommand = (file: string, args: readonly string[]): string =>
  [file === process.execPath ? 'node' : file, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');

/** Runs a command to completion in its own process group. Never rejects for a non-zero exit. */
export const run = (file: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> =>
  new Promise((resolvePromise, reject) => {
    const command = describeCommand(file, args);
    const child = spawn(file, args, { cwd: options.cwd ?? REPO_ROOT, env: childEnv(options.env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => killGroup(child), options.timeoutMs ?? 150_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      groups.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      groups.delete(child);
      resolvePromise({ command, code, signal, stdout, stderr });
    });
  });

/** Throws (with the command's output) unless it exited 0; returns its stdout. */
export const ok = (result: RunResult): string => {
  if (result.code !== 0) {
    throw new Error(`\`${result.command}\` exited ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`);
  }
  return result.stdout;
};

/** Parses a command's stdout as JSON after checking that it exited 0. */
export const okJson = <T>(result: RunResult): T => {
  const stdout = ok(result);
  try {
    return JSON.parse(stdout) as T;
  } catch (error) {
    throw new Error(`\`${result.command}\` printed no JSON: ${String(error)}\n--- stdout\n${stdout}\n--- stderr\n${result.stderr}`);
  }
};

/** `node bin/logplane.mjs ARGS` against the cluster of `kubeconfig` (given through $KUBECONFIG, as the README does). */
export const logplane = (kubeconfig: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> =>
  run(process.execPath, [LOGPLANE_BIN, ...args], { ...options, env: { KUBECONFIG: kubeconfig, ...options.env } });

/** The real `kubectl` against the cluster of `kubeconfig`, with its own discovery cache. */
export const kubectl = (kubeconfig: string, cacheDir: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> =>
  run('kubectl', ['--cache-dir', cacheDir, '--request-timeout', '30s', ...args], { ...options, env: { KUBECONFIG: kubeconfig, ...options.env } });

/** A free TCP port on 127.0.0.1: bound on :0, then released. */
export const freePort = (): Promise<number> =>
  new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePromise(address.port) : reject(new Error('no port'))));
    });
  });

/** A fresh temporary directory, removed by {@link cleanup}. */
export const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
};

/**
 * Polls `probe` every `intervalMs` (200) until it returns something other than `undefined`
 * or `false`, and returns that. After `timeoutMs` (60 s) it throws, naming `what` and the last
 * value `describe` made of the probe (or the last error the probe threw).
 */
export const waitFor = async <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; describe?: () => string } = {},
): Promise<T> => {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError !== undefined ? `; last error: ${String(lastError)}` : options.describe ? `; last seen: ${options.describe()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 200));
  }
};

/** A long-running component (`logplane up`, `apiserver`, `controllers`, `agent`) in its own process group. */
export interface Daemon {
  readonly name: string;
  readonly pid: number;
  /** Everything it printed so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves with the first match of `pattern` in its stdout; rejects if it exits first or after `timeoutMs`. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Whether it is still running. */
  running(): boolean;
  /** Resolves with its exit code (or signal) once it has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Sends `signal` (default SIGINT, like Ctrl-C) to the process only, so that it stops its
   * own children, and waits for it to exit; after `timeoutMs` kills the group and throws.
   */
  stop(options?: { signal?: NodeJS.Signals; timeoutMs?: number }): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  /** SIGKILLs its whole process group. */
  kill(): void;
}

/** Starts `node bin/logplane.mjs ARGS` as a daemon; `dataDir` is where its pods live (for {@link cleanup}). */
export const startLogplane = (name: string, args: readonly string[], options: DaemonOptions = {}): Daemon =>
  startDaemon(name, process.execPath, [LOGPLANE_BIN, ...args], options);

export interface DaemonOptions {
  readonly dataDir?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Also append everything it prints (stdout and stderr) to this file, kept after the test (a long run's evidence). */
  readonly logFile?: string;
}

/** Starts a daemon in its own process group, capturing its output. */
export const startDaemon = (name: string, file: string, args: readonly string[], options: DaemonOptions = {}): Daemon => {
  if (options.dataDir) dataDirs.add(resolve(options.dataDir));
  const child = spawn(file, args, { cwd: REPO_ROOT, env: childEnv(options.env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  groups.add(child);
  let stdout = '';
  let stderr = '';
  let alive = true;
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  if (options.logFile) mkdirSync(dirname(options.logFile), { recursive: true });
  const logFile = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }).on('error', () => undefined) : undefined;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    logFile?.write(chunk);
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    logFile?.write(chunk);
  });
  child.once('exit', () => logFile?.end());
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolvePromise) => {
    child.once('exit', (code, signal) => {
      alive = false;
      resolvePromise({ code, signal });
      notify();
    });
    child.once('error', () => {
      alive = false;
      resolvePromise({ code: null, signal: null });
      notify();
    });
  });
  const describe = (): string => `${name} (pid ${child.pid})\n--- stdout\n${stdout}\n--- stderr (last 4000 chars)\n${stderr.slice(-4000)}`;
  return {
    name,
    pid: child.pid ?? -1,
    output: () => ({ stdout, stderr }),
    running: () => alive,
    exited,
    waitForOutput: (pattern, timeoutMs = 60_000) =>
      new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${pattern} from ${describe()}`));
        }, timeoutMs);
        const check = (): void => {
          const match = stdout.match(pattern);
          if (match) {
            clearTimeout(timer);
            listeners.delete(check);
            resolvePromise(match);
          } else if (!alive) {
            clearTimeout(timer);
            listeners.delete(check);
            reject(new Error(`${name} exited before printing ${pattern}: ${describe()}`));
          }
        };
        listeners.add(check);
        check();
      }),
    stop: async ({ signal = 'SIGINT', timeoutMs = 30_000 } = {}) => {
      const started = Date.now();
      if (alive && child.pid !== undefined) process.kill(child.pid, signal);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
      const outcome = await Promise.race([exited, timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        killGroup(child);
        throw new Error(`${name} did not exit within ${timeoutMs} ms of ${signal}: ${describe()}`);
      }
      groups.delete(child);
      return { ...outcome, ms: Date.now() - started };
    },
    kill: () => killGroup(child),
  };
};

/** A process running one of a cluster's pods. */
export interface PodProcess {
  readonly pid: number;
  readonly podName: string;
  readonly podUid: string;
  readonly node: string;
}

const readEnviron = (pid: string): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
};

/**
 * The pod processes of the cluster whose data lives in `dataDir`: every process with a
 * POD_NAME in its environment (/proc/PID/environ) whose working directory (the pod's
 * directory) lies in `dataDir`. Other clusters on the machine may run pods of the same name.
 */
export const podProcesses = (dataDir: string): PodProcess[] => {
  const root = resolve(dataDir) + sep;
  const found: PodProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!(readlinkSync(`/proc/${entry}/cwd`) + sep).startsWith(root)) continue;
      const env = readEnviron(entry);
      if (env['POD_NAME'] === undefined) continue;
      found.push({ pid: Number(entry), podName: env['POD_NAME'], podUid: env['POD_UID'] ?? '', node: env['NODE_NAME'] ?? '' });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
};

const killPid = (pid: number): void => {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
};

/** Whether a process exists. */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Kills every child process group started here, every pod process of the data directories used, and removes the temporary directories. */
export const cleanup = (): void => {
  for (const child of groups) killGroup(child);
  groups.clear();
  for (const dir of dataDirs) for (const pod of podProcesses(dir)) killPid(pod.pid);
  dataDirs.clear();
  for (const dir of tempDirs) {
    // A killed agent leaves its pods' bind mounts (the kube-api-access volume …), as a dead
    // kubelet does; they go first, deepest first, or the removal fails with EBUSY.
    for (const mountPoint of mountsBelow(dir).sort((a, b) => b.length - a.length)) {
      try {
        execFileSync('umount', ['-l', mountPoint]);
      } catch {
        // Already gone with its parent.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  tempDirs.clear();
};

/** An API client for the cluster of `kubeconfig` (for fast polling; the tests' assertions go through the CLI). */
export const clusterClient = (kubeconfig: string): Client => createClient(resolveConnection({ kubeconfig }));

/** The body of `GET http://HOST:PORT/` on a fresh connection (so the proxy balances each request), or undefined on any failure. */
export const httpGet = (host: string, port: number, path = '/', timeoutMs = 2_000): Promise<string | undefined> =>
  new Promise((resolvePromise) => {
    const req = request({ host, port, path, agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolvePromise(res.statusCode === 200 ? body : undefined));
      res.on('error', () => resolvePromise(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolvePromise(undefined));
    req.end();
  });

/**
 * A ClusterIP for the echo Service that no other cluster on this machine is likely to
 * hold (they allocate from 127.96.0.1 up): clusters of parallel test files share the
 * loopback addresses their service proxies listen on.
 */
export const uniqueClusterIP = (): string => `127.96.${128 + Math.floor(Math.random() * 126)}.${2 + Math.floor(Math.random() * 252)}`;

/**
 * `examples/echo.yaml` as a manifest string, with the given changes: the Deployment's
 * replicas and image, the Service's clusterIP.
 */
export const echoManifest = (changes: { replicas?: number; image?: string; clusterIP?: string } = {}): string => {
  const documents = parseAllDocuments(readFileSync(join(REPO_ROOT, 'examples', 'echo.yaml'), 'utf8'));
  for (const document of documents) {
    const kind = document.get('kind');
    if (kind === 'Deployment') {
      if (changes.replicas !== undefined) document.setIn(['spec', 'replicas'], changes.replicas);
      if (changes.image !== undefined) document.setIn(['spec', 'template', 'spec', 'containers', 0, 'image'], changes.image);
    }
    if (kind === 'Service' && changes.clusterIP !== undefined) document.setIn(['spec', 'clusterIP'], changes.clusterIP);
  }
  return documents.map((d) => d.toString()).join('---\n');
};

/** The pods of the `default` namespace that match a label selector, as the API lists them now. */
export const listPods = async (client: Client, labelSelector: string): Promise<Pod[]> =>
  (await client.get<{ items: Pod[] }>('/api/v1/namespaces/default/pods', { labelSelector })).items;

/** Running, Ready and not being deleted. */
export const isServing = (pod: Pod): boolean =>
  pod.status?.phase === 'Running' &&
  !pod.metadata.deletionTimestamp &&
  (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * Requests `http://IP:PORT/` (the echo image answers with its pod name) until every one
 * of `expected` has answered; returns every name that answered. Throws after `timeoutMs`
 * naming the ones that did not.
 */
export const answeringPods = async (ip: string, port: number, expected: readonly string[], timeoutMs = 60_000): Promise<Set<string>> => {
  const seen = new Set<string>();
  await waitFor(
    `every pod of ${expected.join(', ')} to answer on ${ip}:${port}`,
    async () => {
      for (let i = 0; i < expected.length * 2; i++) {
        const body = await httpGet(ip, port);
        if (body !== undefined) seen.add(body.trim());
      }
      return expected.every((name) => seen.has(name));
    },
    { timeoutMs, intervalMs: 100, describe: () => `answered: ${[...seen].join(', ') || 'none'}` },
  );
  return seen;
};
