/**
 * Distributed mode: each component is its own process on Kafka (or any shared log), with
 * its own projection; run as many of each as wanted.
 */
import { admitControllerCreate } from '../apiserver/admission/controller-creates.ts';
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { startNodeAgent, type NodeAgent } from '../node-agent/agent.ts';
import type { CriRuntimeOptions, PodUser, RuntimeKind } from '../node-agent/kubelet/index.ts';
import { startServiceProxy } from '../node-agent/service-proxy.ts';
import type { Registry } from 'prom-client';
import { createFoldMetrics, createProjection, LEGACY_FOLD_SETTINGS, registerProjectionLag, type Projection } from '../projections/index.ts';
import { startControllers, type ControllerName } from '../reconcilers/controllers.ts';
import { loadSchedulerConfig } from '../reconcilers/scheduler/config/index.ts';
import { ensureLocalPathClass } from './local-path-class.ts';
import { agentServingCredentials, ensureClusterCA, kubeletClientCredentials, publishClusterInfo, readClusterInfo, serviceAccountSigningKey } from './pki.ts';
import { adminCredentials, apiserverServiceHosts, openLog, processRegistry, remotePodLogs, remotePodStreams, remoteResourceUsage, serveApi, tlsMaterial, type LogTarget, type ServeOptions } from './wiring.ts';
import { writeKubeconfig } from '../apiserver/index.ts';
import type { EventLog } from '../log/port.ts';
import { remoteMetricsSource } from './metrics-source.ts';
import type { ClusterDns } from '../addons/dns/index.ts';
import { kubeDnsClusterIPs, servedByProcessDns, startProcessDns, type ClusterDnsSettings } from './cluster-dns.ts';
import { remoteTokenRequests } from './service-account-tokens.ts';
import { createDelegatedAuth } from './delegated-auth.ts';
import { componentClient, kubeconfigClient, type ComponentClient, type ComponentIdentity } from './component-identity.ts';
import { parseListenAddress, startMetricsServer } from './metrics-server.ts';
import type { RequestServiceAccountToken } from '../node-agent/kubelet/index.ts';
import type { Pod } from '../schemas/index.ts';

/** A running component: what it serves and how to stop it. */
export interface Component {
  readonly description: string;
  stop(): Promise<void>;
}

/** Opens the log and this component's projection, both measured on the process's `registry` (with the projection's lag). */
const openShared = async (
  target: LogTarget,
  dataDir: string,
  name: string,
  logger: Logger,
  registry: Registry,
): Promise<{ log: EventLog; projection: Projection }> => {
  const log = await openLog(target, logger.child({ component: 'log' }), registry);
  const projection = createProjection({
    dir: join(resolve(dataDir), `projection-${name}`),
    log,
    logger: logger.child({ component: 'projection' }),
    metrics: createFoldMetrics(registry),
  });
  registerProjectionLag(registry, projection, log);
  await projection.waitFor({ desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') }, 300_000);
  return { log, projection };
};

/** How a component calls the apiserver: as `identity` (see `component-identity.ts`), or as the user of `--kubeconfig`. */
const apiClientOf = (options: { readonly pkiDir: string; readonly dataDir: string; readonly kubeconfig?: string }, identity: ComponentIdentity): ComponentClient =>
  options.kubeconfig !== undefined ? kubeconfigClient(options.kubeconfig) : componentClient({ pkiDir: options.pkiDir, dataDir: options.dataDir, identity });

/** The https URL of `host` (a name, an IPv4 or an IPv6 address) and `port`. */
const advertisedUrl = (host: string, port: string): string => `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;

/**
 * `logplane apiserver`: serves the Kubernetes API (and the history API) from its own
 * projection; reads pod logs from the agents with its `kubelet-client` certificate of the
 * cluster CA in `pkiDir` (both made there on first use); over HTTPS it publishes its address
 * and certificate there (cluster-info) for the components' own identities.
 */
export const runApiserver = async (options: {
  target: LogTarget;
  dataDir: string;
  /** The cluster's PKI directory, shared with the agents (see `cli/pki.ts`). */
  pkiDir: string;
  port: number;
  host: string;
  tls: boolean;
  logger: Logger;
  /** `--service-cidr`: recorded in a new cluster's log, checked against an existing one's. */
  serviceCIDR?: string;
  /** The apiserver's request timeouts, connection cap and in-flight limits. */
  limits?: ServeOptions['limits'];
  /** The audit log (default `DATA/audit/audit.log`, every request at Metadata); false keeps none. */
  audit?: ServeOptions['audit'];
  /** `--authorization-mode` (default `Node,RBAC`, as kubeadm's kube-apiserver). */
  authorizationModes?: ServeOptions['authorizationModes'];
  /**
   * `--advertise-address`: the host name or IP the components reach this apiserver at (in
   * cluster-info, and named by a new serving certificate); default the address it listens on,
   * loopback for a wildcard.
   */
  advertiseAddress?: string;
}): Promise<Component & { url: string; kubeconfig: string }> => {
  const registry = processRegistry();
  const { log, projection } = await openShared(options.target, options.dataDir, `apiserver-${options.port}`, options.logger, registry);
  const { token, tokens } = adminCredentials(options.dataDir);
  const serviceHosts = apiserverServiceHosts(options.serviceCIDR ?? LEGACY_FOLD_SETTINGS.serviceCIDR);
  const tls = options.tls ? tlsMaterial(options.dataDir, 'apiserver', options.advertiseAddress !== undefined ? [options.advertiseAddress, ...serviceHosts] : serviceHosts) : undefined;
  const server = await serveApi({
    log,
    projection,
    tokens,
    port: options.port,
    host: options.host,
    logger: options.logger,
    registry,
    podLogs: remotePodLogs(projection, kubeletClientCredentials(options.pkiDir)),
    podStreams: remotePodStreams(projection, kubeletClientCredentials(options.pkiDir)),
    resourceUsage: remoteResourceUsage(projection, kubeletClientCredentials(options.pkiDir)),
    ...(tls ? { tls, clientCA: ensureClusterCA(options.pkiDir).cert } : {}),
    ...(options.serviceCIDR !== undefined ? { serviceCIDR: options.serviceCIDR } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    authorizationModes: options.authorizationModes ?? ['Node', 'RBAC'],
    dataDir: options.dataDir,
    ...(options.audit !== undefined ? { audit: options.audit } : {}),
    // In the shared PKI directory, so every apiserver of the cluster accepts the others' tokens.
    serviceAccountSigningKey: serviceAccountSigningKey(options.pkiDir),
  });
  const kubeconfig = join(resolve(options.dataDir), 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: server.url, token, ...(tls ? { certificateAuthority: tls.cert } : {}) });
  // Client certificates authenticate only over HTTPS: a plain-HTTP apiserver is no use to the components' identities.
  if (tls) {
    const advertised = options.advertiseAddress !== undefined ? advertisedUrl(options.advertiseAddress, new URL(server.url).port) : server.url;
    publishClusterInfo(options.pkiDir, { server: advertised, certificateAuthority: tls.cert });
  }
  return {
    description: `apiserver at ${server.url} (kubeconfig ${kubeconfig})`,
    url: server.url,
    kubeconfig,
    stop: async () => {
      await server.close();
      await projection.close();
      await log.close();
    },
  };
};

/**
 * `logplane controllers`: every controller (or `only` some) as consumer-group members. They
 * write to the log; the apiserver is called for the hpa's pod metrics and the metrics port's
 * token checks, as `system:kube-controller-manager` unless `kubeconfig` names other credentials.
 */
export const runControllers = async (options: {
  target: LogTarget;
  dataDir: string;
  /** The cluster's PKI directory: the cluster CA that issues the controller manager's client certificate, and cluster-info. */
  pkiDir: string;
  only?: readonly ControllerName[];
  nodeGracePeriodMs?: number;
  tolerationSeconds?: number;
  /** `--event-ttl` in ms (default 1 h). */
  eventTtlMs?: number;
  /** `--root-ca-file`: the PEM bundle `root-ca-cert-publisher` publishes. */
  rootCAFile?: string;
  /**
   * `--kubeconfig`: the apiserver (and credentials) the `hpa` controller reads metrics.k8s.io
   * from, and the metrics port checks tokens with, instead of the controller manager's own identity.
   */
  kubeconfig?: string;
  /** `--metrics-address host:port`: serve `/metrics` over HTTPS there (see metrics-server.ts). */
  metricsAddress?: string;
  /** `--scheduler-config`: a KubeSchedulerConfiguration file (kube-scheduler's `--config`); read and checked before anything starts. */
  schedulerConfigFile?: string;
  logger: Logger;
}): Promise<Component & { metricsUrl?: string }> => {
  const schedulerConfig = options.schedulerConfigFile !== undefined ? await loadSchedulerConfig(options.schedulerConfigFile) : undefined;
  const metricsAddress = options.metricsAddress !== undefined ? parseListenAddress(options.metricsAddress) : undefined;
  const apiClient = apiClientOf(options, { type: 'controller-manager' });
  const registry = processRegistry();
  // A stable directory: a restarted process resumes its projection instead of replaying the
  // log. Run each controllers process with its own --data.
  const { log, projection } = await openShared(options.target, options.dataDir, 'controllers', options.logger, registry);
  const controllers = await startControllers({
    log,
    projection,
    logger: options.logger,
    registry,
    admitCreated: admitControllerCreate,
    ...(schedulerConfig ? { schedulerConfig } : {}),
    ...(options.only ? { only: options.only } : {}),
    ...(options.nodeGracePeriodMs !== undefined ? { nodeGracePeriodMs: options.nodeGracePeriodMs } : {}),
    ...(options.tolerationSeconds !== undefined ? { defaultTolerationSeconds: options.tolerationSeconds } : {}),
    ...(options.eventTtlMs !== undefined ? { eventTtlMs: options.eventTtlMs } : {}),
    ...(options.rootCAFile !== undefined ? { rootCA: readFileSync(options.rootCAFile, 'utf8') } : {}),
    metricsSource: remoteMetricsSource(apiClient),
  });
  // The provisioner ships its class, as rancher's local-path-provisioner manifest (and k3s) do;
  // a second controllers process finds it (or its create is refused as a duplicate by the fold).
  if (controllers.runtimes.some((r) => r.controller.name === 'local-path-provisioner')) {
    await ensureLocalPathClass(log, projection, options.logger.child({ component: 'local-path' }));
  }
  const metricsServer =
    metricsAddress !== undefined
      ? await startMetricsServer({
          registry,
          auth: createDelegatedAuth({ client: apiClient }),
          tls: tlsMaterial(options.dataDir, 'controllers'),
          ...metricsAddress,
          logger: options.logger,
        })
      : undefined;
  return {
    description: `controllers ${controllers.runtimes.map((r) => r.controller.name).join(', ')}${metricsServer ? `; metrics at ${metricsServer.url}/metrics` : ''}; calls the apiserver as ${apiClient.describe}`,
    ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
    stop: async () => {
      await metricsServer?.close();
      await controllers.stop();
      await projection.close();
      await log.close();
    },
  };
};

/**
 * `logplane agent --node NAME`: runs the node's pods, (optionally) this machine's service
 * proxy and the cluster DNS answering from this agent's projection, and serves the pods' logs
 * over HTTPS to the apiserver's `kubelet-client` identity only. It calls the apiserver (pods'
 * service-account tokens, the metrics port's token checks) as `system:node:<node>` unless
 * `kubeconfig` names other credentials.
 */
export const runAgent = async (options: {
  target: LogTarget;
  dataDir: string;
  /** The cluster's PKI directory: `ca.crt`, and `ca.key` or this agent's certificate (see `cli/pki.ts`). */
  pkiDir: string;
  nodes: readonly string[];
  runtime: RuntimeKind;
  /** Process runtime: the user pods run as (default: `nobody` when the agent runs as root). */
  podUser?: PodUser;
  /** CRI runtime: the container runtime's endpoint and settings. */
  cri?: CriRuntimeOptions;
  /** False: privileged containers do not run (default true, as kubelet 1.32). */
  allowPrivileged?: boolean;
  proxy: 'userspace' | 'nftables' | 'none';
  /** Pod CIDR of this agent's node (distinct per node on one machine). */
  podCIDR: string;
  heartbeatMs?: number;
  /** How often pods' and nodes' resource usage is sampled (the metrics API's resolution; default 15 s). */
  metricsResolutionMs?: number;
  /** The cluster DNS of this agent (as `up` runs it); absent: none. */
  dns?: ClusterDnsSettings;
  /**
   * `--kubeconfig`: the apiserver (and credentials) that checks bearer tokens for the agent's
   * `/metrics` (kubelet's webhook authentication and authorization) and issues its pods'
   * service-account tokens, instead of each node's own identity.
   */
  kubeconfig?: string;
  logger: Logger;
}): Promise<Component & { agent: NodeAgent; dns: ClusterDns | undefined }> => {
  const tls = agentServingCredentials(options.pkiDir, options.nodes, ['127.0.0.1', 'localhost']);
  const registry = processRegistry();
  const { log, projection } = await openShared(options.target, options.dataDir, `agent-${options.nodes.join('-')}`, options.logger, registry);
  // A node joins a running cluster (kubeadm join): without an apiserver to call, pods' tokens
  // would hold every pod that mounts one, so the agent then calls none, as before it joined.
  const joined = options.kubeconfig !== undefined || readClusterInfo(options.pkiDir) !== undefined;
  if (!joined) {
    options.logger.warn(
      { pki: options.pkiDir },
      'no apiserver has published cluster-info.kubeconfig in the PKI directory: pods get no service-account token and /metrics takes client certificates only; start the apiserver (HTTPS, same --pki) before the agent, or pass --kubeconfig',
    );
  }
  const apiClients = joined ? new Map(options.nodes.map((node) => [node, apiClientOf(options, { type: 'node', node })])) : undefined;
  const [firstClient] = apiClients?.values() ?? [];
  const auth = firstClient ? createDelegatedAuth({ client: firstClient }) : undefined;
  // A pod's token is asked for as the node the pod is bound to (kubelet's TokenRequest with its node's credentials).
  const tokenRequests = new Map([...(apiClients ?? [])].map(([node, client]) => [node, remoteTokenRequests(client)]));
  const tokenRequest: RequestServiceAccountToken = (request) => {
    const pod = projection.view().get(`Pod/${request.namespace}/${request.pod.name}`) as Pod | undefined;
    const asNode = tokenRequests.get(pod?.spec.nodeName ?? '');
    return asNode ? asNode(request) : Promise.reject(new Error(`pod ${request.namespace}/${request.pod.name} is not bound to a node of this agent`));
  };
  // First: an address that cannot be had fails the start before any pod runs.
  const dns = options.dns
    ? await startProcessDns(projection, options.dns, options.logger.child({ component: 'dns' })).catch(async (error: unknown) => {
        await projection.close();
        await log.close();
        throw error;
      })
    : undefined;
  const agent = await startNodeAgent({
    log,
    projection,
    logger: options.logger,
    registry,
    nodes: options.nodes,
    runtime: options.runtime,
    ...(options.podUser !== undefined ? { podUser: options.podUser } : {}),
    ...(options.cri !== undefined ? { cri: options.cri } : {}),
    ...(options.allowPrivileged !== undefined ? { allowPrivileged: options.allowPrivileged } : {}),
    dataDir: join(resolve(options.dataDir), 'nodes'),
    podCIDR: () => options.podCIDR,
    serveLogs: { host: '127.0.0.1', tls, ...(auth ? { authorizeToken: (token, attributes) => auth.check(token, attributes) } : {}) },
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.metricsResolutionMs !== undefined ? { metricsResolutionMs: options.metricsResolutionMs } : {}),
    dns: { clusterDNS: kubeDnsClusterIPs(projection) },
    ...(apiClients ? { serviceAccountTokens: tokenRequest } : {}),
  });
  const proxy =
    options.proxy === 'none' ? undefined : startServiceProxy({ projection, mode: options.proxy, logger: options.logger, servedLocally: servedByProcessDns(options.dns) });
  const dnsText = dns ? `; cluster DNS ${dns.address.host}:${dns.address.port} (UDP and TCP)` : '; no cluster DNS';
  return {
    description: `agent for ${options.nodes.join(', ')} (${options.runtime} runtime, proxy ${options.proxy})${dnsText}${apiClients ? `; calls the apiserver as ${[...apiClients.values()].map((c) => c.describe).join(', ')}` : '; calls no apiserver'}`,
    agent,
    dns,
    stop: async () => {
      await agent.close({ stopPods: true });
      await proxy?.close();
      await dns?.close();
      await projection.close();
      await log.close();
    },
  };
};
