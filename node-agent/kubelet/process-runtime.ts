/**
 * The `process` runtime: every container is an OS process.
 *
 * - Spawned detached (own session and process group) so signals reach the whole tree, by
 *   a small helper process (spawner.ts), so the event loop never waits for a fork and exec;
 *   stdout and stderr go straight to the instance's log file (the process keeps writing
 *   there even while no agent runs).
 * - Each pod gets a loopback address from the pod CIDR (given as POD_IP).
 * - A pod's record (its state and the pid and `/proc` start time of each live container) is
 *   appended to `<dataDir>/pod-records.jsonl` (pod-records.ts) on every status change, so
 *   the next agent run adopts live processes of desired pods and terminates the others,
 *   never signalling a recycled pid. It is written off the event loop (in order) and the
 *   driver reports the status once it is written: a synchronous write held the agent's
 *   whole process (apiserver, projection, every other pod's report) for as long as the file
 *   system took, 1-40 ms per write during a burst of pod starts.
 * - Containers run as the pod user (pod-user.ts: `nobody` when the agent is root, or the
 *   configured one), never as root unless configured so, with supplementary groups dropped;
 *   a `securityContext` changes that (process-user.ts: runAsUser, runAsGroup, fsGroup,
 *   supplementalGroups, allowPrivilegeEscalation, runAsNonRoot, privileged).
 *   Their working directory (unless they set `workingDir`) and HOME is `_work` in the pod's
 *   log directory (`<dataDir>/logs/<namespace>_<name>_<uid>/_work`, logs.ts), made 0700 and
 *   owned by the pod's user (the pod-level runAsUser/runAsGroup, else the pod user) by the
 *   spawner, so a container's files are removed with its pod; with an `fsGroup` it belongs
 *   to that group, 2770, so every container of the pod can write it (each carries the group).
 *   The log directory and the log files stay the agent's (opened without following
 *   symlinks), and the data directory is 0700: a pod reaches neither another pod's files nor
 *   the agent's. A directory elsewhere per pod (`<dataDir>/pods/<uid>/` until 3ed62cb) was
 *   one more path to create and remove; `_work` is made in the same helper call as the log
 *   directory.
 * - Exits of the processes this run started come from the helper, which reaps them.
 *   Adopted processes (started by a previous agent run) have no one to report them (no
 *   exit code): one timer per runtime checks them every `adoptedCheckMs`, and an exit seen
 *   that way is reported as `ContainerStatusUnknown`.
 */
import { chmodSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { type PodIdentity, containerCommand, containerEnv, identityEnv } from './container-command.ts';
import { createPodConfigurator, mountVariable } from './pod-config.ts';
import { type ContainerMount, mountsBelow } from './volumes/manager.ts';
import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { KubeletNotFoundError } from './errors.ts';
import { type PodRun, type ProbeKind, type StopSignal, restoredContainer } from './lifecycle.ts';
import { type LogOptions, containerLogFile, findPodLogDirs, logInstances, messageFromLog, podLogDir, podWorkDir, prepareLogFile, readLogFile } from './logs.ts';
import { allocatePodIP } from './pod-cidr.ts';
import { openPodRecords } from './pod-records.ts';
import { type PodUser, agentUser } from './pod-user.ts';
import { type ProcessUser, launchAs, processUserFor } from './process-user.ts';
import { SECURITY_REASONS } from './security-context.ts';
import { type ContainerRef, type Dispatch, type PodDriver, type RuntimeExecutor, createPodDriver } from './pod-driver.ts';
import type { Container, Pod } from '../../schemas/index.ts';
import { type ProbeTarget, type ProbeWorker, createContainerProbeWorkers } from './probes.ts';
import { type ProcessIdentity, isAlive, signalNumber, signalProcessGroup } from './proc.ts';
import type { PodRuntime, ResolvedRuntimeOptions, StreamTarget } from './runtime.ts';
import { sharedSpawner } from './spawner.ts';
import { createTimerQueue } from './timer-queue.ts';
import { type PodUsage, scanSessions } from './usage.ts';

/** A container process the runtime started or adopted. */
interface Instance extends ProcessIdentity {
  readonly restartCount: number;
  /** Started by a previous agent run: not our child, watched by polling. */
  readonly adopted: boolean;
  /** Resolves when the process exits (ends followed log streams). */
  readonly ended: Promise<void>;
  readonly end: () => void;
}

/** What a pod's record holds. Versioned so a later agent can read an older layout. */
interface PodRecord {
  readonly version: 1;
  readonly run: Omit<PodRun, 'termination'>;
  readonly processes: Readonly<Record<string, { readonly restartCount: number; readonly pid: number; readonly procStart: number }>>;
}

const containerKey = (uid: string, container: string) => `${uid}/${container}`;

function newInstance(identity: ProcessIdentity, restartCount: number, adopted: boolean): Instance {
  let end = () => {};
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { ...identity, restartCount, adopted, ended, end };
}

/** Creates the process runtime (see the module comment). */
export function createProcessRuntime(options: ResolvedRuntimeOptions): PodRuntime {
  const { dataDir, podCidr, hostIP, node, logger, now, probeSecondMs, adoptedCheckMs, podUser, allowPrivileged } = options;
  const agent = agentUser();
  /** Whether a process of `user` runs as the agent itself (it then gets the agent's environment). */
  const isAgent = (user: ProcessUser) => user.uid === agent.uid && user.gid === agent.gid && user.groups.length === 0;
  const userContext = { podUser, agent, allowPrivileged };
  /**
   * Who owns a pod's working directory and its mount points: the user of the pod-level
   * security context (a container's own runAsUser may differ), its group the fsGroup if
   * any; undefined when the agent cannot change owners (not root).
   */
  function workOwner(pod: Pod): { owner: PodUser; mode: number } | undefined {
    if (agent.uid !== 0) return undefined;
    const podLevel = processUserFor(pod, { name: '' }, userContext);
    const user = podLevel.type === 'run' ? podLevel.user : podUser;
    const fsGroup = pod.spec.securityContext?.fsGroup ?? undefined;
    return fsGroup === undefined ? { owner: { uid: user.uid, gid: user.gid }, mode: 0o700 } : { owner: { uid: user.uid, gid: fsGroup }, mode: 0o2770 };
  }
  if (podUser.uid === 0) logger.warn({ uid: podUser.uid, gid: podUser.gid }, 'pods run as root: every pod can read and change everything of the agent and the host');
  /** Working directories of an older agent's pods (and their records, until 3ed62cb); none are made now. */
  const podsDir = join(dataDir, 'pods');
  // Pods run as another user: what the agent keeps here (records, logs) is not theirs to read.
  // An older agent made the directory 0755: tightened.
  // 0711: pods running as another user reach their volumes (volumes/manager.ts) through it
  // without listing it; everything else here stays the agent's (logs/ is 0700).
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  chmodSync(dataDir, 0o711);
  mkdirSync(join(dataDir, 'logs'), { recursive: true, mode: 0o700 });
  chmodSync(join(dataDir, 'logs'), 0o700);
  const configurator = createPodConfigurator({ volumeRoot: join(dataDir, 'volumes'), node, objects: options.objects, logger });
  /** Each container's environment as last started (its probes run with it). */
  const startedEnv = new Map<string, Record<string, string>>();
  const records = openPodRecords(dataDir, podsDir, logger);
  const instances = new Map<string, Instance>();
  const spawner = sharedSpawner();
  void spawner.warm();
  const probeWorkers = new Map<string, ProbeWorker[]>();
  const podIPs = new Map<string, string>();
  const takenIPs = new Set<string>();
  let adoptedCheck: NodeJS.Timeout | undefined;
  let executorClosed = false;
  /** Each pod's run as last persisted (the driver persists on every status change). */
  const latestRuns = new Map<string, PodRun>();
  /** What each pod's record file holds (restored pods: a placeholder until the first write). */
  const persisted = new Map<string, string>();
  /** Each pod's last record write under way. */
  const writes = new Map<string, Promise<void>>();

  const legacyPodDir = (uid: string) => join(podsDir, encodeURIComponent(uid));
  const logDir = (run: Pick<PodRun, 'namespace' | 'name' | 'uid'>) => podLogDir(dataDir, run.namespace, run.name, encodeURIComponent(run.uid));
  const workDir = (run: Pick<PodRun, 'namespace' | 'name' | 'uid'>) => podWorkDir(logDir(run));
  const identityOf = (run: PodRun): PodIdentity => ({ namespace: run.namespace, name: run.name, uid: run.uid, podIP: run.podIP, hostIP: run.hostIP, node });
  /** A container's environment: the agent's own to a process running as the agent, else PATH and HOME (its working directory). */
  const envOf = (spec: Container, run: PodRun, user: ProcessUser | undefined, resolved?: readonly (readonly [string, string])[]) =>
    containerEnv(spec, identityOf(run), user === undefined || isAgent(user) ? process.env : { PATH: process.env.PATH, HOME: workDir(run) }, resolved);
  const containerSpec = (pod: Pod, name: string): Container | undefined => [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === name);
  /** The pod of each pod uid with a started container (for exec and port-forward). */
  const startedPods = new Map<string, Pod>();
  /** The user each container was last started as (its exec probes and `kubectl exec` run as it). */
  const startedUsers = new Map<string, ProcessUser>();
  /** The user a container runs as: as started, or (a process adopted from an earlier agent run) as its pod says. */
  function userOf(pod: Pod, spec: Container, uid: string): ProcessUser {
    const started = startedUsers.get(containerKey(uid, spec.name));
    if (started !== undefined) return started;
    const decided = processUserFor(pod, spec, userContext);
    return decided.type === 'run' ? decided.user : { ...podUser, groups: [], noNewPrivs: false };
  }

  /**
   * A mount in the process runtime: at the mount path taken relative to the pod's working
   * directory (`/etc/config` → `_work/etc/config`), the volume's host directory (subPath
   * applied), made before the container starts: a bind mount (remounted read-only for
   * `readOnly`) when the agent is root and pods run as another user (who cannot traverse the
   * agent's directories to follow a link), else a symlink. A path another container of the
   * pod already mounts keeps its first mount.
   */
  function linkMounts(run: PodRun, pod: Pod, mounts: readonly ContainerMount[]): void {
    const work = workDir(run);
    const owned = workOwner(pod);
    const own = (path: string) => {
      if (owned !== undefined) lchownSync(path, owned.owner.uid, owned.owner.gid);
    };
    if (!existsSync(work)) {
      mkdirSync(work, { recursive: true, mode: 0o700 });
      own(work);
      if (owned !== undefined) chmodSync(work, owned.mode);
    }
    for (const mount of mounts) {
      const relative = normalize(mount.containerPath).replace(/^\/+/, '').replace(/\/+$/, '');
      if (relative === '' || relative === '.' || relative.split('/').includes('..')) continue;
      const link = join(work, relative);
      let parent = work;
      for (const segment of relative.split('/').slice(0, -1)) {
        parent = join(parent, segment);
        if (!existsSync(parent)) {
          mkdirSync(parent, { mode: 0o755 });
          own(parent);
        }
      }
      let current: string | undefined;
      try {
        current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : '';
      } catch {
        current = undefined;
      }
      if (current === mount.hostPath) continue;
      if (current !== undefined) {
        if (current !== '' || !mountsBelow(work).includes(link)) logger.warn({ pod: `${run.namespace}/${run.name}`, mountPath: mount.containerPath }, 'another container of the pod mounts something else at this path; keeping the first');
        continue;
      }
      if (owned === undefined || owned.owner.uid === 0) {
        symlinkSync(mount.hostPath, link);
        own(link);
        continue;
      }
      if (statSync(mount.hostPath).isDirectory()) mkdirSync(link, { mode: 0o755 });
      else writeFileSync(link, '', { mode: 0o644 });
      execFileSync('mount', ['--bind', mount.hostPath, link]);
      if (mount.readOnly) execFileSync('mount', ['-o', 'remount,bind,ro', link]);
    }
  }

  function createExecutor(dispatch: Dispatch): RuntimeExecutor {
    function reportExit(uid: string, container: string, instance: Instance, exit: { exitCode: number; signal: number | null; reason?: string; message?: string }): void {
      const key = containerKey(uid, container);
      if (instances.get(key) === instance) instances.delete(key);
      instance.end();
      // Our own children's process groups were SIGKILLed by the spawner as it reaped them. An
      // adopted process's group is left alone: its pid may be recycled by now.
      dispatch(uid, { type: 'exited', container, restartCount: instance.restartCount, ...exit, at: now() });
    }

    function checkAdopted(): void {
      adoptedCheck = undefined;
      for (const [key, instance] of instances) {
        if (!instance.adopted || isAlive(instance)) continue;
        const [uid, container] = [key.slice(0, key.lastIndexOf('/')), key.slice(key.lastIndexOf('/') + 1)];
        reportExit(uid, container, instance, {
          exitCode: 137,
          signal: null,
          reason: 'ContainerStatusUnknown',
          message: 'The container was started by a previous agent run; its exit code is unknown',
        });
      }
      watchAdopted();
    }

    function watchAdopted(): void {
      if (adoptedCheck !== undefined || executorClosed || ![...instances.values()].some((i) => i.adopted)) return;
      adoptedCheck = setTimeout(checkAdopted, adoptedCheckMs);
      adoptedCheck.unref();
    }

    /** Appends a pod's record (after everything appended before); resolves (never rejects) once it is written. */
    function writeRecord(uid: string, content: string): Promise<void> {
      const write = records.write(uid, content).catch((err: unknown) => logger.error({ err, uid }, 'cannot record pod state; an agent restart may not adopt its processes'));
      writes.set(uid, write);
      void write.then(() => {
        if (writes.get(uid) === write) writes.delete(uid);
      });
      return write;
    }

    function persist(run: PodRun): Promise<void> | undefined {
      latestRuns.set(run.uid, run);
      const processes: Record<string, PodRecord['processes'][string]> = {};
      for (const c of run.containers) {
        const instance = instances.get(containerKey(run.uid, c.name));
        if (instance !== undefined) processes[c.name] = { restartCount: instance.restartCount, pid: instance.pid, procStart: instance.procStart };
      }
      // A new pod none of whose containers has started yet has nothing to adopt or count: a
      // restart admits it afresh. (Its first write comes with its first process.)
      if (Object.keys(processes).length === 0 && !persisted.has(run.uid) && run.containers.every((c) => (c.phase.type === 'creating' || c.phase.type === 'pending') && c.restartCount === 0)) return undefined;
      const { termination: _termination, ...state } = run;
      const record: PodRecord = { version: 1, run: state, processes };
      const content = JSON.stringify(record);
      if (persisted.get(run.uid) === content) return writes.get(run.uid);
      persisted.set(run.uid, content);
      return writeRecord(run.uid, content);
    }

    /**
     * Starts a container through the spawner's helper process (see spawner.ts): the agent's event
     * loop does not wait for the fork and exec, so a burst of pods does not hold every status
     * report until the last spawn. The reducer treats a start as asynchronous anyway: the
     * container stays `creating` until `started`, and a pod terminated meanwhile is signalled
     * as soon as its container has started.
     */
    function startContainer(pod: Pod, ref: ContainerRef): void {
      const { run, container, restartCount } = ref;
      const spec = containerSpec(pod, container);
      if (spec === undefined) return;
      startedPods.set(run.uid, pod);
      const decided = processUserFor(pod, spec, userContext);
      if (decided.type === 'refused') {
        // A blocked pod stays blocked (its spec and this node's settings do not change); a
        // config error is retried, as kubelet's pod worker does.
        const retry = decided.reason === SECURITY_REASONS.blocked ? {} : { retryAfterMs: options.crashLoop.initialMs };
        dispatch(run.uid, { type: 'refused', container, reason: decided.reason, message: decided.message, ...retry, at: now() });
        return;
      }
      const user = decided.user;
      const identity = identityEnv(identityOf(run));
      const config = configurator.prepare(pod, spec, { podIPs: [run.podIP], hostIP: run.hostIP }, new Map(Object.entries(identity)));
      if (config.type === 'pending') {
        // A token on its way (in-process or one HTTPS round trip): the start goes on once it is
        // here, unless the pod has been stopped or released meanwhile.
        void config.ready.then(() => {
          const latest = startedPods.get(run.uid);
          if (!executorClosed && latest !== undefined) startContainer(latest, ref);
        });
        return;
      }
      if (config.type === 'refused') {
        dispatch(run.uid, { type: 'refused', container, reason: config.reason, message: config.message, retryAfterMs: options.crashLoop.initialMs, at: now() });
        return;
      }
      try {
        linkMounts(run, pod, config.mounts);
      } catch (err) {
        dispatch(run.uid, { type: 'refused', container, reason: 'ContainerCreating', message: `cannot make the mounts: ${(err as Error).message}`, retryAfterMs: options.crashLoop.initialMs, at: now() });
        return;
      }
      const env = envOf(spec, run, user, [...config.env, ...config.mounts.map((mount) => [mountVariable(mount.containerPath), mount.hostPath] as const)]);
      startedEnv.set(containerKey(run.uid, container), env);
      startedUsers.set(containerKey(run.uid, container), user);
      const command = containerCommand(spec, env);
      if (command.type === 'refused') {
        dispatch(run.uid, { type: 'refused', container, reason: command.reason, message: command.message, at: now() });
        return;
      }
      const launch = launchAs(user, agent, command.file, command.args);
      if (typeof launch === 'string') {
        dispatch(run.uid, { type: 'refused', container, reason: SECURITY_REASONS.config, message: launch, retryAfterMs: options.crashLoop.initialMs, at: now() });
        return;
      }
      const owned = workOwner(pod);
      // Deleting older instances' logs (from the third instance on) stays here, with the reads of them.
      const logFile = restartCount >= 2 ? prepareLogFile(logDir(run), container, restartCount) : containerLogFile(logDir(run), container, restartCount);
      const podName = `${run.namespace}/${run.name}`;
      let instance: Instance | undefined;
      spawner.spawn(
        {
          file: launch.file,
          args: launch.args,
          cwd: spec.workingDir ?? workDir(run),
          env,
          logFile,
          mkdirs: [dirname(logFile)],
          ownedDir: { path: workDir(run), ...(owned === undefined ? {} : { owner: owned.owner, mode: owned.mode }) },
          ...(launch.ids === undefined ? {} : { user: launch.ids }),
        },
        {
          spawned(pid, procStart) {
            instance = newInstance({ pid, procStart }, restartCount, false);
            instances.set(containerKey(run.uid, container), instance);
            logger.info({ pod: podName, container, restartCount, pid, uid: user.uid, gid: user.gid, groups: user.groups, command: [command.file, ...command.args] }, 'container started');
            // Handled at once (the driver drains synchronously): the status change it makes
            // persists the record with the new process.
            dispatch(run.uid, { type: 'started', container, restartCount, containerID: `process://${pid}`, at: now() });
            // If it made none (or the runtime is closed), the process is recorded here, with the
            // pod's run as of its last status change, so an agent restart adopts it.
            void persist(latestRuns.get(run.uid) ?? run);
          },
          failed(message) {
            dispatch(run.uid, { type: 'startFailed', container, restartCount, message: `failed to start container "${container}": ${message}`, at: now() });
          },
          error(message) {
            logger.warn({ err: message, pod: podName, container, pid: instance?.pid }, 'container process error');
          },
          exited(code, signal) {
            if (instance === undefined) return;
            const ended = instance;
            const exit = { exitCode: code ?? 128 + (signal === null ? 0 : signalNumber(signal)), signal: signal === null ? null : signalNumber(signal) };
            // kubelet's FallbackToLogsOnError: a failed container's message is the end of its log.
            // (No file at terminationMessagePath is read: the pod's containers share one working
            // directory, so there is no per-container place for it; see the README.)
            if (exit.exitCode === 0 || spec.terminationMessagePolicy !== 'FallbackToLogsOnError') {
              reportExit(run.uid, container, ended, exit);
              return;
            }
            void messageFromLog(logFile).then((message) => reportExit(run.uid, container, ended, message === '' ? exit : { ...exit, message }));
          },
        },
      );
    }

    function signalContainer(ref: ContainerRef, signal: StopSignal): void {
      const instance = instances.get(containerKey(ref.run.uid, ref.container));
      if (instance === undefined || instance.restartCount !== ref.restartCount) return;
      if (instance.adopted && !isAlive(instance)) return;
      logger.info({ pod: `${ref.run.namespace}/${ref.run.name}`, container: ref.container, pid: instance.pid, signal }, 'signalling container');
      signalProcessGroup(instance.pid, signal);
    }

    function stopProbes(uid: string, container: string): void {
      const key = containerKey(uid, container);
      for (const worker of probeWorkers.get(key) ?? []) worker.stop();
      probeWorkers.delete(key);
    }

    /** Where the container's probes and hooks run: a process with its environment, working directory and user. */
    function hookTarget(pod: Pod, ref: ContainerRef): ProbeTarget | undefined {
      const spec = containerSpec(pod, ref.container);
      if (spec === undefined) return undefined;
      const user = userOf(pod, spec, ref.run.uid);
      return {
        podIP: ref.run.podIP,
        env: startedEnv.get(containerKey(ref.run.uid, ref.container)) ?? envOf(spec, ref.run, user),
        cwd: spec.workingDir ?? workDir(ref.run),
        ports: spec.ports ?? [],
        user,
      };
    }

    function startProbes(pod: Pod, ref: ContainerRef, kinds: readonly ProbeKind[]): void {
      const spec = containerSpec(pod, ref.container);
      const target = hookTarget(pod, ref);
      if (spec === undefined || target === undefined) return;
      const key = containerKey(ref.run.uid, ref.container);
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

    function restore(): PodRun[] {
      const runs: PodRun[] = [];
      // An older agent's directories of pods without a record (an unreadable one, or removed while no agent ran).
      for (const entry of existsSync(podsDir) ? readdirSync(podsDir) : []) {
        if (!records.restored.has(decodeURIComponent(entry))) rmSync(join(podsDir, entry), { recursive: true, force: true });
      }
      for (const [uid, restored] of records.restored) {
        const record = restored as PodRecord;
        if (record.version !== 1) {
          logger.error({ uid, version: record.version }, 'pod record of an unknown version (written by a newer agent?); leaving it and its processes alone');
          continue;
        }
        const containers = record.run.containers.map((c) => {
          const process = record.processes[c.name];
          return restoredContainer(c, process === undefined ? undefined : { restartCount: process.restartCount, containerID: `process://${process.pid}` }, record.run.startTime);
        });
        for (const c of containers) {
          const process = record.processes[c.name];
          if (process !== undefined && c.phase.type === 'running') instances.set(containerKey(record.run.uid, c.name), newInstance(process, process.restartCount, true));
        }
        podIPs.set(record.run.uid, record.run.podIP);
        takenIPs.add(record.run.podIP);
        persisted.set(record.run.uid, '');
        runs.push({ ...record.run, containers, termination: null });
      }
      return runs;
    }

    function resume(run: PodRun): void {
      for (const c of run.containers) {
        const instance = instances.get(containerKey(run.uid, c.name));
        if (instance === undefined) continue;
        if (isAlive(instance)) {
          logger.info({ pod: `${run.namespace}/${run.name}`, container: c.name, pid: instance.pid }, 'adopted live container process');
          continue;
        }
        reportExit(run.uid, c.name, instance, {
          exitCode: 137,
          signal: null,
          reason: 'ContainerStatusUnknown',
          message: 'The container exited while no agent was running; its exit code is unknown',
        });
      }
      watchAdopted();
    }

    return {
      runsProbes: true,
      admit(pod, uid) {
        let podIP = podIPs.get(uid);
        if (podIP === undefined) {
          podIP = allocatePodIP(podCidr, uid, takenIPs);
          podIPs.set(uid, podIP);
          takenIPs.add(podIP);
        }
        return { podIP, hostIP };
      },
      restore,
      resume,
      start: startContainer,
      signal: signalContainer,
      startProbes,
      hookTarget,
      stopProbes,
      persist,
      release(run) {
        for (const c of run.containers) stopProbes(run.uid, c.name);
        startedPods.delete(run.uid);
        const ip = podIPs.get(run.uid);
        podIPs.delete(run.uid);
        if (ip !== undefined) takenIPs.delete(ip);
        latestRuns.delete(run.uid);
        persisted.delete(run.uid);
        for (const c of run.containers) {
          startedEnv.delete(containerKey(run.uid, c.name));
          startedUsers.delete(containerKey(run.uid, c.name));
        }
        // Before the log directory goes: its bind mounts are unmounted (a recursive removal
        // would go through them into the volumes, or a hostPath).
        for (const mountPoint of mountsBelow(logDir(run))) {
          try {
            execFileSync('umount', ['-l', mountPoint]);
          } catch (err) {
            logger.error({ err, mountPoint }, 'cannot unmount a mount of the pod; leaving its directory');
          }
        }
        const stillMounted = mountsBelow(logDir(run)).length > 0;
        if (!stillMounted) configurator.release(run.uid);
        const removed = records.remove(run.uid).catch((err: unknown) => logger.error({ err, uid: run.uid }, 'cannot remove the pod record (the next agent run finds it and reports the pod terminated again)'));
        writes.set(run.uid, removed);
        void removed.then(() => {
          if (writes.get(run.uid) === removed) writes.delete(run.uid);
        });
        if (!stillMounted) rmSync(logDir(run), { recursive: true, force: true });
        if (existsSync(legacyPodDir(run.uid))) rmSync(legacyPodDir(run.uid), { recursive: true, force: true });
      },
      close() {
        executorClosed = true;
        configurator.close();
        for (const key of [...probeWorkers.keys()]) {
          for (const worker of probeWorkers.get(key) ?? []) worker.stop();
        }
        probeWorkers.clear();
        if (adoptedCheck !== undefined) clearTimeout(adoptedCheck);
        adoptedCheck = undefined;
        for (const instance of instances.values()) instance.end();
      },
    };
  }

  const driver: PodDriver = createPodDriver({
    node,
    logger,
    now,
    crashLoop: options.crashLoop,
    timers: createTimerQueue(),
    executor: createExecutor,
    imagesPresent: true,
  });

  function logs(namespace: string, name: string, container: string, opts: LogOptions): AsyncIterable<string> {
    const run = driver.find(namespace, name);
    const dir = run !== undefined ? logDir(run) : findPodLogDirs(dataDir, namespace, name)[0];
    if (dir === undefined) throw new KubeletNotFoundError(`pods "${name}" not found`, { namespace, name });
    if (run !== undefined && !run.containers.some((c) => c.name === container)) {
      throw new KubeletNotFoundError(`container ${container} is not valid for pod ${name}`, { namespace, name, container });
    }
    const instancesWithLogs = logInstances(dir, container);
    const current = instancesWithLogs.at(-1);
    const wanted = opts.previous === true ? instancesWithLogs.at(-2) : current;
    if (wanted === undefined) {
      throw new KubeletNotFoundError(
        opts.previous === true ? `previous terminated container "${container}" in pod "${name}" not found` : `container "${container}" in pod "${name}" has no logs yet`,
        { namespace, name, container },
      );
    }
    const instance = run === undefined ? undefined : instances.get(containerKey(run.uid, container));
    const following = opts.follow === true && opts.previous !== true && instance !== undefined && instance.restartCount === wanted;
    return readLogFile(containerLogFile(dir, container, wanted), {
      ...(opts.tailLines === undefined ? {} : { tailLines: opts.tailLines }),
      ...(following ? { ended: instance.ended } : {}),
      ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    });
  }

  /** Each running container's process tree (the session its process leads), measured from one scan of `/proc`. */
  async function usage(): Promise<readonly PodUsage[]> {
    const sessions = scanSessions();
    const timeMs = now();
    const pods: PodUsage[] = [];
    for (const run of driver.runs()) {
      const containers = run.containers.flatMap((c) => {
        const instance = c.phase.type === 'running' ? instances.get(containerKey(run.uid, c.name)) : undefined;
        const measured = instance === undefined || !isAlive(instance) ? undefined : sessions.get(instance.pid);
        return measured === undefined ? [] : [{ name: c.name, restartCount: instance!.restartCount, timeMs, ...measured }];
      });
      if (containers.length > 0) pods.push({ namespace: run.namespace, name: run.name, uid: run.uid, containers });
    }
    return pods;
  }

  /** A running container's environment, for exec and port-forward (see `PodRuntime.streamTarget`). */
  function streamTarget(namespace: string, name: string, wanted: string | undefined): StreamTarget {
    const run = driver.find(namespace, name);
    if (run === undefined) throw new KubeletNotFoundError(`pod "${name}" not found on node ${node}`, { namespace, name });
    const container = wanted ?? run.containers.find((c) => instances.has(containerKey(run.uid, c.name)))?.name ?? run.containers[0]?.name ?? '';
    const pod = startedPods.get(run.uid);
    const spec = pod === undefined ? undefined : containerSpec(pod, container);
    const instance = instances.get(containerKey(run.uid, container));
    if (pod === undefined || spec === undefined || instance === undefined || !isAlive(instance)) {
      throw new KubeletNotFoundError(`container "${container}" in pod "${name}" is not running`, { namespace, name, container });
    }
    const user = userOf(pod, spec, run.uid);
    return { type: 'process', pid: instance.pid, podIP: run.podIP, cwd: spec.workingDir ?? workDir(run), env: startedEnv.get(containerKey(run.uid, container)) ?? envOf(spec, run, user), user };
  }

  return {
    kind: 'process',
    sync(pods) {
      driver.sync(pods);
      for (const pod of pods) configurator.refresh(pod);
    },
    statuses$: driver.statuses$,
    events$: driver.events$,
    logs,
    usage,
    streamTarget,
    close: async (opts) => {
      await driver.close(opts);
      // Records of processes started or reported while closing.
      await Promise.all(writes.values());
      await records.close();
    },
  };
}
