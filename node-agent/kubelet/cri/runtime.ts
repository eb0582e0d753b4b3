/**
 * The `cri` pod runtime: the same lifecycle driver as the process and sim runtimes, with
 * a CRI runtime (containerd) performing the effects, as kubelet's kuberuntime does.
 *
 * - A pod is handed to the driver once its sandbox is ready, so the driver admits it with
 *   the address CNI gave the sandbox. Until then it has no status; a failed RunPodSandbox
 *   is retried with backoff.
 * - `start`: the image is checked (pulled per `imagePullPolicy`), the pod's volumes are set
 *   up and the container's variables and mounts made by the agent's code shared with the
 *   process runtime (pod-config.ts: env.ts, volumes/), then CreateContainer (with kubelet's
 *   config, container-config.ts: variables, `$(VAR)` in command and args, each volume mount
 *   a CRI bind mount, and the pod's /etc/hosts, etc-hosts.ts) and StartContainer; the
 *   container ID is `containerd://<id>`. A container whose configuration cannot be made
 *   waits (`CreateContainerConfigError`, or `ContainerCreating` for a volume) and is retried.
 *   Volumes live in `<dataDir>/volumes` (configMap and secret updates are swapped in by the
 *   atomic writer, so a bind mount of the volume's directory sees them; a subPath mount keeps
 *   its file, as in kube) and go once the pod's sandbox is removed.
 * - `signal`: SIGTERM is StopContainer with the time left of the grace period, SIGKILL
 *   StopContainer with 0. Exits are found by polling ListContainers (containerd 1.6 has no
 *   GetContainerEvents) and reported with the runtime's exit code and reason (OOMKilled).
 * - `release`: StopPodSandbox and RemovePodSandbox (containers, network, cgroups go).
 * - Logs: the CRI log files (`<dataDir>/cri-logs/<ns>_<name>_<uid>/<container>/<n>.log`),
 *   their `<time> <stream> <P|F> ` prefixes removed, partial lines joined.
 * - Sandboxes carry the label `logplane.io/agent` (a hash of the runtime's data directory).
 *   Each pod's state (its run, its sandbox, the CRI id of each container's current instance)
 *   is appended to `<dataDir>/pod-records.jsonl` (pod-records.ts) on every status change, so
 *   the next agent run adopts the sandboxes and containers of desired pods (an exit that
 *   happened meanwhile is reported with the runtime's exit code; their volumes are set up
 *   again, so updates made meanwhile and later reach them) and stops the others. The
 *   agent's other sandboxes (no record) and log files are removed before the first new
 *   sandbox is made.
 * - Probes as kubelet runs them: exec through ExecSync in the container, httpGet and
 *   tcpSocket from the agent to the pod's address (so the agent must reach the CNI network,
 *   as kubelet does from the host).
 *
 * - Security contexts as kubelet passes them (cri/security-context.ts): each container's
 *   `LinuxContainerSecurityContext` (runAsUser or the image's user, runAsGroup, groups,
 *   privileged, readOnlyRootFilesystem, capabilities, no_new_privs, seccomp, AppArmor), the
 *   sandbox's `LinuxSandboxSecurityContext`; kubelet's runAsNonRoot check against the image's
 *   user (`CreateContainerConfigError`); the containers of a privileged pod on a node that
 *   does not allow them wait `Blocked` (kubelet makes no sandbox for it either; here an
 *   unprivileged sandbox is made, so the driver can report the pod's status).
 *
 * - Termination messages as kubelet reads them (termination-message.ts): a file per instance
 *   mounted at `terminationMessagePath`, read when the instance exits (or its log's last lines).
 *
 * Not yet: image pull secrets, garbage collection of images.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeletClosedError, KubeletConfigError, KubeletError, KubeletNotFoundError } from '../errors.ts';
import { type ContainerExit, type PodRun, type ProbeKind, restoredContainer } from '../lifecycle.ts';
import { type LogOptions, logInstances, readLogFile } from '../logs.ts';
import { type ContainerRef, type Dispatch, type PodDriver, type RuntimeExecutor, createPodDriver, podUid } from '../pod-driver.ts';
import { openPodRecords } from '../pod-records.ts';
import type { PodRuntime, ResolvedRuntimeOptions } from '../runtime.ts';
import { type ProbeOutcome, type ProbeTarget, type ProbeWorker, createContainerProbeWorkers } from '../probes.ts';
import { type TimerQueue, sharedTimerQueue } from '../timer-queue.ts';
import type { ContainerUsage, PodUsage } from '../usage.ts';
import { assertNever } from '../../../schemas/index.ts';
import type { Container, Pod } from '../../../schemas/index.ts';
import { type CriClient, type CriMount, type CriVersion, type ImageInfo, type PodSandboxConfig, createCriClient } from './client.ts';
import { criMounts, generateContainerConfig } from './container-config.ts';
import { etcHostsMount, podHostnameAndDomain } from './etc-hosts.ts';
import { FALLBACK_LOG_LINES, terminationMessage, terminationMessageMount } from './termination-message.ts';
import { CONFIG_REASONS, createPodConfigurator } from '../pod-config.ts';
import { SECURITY_REASONS, privilegedRefusal, verifyRunAsNonRoot } from '../security-context.ts';
import { containerSecurityContext, imageUser, sandboxSecurityContext } from './security-context.ts';
import { CriError } from './errors.ts';
import { linuxResources } from './resources.ts';
import { parseResolvConf, podDnsConfig, type PodDnsConfig, type ResolvConf } from '../dns-config.ts';

export { DEFAULT_CRI_ENDPOINT } from './endpoint.ts';

/**
 * Asks the CRI runtime at `endpoint` for its version, so an agent pointed at a runtime that
 * is not there fails at start (as kubelet does) instead of running Ready nodes whose pods
 * never start. Rejects with a retriable {@link KubeletError} that names the endpoint.
 */
export async function checkCriRuntime(endpoint: string, timeoutMs = 5_000): Promise<CriVersion> {
  const socket = endpoint.startsWith('unix://') ? endpoint.slice('unix://'.length) : endpoint;
  if (socket.startsWith('/') && !existsSync(socket)) {
    throw new KubeletError(`cannot reach the CRI runtime at ${endpoint}: there is no socket at ${socket} (is containerd running?)`, true, { endpoint });
  }
  const client = createCriClient({ endpoint, callTimeoutMs: timeoutMs });
  try {
    return await client.version();
  } catch (err) {
    throw new KubeletError(`cannot reach the CRI runtime at ${endpoint}: ${(err as Error).message}`, true, { endpoint }, { cause: err });
  } finally {
    client.close();
  }
}

/** Options of the CRI runtime (`cri` of the pod runtime options). */
export interface CriRuntimeOptions {
  /** The CRI socket, `unix:///run/containerd/containerd.sock` or a path. */
  readonly endpoint: string;
  /** cgroup under which each pod gets `pod<uid>` (cgroupfs driver); default: the runtime's choice. */
  readonly cgroupParent?: string;
  /** How often container exits are looked for; default 500 ms. */
  readonly pollMs?: number;
  /** Told of every CRI call when it ends (kubelet's runtime operation metrics). */
  readonly onOperation?: (method: string, failed: boolean, seconds: number) => void;
}

/** Where a pod's sandbox is. */
type SandboxState =
  | { readonly type: 'creating' }
  | { readonly type: 'ready'; readonly id: string; readonly ip: string; readonly config: PodSandboxConfig }
  | { readonly type: 'failed'; readonly retryAt: number; readonly delayMs: number };

/** One container instance created through CRI. */
interface Instance {
  readonly uid: string;
  readonly container: string;
  readonly restartCount: number;
  readonly id: string;
  /** Resolves when the instance's exit has been reported (ends a followed log). */
  readonly ended: Promise<void>;
  readonly end: () => void;
}

/** What a pod's record holds. Versioned so a later agent can read an older layout. */
interface CriPodRecord {
  readonly version: 1;
  readonly run: Omit<PodRun, 'termination'>;
  readonly sandbox: { readonly id: string; readonly ip: string; readonly config: PodSandboxConfig };
  /** The CRI id of each container's current instance. */
  readonly containers: Readonly<Record<string, { readonly restartCount: number; readonly id: string }>>;
}

const SANDBOX_RETRY_INITIAL_MS = 1_000;
const SANDBOX_RETRY_MAX_MS = 60_000;

/** Kubelet's log directory name of a pod. */
const podLogDirName = (namespace: string, name: string, uid: string) => `${namespace}_${name}_${uid}`;
const instanceKey = (uid: string, container: string, restartCount: number) => `${uid}/${container}/${restartCount}`;
const containerSpec = (pod: Pod, name: string): Container | undefined => [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((c) => c.name === name);

/** Text of CRI log lines (`<RFC3339Nano> <stdout|stderr> <P|F> <text>`), prefixes removed; partial (P) lines joined with the next. */
export async function* criLogText(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of chunks) {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    let out = '';
    for (const line of lines) {
      const match = /^\S+ (?:stdout|stderr) ([PF]) (.*)$/.exec(line);
      if (match === null) continue;
      out += match[1] === 'F' ? `${match[2]}\n` : match[2];
    }
    if (out !== '') yield out;
  }
}

/** Creates the CRI runtime; see the module comment. */
export function createCriRuntime(options: ResolvedRuntimeOptions, timers: TimerQueue = sharedTimerQueue()): PodRuntime {
  const { node, logger, now, hostIP, dataDir, probeSecondMs } = options;
  const criOptions = options.cri;
  if (criOptions === undefined) throw new KubeletConfigError('the cri runtime needs cri.endpoint');
  const cri: CriClient = createCriClient({ endpoint: criOptions.endpoint, ...(criOptions.onOperation ? { onOperation: criOptions.onOperation } : {}) });
  const pollMs = criOptions.pollMs ?? 500;
  const cgroupParent = criOptions.cgroupParent;
  const logRoot = join(dataDir, 'cri-logs');
  /** Each pod's files that are not volumes (kubelet's pod directory): its /etc/hosts, its containers' termination message files. */
  const podFilesRoot = join(dataDir, 'cri-pods');
  const podFilesDir = (uid: string) => join(podFilesRoot, encodeURIComponent(uid));
  /** The pods' volumes and their containers' variables, the agent's as in the process runtime (pod-config.ts). */
  const configurator = createPodConfigurator({ volumeRoot: join(dataDir, 'volumes'), node, objects: options.objects, logger });
  /** Where seccompProfile `Localhost` profiles are (kubelet's `<root-dir>/seccomp`). */
  const seccompRoot = join(dataDir, 'seccomp');
  const sandboxes = new Map<string, SandboxState>();
  /** Instances by {@link instanceKey}; the exited ones stay until the pod is released (logs --previous). */
  const instances = new Map<string, Instance>();
  /** Instances whose exit is not yet reported. */
  const live = new Set<Instance>();
  /** Probe workers by `<uid>/<container>`. */
  const probeWorkers = new Map<string, ProbeWorker[]>();
  let desiredPods: readonly Pod[] = [];
  let closing = false;
  /** Sandbox removals under way (close waits for them). */
  const removals = new Set<Promise<void>>();
  let dispatch: Dispatch = () => {};
  /** Marks this agent's sandboxes (several agents, or clusters, may share one containerd). */
  const agentLabel = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const admitted = new Set<string>();

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const records = openPodRecords(dataDir, join(dataDir, 'pods'), logger);
  /** What each pod's record holds (restored pods: a placeholder until the first write). */
  const persisted = new Map<string, string>();
  /** Each pod's last record write under way. */
  const writes = new Map<string, Promise<void>>();
  /** The pods an earlier run recorded, with their sandboxes and live instances taken over (handed to the driver by `restore`). */
  const restoredRuns: PodRun[] = [];
  /** Restored pods whose volumes are not yet set up again by this run (so that updates reach them). */
  const volumesToAdopt = new Set<string>();
  for (const [uid, restored] of records.restored) {
    const record = restored as CriPodRecord;
    if (record.version !== 1) {
      logger.error({ uid, version: record.version }, 'pod record of an unknown version (written by a newer agent?); leaving it and its sandbox alone');
      continue;
    }
    sandboxes.set(uid, { type: 'ready', id: record.sandbox.id, ip: record.sandbox.ip, config: record.sandbox.config });
    admitted.add(uid);
    persisted.set(uid, '');
    const containers = record.run.containers.map((c) => {
      const recorded = record.containers[c.name];
      return restoredContainer(c, recorded === undefined ? undefined : { restartCount: recorded.restartCount, containerID: `containerd://${recorded.id}` }, record.run.startTime);
    });
    for (const c of containers) {
      const recorded = record.containers[c.name];
      if (recorded === undefined || c.phase.type !== 'running') continue;
      let end = () => {};
      const ended = new Promise<void>((resolve) => (end = resolve));
      const instance: Instance = { uid, container: c.name, restartCount: recorded.restartCount, id: recorded.id, ended, end };
      instances.set(instanceKey(uid, c.name, recorded.restartCount), instance);
      live.add(instance);
    }
    restoredRuns.push({ ...record.run, containers, termination: null });
    volumesToAdopt.add(uid);
  }

  /** Removes what an earlier run of this agent left and did not record: its sandboxes (with their containers) and log files. */
  async function removeLeftovers(): Promise<void> {
    const kept = new Set([...sandboxes.values()].flatMap((sandbox) => (sandbox.type === 'ready' ? [sandbox.id] : [])));
    const keptLogs = new Set(restoredRuns.map((run) => podLogDirName(run.namespace, run.name, run.uid)));
    try {
      const left = (await cri.listPodSandboxes({ labelSelector: { 'logplane.io/agent': agentLabel } })).filter((sandbox) => !kept.has(sandbox.id));
      for (const sandbox of left) {
        await cri.stopPodSandbox(sandbox.id);
        await cri.removePodSandbox(sandbox.id);
        releasePodFiles(sandbox.uid);
      }
      if (left.length > 0) logger.info({ sandboxes: left.length }, 'removed the pod sandboxes an earlier agent run left without a record');
      const logDirs = existsSync(logRoot) ? await readdir(logRoot) : [];
      await Promise.all(logDirs.filter((entry) => !keptLogs.has(entry)).map((entry) => rm(join(logRoot, entry), { recursive: true, force: true })));
    } catch (err) {
      logger.warn({ err }, 'cannot remove the pod sandboxes an earlier agent run left');
    }
  }
  const leftoversRemoved = removeLeftovers();

  const podName = (run: { namespace: string; name: string }) => `${run.namespace}/${run.name}`;

  /** The host's resolver settings (`--resolv-conf`), read for each sandbox as kubelet does; undefined for `''`. */
  function hostResolvConf(): ResolvConf | undefined {
    const path = options.dns.resolvConf;
    if (path === '') return undefined;
    try {
      return parseResolvConf(readFileSync(path, 'utf8'));
    } catch (err) {
      logger.warn({ err, resolvConf: path }, 'cannot read the host resolver file; pods get no host nameservers or searches');
      return parseResolvConf('');
    }
  }

  /** The sandbox's resolv.conf settings by the pod's dnsPolicy and dnsConfig, as kubelet's GetPodDNS forms them. */
  function sandboxDns(pod: Pod): PodDnsConfig {
    const { config, warnings } = podDnsConfig(pod, {
      clusterDNS: options.dns.clusterDNS(),
      clusterDomain: options.dns.clusterDomain,
      hostResolvConf: hostResolvConf(),
      nodeIPs: [hostIP],
    });
    for (const warning of warnings) logger.warn({ pod: podName({ namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name }), reason: warning.reason }, warning.message);
    return config;
  }

  function sandboxConfig(pod: Pod, uid: string): PodSandboxConfig {
    const namespace = pod.metadata.namespace ?? 'default';
    return {
      metadata: { name: pod.metadata.name, namespace, uid, attempt: 0 },
      hostname: podHostnameAndDomain(pod, options.dns.clusterDomain).hostname,
      dnsConfig: sandboxDns(pod),
      logDirectory: join(logRoot, podLogDirName(namespace, pod.metadata.name, uid)),
      labels: { 'io.kubernetes.pod.name': pod.metadata.name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid, 'logplane.io/node': node, 'logplane.io/agent': agentLabel },
      linux: {
        ...(cgroupParent === undefined ? {} : { cgroupParent: join(cgroupParent, `pod${uid}`) }),
        securityContext: { ...sandboxSecurityContext(pod), ...(options.allowPrivileged ? {} : { privileged: false }) },
      },
    };
  }

  async function createSandbox(pod: Pod, uid: string): Promise<void> {
    const config = sandboxConfig(pod, uid);
    const previous = sandboxes.get(uid);
    sandboxes.set(uid, { type: 'creating' });
    try {
      await leftoversRemoved;
      const id = await cri.runPodSandbox(config);
      const status = await cri.podSandboxStatus(id);
      sandboxes.set(uid, { type: 'ready', id, ip: status.ip ?? '', config });
      logger.info({ pod: podName(config.metadata), uid, sandbox: id, podIP: status.ip }, 'pod sandbox ready');
    } catch (err) {
      const delayMs = previous?.type === 'failed' ? Math.min(previous.delayMs * 2, SANDBOX_RETRY_MAX_MS) : SANDBOX_RETRY_INITIAL_MS;
      sandboxes.set(uid, { type: 'failed', retryAt: now() + delayMs, delayMs });
      logger.warn({ err, pod: podName(config.metadata), uid, retryInMs: delayMs }, 'cannot run the pod sandbox');
      timers.schedule(delayMs, resync);
      return;
    }
    resync();
  }

  function removeSandbox(uid: string, id: string): void {
    sandboxes.delete(uid);
    const removal = (async () => {
      await cri.stopPodSandbox(id);
      await cri.removePodSandbox(id);
      releasePodFiles(uid);
    })().catch((err: unknown) => logger.error({ err, uid, sandbox: id }, 'cannot remove the pod sandbox'));
    removals.add(removal);
    void removal.then(() => removals.delete(removal));
  }

  /** Once no container of the pod can use them: its volumes (tmpfs unmounted) and files go. */
  function releasePodFiles(uid: string): void {
    configurator.release(uid);
    rmSync(podFilesDir(uid), { recursive: true, force: true });
  }

  const isTerminal = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

  function sync(pods: readonly Pod[]): void {
    if (closing) throw new KubeletClosedError();
    desiredPods = pods;
    const handed: Pod[] = [];
    const wanted = new Set<string>();
    for (const pod of pods) {
      if (pod.spec.nodeName != null && pod.spec.nodeName !== node) continue;
      const uid = podUid(pod);
      wanted.add(uid);
      if (admitted.has(uid)) {
        handed.push(pod);
        continue;
      }
      if (pod.metadata.deletionTimestamp != null || isTerminal(pod)) continue;
      const sandbox = sandboxes.get(uid);
      if (sandbox === undefined || (sandbox.type === 'failed' && now() >= sandbox.retryAt)) void createSandbox(pod, uid);
      else if (sandbox.type === 'ready') handed.push(pod);
    }
    // Sandboxes of pods that went away before the driver had them.
    for (const [uid, sandbox] of sandboxes) if (!wanted.has(uid) && !admitted.has(uid) && sandbox.type === 'ready') removeSandbox(uid, sandbox.id);
    driver.sync(handed);
    for (const pod of handed) {
      if (volumesToAdopt.delete(podUid(pod))) configurator.adopt(pod);
      else configurator.refresh(pod);
    }
  }

  function resync(): void {
    if (!closing) sync(desiredPods);
  }

  function reportExit(instance: Instance, exit: Omit<ContainerExit, 'containerID' | 'startedAt'>): void {
    if (!live.delete(instance)) return;
    dispatch(instance.uid, {
      type: 'exited',
      container: instance.container,
      restartCount: instance.restartCount,
      exitCode: exit.exitCode,
      signal: exit.signal,
      reason: exit.reason,
      ...(exit.message === null ? {} : { message: exit.message }),
      at: exit.finishedAt,
    });
    instance.end();
  }

  /** The termination message an exited instance left (termination-message.ts); '' when its pod is no longer desired. */
  async function exitMessage(instance: Instance, exitCode: number): Promise<string> {
    const pod = desiredPods.find((p) => podUid(p) === instance.uid);
    const spec = pod === undefined ? undefined : containerSpec(pod, instance.container);
    if (pod === undefined || spec === undefined) return '';
    const logFile = join(logRoot, podLogDirName(pod.metadata.namespace ?? 'default', pod.metadata.name, instance.uid), instance.container, `${instance.restartCount}.log`);
    const lastLogLines = async () => {
      let text = '';
      for await (const chunk of criLogText(readLogFile(logFile, { tailLines: FALLBACK_LOG_LINES }))) text += chunk;
      return text;
    };
    return terminationMessage({ podDir: podFilesDir(instance.uid), spec, restartCount: instance.restartCount, exitCode, lastLogLines });
  }

  async function checkInstance(instance: Instance): Promise<void> {
    try {
      const status = await cri.containerStatus(instance.id);
      const state = status.state;
      switch (state.type) {
        case 'exited': {
          const message = [state.message, await exitMessage(instance, state.exitCode)].filter((part) => part !== '').join(': ');
          reportExit(instance, { exitCode: state.exitCode, signal: null, reason: state.reason || (state.exitCode === 0 ? 'Completed' : 'Error'), message: message || null, finishedAt: state.finishedAt });
          break;
        }
        case 'created':
        case 'running':
          break;
        case 'unknown':
          reportExit(instance, { exitCode: 137, signal: null, reason: 'ContainerStatusUnknown', message: state.message || 'the runtime does not know the container state', finishedAt: now() });
          break;
        default:
          assertNever(state, 'container state');
      }
    } catch (err) {
      if (err instanceof CriError && err.code === 'NOT_FOUND') {
        reportExit(instance, { exitCode: 137, signal: null, reason: 'ContainerStatusUnknown', message: 'the container could not be located', finishedAt: now() });
      } else {
        logger.warn({ err, container: instance.id }, 'cannot read the container status');
      }
    }
  }

  let polling = false;
  async function poll(): Promise<void> {
    if (polling || live.size === 0) return;
    polling = true;
    try {
      const exited = new Set((await cri.listContainers({ state: 'exited' })).map((c) => c.id));
      await Promise.all([...live].filter((instance) => exited.has(instance.id)).map(checkInstance));
    } catch (err) {
      logger.warn({ err }, 'cannot list containers');
    } finally {
      polling = false;
    }
  }
  const poller = setInterval(() => void poll(), pollMs);
  poller.unref();

  /** The container's image, pulled per its pull policy; its status (for the image's user). */
  async function ensureImage(container: Container): Promise<ImageInfo | undefined> {
    const image = container.image ?? '';
    const policy = container.imagePullPolicy ?? (image.endsWith(':latest') || !/:[^/]+$/.test(image) ? 'Always' : 'IfNotPresent');
    const present = policy === 'Always' ? undefined : await cri.imageStatus(image);
    if (present !== undefined) return present;
    if (policy === 'Never') throw new KubeletError(`image "${image}" is not present with pull policy Never`, false, { reason: 'ErrImageNeverPull', image });
    try {
      await cri.pullImage(image);
    } catch (err) {
      throw new KubeletError(`failed to pull image "${image}": ${(err as Error).message}`, true, { reason: 'ErrImagePull', image }, { cause: err });
    }
    return cri.imageStatus(image);
  }

  async function start(pod: Pod, ref: ContainerRef): Promise<void> {
    const { run, container, restartCount } = ref;
    const sandbox = sandboxes.get(run.uid);
    const spec = containerSpec(pod, container);
    if (sandbox?.type !== 'ready' || spec === undefined) {
      dispatch(run.uid, { type: 'startFailed', container, restartCount, message: `no sandbox or container spec for ${container}`, at: now() });
      return;
    }
    const blocked = privilegedRefusal(pod, options.allowPrivileged);
    if (blocked !== undefined) {
      dispatch(run.uid, { type: 'refused', container, reason: SECURITY_REASONS.blocked, message: blocked, at: now() });
      return;
    }
    let image: ImageInfo | undefined;
    try {
      image = await ensureImage(spec);
    } catch (err) {
      const reason = err instanceof KubeletError && typeof err.context['reason'] === 'string' ? err.context['reason'] : 'ErrImagePull';
      dispatch(run.uid, { type: 'refused', container, reason, message: (err as Error).message, at: now() });
      return;
    }
    // kubelet's generateContainerConfig: the image's user checked against runAsNonRoot, then the security context.
    const user = imageUser(image);
    const nonRoot = verifyRunAsNonRoot(pod, spec, user);
    const securityContext = nonRoot === undefined ? containerSecurityContext(pod, spec, user, { seccompRoot }) : { type: 'error' as const, message: nonRoot };
    if (securityContext.type === 'error') {
      dispatch(run.uid, { type: 'refused', container, reason: SECURITY_REASONS.config, message: securityContext.message, retryAfterMs: options.crashLoop.initialMs, at: now() });
      return;
    }
    // kubelet's GenerateRunContainerOptions: the volumes set up, the variables and mounts of the container.
    const prepared = configurator.prepare(pod, spec, { podIPs: [run.podIP], hostIP: run.hostIP });
    switch (prepared.type) {
      case 'pending':
        // A service-account token on its way: the start goes on once it is here, unless the pod is gone.
        void prepared.ready.then(() => {
          if (!closing && admitted.has(run.uid)) void start(pod, ref);
        });
        return;
      case 'refused':
        dispatch(run.uid, { type: 'refused', container, reason: prepared.reason, message: prepared.message, retryAfterMs: options.crashLoop.initialMs, at: now() });
        return;
      case 'ok':
        break;
      default:
        return assertNever(prepared, 'container configuration');
    }
    let mounts: CriMount[];
    try {
      const hosts = etcHostsMount({ pod, podIPs: run.podIP === '' ? [] : [run.podIP], clusterDomain: options.dns.clusterDomain, podDir: podFilesDir(run.uid), containerPaths: prepared.mounts.map((m) => m.containerPath) });
      mounts = [...criMounts(prepared.mounts), ...(hosts === undefined ? [] : [hosts]), terminationMessageMount(podFilesDir(run.uid), spec, restartCount)];
    } catch (err) {
      dispatch(run.uid, { type: 'refused', container, reason: CONFIG_REASONS.volume, message: `cannot write the pod's /etc/hosts or termination message file: ${(err as Error).message}`, retryAfterMs: options.crashLoop.initialMs, at: now() });
      return;
    }
    const config = generateContainerConfig({
      spec,
      uid: run.uid,
      restartCount,
      env: prepared.env,
      mounts,
      linux: { resources: linuxResources(spec.resources), securityContext: securityContext.value },
    });
    try {
      const id = await cri.createContainer(sandbox.id, config, sandbox.config);
      let end = () => {};
      const ended = new Promise<void>((resolve) => (end = resolve));
      const instance: Instance = { uid: run.uid, container, restartCount, id, ended, end };
      instances.set(instanceKey(run.uid, container, restartCount), instance);
      // kubelet keeps the previous instance (for logs --previous) and removes older ones.
      const older = instances.get(instanceKey(run.uid, container, restartCount - 2));
      if (older !== undefined) {
        instances.delete(instanceKey(run.uid, container, restartCount - 2));
        void cri.removeContainer(older.id).catch((err: unknown) => logger.warn({ err, container: older.id }, 'cannot remove an old container instance'));
      }
      await cri.startContainer(id);
      live.add(instance);
      dispatch(run.uid, { type: 'started', container, restartCount, containerID: `containerd://${id}`, at: now() });
    } catch (err) {
      dispatch(run.uid, { type: 'startFailed', container, restartCount, message: (err as Error).message, at: now() });
    }
  }

  function signal(ref: ContainerRef, signalName: 'SIGTERM' | 'SIGKILL'): void {
    const instance = instances.get(instanceKey(ref.run.uid, ref.container, ref.restartCount));
    if (instance === undefined || !live.has(instance)) return;
    let timeoutSeconds: number;
    switch (signalName) {
      case 'SIGTERM': {
        const deadline = ref.run.termination?.deadline ?? now() + ref.run.graceMs;
        timeoutSeconds = Math.max(1, Math.ceil((deadline - now()) / 1000));
        break;
      }
      case 'SIGKILL':
        timeoutSeconds = 0;
        break;
      default:
        return assertNever(signalName, 'signal');
    }
    void cri
      .stopContainer(instance.id, timeoutSeconds)
      .then(() => checkInstance(instance))
      .catch((err: unknown) => logger.warn({ err, container: instance.id, signal: signalName }, 'cannot stop the container'));
  }

  /** An exec probe through ExecSync: exit code 0 passes; a failed call (the container is gone, a timeout) fails. */
  async function execInContainer(instance: Instance, command: readonly string[], timeoutMs: number): Promise<ProbeOutcome> {
    try {
      const result = await cri.execSync(instance.id, command, Math.max(1, Math.ceil(timeoutMs / 1000)));
      if (result.exitCode === 0) return { type: 'success' };
      const output = Buffer.concat([result.stdout, result.stderr]).toString('utf8').trim().slice(0, 1024);
      return { type: 'failure', detail: `command ${JSON.stringify(command)} exited with ${result.exitCode}${output === '' ? '' : `: ${output}`}` };
    } catch (err) {
      return { type: 'failure', detail: `exec ${JSON.stringify(command)}: ${(err as Error).message}` };
    }
  }

  function stopProbes(uid: string, container: string): void {
    const key = `${uid}/${container}`;
    for (const worker of probeWorkers.get(key) ?? []) worker.stop();
    probeWorkers.delete(key);
  }

  /** Where the container's probes and hooks run: exec through ExecSync in the container, HTTP to the pod's address. */
  function hookTarget(pod: Pod, ref: ContainerRef): ProbeTarget | undefined {
    const spec = containerSpec(pod, ref.container);
    const instance = instances.get(instanceKey(ref.run.uid, ref.container, ref.restartCount));
    if (spec === undefined || instance === undefined) return undefined;
    return {
      podIP: ref.run.podIP,
      env: {},
      cwd: '/',
      ports: spec.ports ?? [],
      runExec: (command: readonly string[], timeoutMs: number) => execInContainer(instance, command, timeoutMs),
    };
  }

  function startProbes(pod: Pod, ref: ContainerRef, kinds: readonly ProbeKind[]): void {
    const spec = containerSpec(pod, ref.container);
    const target = hookTarget(pod, ref);
    if (spec === undefined || target === undefined) return;
    const key = `${ref.run.uid}/${ref.container}`;
    const workers = createContainerProbeWorkers({
      container: spec,
      kinds,
      target,
      secondMs: probeSecondMs,
      report: (kind, ok, outcome) =>
        dispatch(ref.run.uid, {
          type: 'probe',
          container: ref.container,
          restartCount: ref.restartCount,
          probe: kind,
          ok,
          ...(outcome.type === 'failure' ? { detail: outcome.detail } : {}),
          at: now(),
        }),
      failedAttempt: (kind, detail) => driver.recordProbeFailure(ref, kind, detail),
    });
    probeWorkers.set(key, [...(probeWorkers.get(key) ?? []), ...workers]);
  }

  /** Appends a pod's record (after everything appended before); resolves (never rejects) once it is written. */
  function writeRecord(uid: string, write: Promise<void>): Promise<void> {
    const settled = write.catch((err: unknown) => logger.error({ err, uid }, 'cannot record pod state; an agent restart may not adopt its containers'));
    writes.set(uid, settled);
    void settled.then(() => {
      if (writes.get(uid) === settled) writes.delete(uid);
    });
    return settled;
  }

  function persist(run: PodRun): Promise<void> | undefined {
    const sandbox = sandboxes.get(run.uid);
    if (sandbox?.type !== 'ready') return undefined;
    const containers: Record<string, CriPodRecord['containers'][string]> = {};
    for (const c of run.containers) {
      const instance = instances.get(instanceKey(run.uid, c.name, c.restartCount));
      if (instance !== undefined) containers[c.name] = { restartCount: instance.restartCount, id: instance.id };
    }
    const { termination: _termination, ...state } = run;
    const record: CriPodRecord = { version: 1, run: state, sandbox: { id: sandbox.id, ip: sandbox.ip, config: sandbox.config }, containers };
    const content = JSON.stringify(record);
    if (persisted.get(run.uid) === content) return writes.get(run.uid);
    persisted.set(run.uid, content);
    return writeRecord(run.uid, records.write(run.uid, content));
  }

  /** Asks the runtime about each adopted instance: one that exited meanwhile is reported with its exit code. */
  function resume(run: PodRun): void {
    for (const c of run.containers) {
      const instance = instances.get(instanceKey(run.uid, c.name, c.restartCount));
      if (instance === undefined || !live.has(instance)) continue;
      logger.info({ pod: podName(run), container: c.name, id: instance.id }, 'adopted container');
      void checkInstance(instance);
    }
  }

  function release(run: PodRun): void {
    admitted.delete(run.uid);
    volumesToAdopt.delete(run.uid);
    persisted.delete(run.uid);
    void writeRecord(run.uid, records.remove(run.uid));
    for (const c of run.containers) stopProbes(run.uid, c.name);
    for (const [key, instance] of instances) {
      if (instance.uid !== run.uid) continue;
      instances.delete(key);
      live.delete(instance);
      instance.end();
    }
    const sandbox = sandboxes.get(run.uid);
    if (sandbox?.type === 'ready') removeSandbox(run.uid, sandbox.id);
    else sandboxes.delete(run.uid);
  }

  const createExecutor = (driverDispatch: Dispatch): RuntimeExecutor => {
    dispatch = driverDispatch;
    return {
      runsProbes: true,
      admit(_pod, uid) {
        const sandbox = sandboxes.get(uid);
        if (sandbox?.type !== 'ready') throw new KubeletError('the pod sandbox is not ready', true, { uid });
        admitted.add(uid);
        return { podIP: sandbox.ip, hostIP };
      },
      restore: () => restoredRuns.splice(0),
      resume,
      start(pod, ref) {
        void start(pod, ref);
      },
      signal,
      startProbes,
      hookTarget,
      stopProbes,
      persist,
      release,
      close() {
        clearInterval(poller);
        for (const key of [...probeWorkers.keys()]) {
          for (const worker of probeWorkers.get(key) ?? []) worker.stop();
        }
        probeWorkers.clear();
      },
    };
  };

  const driver: PodDriver = createPodDriver({ node, logger, now, crashLoop: options.crashLoop, timers, executor: createExecutor, imagesPresent: false });

  function logs(namespace: string, name: string, container: string, opts: LogOptions): AsyncIterable<string> {
    const run = driver.find(namespace, name);
    if (run === undefined) throw new KubeletNotFoundError(`pods "${name}" not found`, { namespace, name });
    if (!run.containers.some((c) => c.name === container)) throw new KubeletNotFoundError(`container ${container} is not valid for pod ${name}`, { namespace, name, container });
    const dir = join(logRoot, podLogDirName(namespace, name, run.uid));
    const withLogs = logInstances(dir, container);
    const wanted = opts.previous === true ? withLogs.at(-2) : withLogs.at(-1);
    if (wanted === undefined) {
      throw new KubeletNotFoundError(
        opts.previous === true ? `previous terminated container "${container}" in pod "${name}" not found` : `container "${container}" in pod "${name}" has no logs yet`,
        { namespace, name, container },
      );
    }
    const instance = instances.get(instanceKey(run.uid, container, wanted));
    const following = opts.follow === true && opts.previous !== true && instance !== undefined && live.has(instance);
    return criLogText(
      readLogFile(join(dir, container, `${wanted}.log`), {
        ...(opts.tailLines === undefined ? {} : { tailLines: opts.tailLines }),
        ...(following ? { ended: instance.ended } : {}),
        ...(opts.signal === undefined ? {} : { signal: opts.signal }),
      }),
    );
  }

  /** Each running container's CRI `ContainerStats` (cgroup figures of the runtime); a container the runtime cannot answer for is left out. */
  async function usage(): Promise<readonly PodUsage[]> {
    const pods = await Promise.all(
      driver.runs().map(async (run): Promise<PodUsage> => {
        const measured = await Promise.all(
          run.containers.map(async (c): Promise<ContainerUsage | undefined> => {
            const instance = c.phase.type === 'running' ? instances.get(instanceKey(run.uid, c.name, c.restartCount)) : undefined;
            if (instance === undefined || !live.has(instance)) return undefined;
            const stats = await cri.containerStats(instance.id).catch((err: unknown) => {
              logger.debug({ err, pod: `${run.namespace}/${run.name}`, container: c.name }, 'no container stats');
              return undefined;
            });
            if (stats?.cpuUsageCoreNanoSeconds === undefined || stats.memoryWorkingSetBytes === undefined) return undefined;
            return {
              name: c.name,
              restartCount: c.restartCount,
              timeMs: stats.timestamp > 0 ? stats.timestamp : now(),
              cpuUsageNanoSeconds: stats.cpuUsageCoreNanoSeconds,
              memoryWorkingSetBytes: stats.memoryWorkingSetBytes,
            };
          }),
        );
        return { namespace: run.namespace, name: run.name, uid: run.uid, containers: measured.filter((c) => c !== undefined) };
      }),
    );
    return pods.filter((pod) => pod.containers.length > 0);
  }

  return {
    kind: 'cri',
    sync,
    statuses$: driver.statuses$,
    events$: driver.events$,
    logs,
    usage,
    async close(opts) {
      closing = true;
      await leftoversRemoved;
      await driver.close(opts);
      clearInterval(poller);
      configurator.close();
      while (removals.size > 0) await Promise.all([...removals]);
      await Promise.all(writes.values());
      await records.close();
      cri.close();
    },
  };
}
