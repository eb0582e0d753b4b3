/**
 * Starts a containerd of our own as a normal process (no systemd): its config, root,
 * state, socket, CNI configuration and IPAM store all live under one directory, so it
 * shares nothing with a containerd the machine may already run. Used by the CRI tests;
 * `logplane up --runtime cri` can start one the same way when none is running.
 *
 * `close()` leaves nothing behind: it removes every sandbox through CRI, stops containerd,
 * kills the shims that were started for it (found by their `-address` argument) and
 * unmounts what is still mounted under its directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeletConfigError } from '../errors.ts';
import { type CriClient, createCriClient } from './client.ts';
import { ContainerdStartError, CriError } from './errors.ts';
import { runTool } from './tools.ts';

/** Options of {@link startContainerd}. */
export interface ContainerdOptions {
  /** Holds everything of this containerd; it must exist and be empty or ours. Keep it short: the socket path must fit 107 bytes. */
  readonly dir: string;
  /** The image each sandbox's pause container runs (`sandbox_image`); it must be present (imported) before the first sandbox. */
  readonly sandboxImage: string;
  /** The CNI bridge's IPv4 subnet, e.g. `10.244.7.0/24`; pods get addresses from it, the bridge the first one. */
  readonly podSubnet: string;
  /** The Linux bridge CNI creates (at most 15 characters). */
  readonly bridgeName: string;
  /** Run containerd (and so its CNI bridge) inside this existing named network namespace (`ip netns add`); default the current one. */
  readonly netns?: string;
  /** Directory of the CNI plugin binaries; default `/usr/lib/cni` (Debian `containernetworking-plugins`). */
  readonly cniBinDir?: string;
  /** The containerd binary; default `containerd` from PATH. */
  readonly binary?: string;
  /** How long containerd may take to answer CRI `Version`; default 30 s. */
  readonly startTimeoutMs?: number;
}

/** A running containerd started by {@link startContainerd}. */
export interface Containerd {
  /** The CRI endpoint, `unix://<dir>/containerd.sock`. */
  readonly endpoint: string;
  readonly socket: string;
  readonly pid: number;
  /** containerd's own log (stdout and stderr). */
  readonly logFile: string;
  /** A CRI client on this containerd (closed by `close()`). */
  readonly cri: CriClient;
  /** Imports a docker-save or OCI archive into the `k8s.io` namespace (the one CRI uses). */
  importImage(tarPath: string): Promise<void>;
  /**
   * Removes every sandbox (and so every container), stops containerd (SIGTERM, SIGKILL
   * after 10 s), kills its leftover shims and unmounts what is left under `dir`. Safe to
   * call twice.
   */
  close(): Promise<void>;
}

/** The containerd config file (TOML) for these options. */
export function renderContainerdConfig(opts: { readonly dir: string; readonly sandboxImage: string; readonly cniBinDir: string }): string {
  const q = (value: string) => JSON.stringify(value);
  return `version = 2
root = ${q(join(opts.dir, 'root'))}
state = ${q(join(opts.dir, 'state'))}

[grpc]
  address = ${q(join(opts.dir, 'containerd.sock'))}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(opts.dir, 'opt'))}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(opts.sandboxImage)}
  # Without it every RunPodSandbox fails where the process lacks CAP_SYS_RESOURCE
  # ("failed to update /proc/self/oom_score_adj"): containers never get a lower score than containerd.
  restrict_oom_score_adj = true
  # Pod network namespaces are mounted under our state directory, not /var/run/netns.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(opts.cniBinDir)}
    conf_dir = ${q(join(opts.dir, 'net.d'))}
    max_conf_num = 1
`;
}

/** The CNI network: one bridge (gateway = the subnet's first address) with host-local IPAM, no NAT. */
export function renderCniConflist(opts: { readonly dir: string; readonly podSubnet: string; readonly bridgeName: string }): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: `logplane-${opts.bridgeName}`,
      plugins: [
        {
          type: 'bridge',
          bridge: opts.bridgeName,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: opts.podSubnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(opts.dir, 'cni-ipam') },
        },
      ],
    },
    null,
    2,
  );
}

function checkOptions(opts: ContainerdOptions): void {
  const socket = join(opts.dir, 'containerd.sock');
  if (!opts.dir.startsWith('/')) throw new KubeletConfigError('containerd dir must be an absolute path', { dir: opts.dir });
  if (Buffer.byteLength(socket) > 107) throw new KubeletConfigError('containerd dir is too long for a unix socket path', { socket });
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(opts.bridgeName)) throw new KubeletConfigError('bridgeName must be 1-15 of [A-Za-z0-9_.-]', { bridgeName: opts.bridgeName });
  if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(opts.podSubnet)) throw new KubeletConfigError('podSubnet must be an IPv4 CIDR', { podSubnet: opts.podSubnet });
  if (opts.sandboxImage === '') throw new KubeletConfigError('sandboxImage is empty');
}

/** Mount points under `dir` (from /proc/self/mountinfo, octal escapes decoded), deepest first. */
function mountsUnder(dir: string): string[] {
  const decode = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => decode(line.split(' ')[4] ?? ''))
    .filter((mountPoint) => mountPoint.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** Pids of the containerd shims started for the containerd on `socket`. */
function shimsOf(socket: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const address = argv.indexOf('-address');
    if ((argv[0] ?? '').includes('containerd-shim') && address >= 0 && argv[address + 1] === socket) pids.push(Number(entry));
  }
  return pids;
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

function logTail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Writes the config and CNI network under `dir`, starts containerd and resolves once it
 * answers CRI `Version`. Rejects with a {@link ContainerdStartError} (and stops the
 * process) if it exits or does not answer within `startTimeoutMs`.
 */
export async function startContainerd(opts: ContainerdOptions): Promise<Containerd> {
  checkOptions(opts);
  const cniBinDir = opts.cniBinDir ?? '/usr/lib/cni';
  const socket = join(opts.dir, 'containerd.sock');
  const configFile = join(opts.dir, 'config.toml');
  const logFile = join(opts.dir, 'containerd.log');
  await mkdir(join(opts.dir, 'net.d'), { recursive: true });
  await writeFile(configFile, renderContainerdConfig({ dir: opts.dir, sandboxImage: opts.sandboxImage, cniBinDir }));
  await writeFile(join(opts.dir, 'net.d', '10-logplane.conflist'), renderCniConflist({ dir: opts.dir, podSubnet: opts.podSubnet, bridgeName: opts.bridgeName }));

  const binary = opts.binary ?? 'containerd';
  // nsenter, not `ip netns exec`: that one also gives the process a mount namespace with a
  // fresh /sys, where runc finds no cgroup mounts (and our mounts would be out of sight).
  const argv = opts.netns === undefined ? [binary, '--config', configFile] : ['nsenter', `--net=/run/netns/${opts.netns}`, binary, '--config', configFile];
  const logFd = openSync(logFile, 'a');
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const spawnFailed = new Promise<never>((_, reject) => child.once('error', (err) => reject(new ContainerdStartError(`cannot run ${argv[0]}: ${err.message}`, { binary }, { cause: err }))));
  spawnFailed.catch(() => undefined);
  const cri = createCriClient({ endpoint: socket, callTimeoutMs: 5_000 });

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    if (child.exitCode === null && child.signalCode === null) {
      const sandboxes = await cri.listPodSandboxes().catch(() => []);
      for (const sandbox of sandboxes) {
        await cri.stopPodSandbox(sandbox.id).catch(() => undefined);
        await cri.removePodSandbox(sandbox.id).catch(() => undefined);
      }
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(killer);
    }
    cri.close();
    for (const pid of shimsOf(socket)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    }
    for (const mountPoint of mountsUnder(opts.dir)) await runTool('umount', ['-l', mountPoint]).catch(() => undefined);
  };

  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const deadline = Date.now() + startTimeoutMs;
  const exitedEarly = exited(child).then(() => {
    throw new ContainerdStartError(`containerd exited during start (code ${child.exitCode ?? child.signalCode}): ${logTail(logFile)}`, { logFile });
  });
  exitedEarly.catch(() => undefined);
  const answers = async (): Promise<void> => {
    // Poll for the socket before the first call: a call that finds no socket puts the gRPC
    // channel into reconnect backoff (1 s and more), which would delay the start for nothing.
    while (!existsSync(socket)) {
      if (Date.now() > deadline || closed) throw new ContainerdStartError(`containerd created no socket within ${startTimeoutMs} ms: ${logTail(logFile)}`, { socket, logFile });
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    for (;;) {
      try {
        await cri.version();
        return;
      } catch (err) {
        if (!(err instanceof CriError) || !err.retriable || Date.now() > deadline || closed) throw err;
        // The socket appears within milliseconds of the start; a short poll beats a watch on the directory.
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  };
  try {
    await Promise.race([answers(), exitedEarly, spawnFailed]);
  } catch (err) {
    await close();
    if (err instanceof ContainerdStartError) throw err;
    throw new ContainerdStartError(`containerd did not answer CRI within ${startTimeoutMs} ms: ${logTail(logFile)}`, { logFile }, { cause: err });
  }

  return {
    endpoint: `unix://${socket}`,
    socket,
    pid: child.pid!,
    logFile,
    cri,
    async importImage(tarPath) {
      await runTool('ctr', ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', tarPath], { timeoutMs: 120_000 });
    },
    close,
  };
}
