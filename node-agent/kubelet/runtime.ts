/**
 * The pod runtime's public contract (what the node agent drives) and its options,
 * validated eagerly.
 */
import type { Logger } from 'pino';
import type { Observable } from 'rxjs';
import { KubeletConfigError } from './errors.ts';
import { type CrashLoopPolicy, DEFAULT_CRASH_LOOP } from './lifecycle.ts';
import type { LogOptions } from './logs.ts';
import { DEFAULT_POD_CIDR, type PodCidr, parsePodCidr } from './pod-cidr.ts';
import type { PodStatusUpdate } from './pod-driver.ts';
import type { KubeletEvent } from './events.ts';
import type { PodUsage } from './usage.ts';
import type { CriRuntimeOptions } from './cri/runtime.ts';
import { type PodUser, agentUser, resolvePodUser } from './pod-user.ts';
import type { ProcessUser } from './process-user.ts';
import type { Pod } from '../../schemas/index.ts';
import { NO_POD_OBJECTS, type PodObjectSource } from './pod-objects.ts';

/** The runtimes: real OS processes, simulated pods (KWOK-like) for scale tests, or a CRI runtime (containerd). */
export const RUNTIME_KINDS = ['process', 'sim', 'cri'] as const;
export type RuntimeKind = (typeof RUNTIME_KINDS)[number];

/** A failure the sim runtime can be told to simulate. `container` defaults to the pod's first. */
export type InjectedFailure =
  /** The container exits with `exitCode`; it restarts per the pod's restartPolicy (with crash-loop backoff). */
  | { readonly type: 'exit'; readonly exitCode: number; readonly container?: string }
  /** The container's readiness flips (as if its readiness probe started failing or passing). */
  | { readonly type: 'readiness'; readonly ready: boolean; readonly container?: string };

/** Options of {@link createPodRuntime}. */
export interface PodRuntimeOptions {
  readonly kind: RuntimeKind;
  /** This node's name; pods bound to another node are ignored. */
  readonly node: string;
  /** Where the process runtime keeps pod records, logs and working directories (the cri runtime: its pods' log files). */
  readonly dataDir: string;
  /** The cri runtime: its CRI endpoint and settings. */
  readonly cri?: CriRuntimeOptions;
  /** Pod addresses (process runtime: loopback); default 127.100.0.0/16. Give each node its own. */
  readonly podCIDR?: string;
  /** The node's address, reported as `hostIP`; default 127.0.0.1. */
  readonly hostIP?: string;
  /** Crash-loop backoff; default 10 s doubling to 300 s, reset after an instance ran 600 s. */
  readonly crashLoop?: { readonly initialMs: number; readonly maxMs: number; readonly resetAfterMs?: number };
  /** Sim runtime: time from start to Running. Default 1000 ms. */
  readonly sim?: { readonly startDelayMs: number };
  /** Length of one probe "second" (periodSeconds, timeoutSeconds …) in ms; default 1000. Tests shrink it. */
  readonly probeSecondMs?: number;
  /**
   * Process runtime: the user and group pod processes (and exec probes) run as. Default:
   * `nobody` when the agent runs as root, else the agent's own user (the only one it can use).
   */
  readonly podUser?: PodUser;
  /**
   * Whether containers may be `privileged` (kubelet's `AllowPrivileged` capability, always on
   * in kubelet 1.32, whose `--allow-privileged` flag is gone); default true. Off, a pod with a
   * privileged container does not start (its containers wait `Blocked`), and the process
   * runtime also refuses `runAsUser: 0` (a root process is not confined at all there).
   */
  readonly allowPrivileged?: boolean;
  /** Process runtime: how often processes adopted after an agent restart are checked for exit (they are not children, so no exit event); default 1000 ms. */
  readonly adoptedCheckMs?: number;
  /** The ConfigMaps, Secrets, Services, claims and Node that pods' env and volumes read (the agent's projection); default none. */
  readonly objects?: PodObjectSource;
  /** How pods' DNS settings are formed (cri runtime: the sandbox's resolv.conf); see {@link PodDnsOptions}. */
  readonly dns?: PodDnsOptions;
  readonly logger: Logger;
  /** Clock for reported timestamps; default `Date.now`. */
  readonly now?: () => number;
}

/** kubelet's DNS flags, from which each pod's DNS settings are formed (`dns-config.ts`). */
export interface PodDnsOptions {
  /** `--cluster-dns`: the cluster DNS servers, asked when a pod's sandbox is made (so they may appear later); default none. */
  readonly clusterDNS?: () => readonly string[];
  /** `--cluster-domain`; default `cluster.local`. */
  readonly clusterDomain?: string;
  /** `--resolv-conf`: the host's resolver file (`Default` pods get it, `ClusterFirst` pods its searches); `''`: none; default `/etc/resolv.conf`. */
  readonly resolvConf?: string;
}

/** Where `kubectl exec`, `attach` and `port-forward` of one running container go. */
export type StreamTarget = {
  readonly type: 'process';
  /** The container's process (its session leader). */
  readonly pid: number;
  readonly podIP: string;
  /** The working directory, environment and user a container process gets (an exec'd command gets the same). */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly user: ProcessUser | undefined;
};

/** Runs the pods bound to one node and reports their status. */
export interface PodRuntime {
  readonly kind: RuntimeKind;
  /**
   * The desired pods of this node, as a full set (level-based): new pods are started,
   * pods absent from the set or carrying a `deletionTimestamp` are terminated gracefully.
   * Idempotent. Pods already Succeeded/Failed per their status are not started again;
   * the spec of a pod already running is not re-read (pod specs are immutable).
   * Pods bound to another node are ignored (so treated as absent).
   * The first call also takes over what a previous agent run left: live processes of
   * desired pods are adopted, those of other pods are terminated.
   */
  sync(pods: readonly Pod[]): void;
  /**
   * Status changes to report, one per change of a pod's computed status. A new
   * subscriber first gets the latest status of every pod the runtime has, then changes.
   * Completes when the runtime is closed.
   */
  readonly statuses$: Observable<PodStatusUpdate>;
  /** The Events kubelet records about the pods' containers (Created, Started, BackOff, Unhealthy, Killing …), as they happen. */
  readonly events$: Observable<KubeletEvent>;
  /**
   * `kubectl logs`: the current (or `previous`) instance's output, optionally only the
   * last `tailLines` lines, optionally followed until the instance exits. Throws
   * `KubeletNotFoundError` at once if there is no such pod, container or instance.
   */
  logs(namespace: string, name: string, container: string, opts: LogOptions): AsyncIterable<string>;
  /**
   * The cumulative CPU time and memory working set of every running container, per pod
   * (pods with no running container are left out). The sim runtime reports zeros.
   */
  usage(): Promise<readonly PodUsage[]>;
  /**
   * `kubectl exec`/`attach`/`port-forward`: where streams to a running container go (the
   * process runtime: the container's environment, working directory, user and process).
   * Throws `KubeletNotFoundError` if the pod or container is not here or not running.
   * Runtimes without streaming leave it out (the agent answers 501). Without `container`
   * (port-forward): the pod's first running container.
   */
  streamTarget?(namespace: string, name: string, container: string | undefined): StreamTarget;
  /** Sim runtime only: simulates a failure of a running container. */
  inject?(namespace: string, name: string, failure: InjectedFailure): void;
  /**
   * Stops probes and timers and completes `statuses$`. With `stopPods` every pod is
   * terminated gracefully first (and the promise waits for it); without (default), pods
   * keep running and the next agent run adopts them.
   */
  close(opts?: { stopPods: boolean }): Promise<void>;
}

/** Options after defaults and validation. */
export interface ResolvedRuntimeOptions {
  readonly kind: RuntimeKind;
  readonly node: string;
  readonly dataDir: string;
  readonly cri: CriRuntimeOptions | undefined;
  readonly podCidr: PodCidr;
  readonly hostIP: string;
  readonly crashLoop: CrashLoopPolicy;
  readonly startDelayMs: number;
  readonly probeSecondMs: number;
  readonly adoptedCheckMs: number;
  /** Process runtime: whom pods run as (see `PodRuntimeOptions.podUser`). */
  readonly podUser: PodUser;
  /** Whether privileged containers may run (see `PodRuntimeOptions.allowPrivileged`). */
  readonly allowPrivileged: boolean;
  readonly objects: PodObjectSource;
  readonly dns: Required<PodDnsOptions>;
  readonly logger: Logger;
  readonly now: () => number;
}

const isNonNegative = (n: number) => Number.isFinite(n) && n >= 0;

/** Applies defaults and rejects invalid options with a {@link KubeletConfigError}. */
export function resolveRuntimeOptions(opts: PodRuntimeOptions): ResolvedRuntimeOptions {
  if (!(RUNTIME_KINDS as readonly string[]).includes(opts.kind)) throw new KubeletConfigError(`unknown runtime kind "${opts.kind}" (process, sim or cri)`, { kind: opts.kind });
  if (opts.node === '') throw new KubeletConfigError('node name is empty');
  if (opts.kind === 'process' && opts.dataDir === '') throw new KubeletConfigError('the process runtime needs a dataDir');
  if (opts.kind === 'cri' && (opts.cri === undefined || opts.cri.endpoint === '' || !opts.dataDir.startsWith('/'))) {
    throw new KubeletConfigError('the cri runtime needs cri.endpoint and an absolute dataDir', { endpoint: opts.cri?.endpoint, dataDir: opts.dataDir });
  }
  if (opts.cri?.pollMs !== undefined && !(opts.cri.pollMs > 0)) throw new KubeletConfigError('cri.pollMs must be > 0', { pollMs: opts.cri.pollMs });
  const crashLoop: CrashLoopPolicy = {
    initialMs: opts.crashLoop?.initialMs ?? DEFAULT_CRASH_LOOP.initialMs,
    maxMs: opts.crashLoop?.maxMs ?? DEFAULT_CRASH_LOOP.maxMs,
    resetAfterMs: opts.crashLoop?.resetAfterMs ?? DEFAULT_CRASH_LOOP.resetAfterMs,
  };
  if (!(crashLoop.initialMs > 0) || !(crashLoop.maxMs >= crashLoop.initialMs) || !isNonNegative(crashLoop.resetAfterMs)) {
    throw new KubeletConfigError('crashLoop needs 0 < initialMs <= maxMs and resetAfterMs >= 0', { ...crashLoop });
  }
  const startDelayMs = opts.sim?.startDelayMs ?? 1000;
  const probeSecondMs = opts.probeSecondMs ?? 1000;
  const adoptedCheckMs = opts.adoptedCheckMs ?? 1000;
  if (!isNonNegative(startDelayMs)) throw new KubeletConfigError('sim.startDelayMs must be >= 0', { startDelayMs });
  if (!(probeSecondMs > 0)) throw new KubeletConfigError('probeSecondMs must be > 0', { probeSecondMs });
  if (!(adoptedCheckMs > 0)) throw new KubeletConfigError('adoptedCheckMs must be > 0', { adoptedCheckMs });
  const podUser = opts.kind === 'process' ? resolvePodUser(opts.podUser) : agentUser();
  const allowPrivileged = opts.allowPrivileged ?? true;
  if (opts.kind === 'process' && podUser.uid === 0 && !allowPrivileged) {
    throw new KubeletConfigError('pods would run as root (the pod user is uid 0) on a node that does not allow privileged containers: give another pod user, or allow privileged containers', { uid: podUser.uid });
  }
  return {
    kind: opts.kind,
    node: opts.node,
    dataDir: opts.dataDir,
    cri: opts.cri,
    podCidr: parsePodCidr(opts.podCIDR ?? DEFAULT_POD_CIDR),
    hostIP: opts.hostIP ?? '127.0.0.1',
    crashLoop,
    startDelayMs,
    probeSecondMs,
    adoptedCheckMs,
    podUser,
    allowPrivileged,
    objects: opts.objects ?? NO_POD_OBJECTS,
    dns: {
      clusterDNS: opts.dns?.clusterDNS ?? (() => []),
      clusterDomain: opts.dns?.clusterDomain ?? 'cluster.local',
      resolvConf: opts.dns?.resolvConf ?? '/etc/resolv.conf',
    },
    logger: opts.logger.child({ component: 'kubelet', node: opts.node, runtime: opts.kind }),
    now: opts.now ?? Date.now,
  };
}
