/**
 * The node agent: for one or many nodes (sim runs 1,000 from one process) it registers
 * the Node and its Lease, renews the Lease (heartbeats, node-lease.ts), runs the pods the
 * projection says are bound to it, reports their status to the observed topic, and
 * finishes graceful deletions once a pod has stopped.
 */
import { statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { filter, map, type Subscription } from 'rxjs';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, appendBodies, appendEnvelopes, envelope, podAdmissionOf, podQos, type Projection } from '../projections/index.ts';
import type { EventBody, EventEnvelope, Node, NodeCondition, NodeStatus, NodeSystemInfo, Pod, PodStatus, Taint } from '../schemas/index.ts';
import { goArch, hostNodeInfo } from './node-info.ts';
import { checkCriRuntime, createPodRuntime, type CriRuntimeOptions, type PodDnsOptions, type PodRuntime, type PodUser, type RuntimeKind } from './kubelet/index.ts';
import { startLogServer, type LogServerTls, type TokenAuthorizer } from './log-server.ts';
import { createStreamingHandler, type StreamingHandler } from './streaming/server.ts';
import { type PodObjectChange, viewObjectSource } from './kubelet/pod-objects.ts';
import { createServiceAccountTokenManager, type RequestServiceAccountToken } from './kubelet/volumes/service-account-tokens.ts';
import { mergePodStatus } from './kubelet/status.ts';
import { type NodeResourceUsage, type ResourceUsage, startResourceUsage } from './resource-usage.ts';
import { createKubeletMetrics, type ReportedPod } from './metrics.ts';
import { createEventReporter } from './event-reporter.ts';
import { startNodeLeases } from './node-lease.ts';
import { localPathAnnotations, startLocalPathVolumes } from './local-path.ts';
import type { Registry } from 'prom-client';

/** What a node offers (`status.capacity`): cpu, memory and pods, and any extended resource (e.g. `nvidia.com/gpu`). */
export interface NodeResources {
  readonly cpu: string;
  readonly memory: string;
  readonly pods: string;
  readonly [extended: string]: string;
}

export interface NodeAgentOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly logger: Logger;
  /** Names of the nodes this agent runs. */
  readonly nodes: readonly string[];
  readonly runtime: RuntimeKind;
  /** Process runtime: the user pods run as (default: `nobody` when the agent runs as root, else the agent's user). */
  readonly podUser?: PodUser;
  /** CRI runtime: the container runtime's endpoint (every node of this agent uses it) and settings. */
  readonly cri?: CriRuntimeOptions;
  /** False: privileged containers do not run (default true, as kubelet 1.32; see `PodRuntimeOptions.allowPrivileged`). */
  readonly allowPrivileged?: boolean;
  /** kubelet's `--cluster-dns`, `--cluster-domain` and `--resolv-conf`: how pods' DNS settings are formed (cri runtime). */
  readonly dns?: PodDnsOptions;
  readonly dataDir: string;
  readonly capacity?: NodeResources;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly Taint[];
  /** Heartbeat period: how often the nodes' Leases are renewed (default 10 s, kubelet's; the node-lifecycle grace is 50 s). */
  readonly heartbeatMs?: number;
  /** Pod CIDR of the i-th node; default 127.100.i.0/24 (process) or 127.(110+i/256).(i%256).0/24 (sim). */
  readonly podCIDR?: (index: number) => string;
  readonly crashLoop?: { readonly initialMs: number; readonly maxMs: number };
  readonly simStartDelayMs?: number;
  readonly probeSecondMs?: number;
  /** How often the resource usage of pods and nodes is sampled (the metrics API's resolution); default 15 s. */
  readonly metricsResolutionMs?: number;
  /**
   * Serve container logs over HTTPS for apiservers in other processes (distributed mode),
   * to clients whose certificate `tls.clientCA` signed and whose name is in `allowedClients`
   * (default: the apiserver's `kubelet-client`).
   */
  readonly serveLogs?: {
    readonly host: string;
    readonly port?: number;
    readonly tls: LogServerTls;
    readonly allowedClients?: readonly string[];
    /** Who may read `/metrics` besides the allowed clients (bearer tokens, as kubelet's webhook authn/authz); see log-server.ts. */
    readonly authorizeToken?: TokenAuthorizer;
  };
  /** Where kubelet's metrics of the pods this agent runs go (and what the endpoint's `/metrics` serves); default nowhere. */
  readonly registry?: Registry;
  /** False: kubelet's Events (Created, Started, BackOff, Unhealthy, Killing …) are not written; default true. */
  readonly events?: boolean;
  /**
   * How the agent asks the apiserver for bound service-account tokens (the TokenRequest API,
   * in-process or over HTTPS), which projected `serviceAccountToken` sources hold; without it
   * those files are not written (logged).
   */
  readonly serviceAccountTokens?: RequestServiceAccountToken;
}

export interface NodeAgent {
  /** The runtime of `node` (for logs and failure injection). */
  runtimeOf(node: string): PodRuntime | undefined;
  /** The latest resource usage of `node` and its pods (the metrics API's figures), or undefined when this agent does not run it. */
  resourceUsageOf(node: string): NodeResourceUsage | undefined;
  /**
   * Serves an exec/attach/port-forward upgrade whose URL is the agent's path (`/exec/NODE/…`,
   * streaming/server.ts): an apiserver in the same process hands requests over here.
   */
  readonly streaming: StreamingHandler;
  /** Stops heartbeats and status reports; with `stopPods` the pods are terminated first. */
  close(opts?: { stopPods: boolean }): Promise<void>;
}

const DEFAULT_CAPACITY: NodeResources = { cpu: '4', memory: '8Gi', pods: '110' };

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * What kubelet reports beside cpu, memory and pods: `ephemeral-storage` from the filesystem of
 * the agent's data directory (capacity its size, allocatable less kubelet's default hard
 * eviction threshold `nodefs.available<10%`), and no huge pages.
 */
const storageResources = (dir: string): { capacity: Record<string, string>; allocatable: Record<string, string> } => {
  let bytes = 0;
  // The directory may not exist yet: the filesystem it will be on is that of its nearest existing parent.
  for (let path = dir; bytes === 0; path = dirname(path)) {
    try {
      const stats = statfsSync(path);
      bytes = stats.blocks * stats.bsize;
    } catch {
      if (dirname(path) === path) break;
    }
  }
  const kib = (value: number): string => `${Math.floor(value / 1024)}Ki`;
  const huge = { 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' };
  return { capacity: { 'ephemeral-storage': kib(bytes), ...huge }, allocatable: { 'ephemeral-storage': kib(bytes * 0.9), ...huge } };
};

const readyStatus = (capacity: NodeResources, now: number, logPort: number | undefined, nodeInfo: NodeSystemInfo, storage: ReturnType<typeof storageResources>): NodeStatus => {
  const ready: NodeCondition = {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    message: 'logplane agent is posting ready status',
    lastHeartbeatTime: isoTime(now),
    lastTransitionTime: isoTime(now),
  };
  return {
    capacity: { ...storage.capacity, ...capacity },
    allocatable: { ...storage.allocatable, ...capacity },
    conditions: [ready],
    addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
    nodeInfo,
    ...(logPort !== undefined ? { daemonEndpoints: { kubeletEndpoint: { Port: logPort } } } : {}),
  };
};

const defaultPodCIDR = (kind: RuntimeKind) => (index: number): string =>
  kind === 'process' ? `127.100.${index % 256}.0/24` : `127.${110 + (Math.floor(index / 256) % 100)}.${index % 256}.0/24`;

const isTerminal = (status: PodStatus | undefined): boolean => status?.phase === 'Succeeded' || status?.phase === 'Failed';

/**
 * How long a new pod's first status (Pending, every container ContainerCreating) is held
 * back: when its containers start within that time (the usual case) the Running status
 * replaces it, and the pod costs the log and every projection one status event instead of
 * two. (The kubelet's status manager batches likewise.) Later statuses are never held.
 * Long enough for a burst: the 2 spawner helpers start 100 containers in 200-800 ms on 2
 * busy cores, and with 100 ms 60-100 of a burst's 100 pods reported Pending first, each
 * report one more event to append, fetch and fold while the containers wait for the CPU.
 */
/** Backoff of a status report the log refused (a broker failing over): 200 ms doubling to 10 s. */
const REPORT_RETRY_BASE_MS = 200;
const REPORT_RETRY_MAX_MS = 10_000;
const ADMISSION_HOLD_MS = 1_000;

const isAdmissionOnly = (status: PodStatus): boolean =>
  status.phase === 'Pending' && (status.containerStatuses ?? []).every((c) => c.state?.waiting?.reason === 'ContainerCreating');

const hasStopped = (status: PodStatus): boolean =>
  status.phase === 'Succeeded' ||
  status.phase === 'Failed' ||
  (status.containerStatuses ?? []).every((c) => !c.state?.running && !c.state?.waiting);

/** Starts the agent for `options.nodes`. Resolves once the nodes are registered and Ready. */
export const startNodeAgent = async (options: NodeAgentOptions): Promise<NodeAgent> => {
  const { log, projection, logger } = options;
  const capacity = options.capacity ?? DEFAULT_CAPACITY;
  const storage = storageResources(options.dataDir);
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const podCIDR = options.podCIDR ?? defaultPodCIDR(options.runtime);
  const nodeSet = new Set(options.nodes);
  const actorFor = (node: string) => ({ type: 'node' as const, name: node });

  // kubelet reports the runtime as `<name>://<version>` (containerd://1.6.20); logplane's own runtimes as logplane-<kind>://<version>.
  let runtimeVersion = `logplane-${options.runtime}://0.1.0`;
  if (options.runtime === 'cri' && options.cri !== undefined) {
    const version = await checkCriRuntime(options.cri.endpoint);
    logger.info({ endpoint: options.cri.endpoint, runtime: version.runtimeName, version: version.runtimeVersion, api: version.runtimeApiVersion }, 'CRI runtime answers');
    runtimeVersion = `${version.runtimeName}://${version.runtimeVersion}`;
  }
  const nodeInfo = hostNodeInfo(runtimeVersion);
  const kubelet = options.registry ? createKubeletMetrics(options.registry) : undefined;
  /** With metrics: the latest status each runtime reported per pod key, counted on scrape. */
  const reported = new Map<string, ReportedPod>();
  /** With metrics: when this agent first saw each pod (uid) bound to one of its nodes, until it runs. */
  const firstSeen = new Map<string, number>();
  kubelet?.countFrom(() => reported.values());
  const runtimes = new Map<string, PodRuntime>();
  let resourceUsage: ResourceUsage | undefined;
  const streaming = createStreamingHandler({ runtimeOf: (node) => runtimes.get(node), logger: logger.child({ part: 'streaming' }) });
  const logServer = options.serveLogs
    ? await startLogServer({
        runtimeOf: (node) => runtimes.get(node),
        resourceUsageOf: (node) => resourceUsage?.of(node),
        streaming,
        ...options.serveLogs,
        ...(options.registry ? { metrics: options.registry } : {}),
        nodes: options.nodes,
        logger,
      })
    : undefined;

  // Register (or re-register) every node, then declare it Ready.
  const view = projection.view();
  const creations: EventBody[] = [];
  for (const name of options.nodes) {
    if (view.get(`Node//${name}`)) continue;
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      // kubelet's initial labels (initialNode): hostname, os and arch, with their deprecated beta twins.
      metadata: {
        name,
        labels: {
          'beta.kubernetes.io/arch': nodeInfo.architecture ?? goArch(),
          'beta.kubernetes.io/os': 'linux',
          'kubernetes.io/arch': nodeInfo.architecture ?? goArch(),
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          ...options.labels,
        },
        annotations: localPathAnnotations(options.dataDir, name),
      },
      spec: { ...(options.taints?.length ? { taints: options.taints.map((t) => ({ ...t })) } : {}), podCIDR: podCIDR(options.nodes.indexOf(name)) },
      status: readyStatus(capacity, Date.now(), logServer?.port, nodeInfo, storage),
    };
    creations.push({ type: 'ObjectCreated', object: node });
  }
  if (creations.length > 0) await appendAndWait(log, projection, creations, { actor: { type: 'node', name: 'node-agent' } });
  await appendBodies(
    log,
    options.nodes.map((name) => ({ type: 'NodeStatusChanged', name, status: readyStatus(capacity, Date.now(), logServer?.port, nodeInfo, storage) }) as EventBody),
    { actor: { type: 'node', name: options.nodes.length === 1 ? options.nodes[0]! : 'node-agent' } },
  );

  const leases = startNodeLeases({ log, projection, logger: logger.child({ part: 'node-lease' }), nodes: options.nodes, renewIntervalMs: heartbeatMs });

  // One runtime per node; statuses flow to the observed topic, coalesced per tick.
  /** `at`: when the runtime reported the status (the event's time), not when the flush sends it. */
  const pendingStatus = new Map<string, { node: string; body: EventBody; holdUntil: number; at: number }>();
  const pendingDeletes = new Map<string, { node: string; body: EventBody }>();
  let flushScheduled = false;
  /** Status appends that failed in a row (their reports are queued again, sent after a backoff). */
  let reportFailures = 0;
  let holdTimer: NodeJS.Timeout | undefined;
  const inFlight = new Set<Promise<unknown>>();
  /** Sends what is pending, except first statuses still held back (all of them with `force`). */
  const flush = (force = false): void => {
    flushScheduled = false;
    const now = performance.now();
    let nextRelease = Number.POSITIVE_INFINITY;
    // Every node's reports in one append (each envelope keeps its node as actor): one log
    // append per node made a flush of a busy tick a thousand small appends and transactions.
    const envelopes: EventEnvelope[] = [];
    const time = Date.now();
    const sentStatus: [string, { node: string; body: EventBody; holdUntil: number; at: number }][] = [];
    for (const [key, entry] of pendingStatus) {
      if (!force && entry.holdUntil > now && !pendingDeletes.has(key)) {
        nextRelease = Math.min(nextRelease, entry.holdUntil);
        continue;
      }
      envelopes.push(envelope(entry.body, { actor: actorFor(entry.node), time: entry.at }));
      sentStatus.push([key, entry]);
      pendingStatus.delete(key);
    }
    const sentDeletes = [...pendingDeletes];
    for (const { node, body } of pendingDeletes.values()) envelopes.push(envelope(body, { actor: actorFor(node), time }));
    pendingDeletes.clear();
    if (nextRelease !== Number.POSITIVE_INFINITY && holdTimer === undefined && !closed) {
      holdTimer = setTimeout(() => {
        holdTimer = undefined;
        flush();
      }, Math.max(0, nextRelease - now));
    }
    if (envelopes.length === 0) return;
    const sent = appendEnvelopes(log, envelopes).then(
      () => {
        reportFailures = 0;
      },
      (error: unknown) => {
        // As kubelet's status manager: a status that did not reach the log is sent again (the
        // runtime reports a pod only when it changes, so a dropped report would leave the pod's
        // last status in the log for good). A newer report of the same pod, queued meanwhile, wins.
        for (const [key, entry] of sentStatus) if (!pendingStatus.has(key)) pendingStatus.set(key, { ...entry, holdUntil: 0 });
        for (const [key, entry] of sentDeletes) if (!pendingDeletes.has(key)) pendingDeletes.set(key, entry);
        reportFailures++;
        const retryInMs = Math.min(REPORT_RETRY_MAX_MS, REPORT_RETRY_BASE_MS * 2 ** (reportFailures - 1));
        logger.warn({ reports: envelopes.length, error: String(error), retryInMs }, 'status report failed; sending it again');
        if (!closed) setTimeout(scheduleFlush, retryInMs).unref();
      },
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };
  const scheduleFlush = (): void => {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => flush());
  };
  /**
   * The pods bound to this agent's nodes as the projection has them: read from its view once
   * at start, then kept from its change feed (which carries every changed object), so neither
   * a node's sync nor a status report reads (and decodes) pods from the projection.
   */
  const boundPods = new Map<string, Pod>();
  const podsByNode = new Map<string, Map<string, Pod>>(options.nodes.map((node) => [node, new Map()]));
  const rememberPod = (key: string, pod: Pod): void => {
    const pods = podsByNode.get(pod.spec.nodeName ?? '');
    if (pods === undefined) return;
    const uid = pod.metadata.uid ?? '';
    // Only a pod that has not started yet: one already Running (an agent restart adopting it) is not a start.
    if (kubelet && !reportedUids.has(uid) && !firstSeen.has(uid) && (pod.status?.phase ?? 'Pending') === 'Pending') firstSeen.set(uid, performance.now());
    boundPods.set(key, pod);
    pods.set(key, pod);
  };
  const forgetPod = (key: string, uid: string | undefined): void => {
    const pod = boundPods.get(key);
    if (pod === undefined || pod.metadata.uid !== uid) return;
    reported.delete(key);
    firstSeen.delete(uid ?? '');
    boundPods.delete(key);
    podsByNode.get(pod.spec.nodeName ?? '')?.delete(key);
  };
  /** Uids of the pods a runtime reported a status for, i.e. admitted (it admits no pod that is already being deleted). */
  const reportedUids = new Set<string>();
  /** Uids of the pods this agent reported rejected (kubelet admission; node-admission.ts). */
  const rejectedUids = new Set<string>();
  /**
   * Whether the fold admitted `pod` to `node` (charged it): a pod it rejected never runs;
   * it is reported Failed, once, with kubelet's reason (`OutOfcpu`) and message. A pod the
   * runtime already reported on was admitted: no need to look again.
   */
  const admitted = (node: string, pod: Pod): boolean => {
    const uid = pod.metadata.uid ?? '';
    if (reportedUids.has(uid)) return true;
    const namespace = pod.metadata.namespace ?? 'default';
    const key = `Pod/${namespace}/${pod.metadata.name}`;
    const admission = podAdmissionOf((resource) => projection.store.allocations.get(resource), key);
    if (admission?.state !== 'rejected') return true;
    if (pod.status?.phase !== 'Failed' && !rejectedUids.has(uid)) {
      rejectedUids.add(uid);
      logger.info({ pod: `${namespace}/${pod.metadata.name}`, node, reason: admission.reason }, admission.message);
      const status: PodStatus = { phase: 'Failed', reason: admission.reason, message: admission.message, qosClass: podQos(pod) };
      pendingStatus.set(key, { node, body: { type: 'PodStatusChanged', namespace, name: pod.metadata.name, uid, status }, holdUntil: 0, at: Date.now() });
      scheduleFlush();
    }
    return false;
  };
  /** Queues the final delete (grace 0) of a pod whose containers have all stopped. */
  const finishDeletion = (node: string, namespace: string, name: string, uid: string): void => {
    pendingDeletes.set(`Pod/${namespace}/${name}`, {
      node,
      body: { type: 'ObjectDeleted', kind: 'Pod', namespace, name, expectedResourceVersion: null, uid, propagationPolicy: null, gracePeriodSeconds: 0 },
    });
    scheduleFlush();
  };

  const subscriptions: Subscription[] = [];
  const events = options.events === false ? undefined : createEventReporter({ log, projection, logger: logger.child({ part: 'events' }) });
  const tokens = options.serviceAccountTokens
    ? createServiceAccountTokenManager({ request: options.serviceAccountTokens, logger: logger.child({ part: 'tokens' }) })
    : undefined;
  /** What pods' env and volumes read: the projection's objects, ConfigMap/Secret changes (volumes are rewritten), bound tokens. */
  const podObjects = viewObjectSource(
    () => projection.view(),
    projection.changes$.pipe(
      filter((change) => change.key.startsWith('ConfigMap/') || change.key.startsWith('Secret/')),
      map((change): PodObjectChange => ({ kind: change.object.kind as 'ConfigMap' | 'Secret', namespace: change.object.metadata.namespace ?? 'default', name: change.object.metadata.name })),
    ),
    tokens,
  );
  options.nodes.forEach((node, index) => {
    const runtime = createPodRuntime({
      kind: options.runtime,
      node,
      dataDir: join(options.dataDir, node),
      podCIDR: podCIDR(index),
      logger: logger.child({ node }),
      ...(options.crashLoop ? { crashLoop: options.crashLoop } : {}),
      ...(options.simStartDelayMs !== undefined ? { sim: { startDelayMs: options.simStartDelayMs } } : {}),
      ...(options.probeSecondMs !== undefined ? { probeSecondMs: options.probeSecondMs } : {}),
      ...(options.podUser !== undefined ? { podUser: options.podUser } : {}),
      ...(options.cri !== undefined ? { cri: kubelet ? { ...options.cri, onOperation: kubelet.criOperation } : options.cri } : {}),
      ...(options.allowPrivileged !== undefined ? { allowPrivileged: options.allowPrivileged } : {}),
      ...(options.dns !== undefined ? { dns: options.dns } : {}),
      objects: podObjects,
    });
    runtimes.set(node, runtime);
    kubelet?.nodeRegistered(node);
    if (events) {
      subscriptions.push(
        runtime.events$.subscribe((event) => {
          const pod = boundPods.get(`Pod/${event.namespace}/${event.name}`);
          if (pod?.metadata.uid === event.uid) events.record(node, pod, event);
        }),
      );
    }
    subscriptions.push(
      runtime.statuses$.subscribe((update) => {
        const key = `Pod/${update.namespace}/${update.name}`;
        const current = boundPods.get(key);
        if (!current || current.metadata.uid !== update.uid) return;
        const first = !reportedUids.has(update.uid);
        reportedUids.add(update.uid);
        if (kubelet) {
          reported.set(key, { node, status: update.status });
          const seen = firstSeen.get(update.uid);
          if (seen !== undefined && update.status.phase === 'Running') {
            firstSeen.delete(update.uid);
            kubelet.podStarted((performance.now() - seen) / 1000);
          }
        }
        pendingStatus.set(key, {
          node,
          // kubelet reports the pod's QoS class with every status (the one the apiserver recorded), and
          // keeps the conditions it does not own and the scheduler's nominatedNodeName (mergePodStatus).
          body: { type: 'PodStatusChanged', namespace: update.namespace, name: update.name, uid: update.uid, status: mergePodStatus(current.status, { ...update.status, qosClass: podQos(current) }) },
          holdUntil: first && isAdmissionOnly(update.status) ? performance.now() + ADMISSION_HOLD_MS : 0,
          // When the runtime saw the status, not when its report left (after the pod's record was written).
          at: update.at,
        });
        if (current.metadata.deletionTimestamp && hasStopped(update.status)) finishDeletion(node, update.namespace, update.name, update.uid);
        scheduleFlush();
      }),
    );
  });

  // Level-based: whenever a pod of a node changes, hand the node's whole pod set to its runtime.
  const dirtyNodes = new Set<string>(options.nodes);
  let syncScheduled = false;
  /** Set by `close`: a sync already scheduled must not reach the closed runtimes. */
  let closed = false;
  const syncDirty = (): void => {
    syncScheduled = false;
    if (closed) return;
    for (const node of dirtyNodes) {
      const pods = [...(podsByNode.get(node)?.values() ?? [])];
      const started = kubelet ? performance.now() : 0;
      runtimes.get(node)?.sync(pods.filter((pod) => admitted(node, pod)));
      kubelet?.synced((performance.now() - started) / 1000);
      // A pod that had already finished when its deletion came, or that was deleted before the
      // runtime ever started it, gets no new status from the runtime: nothing is left to stop.
      for (const pod of pods) {
        const phase = pod.status?.phase;
        const stopped = phase === 'Succeeded' || phase === 'Failed' || !reportedUids.has(pod.metadata.uid ?? '');
        if (pod.metadata.deletionTimestamp && stopped) {
          finishDeletion(node, pod.metadata.namespace ?? 'default', pod.metadata.name, pod.metadata.uid ?? '');
        }
      }
    }
    dirtyNodes.clear();
  };
  const markDirty = (node: string): void => {
    if (!nodeSet.has(node)) return;
    dirtyNodes.add(node);
    if (!syncScheduled) {
      syncScheduled = true;
      setImmediate(syncDirty);
    }
  };
  subscriptions.push(
    projection.changes$.subscribe((change) => {
      if (!change.key.startsWith('Pod/')) return;
      const pod = change.object as Pod;
      const node = pod.spec.nodeName;
      if (change.type === 'DELETED') {
        reportedUids.delete(pod.metadata.uid ?? '');
        rejectedUids.delete(pod.metadata.uid ?? '');
        forgetPod(change.key, pod.metadata.uid);
      } else {
        rememberPod(change.key, pod);
      }
      // A status report (this agent's own, mostly) changes nothing the runtime acts on (the
      // set of pods, their uids, deletion) unless the phase became terminal; skipping it
      // spares a resync of the node's pods per report.
      if (change.topic === 'observed' && change.type === 'MODIFIED' && !isTerminal(pod.status)) return;
      if (node) markDirty(node);
    }),
  );
  // After subscribing (nothing can change in between: both are synchronous).
  const startView = projection.view();
  for (const node of options.nodes) {
    for (const pod of startView.podsOnNode(node)) rememberPod(`Pod/${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`, pod);
  }
  syncDirty();
  const localPath = startLocalPathVolumes({ log, projection, logger: logger.child({ part: 'local-path' }), nodes: options.nodes, dataDir: options.dataDir });
  resourceUsage = startResourceUsage({
    runtimes: () => runtimes,
    runtimeKind: options.runtime,
    ...(options.metricsResolutionMs !== undefined ? { resolutionMs: options.metricsResolutionMs } : {}),
    logger,
  });

  return {
    runtimeOf: (node) => runtimes.get(node),
    resourceUsageOf: (node) => resourceUsage?.of(node),
    streaming,
    close: async (opts) => {
      closed = true;
      streaming.close();
      resourceUsage?.close();
      leases.close();
      for (const s of subscriptions) s.unsubscribe();
      await localPath.close();
      await Promise.all([...runtimes.values()].map((r) => r.close(opts)));
      tokens?.close();
      if (holdTimer !== undefined) clearTimeout(holdTimer);
      flush(true);
      await Promise.all([...inFlight]);
      await events?.close();
      await logServer?.close();
    },
  };
};
