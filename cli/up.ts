/**
 * `logplane up`: the one-command cluster. Embedded log, projection, apiserver, every
 * controller, N node agents, the service proxy, the cluster DNS and the Ingress controller in one process, like k3s on SQLite.
 * A restart with the same data directory comes back with all its state.
 */
import { admitControllerCreate } from '../apiserver/admission/controller-creates.ts';
import { ensureLocalPathClass } from './local-path-class.ts';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ClusterDns } from '../addons/dns/index.ts';
import { kubeDnsClusterIPs, servedByProcessDns, startProcessDns, type ClusterDnsSettings } from './cluster-dns.ts';
import { startIngressController, type IngressAddress, type IngressController } from '../addons/ingress/index.ts';
import { refuseWithStatus } from '../apiserver/streaming/connect.ts';
import { apiErrors, writeKubeconfig, type ApiServer } from '../apiserver/index.ts';
import { KubeletNotFoundError } from '../node-agent/kubelet/errors.ts';
import type { EventLog } from '../log/port.ts';
import { startNodeAgent, type NodeAgent, type NodeResources } from '../node-agent/agent.ts';
import type { CriRuntimeOptions, PodUser, RuntimeKind } from '../node-agent/kubelet/index.ts';
import { startServiceProxy, type ServiceProxyLoop } from '../node-agent/service-proxy.ts';
import { createFoldMetrics, createProjection, LEGACY_FOLD_SETTINGS, type Projection } from '../projections/index.ts';
import { startControllers, type RunningControllers } from '../reconcilers/controllers.ts';
import { loadSchedulerConfig } from '../reconcilers/scheduler/config/index.ts';
import { adminCredentials, apiserverServiceHosts, openLog, processRegistry, serveApi, tlsMaterial, type Durability, type LogTarget, type ServeOptions } from './wiring.ts';
import { ensureClusterCA, serviceAccountSigningKey } from './pki.ts';
import { inProcessTokenRequests } from './service-account-tokens.ts';
import { createTokenIssuer } from '../apiserver/serviceaccount-tokens/issuer.ts';
import { inProcessMetricsSource } from './metrics-source.ts';
import type { ResourceUsageHook } from '../apiserver/metrics-api.ts';

export interface UpOptions {
  readonly dataDir: string;
  readonly nodes: number;
  readonly runtime: RuntimeKind;
  /** Process runtime: the user pods run as (default: `nobody` when run as root). */
  readonly podUser?: PodUser;
  /** CRI runtime: the container runtime's endpoint and settings. */
  readonly cri?: CriRuntimeOptions;
  /** False: privileged containers do not run (default true, as kubelet 1.32). */
  readonly allowPrivileged?: boolean;
  readonly port: number;
  readonly host: string;
  readonly proxy: 'userspace' | 'nftables' | 'none';
  readonly logger: Logger;
  /** Serve HTTPS with a self-signed certificate (default true; kubectl sends tokens only over HTTPS). */
  readonly tls?: boolean;
  /** Use Kafka instead of the embedded log (the same single process otherwise). */
  readonly kafka?: Extract<LogTarget, { type: 'kafka' }>;
  /** When an embedded-log append is acknowledged (default `flushed`); ignored with `kafka`. */
  readonly durability?: Durability;
  readonly nodeGracePeriodMs?: number;
  readonly tolerationSeconds?: number;
  /** `--event-ttl`: how long an Event stays in the current view after it was last seen (default 1 h). */
  readonly eventTtlMs?: number;
  /** False: neither the controllers nor the agents record Events (a measurement switch for the bench; default true). */
  readonly events?: boolean;
  /** `--scheduler-config`: a KubeSchedulerConfiguration file (kube-scheduler's `--config`); read and checked before anything starts. */
  readonly schedulerConfigFile?: string;
  readonly heartbeatMs?: number;
  readonly crashLoop?: { initialMs: number; maxMs: number };
  readonly simStartDelayMs?: number;
  readonly probeSecondMs?: number;
  /** How often the agents sample pods' and nodes' resource usage (the metrics API's resolution); default 15 s. */
  readonly metricsResolutionMs?: number;
  readonly nodeCapacity?: NodeResources;
  /** ClusterIPs come from here (default 127.96.0.0/16); part of the cluster's identity, keep it fixed. */
  readonly serviceCIDR?: string;
  /** Pod addresses: node i gets the i-th /24 of this /16 (default 127.100.0.0/16). */
  readonly podCIDR?: string;
  /** The apiserver's request timeouts, connection cap and in-flight limits. */
  readonly limits?: ServeOptions['limits'];
  /** The audit log (default `DATA/audit/audit.log`, every request at Metadata); false keeps none. */
  readonly audit?: ServeOptions['audit'];
  /** `--authorization-mode` (default `Node,RBAC`, as kubeadm's kube-apiserver; the admin token's user is in `system:masters`). */
  readonly authorizationModes?: ServeOptions['authorizationModes'];
  /** The cluster DNS: where it listens (port 0: a free one), the upstreams for other names, whether also on the kube-dns ClusterIP; absent: no DNS. */
  readonly dns?: ClusterDnsSettings;
  /** The Ingress controller's proxy: where it listens (port 0: a free one); absent: no Ingress controller. */
  readonly ingress?: IngressAddress;
}

export interface RunningCluster {
  readonly url: string;
  readonly token: string;
  readonly kubeconfig: string;
  readonly log: EventLog;
  readonly projection: Projection;
  readonly apiserver: ApiServer;
  readonly agent: NodeAgent;
  readonly controllers: RunningControllers;
  readonly proxy: ServiceProxyLoop | undefined;
  readonly dns: ClusterDns | undefined;
  readonly ingress: IngressController | undefined;
  /** Stops everything; pods are stopped too unless `keepPods`. */
  stop(opts?: { keepPods?: boolean }): Promise<void>;
}

/** The i-th /24 of a /16 such as 127.100.0.0/16, one per node. */
export const nodeSubnets = (cidr: string) => {
  const match = /^(\d+)\.(\d+)\.0\.0\/16$/.exec(cidr);
  if (!match) throw new Error(`pod CIDR must be a /16 like 127.100.0.0/16, got "${cidr}"`);
  return (index: number): string => `${match[1]}.${match[2]}.${index % 256}.0/24`;
};

/** Starts the whole cluster in this process. */
export const startCluster = async (options: UpOptions): Promise<RunningCluster> => {
  const schedulerConfig = options.schedulerConfigFile !== undefined ? await loadSchedulerConfig(options.schedulerConfigFile) : undefined;
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const logger = options.logger;
  const target: LogTarget = options.kafka ?? {
    type: 'embedded',
    dir: join(dataDir, 'log'),
    cluster: 'logplane',
    partitions: 1,
    ...(options.durability ? { durability: options.durability } : {}),
  };
  // One registry for the whole process: the apiserver's /metrics shows every component's metrics.
  const registry = processRegistry();
  const log = await openLog(target, logger.child({ component: 'log' }), registry);
  const projection = createProjection({
    dir: join(dataDir, 'projection'),
    log,
    logger: logger.child({ component: 'projection' }),
    metrics: createFoldMetrics(registry),
  });
  // Catch up with what the log already holds before anyone decides anything.
  await projection.waitFor({ desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') }, 300_000);
  // DNS and Ingress first: a port that cannot be had fails the start before any pod runs.
  const dns: ClusterDns | undefined = options.dns
    ? await startProcessDns(projection, options.dns, logger.child({ component: 'dns' })).catch(async (error: unknown) => {
        await projection.close();
        await log.close();
        throw error;
      })
    : undefined;
  const ingress: IngressController | undefined = options.ingress
    ? await startIngressController({ projection, log, ...options.ingress, logger: logger.child({ component: 'ingress' }) }).catch(async (error: unknown) => {
        await dns?.close();
        await projection.close();
        await log.close();
        throw error;
      })
    : undefined;

  const { token, tokens } = adminCredentials(dataDir);
  const signingKey = serviceAccountSigningKey(dataDir);
  const tls = options.tls === false ? undefined : tlsMaterial(dataDir, 'apiserver', apiserverServiceHosts(options.serviceCIDR ?? LEGACY_FOLD_SETTINGS.serviceCIDR));
  let agent: NodeAgent | undefined;
  const resourceUsage: ResourceUsageHook = async (node) => agent?.resourceUsageOf(node.metadata.name);
  const apiserver = await serveApi({
    log,
    projection,
    ...(schedulerConfig ? { schedulerConfig } : {}),
    tokens,
    port: options.port,
    host: options.host,
    logger,
    registry,
    // Client certificates the cluster CA (DATA/pki/ca) signed authenticate users, as kubeadm's.
    ...(tls ? { tls, clientCA: ensureClusterCA(join(dataDir, 'pki')).cert } : {}),
    ...(options.serviceCIDR !== undefined ? { serviceCIDR: options.serviceCIDR } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    authorizationModes: options.authorizationModes ?? ['Node', 'RBAC'],
    dataDir,
    ...(options.audit !== undefined ? { audit: options.audit } : {}),
    serviceAccountSigningKey: signingKey,
    podLogs: async (request) => {
      const node = request.pod.spec.nodeName;
      const runtime = node ? agent?.runtimeOf(node) : undefined;
      if (!runtime) throw new Error(`pod ${request.pod.metadata.name} is not running on a node of this process`);
      const container = request.container ?? request.pod.spec.containers[0]?.name ?? '';
      try {
        return runtime.logs(request.pod.metadata.namespace ?? 'default', request.pod.metadata.name, container, {
          follow: request.follow,
          previous: request.previous,
          ...(request.tailLines !== undefined ? { tailLines: request.tailLines } : {}),
          signal: request.signal,
        });
      } catch (error) {
        // No such (previous) container log: the client's mistake, as kubelet answers it.
        if (error instanceof KubeletNotFoundError) throw apiErrors.badRequest(error.message);
        throw error;
      }
    },
    // The agents run in this process: exec, attach and port-forward are handed to them directly.
    podStreams: ({ path, req, socket, head }) => {
      if (!agent) return refuseWithStatus(socket, apiErrors.serviceUnavailable('the node agents are still starting'));
      req.url = path;
      agent.streaming.handleUpgrade(req, socket, head);
    },
    // The agents run in this process: their figures are read from memory.
    resourceUsage,
  });
  const kubeconfig = join(dataDir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: apiserver.url, token, ...(tls ? { certificateAuthority: tls.cert } : {}) });

  const controllers = await startControllers({
    log,
    projection,
    logger: logger.child({ component: 'controllers' }),
    admitCreated: admitControllerCreate,
    registry,
    ...(schedulerConfig ? { schedulerConfig } : {}),
    metricsSource: inProcessMetricsSource(projection, resourceUsage, logger.child({ component: 'hpa-metrics' })),
    ...(options.nodeGracePeriodMs !== undefined ? { nodeGracePeriodMs: options.nodeGracePeriodMs } : {}),
    ...(options.tolerationSeconds !== undefined ? { defaultTolerationSeconds: options.tolerationSeconds } : {}),
    ...(options.eventTtlMs !== undefined ? { eventTtlMs: options.eventTtlMs } : {}),
    ...(options.events === false ? { recordEvents: false } : {}),
    // kube-root-ca.crt, which every pod's kube-api-access volume reads: the serving certificate,
    // or, over plain HTTP, the cluster CA (there is no serving certificate to trust then).
    rootCA: tls ? tls.cert : ensureClusterCA(join(dataDir, 'pki')).cert,
  });
  await ensureLocalPathClass(log, projection, logger.child({ component: 'local-path' }));
  const nodeNames = Array.from({ length: options.nodes }, (_, i) => `node-${i + 1}`);
  agent = await startNodeAgent({
    log,
    projection,
    logger: logger.child({ component: 'agent' }),
    registry,
    nodes: nodeNames,
    runtime: options.runtime,
    ...(options.podUser !== undefined ? { podUser: options.podUser } : {}),
    ...(options.cri !== undefined ? { cri: options.cri } : {}),
    ...(options.allowPrivileged !== undefined ? { allowPrivileged: options.allowPrivileged } : {}),
    dataDir: join(dataDir, 'nodes'),
    ...(options.events === false ? { events: false } : {}),
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.crashLoop ? { crashLoop: options.crashLoop } : {}),
    ...(options.simStartDelayMs !== undefined ? { simStartDelayMs: options.simStartDelayMs } : {}),
    ...(options.probeSecondMs !== undefined ? { probeSecondMs: options.probeSecondMs } : {}),
    ...(options.metricsResolutionMs !== undefined ? { metricsResolutionMs: options.metricsResolutionMs } : {}),
    ...(options.nodeCapacity ? { capacity: options.nodeCapacity } : {}),
    ...(options.podCIDR ? { podCIDR: nodeSubnets(options.podCIDR) } : {}),
    dns: { clusterDNS: kubeDnsClusterIPs(projection) },
    // The agents share this process with the apiserver: pods' tokens are issued here, with its key.
    serviceAccountTokens: inProcessTokenRequests(createTokenIssuer({ signingKey }), () => projection.view()),
  });
  const proxy =
    options.proxy === 'none'
      ? undefined
      : startServiceProxy({ projection, mode: options.proxy, logger: logger.child({ component: 'proxy' }), servedLocally: servedByProcessDns(options.dns) });

  const runningAgent = agent;
  return {
    url: apiserver.url,
    token,
    kubeconfig,
    log,
    projection,
    apiserver,
    agent: runningAgent,
    controllers,
    proxy,
    dns,
    ingress,
    stop: async (opts) => {
      await ingress?.close();
      await runningAgent.close({ stopPods: !opts?.keepPods });
      await controllers.stop();
      await proxy?.close();
      await dns?.close();
      await apiserver.close();
      await projection.close();
      await log.close();
    },
  };
};
